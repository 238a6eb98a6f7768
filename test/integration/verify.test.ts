/**
 * `esign verify` end to end: signatures made by `esign sign` on the sandbox, and, where the sandbox
 * refuses to sign (revoked and expired credentials), signatures made here with the sandbox PKI's keys.
 * B-LT/B-LTA inputs are built with the PDF core's buildDssUpdate and a document timestamp placeholder.
 */
import { createHash, randomBytes, sign } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  decode,
  encoded,
  explicit,
  objectIdentifier,
  sequence,
  sequenceItems,
  setItems,
  setOf,
  tlv,
} from '../../src/core/cms/der.js';
import { attribute, buildSignedAttributes } from '../../src/core/cms/signed-attributes.js';
import { buildSignedData } from '../../src/core/cms/signed-data.js';
import { OID } from '../../src/core/cms/oids.js';
import { issueTestCertificate } from '../../src/core/cms/test-pki.js';
import {
  buildDssUpdate,
  byteRangeChunks,
  bytesSource,
  prepareSignature,
  readPdf,
  spliceContents,
} from '../../src/core/pdf/index.js';
import type { PdfDocument, PreparedUpdate } from '../../src/core/pdf/index.js';
import { IncrementalUpdate } from '../../src/core/pdf/incremental.js';
import { PdfDict, PdfRef, PdfStream, PdfString, dict, name } from '../../src/core/pdf/objects.js';
import { buildOcspRequest, certificateFacts } from '../../src/core/ltv/index.js';
import { buildTimeStampToken } from '../../src/core/tsp/token.js';
import { buildTstInfo } from '../../src/core/tsp/tst-info.js';
import type { VerificationReport } from '../../src/core/verify/types.js';
import { buildCrl, buildOcspResponse } from '../../src/sandbox/pki-routes.js';
import type { SandboxCredential, SandboxPki } from '../../src/sandbox/pki.js';
import { derToPem, pkiUrls } from '../../src/sandbox/pki.js';
import { formXObjectPdfBytes, pdfLibBytes } from '../helpers/pdf-fixtures.js';
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
  const result = await runCli(['--auto-approve', '--quiet', 'sign', '--level', 'B-T', '-o', output, input], {
    env: sandbox.env,
  });
  expect(result.code, result.stderr).toBe(0);
  signedBt = new Uint8Array(await readFile(output));
});
afterAll(async () => {
  await sandbox?.close();
  await work?.remove();
});

let counter = 0;
async function verify(
  bytes: Uint8Array,
  extra: string[] = [],
  env: Record<string, string> = {},
): Promise<{ code: number | null; report: VerificationReport & { valid: boolean }; stdout: string; stderr: string }> {
  const path = join(work.dir, `case-${++counter}.pdf`);
  await writeFile(path, bytes);
  const result = await runCli(['--json', 'verify', ...extra, path], { env: { ...sandbox.env, ...env } });
  return { code: result.code, report: result.json(), stdout: result.stdout, stderr: result.stderr };
}

function concat(...parts: Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(parts));
}

function hashChunks(original: Uint8Array, pu: PreparedUpdate): Uint8Array {
  const hash = createHash('sha256');
  for (const chunk of byteRangeChunks(pu))
    hash.update((chunk.source === 'original' ? original : pu.update).subarray(chunk.start, chunk.end));
  return new Uint8Array(hash.digest());
}

interface RevocationItems {
  ocsps?: Uint8Array[];
  crls?: Uint8Array[];
}

/** Revocation data carried in the CMS: in SignedData.crls, and in the adbe-revocationInfoArchival signed attribute. */
interface EmbeddedRevocation {
  signedData?: RevocationItems;
  adbe?: RevocationItems;
}

const ADBE_REVOCATION_INFO_ARCHIVAL = '1.2.840.113583.1.1.8';
const ID_RI_OCSP_RESPONSE = '1.3.6.1.5.5.7.16.2';

