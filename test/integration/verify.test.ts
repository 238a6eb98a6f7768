/**
 * `esign verify` end to end: signatures made by `esign sign` on the sandbox, and, where the sandbox
 * refuses to sign (revoked and expired credentials), signatures made here with the sandbox PKI's keys.
 * B-LT/B-LTA inputs are built with the PDF core's buildDssUpdate and a document timestamp placeholder.
 */
import { createHash, randomBytes, sign } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSignedAttributes } from '../../src/core/cms/signed-attributes.js';
import { buildSignedData } from '../../src/core/cms/signed-data.js';
import { OID } from '../../src/core/cms/oids.js';
import { issueTestCertificate } from '../../src/core/cms/test-pki.js';
import { buildDssUpdate, byteRangeChunks, bytesSource, prepareSignature, readPdf, spliceContents } from '../../src/core/pdf/index.js';
import type { PreparedUpdate } from '../../src/core/pdf/index.js';
import { IncrementalUpdate } from '../../src/core/pdf/incremental.js';
import { PdfDict, PdfRef, PdfStream, PdfString } from '../../src/core/pdf/objects.js';
import { buildTimeStampToken } from '../../src/core/tsp/token.js';
import { buildTstInfo } from '../../src/core/tsp/tst-info.js';
import type { VerificationReport } from '../../src/core/verify/types.js';
import { buildCrl } from '../../src/sandbox/pki-routes.js';
import type { SandboxCredential, SandboxPki } from '../../src/sandbox/pki.js';
import { derToPem } from '../../src/sandbox/pki.js';
import { pdfLibBytes } from '../helpers/pdf-fixtures.js';
import { runCli } from '../helpers/run-cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDirForFile } from '../helpers/tmp.js';

let sandbox: TestSandbox;
let work: { dir: string; remove: () => Promise<void> };
let pki: SandboxPki;
let signedBt: Uint8Array;

beforeAll(async () => {
  sandbox = await startTestSandbox({ autoApprove: true });
  pki = sandbox.sandbox.pki;
  work = await tempDirForFile('esign-verify-');
  const input = join(work.dir, 'input.pdf');
  await writeFile(input, await pdfLibBytes({ pages: 2 }));
  const output = join(work.dir, 'input-signed.pdf');
  const result = await runCli(['--auto-approve', '--quiet', 'sign', '--level', 'B-T', '-o', output, input], { env: sandbox.env });
  expect(result.code, result.stderr).toBe(0);
  signedBt = new Uint8Array(await readFile(output));
});
afterAll(async () => {
  await sandbox?.close();
  await work?.remove();
});

let counter = 0;
async function verify(bytes: Uint8Array, extra: string[] = []): Promise<{ code: number | null; report: VerificationReport & { valid: boolean }; stdout: string; stderr: string }> {
  const path = join(work.dir, `case-${++counter}.pdf`);
  await writeFile(path, bytes);
  const result = await runCli(['--json', 'verify', ...extra, path], { env: sandbox.env });
  return { code: result.code, report: result.json(), stdout: result.stdout, stderr: result.stderr };
}

function concat(...parts: Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(parts));
}

function hashChunks(original: Uint8Array, pu: PreparedUpdate): Uint8Array {
  const hash = createHash('sha256');
  for (const chunk of byteRangeChunks(pu)) hash.update((chunk.source === 'original' ? original : pu.update).subarray(chunk.start, chunk.end));
  return new Uint8Array(hash.digest());
}

/** A PAdES B-B signature made with a sandbox credential's key directly (the service refuses revoked and expired ones). */
async function localSign(input: Uint8Array, credential: SandboxCredential): Promise<Uint8Array> {
  const pu = await prepareSignature(await readPdf(bytesSource(input)), { kind: 'signature', signingTime: new Date(), contentsSize: 12_000 });
  const attrs = buildSignedAttributes({ contentDigest: hashChunks(input, pu), signerCertificate: credential.chain[0]! });
  const signatureValue = new Uint8Array(sign('sha256', attrs.der, credential.signer.privateKey));
  const cms = buildSignedData({ signedAttributesDer: attrs.der, signatureValue, certificates: credential.chain });
  return concat(input, spliceContents(pu, cms));
}

/** A document timestamp (ETSI.RFC3161) signed with the sandbox TSA key. */
async function addDocTimeStamp(input: Uint8Array): Promise<Uint8Array> {
  const pu = await prepareSignature(await readPdf(bytesSource(input)), { kind: 'docTimeStamp', contentsSize: 12_000 });
  const tstInfo = buildTstInfo({ policy: '0.4.0.2023.1.1', hashAlgorithm: OID.sha256, hashedMessage: hashChunks(input, pu), serialNumber: randomBytes(8), genTime: new Date() });
  const token = buildTimeStampToken({ tstInfo, signerCertificate: pki.tsa.certificate, privateKey: pki.tsa.privateKey, certificates: pki.tsaChain });
  return concat(input, spliceContents(pu, token));
}