/** A CMS signature over `digest` made with a sandbox credential's key directly (the service refuses revoked and expired ones). */
function localCms(
  digest: Uint8Array,
  credential: SandboxCredential,
  revocation: EmbeddedRevocation = {},
  signingTime?: Date,
): Uint8Array {
  const { signedData, adbe } = revocation;
  let signedAttributes = buildSignedAttributes({
    contentDigest: digest,
    signerCertificate: credential.chain[0]!,
    ...(signingTime ? { signingTime } : {}),
  }).der;
  if (adbe) {
    // RevocationInfoArchival ::= SEQUENCE { crl [0] EXPLICIT SEQUENCE OF CRL, ocsp [1] EXPLICIT SEQUENCE OF OCSPResponse }
    const archival = sequence(
      ...(adbe.crls ? [explicit(0, sequence(...adbe.crls))] : []),
      ...(adbe.ocsps ? [explicit(1, sequence(...adbe.ocsps))] : []),
    );
    signedAttributes = setOf([
      ...setItems(decode(signedAttributes, 'attributes'), 'attributes').map(encoded),
      attribute(ADBE_REVOCATION_INFO_ARCHIVAL, archival),
    ]);
  }
  const signatureValue = new Uint8Array(sign('sha256', signedAttributes, credential.signer.privateKey));
  const cms = buildSignedData({
    signedAttributesDer: signedAttributes,
    signatureValue,
    certificates: credential.chain,
  });
  if (!signedData) return cms;
  // SignedData.crls, [1] IMPLICIT RevocationInfoChoices, goes between the certificates and the signerInfos;
  // an OCSP response is an `other` choice ([1] IMPLICIT OtherRevocationInfoFormat, RFC 5940).
  const choices = [
    ...(signedData.crls ?? []),
    ...(signedData.ocsps ?? []).map((ocsp) => tlv(0xa1, objectIdentifier(ID_RI_OCSP_RESPONSE), ocsp)),
  ];
  const [contentType, content] = sequenceItems(decode(cms, 'ContentInfo'), 'ContentInfo');
  const fields = sequenceItems(content!.items[0], 'SignedData').map(encoded);
  return sequence(
    encoded(contentType!),
    explicit(0, sequence(...fields.slice(0, -1), setOf(choices, 0xa1), fields.at(-1)!)),
  );
}

/** A PAdES B-B signature made with a sandbox credential's key. */
async function localSign(
  input: Uint8Array,
  credential: SandboxCredential,
  revocation?: EmbeddedRevocation,
): Promise<Uint8Array> {
  const pu = await prepareSignature(await readPdf(bytesSource(input)), {
    kind: 'signature',
    signingTime: new Date(),
    contentsSize: 24_000,
  });
  return concat(input, spliceContents(pu, localCms(hashChunks(input, pu), credential, revocation)));
}

/** A document timestamp (ETSI.RFC3161) signed with the sandbox TSA key. */
async function addDocTimeStamp(input: Uint8Array): Promise<Uint8Array> {
  const pu = await prepareSignature(await readPdf(bytesSource(input)), { kind: 'docTimeStamp', contentsSize: 12_000 });
  const tstInfo = buildTstInfo({
    policy: '0.4.0.2023.1.1',
    hashAlgorithm: OID.sha256,
    hashedMessage: hashChunks(input, pu),
    serialNumber: randomBytes(8),
    genTime: new Date(),
  });
  const token = buildTimeStampToken({
    tstInfo,
    signerCertificate: pki.tsa.certificate,
    privateKey: pki.tsa.privateKey,
    certificates: pki.tsaChain,
  });
  return concat(input, spliceContents(pu, token));
}

const issuingCrl = (): Uint8Array => buildCrl(pki, new Date());
/** A CRL of the root (covers the issuing CA and the TSA certificate). */
const rootCrl = (at = new Date()): Uint8Array => buildCrl(pki, at, 'root');

async function withDss(
  input: Uint8Array,
  material: { certs?: Uint8Array[]; crls?: Uint8Array[] },
): Promise<Uint8Array> {
  return concat(input, await buildDssUpdate(await readPdf(bytesSource(input)), material));
}

const credential = (id: string): SandboxCredential => pki.credentials.find((c) => c.credentialID === id)!;
/** The sandbox OCSP responder's answer for a certificate of the issuing CA. */
const ocspFor = (certificate: Uint8Array): Uint8Array =>
  buildOcspResponse(
    pki,
    buildOcspRequest(certificateFacts(certificate), certificateFacts(pki.issuingCa.certificate)),
    new Date(),
  );

/** Appends an update made by `edit` to `pdf`. */
async function appendUpdate(
  pdf: Uint8Array,
  edit: (doc: PdfDocument, update: IncrementalUpdate) => Promise<void>,
): Promise<Uint8Array> {
  const doc = await readPdf(bytesSource(pdf));
  const update = new IncrementalUpdate(doc);
  await edit(doc, update);
  return concat(pdf, update.serialize().bytes);
}

describe('esign verify', () => {
  it('reports a valid B-T signature, trusted on the sandbox profile: exit 0', async () => {
    const { code, report } = await verify(signedBt);
    expect(code).toBe(0);
    expect(report).toMatchObject({ valid: true, code: null, status: 'valid' });
    const [s] = report.signatures;
    expect(s).toMatchObject({
      kind: 'signature',
      status: 'valid',
      level: 'B-T',
      integrity: { valid: true },
      signatureValue: { valid: true },
    });
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
    expect(report.signatures[0]).toMatchObject({ indication: 'TOTAL-FAILED', subIndication: 'HASH_FAILURE' });
    expect(report.signatures[0]).toMatchObject({ status: 'invalid', integrity: { valid: false } });
  });

  it('an unsigned incremental update after signing: reported, VERIFY_MODIFIED, exit 9', async () => {
    const updated = await appendUpdate(signedBt, async (doc, u) => {
      const { ref, dict: catalog } = await doc.catalog();
      u.set(ref, catalog.clone().set('Lang', PdfString.text('nl-NL')));
    });
    const { code, report } = await verify(updated);
    expect(code).toBe(9);
    expect(report.code).toBe('VERIFY_MODIFIED');
    expect(report.signatures[0]).toMatchObject({
      indication: 'INDETERMINATE',
      subIndication: 'SIG_CONSTRAINTS_FAILURE',
    });
    const [s] = report.signatures;
    expect(s).toMatchObject({
      status: 'modified',
      integrity: { valid: true },
      coverage: { wholeFile: false, revision: 2, revisions: 3 },
    });
    expect(s!.coverage!.appended).toEqual([
      expect.objectContaining({ revision: 3, kind: 'unsigned', pageContentChanged: false }),
    ]);
  });

  it('an update that redefines a page content stream after signing is flagged: VERIFY_FAILED', async () => {
    const updated = await appendUpdate(signedBt, async (doc, u) => {
      const value = (await doc.page(1)).dict.get('Contents');
      const contents = Array.isArray(value) ? value[0] : value;
      expect(contents).toBeInstanceOf(PdfRef);
      u.set(
        contents as PdfRef,
        new PdfStream(new PdfDict(), new TextEncoder().encode('BT /F1 12 Tf 72 72 Td (forged) Tj ET')),
      );
    });
    const { code, report } = await verify(updated);
    expect(code).toBe(9);
    expect(report.code).toBe('VERIFY_FAILED');
    expect(report.signatures[0]).toMatchObject({
      indication: 'INDETERMINATE',
      subIndication: 'SIG_CONSTRAINTS_FAILURE',
    });
    expect(report.signatures[0]!.coverage!.appended[0]).toMatchObject({ pageContentChanged: true });
  });

  it('an update that points the page tree at a new page with forged content is flagged: VERIFY_FAILED', async () => {
    const swapped = await appendUpdate(signedBt, async (doc, u) => {
      const pagesRef = (await doc.catalog()).dict.get('Pages') as PdfRef;
      const pages = (await doc.resolveDict(pagesRef))!;
      const kids = (await doc.resolveArray(pages.get('Kids')))!;
      const page = (await doc.resolveDict(kids[0]))!;
      const forged = u.add(
        new PdfStream(new PdfDict(), new TextEncoder().encode('BT /F1 12 Tf 72 72 Td (forged) Tj ET')),
      );
      u.set(pagesRef, pages.clone().set('Kids', [u.add(page.clone().set('Contents', forged)), ...kids.slice(1)]));
    });
    const { code, report } = await verify(swapped);
    expect(code).toBe(9);
    expect(report.code).toBe('VERIFY_FAILED');
    const [update] = report.signatures[0]!.coverage!.appended;
    expect(update).toMatchObject({ kind: 'unsigned', pageContentChanged: true });
    expect(update!.details.join('\n')).toMatch(/page 1 .*\/Contents/);
  });

  it("an update that changes what a page's resources draw is flagged (font, Form XObject); adding an annotation is not", async () => {
    const redefinedFont = await appendUpdate(signedBt, async (doc, u) => {
      const page = await doc.page(1);
      const fonts = (await doc.resolveDict((await doc.resolveDict(page.dict.get('Resources')))!.get('Font')))!;
      const [, fontRef] = [...fonts.entries][0]!;
      u.set(fontRef as PdfRef, (await doc.resolveDict(fontRef))!.clone().set('BaseFont', name('Courier')));
    });
    const font = await verify(redefinedFont);
    expect(font.code).toBe(9);
    expect(font.report.code).toBe('VERIFY_FAILED');
    expect(font.report.signatures[0]!.coverage!.appended[0]).toMatchObject({
      pageContentChanged: true,
      details: [expect.stringMatching(/page 1: \/Resources/)],
    });

    const signedForm = await localSign(await formXObjectPdfBytes(), credential('alice-rsa2048'));
    expect((await verify(signedForm)).code).toBe(0);
    const replacedForm = await appendUpdate(signedForm, async (doc, u) => {
      const page = await doc.page(1);
      const xobjects = (await doc.resolveDict((await doc.resolveDict(page.dict.get('Resources')))!.get('XObject')))!;
      const [, formRef] = [...xobjects.entries][0]!;
      const form = (await doc.resolveDict(formRef))!;
      const forged = new TextEncoder().encode('BT /F1 12 Tf 10 40 Td (forged) Tj ET');
      u.set(
        formRef as PdfRef,
        new PdfStream(
          dict({
            Type: name('XObject'),
            Subtype: name('Form'),
            BBox: form.get('BBox'),
            Resources: form.get('Resources'),
          }),
          forged,
        ),
      );
    });
    const form = await verify(replacedForm);
    expect(form.code).toBe(9);
    expect(form.report.code).toBe('VERIFY_FAILED');
    expect(form.report.signatures[0]!.coverage!.appended[0]).toMatchObject({
      kind: 'unsigned',
      pageContentChanged: true,
    });

    const annotated = await appendUpdate(signedBt, async (doc, u) => {
      const page = await doc.page(1);
      const note = u.add(
        dict({
          Type: name('Annot'),
          Subtype: name('Text'),
          Rect: [72, 72, 92, 92],
          Contents: PdfString.text('a reviewer note'),
        }),
      );
      const annots = (await doc.resolveArray(page.dict.get('Annots'))) ?? [];
      u.set(page.ref, page.dict.clone().set('Annots', [...annots, note]));
    });
    const note = await verify(annotated);
    expect(note.code).toBe(9);
    expect(note.report.code).toBe('VERIFY_MODIFIED');
    expect(note.report.signatures[0]!.coverage!.appended[0]).toMatchObject({
      kind: 'unsigned',
      pageContentChanged: false,
    });
  });

  it('a wrong trust anchor: VERIFY_UNTRUSTED, exit 9', async () => {
    const other = issueTestCertificate({ commonName: 'Some Other Root', ca: true });
    const pemPath = join(work.dir, 'other-root.pem');
    await writeFile(pemPath, derToPem(other.der, 'CERTIFICATE'));
    // No trusted list cached (the sandbox's would vouch for the signer beside --trust).
    const noLists = { ESIGN_CACHE_DIR: join(work.dir, 'no-lists-cache') };
    const { code, report } = await verify(signedBt, ['--trust', pemPath], noLists);
    expect(code).toBe(9);
    expect(report.code).toBe('VERIFY_UNTRUSTED');
    expect(report.signatures[0]).toMatchObject({
      indication: 'INDETERMINATE',
      subIndication: 'NO_CERTIFICATE_CHAIN_FOUND',
    });
    expect(report.signatures[0]).toMatchObject({
      status: 'untrusted',
      integrity: { valid: true },
      signatureValue: { valid: true },
      chain: { trusted: false },
    });
  });

  it('on a profile of its own without trust anchors the sandbox-signed file is untrusted (exit 9); --trust root.pem makes it trusted', async () => {
    const env = { ESIGN_CONFIG_DIR: join(work.dir, 'own-profile') };
    const init = await runCli(['config', 'init', 'work', '--set', 'signingBaseUrl=https://sign.example/api'], { env });
    expect(init.code, init.stderr).toBe(0);
    const path = join(work.dir, 'own-profile.pdf');
    await writeFile(path, signedBt);
    const untrusted = await runCli(['--json', 'verify', path], { env });
    expect(untrusted.code).toBe(9);
    expect(untrusted.json()).toMatchObject({
      code: 'VERIFY_UNTRUSTED',
      signatures: [{ status: 'untrusted', integrity: { valid: true }, chain: { trusted: false } }],
    });
    const trusted = await runCli(['--json', 'verify', '--trust', sandbox.rootPemPath, path], { env });
    expect(trusted.code, trusted.stdout).toBe(0);
    expect(trusted.json()).toMatchObject({ code: null, signatures: [{ status: 'valid', chain: { trusted: true } }] });
  });

  it('the sandbox root given with --trust is trusted', async () => {
    const { code } = await verify(signedBt, ['--trust', sandbox.rootPemPath]);
    expect(code).toBe(0);
  });

  it('a revoked signer certificate (alice-revoked, signed with its key; the DSS holds the CRL): VERIFY_FAILED', async () => {
    const refused = await runCli(
      [
        '--auto-approve',
        '--quiet',
        'sign',
        '--credential',
        'alice-revoked',
        '-o',
        join(work.dir, 'revoked-cli.pdf'),
        join(work.dir, 'input.pdf'),
      ],
      { env: sandbox.env },
    );
    expect(refused.code).not.toBe(0); // the sandbox refuses to sign with it
    const revoked = credential('alice-revoked');
    const signed = await localSign(await pdfLibBytes(), revoked);
    // Without revocation data in the file: --offline leaves the status unknown (INDETERMINATE/TRY_LATER)…
    const offline = await verify(signed, ['--offline']);
    expect(offline.report.signatures[0]!.chain!.revocation[0]).toMatchObject({
      status: 'unknown',
      source: 'none',
      unestablished: { subIndication: 'TRY_LATER' },
    });
    expect(offline.report.signatures[0]).toMatchObject({
      status: 'revocation-unknown',
      code: 'VERIFY_REVOCATION_UNKNOWN',
      indication: 'INDETERMINATE',
      subIndication: 'TRY_LATER',
    });
    // …and online, esign asks the certificate's OCSP responder, which says revoked.
    const fetched = await verify(signed);
    expect(fetched.code).toBe(9);
    expect(fetched.report.signatures[0]).toMatchObject({ code: 'VERIFY_FAILED', subIndication: 'REVOKED_NO_POE' });
    expect(fetched.report.signatures[0]!.chain!.revocation[0]).toMatchObject({
      status: 'revoked',
      source: 'fetched-ocsp',
      url: pkiUrls(sandbox.sandbox.urls.pki).ocsp,
    });
    const { code, report } = await verify(
      await withDss(signed, { certs: revoked.chain, crls: [issuingCrl(), rootCrl()] }),
    );
    expect(code).toBe(9);
    expect(report.code).toBe('VERIFY_FAILED');
    expect(report.signatures[0]).toMatchObject({ indication: 'INDETERMINATE', subIndication: 'REVOKED_NO_POE' });
    expect(report.signatures[0]!.chain!.revocation[0]).toMatchObject({ status: 'revoked', source: 'dss-crl' });
    expect(report.signatures[0]!.problems.join('\n')).toMatch(/revoked/);
  });

  it('revocation data carried in the CMS: OCSP in SignedData.crls (id-ri-ocsp-response), CRLs in adbe-revocationInfoArchival', async () => {
    const alice = credential('alice-rsa2048');
    const signed = await localSign(await pdfLibBytes(), alice, {
      signedData: { ocsps: [ocspFor(alice.chain[0]!)] },
      adbe: { crls: [rootCrl()] },
    });
    const { code, report } = await verify(signed);
    expect(code, JSON.stringify(report.signatures[0]?.problems)).toBe(0);
    expect(report.signatures[0]!.chain!.revocation).toEqual([
      expect.objectContaining({ status: 'good', source: 'cms-ocsp' }),
      expect.objectContaining({ status: 'good', source: 'adbe-crl' }),
      expect.objectContaining({ source: 'trust-anchor' }),
    ]);

    const revoked = credential('alice-revoked');
    const bad = await verify(
      await localSign(await pdfLibBytes(), revoked, { signedData: { ocsps: [ocspFor(revoked.chain[0]!)] } }),
    );
    expect(bad.code).toBe(9);
    expect(bad.report.code).toBe('VERIFY_FAILED');
    expect(bad.report.signatures[0]!.chain!.revocation[0]).toMatchObject({ status: 'revoked', source: 'cms-ocsp' });
  });

  it('CAdES: revocation data in the .p7s (OCSP in adbe-revocationInfoArchival, CRLs in SignedData.crls) is read', async () => {
    const alice = credential('alice-rsa2048');
    const content = join(work.dir, 'minutes.txt');
    await writeFile(content, 'minutes of the meeting\n');
    const digest = new Uint8Array(createHash('sha256').update('minutes of the meeting\n').digest());
    await writeFile(
      `${content}.p7s`,
      localCms(
        digest,
        alice,
        { adbe: { ocsps: [ocspFor(alice.chain[0]!)] }, signedData: { crls: [issuingCrl(), rootCrl()] } },
        new Date(),
      ),
    );
    const result = await runCli(['--json', 'verify', content, '--signature', `${content}.p7s`], { env: sandbox.env });
    expect(result.code, result.stdout).toBe(0);
    const report = result.json<VerificationReport>();
    expect(report.signatures[0]!.chain!.revocation.map((entry) => [entry.status, entry.source])).toEqual([
      ['good', 'adbe-ocsp'],
      ['good', 'cms-crl'],
      ['not-checked', 'trust-anchor'],
    ]);
  });

  it('an expired signer certificate (alice-expired): VERIFY_FAILED', async () => {
    const signed = await localSign(await pdfLibBytes(), credential('alice-expired'));
    const { code, report } = await verify(signed);
    expect(code).toBe(9);
    expect(report.code).toBe('VERIFY_FAILED');
    expect(report.signatures[0]).toMatchObject({ indication: 'INDETERMINATE', subIndication: 'OUT_OF_BOUNDS_NO_POE' });
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

  it("B-LTA holds when a DSS update after the document timestamp only adds the archive TSA's data", async () => {
    const alice = credential('alice-rsa2048');
    const lta = await addDocTimeStamp(
      await withDss(signedBt, { certs: [...alice.chain, ...pki.tsaChain], crls: [issuingCrl(), rootCrl()] }),
    );
    const trailing = await withDss(lta, { crls: [rootCrl(new Date(Date.now() + 5_000))] });
    const { code, report } = await verify(trailing, ['--level', 'B-LTA']);
    expect(code, JSON.stringify(report.signatures.map((s) => [s.level, s.warnings]))).toBe(0);
    expect(report.signatures.map((s) => [s.kind, s.status, s.level ?? null])).toEqual([
      ['signature', 'valid', 'B-LTA'],
      ['docTimeStamp', 'valid', null],
    ]);
    expect(report.signatures[0]!.coverage!.appended.map((u) => u.kind)).toEqual(['dss', 'docTimeStamp', 'dss']);
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

  it('a signature timestamp over SHA-384 of the signature value (as esign asks with P-384 keys) is checked under SHA-384: B-T', async () => {
    const input = await pdfLibBytes();
    const pu = await prepareSignature(await readPdf(bytesSource(input)), {
      kind: 'signature',
      signingTime: new Date(),
      contentsSize: 24_000,
    });
    const alice = credential('alice-rsa2048');
    const signedAttributes = buildSignedAttributes({
      contentDigest: hashChunks(input, pu),
      signerCertificate: alice.chain[0]!,
    }).der;
    const signatureValue = new Uint8Array(sign('sha256', signedAttributes, alice.signer.privateKey));
    const imprint = new Uint8Array(createHash('sha384').update(signatureValue).digest());
    const tstInfo = buildTstInfo({
      policy: '0.4.0.2023.1.1',
      hashAlgorithm: OID.sha384,
      hashedMessage: imprint,
      serialNumber: randomBytes(8),
      genTime: new Date(),
    });
    const token = buildTimeStampToken({
      tstInfo,
      signerCertificate: pki.tsa.certificate,
      privateKey: pki.tsa.privateKey,
      certificates: pki.tsaChain,
    });
    const cms = buildSignedData({
      signedAttributesDer: signedAttributes,
      signatureValue,
      certificates: alice.chain,
      unsignedAttributes: { signatureTimeStampToken: token },
    });
    const { code, report } = await verify(concat(input, spliceContents(pu, cms)));
    expect(report.signatures[0]).toMatchObject({
      status: 'valid',
      indication: 'TOTAL-PASSED',
      level: 'B-T',
      timestamp: { valid: true },
    });
    expect(code).toBe(0);
  });

  it('a signature timestamp whose imprint is a SHA-1 digest (an intact token, a sound TSA chain): weak, exit 12, naming the imprint', async () => {
    const input = await pdfLibBytes();
    const pu = await prepareSignature(await readPdf(bytesSource(input)), {
      kind: 'signature',
      signingTime: new Date(),
      contentsSize: 24_000,
    });
    const alice = credential('alice-rsa2048');
    const signedAttributes = buildSignedAttributes({
      contentDigest: hashChunks(input, pu),
      signerCertificate: alice.chain[0]!,
    }).der;
    const signatureValue = new Uint8Array(sign('sha256', signedAttributes, alice.signer.privateKey));
    const imprint = new Uint8Array(createHash('sha1').update(signatureValue).digest());
    const tstInfo = buildTstInfo({
      policy: '0.4.0.2023.1.1',
      hashAlgorithm: OID.sha1,
      hashedMessage: imprint,
      serialNumber: randomBytes(8),
      genTime: new Date(),
    });
    const token = buildTimeStampToken({
      tstInfo,
      signerCertificate: pki.tsa.certificate,
      privateKey: pki.tsa.privateKey,
      certificates: pki.tsaChain,
    });
    const cms = buildSignedData({
      signedAttributesDer: signedAttributes,
      signatureValue,
      certificates: alice.chain,
      unsignedAttributes: { signatureTimeStampToken: token },
    });
    const { code, report } = await verify(concat(input, spliceContents(pu, cms)));
    expect(report.signatures[0]).toMatchObject({
      status: 'weak',
      indication: 'INDETERMINATE',
      subIndication: 'CRYPTO_CONSTRAINTS_FAILURE',
      timestamp: { valid: true, weak: [expect.stringMatching(/message imprint is a SHA-1 digest/)] },
    });
    expect(report.signatures[0]!.problems.join('\n')).toMatch(
      /algorithm not acceptable: signature timestamp: the message imprint is a SHA-1 digest/,
    );
    expect(report.code).toBe('VERIFY_WEAK_ALGORITHM');
    expect(code).toBe(12);
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