const issuingCrl = (): Uint8Array => buildCrl(pki, new Date());
/** A CRL of the root (covers the issuing CA and the TSA certificate): the sandbox's CRL builder pointed at the root. */
const rootCrl = (): Uint8Array => buildCrl({ ...pki, issuingCa: pki.root, revocations: [] }, new Date());

async function withDss(input: Uint8Array, material: { certs?: Uint8Array[]; crls?: Uint8Array[] }): Promise<Uint8Array> {
  return concat(input, await buildDssUpdate(await readPdf(bytesSource(input)), material));
}

const credential = (id: string): SandboxCredential => pki.credentials.find((c) => c.credentialID === id)!;

describe('esign verify', () => {
  it('reports a valid B-T signature, trusted on the sandbox profile: exit 0', async () => {
    const { code, report } = await verify(signedBt);
    expect(code).toBe(0);
    expect(report).toMatchObject({ valid: true, code: null, status: 'valid' });
    const [s] = report.signatures;
    expect(s).toMatchObject({ kind: 'signature', status: 'valid', level: 'B-T', integrity: { valid: true }, signatureValue: { valid: true } });
    expect(s!.signer!.subject).toContain('Alice Test');
    expect(s!.timestamp!.tsa).toContain('Time-Stamping Authority');
    expect(s!.coverage).toMatchObject({ wholeFile: true, appended: [] });
    expect(s!.chain!.trusted).toBe(true);
  });

  it('prints a human report', async () => {
    const path = join(work.dir, 'human.pdf');
    await writeFile(path, signedBt);
    const result = await runCli(['verify', path], { env: sandbox.env });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/#1 Signature .*✓ valid/);
    expect(result.stdout).toContain('coverage    the whole file');
  });

  it('one tampered byte inside the signed range: VERIFY_FAILED, exit 9', async () => {
    const tampered = signedBt.slice();
    const at = tampered.indexOf(0x2f, 200); // a '/' well inside the original
    tampered[at] = 0x2e;
    const { code, report } = await verify(tampered);
    expect(code).toBe(9);
    expect(report.code).toBe('VERIFY_FAILED');
    expect(report.signatures[0]).toMatchObject({ status: 'invalid', integrity: { valid: false } });
  });

  it('an unsigned incremental update after signing: reported, VERIFY_MODIFIED, exit 9', async () => {
    const doc = await readPdf(bytesSource(signedBt));
    const { ref, dict: catalog } = await doc.catalog();
    const u = new IncrementalUpdate(doc);
    u.set(ref, catalog.clone().set('Lang', PdfString.text('nl-NL')));
    const updated = concat(signedBt, u.serialize().bytes);
    const { code, report } = await verify(updated);
    expect(code).toBe(9);
    expect(report.code).toBe('VERIFY_MODIFIED');
    const [s] = report.signatures;
    expect(s).toMatchObject({ status: 'modified', integrity: { valid: true }, coverage: { wholeFile: false, revision: 2, revisions: 3 } });
    expect(s!.coverage!.appended).toEqual([expect.objectContaining({ revision: 3, kind: 'unsigned', pageContentChanged: false })]);
  });

  it('an update that redefines a page content stream after signing is flagged: VERIFY_FAILED', async () => {
    const doc = await readPdf(bytesSource(signedBt));
    const page = await doc.page(1);
    const value = page.dict.get('Contents');
    const contents = Array.isArray(value) ? value[0] : value;
    expect(contents).toBeInstanceOf(PdfRef);
    const u = new IncrementalUpdate(doc);
    u.set(contents as PdfRef, new PdfStream(new PdfDict(), new TextEncoder().encode('BT /F1 12 Tf 72 72 Td (forged) Tj ET')));
    const updated = concat(signedBt, u.serialize().bytes);
    const { code, report } = await verify(updated);
    expect(code).toBe(9);
    expect(report.code).toBe('VERIFY_FAILED');
    expect(report.signatures[0]!.coverage!.appended[0]).toMatchObject({ pageContentChanged: true });
  });

  it('a wrong trust anchor: VERIFY_UNTRUSTED, exit 9', async () => {
    const other = issueTestCertificate({ commonName: 'Some Other Root', ca: true });
    const pemPath = join(work.dir, 'other-root.pem');
    await writeFile(pemPath, derToPem(other.der, 'CERTIFICATE'));
    const { code, report } = await verify(signedBt, ['--trust', pemPath]);
    expect(code).toBe(9);
    expect(report.code).toBe('VERIFY_UNTRUSTED');
    expect(report.signatures[0]).toMatchObject({ status: 'untrusted', integrity: { valid: true }, signatureValue: { valid: true }, chain: { trusted: false } });
  });

  it('the sandbox root given with --trust is trusted', async () => {
    const { code } = await verify(signedBt, ['--trust', sandbox.rootPemPath]);
    expect(code).toBe(0);
  });

  it('a revoked signer certificate (alice-revoked, signed with its key; the DSS holds the CRL): VERIFY_FAILED', async () => {
    const refused = await runCli(['--auto-approve', '--quiet', 'sign', '--credential', 'alice-revoked', '-o', join(work.dir, 'revoked-cli.pdf'), join(work.dir, 'input.pdf')], { env: sandbox.env });
    expect(refused.code).not.toBe(0); // the sandbox refuses to sign with it
    const revoked = credential('alice-revoked');
    const signed = await localSign(await pdfLibBytes(), revoked);
    const withoutData = await verify(signed);
    expect(withoutData.report.signatures[0]!.chain!.revocation[0]).toMatchObject({ status: 'unknown', source: 'none' });
    const { code, report } = await verify(await withDss(signed, { certs: revoked.chain, crls: [issuingCrl(), rootCrl()] }));
    expect(code).toBe(9);
    expect(report.code).toBe('VERIFY_FAILED');
    expect(report.signatures[0]!.chain!.revocation[0]).toMatchObject({ status: 'revoked', source: 'dss-crl' });
    expect(report.signatures[0]!.problems.join('\n')).toMatch(/revoked/);
  });

  it('an expired signer certificate (alice-expired): VERIFY_FAILED', async () => {
    const signed = await localSign(await pdfLibBytes(), credential('alice-expired'));
    const { code, report } = await verify(signed);
    expect(code).toBe(9);
    expect(report.code).toBe('VERIFY_FAILED');
    expect(report.signatures[0]!.problems.join('\n')).toMatch(/expired on/);
  });

  it('B-LT: a DSS with the signer and TSA chains and their CRLs; B-LTA with a document timestamp after it', async () => {
    const alice = credential('alice-rsa2048');
    const lt = await withDss(signedBt, { certs: [...alice.chain, ...pki.tsaChain], crls: [issuingCrl(), rootCrl()] });
    const ltResult = await verify(lt, ['--level', 'B-LT']);
    expect(ltResult.code, ltResult.stdout).toBe(0);
    expect(ltResult.report.signatures[0]).toMatchObject({ status: 'valid', level: 'B-LT' });
    expect(ltResult.report.signatures[0]!.coverage!.appended).toEqual([expect.objectContaining({ kind: 'dss' })]);
    expect(ltResult.report.signatures[0]!.chain!.revocation[0]).toMatchObject({ status: 'good', source: 'dss-crl' });

    const lta = await addDocTimeStamp(lt);
    const ltaResult = await verify(lta, ['--level', 'B-LTA']);
    expect(ltaResult.code, ltaResult.stdout).toBe(0);
    expect(ltaResult.report.signatures.map((s) => [s.kind, s.status, s.level ?? null])).toEqual([
      ['signature', 'valid', 'B-LTA'],
      ['docTimeStamp', 'valid', null],
    ]);
    expect(ltaResult.report.signatures[0]!.coverage!.appended.map((u) => u.kind)).toEqual(['dss', 'docTimeStamp']);
  });

  it("a B-LT file whose DSS lacks the TSA's revocation data: level B-T with a warning; --level B-LT fails (VERIFY_LEVEL)", async () => {
    const alice = credential('alice-rsa2048');
    const partial = await withDss(signedBt, { certs: alice.chain, crls: [issuingCrl()] });
    const plain = await verify(partial);
    expect(plain.code).toBe(0);
    const [s] = plain.report.signatures;
    expect(s!.level).toBe('B-T');
    expect(s!.warnings.join('\n')).toMatch(/B-LT not reached: .*timestamp authority chain: .*Time-Stamping Authority/);
    const strict = await verify(partial, ['--level', 'B-LT']);
    expect(strict.code).toBe(9);
    expect(strict.report.code).toBe('VERIFY_LEVEL');
  });

  it('a file without signatures: VERIFY_NO_SIGNATURES, exit 9', async () => {
    const { code, report } = await verify(await pdfLibBytes());
    expect(code).toBe(9);
    expect(report.code).toBe('VERIFY_NO_SIGNATURES');
  });

  it('CAdES: verify FILE --signature FILE.p7s, and a changed file fails', async () => {
    const input = join(work.dir, 'notes.txt');
    await writeFile(input, 'release notes\n');
    const signed = await runCli(['--auto-approve', '--quiet', 'sign', '--level', 'B-T', input], { env: sandbox.env });
    expect(signed.code, signed.stderr).toBe(0);
    const ok = await runCli(['--json', 'verify', input, '--signature', `${input}.p7s`], { env: sandbox.env });
    expect(ok.code, ok.stdout).toBe(0);
    expect(ok.json()).toMatchObject({ kind: 'cades', signatures: [{ status: 'valid', level: 'B-T' }] });
    await writeFile(input, 'release notes, changed\n');
    const bad = await runCli(['--json', 'verify', input, '--signature', `${input}.p7s`], { env: sandbox.env });
    expect(bad.code).toBe(9);
    expect(bad.json()).toMatchObject({ code: 'VERIFY_FAILED' });
  });
});
