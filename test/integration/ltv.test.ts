/**
 * PAdES B-LT and B-LTA against the sandbox: `esign sign --level B-LT|B-LTA` and `esign extend`
 * (B-T → B-LTA, refreshing an LTA), with the DSS read back through the PDF core and its contents
 * checked with pkijs; a failing OCSP responder leaves no output behind.
 */
import { createHash, X509Certificate } from 'node:crypto';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as pkijs from 'pkijs';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bytesSource, readPdf } from '../../src/core/pdf/index.js';
import { decodeStream } from '../../src/core/pdf/filters.js';
import { PdfStream } from '../../src/core/pdf/objects.js';
import { findSignatures, targetsOf, tokenTarget } from '../../src/core/ltv/index.js';
import { parseTimeStampToken } from '../../src/core/tsp/response.js';
import { runCli } from '../helpers/run-cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/tmp.js';
import { SANDBOX_SEAL } from '../../src/sandbox/deps.js';

let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox({ autoApprove: true });
});
afterAll(async () => sandbox?.close());
afterEach(() => sandbox?.sandbox.faults.clear());

const sha256 = (bytes: Uint8Array): Buffer => createHash('sha256').update(bytes).digest();

async function makePdf(path: string): Promise<Buffer> {
  const document = await PDFDocument.create();
  const font = await document.embedFont(StandardFonts.Helvetica);
  document.addPage([595, 842]).drawText('Long-term', { x: 72, y: 760, size: 14, font });
  const bytes = Buffer.from(await document.save({ useObjectStreams: false }));
  await writeFile(path, bytes);
  return bytes;
}

async function sign(input: string, level: string): Promise<{ output: string; result: Record<string, unknown> }> {
  const result = await runCli(['--auto-approve', '--json', 'sign', '--level', level, input], { env: sandbox.env });
  expect(result.code, result.stderr).toBe(0);
  const json = result.json<Record<string, unknown>>();
  return { output: json['output'] as string, result: json };
}

/** `esign verify --level LEVEL` on `path`: exit 0, every signature valid at exactly that level. */
async function expectVerifiedAt(path: string, level: 'B-LT' | 'B-LTA'): Promise<void> {
  const result = await runCli(['--json', 'verify', '--level', level, path], { env: sandbox.env });
  expect(result.code, result.stdout).toBe(0);
  const report = result.json<{ status: string; signatures: Array<{ kind: string; status: string; level?: string }> }>();
  expect(report.status).toBe('valid');
  const signatures = report.signatures.filter((s) => s.kind === 'signature');
  expect(signatures.length).toBeGreaterThan(0);
  for (const signature of signatures) expect(signature, result.stdout).toMatchObject({ status: 'valid', level });
}

interface Dss {
  certs: X509Certificate[];
  ocsps: pkijs.BasicOCSPResponse[];
  crls: pkijs.CertificateRevocationList[];
}

async function dssOf(pdf: Uint8Array): Promise<Dss> {
  const doc = await readPdf(bytesSource(pdf));
  const { dict: catalog } = await doc.catalog();
  const dss = await doc.resolveDict(catalog.get('DSS'));
  expect(dss, 'the catalog has a /DSS').toBeDefined();
  const items = async (key: string): Promise<Uint8Array[]> => {
    const out: Uint8Array[] = [];
    for (const ref of (await doc.resolveArray(dss!.get(key))) ?? []) {
      const stream = await doc.resolve(ref);
      if (stream instanceof PdfStream) out.push(decodeStream(stream));
    }
    return out;
  };
  return {
    certs: (await items('Certs')).map((der) => new X509Certificate(der)),
    ocsps: (await items('OCSPs')).map((der) => {
      const response = pkijs.OCSPResponse.fromBER(der);
      expect(response.responseStatus.valueBlock.valueDec).toBe(0);
      return pkijs.BasicOCSPResponse.fromBER(response.responseBytes!.response.valueBlock.valueHexView);
    }),
    crls: (await items('CRLs')).map((der) => pkijs.CertificateRevocationList.fromBER(der)),
  };
}

const cn = (certificate: X509Certificate): string => /CN=([^\n]+)/.exec(certificate.subject)?.[1] ?? '';

function expectCompleteDss(dss: Dss, signerName = 'Alice Test'): void {
  const names = dss.certs.map(cn);
  expect(names.some((name) => name.startsWith(signerName))).toBe(true);
  for (const expected of [
    'esign Sandbox TEST Issuing CA',
    'esign Sandbox TEST Root CA',
    'esign Sandbox TEST Time-Stamping Authority',
    'esign Sandbox TEST OCSP Responder',
  ]) {
    expect(names).toContain(expected);
  }
  expect(new Set(dss.certs.map((c) => c.fingerprint256)).size).toBe(dss.certs.length);
  // One OCSP response: "good" for the signer; two CRLs: the issuing CA's (for the signer's chain) and
  // the root's (covering the issuing CA and the TSA certificate).
  expect(dss.ocsps).toHaveLength(1);
  const single = dss.ocsps[0]!.tbsResponseData.responses[0]!;
  expect(single.certStatus.idBlock.tagNumber).toBe(0);
  const signer = dss.certs.find((c) => cn(c).startsWith(signerName))!;
  expect(Buffer.from(single.certID.serialNumber.valueBlock.valueHexView).toString('hex').replace(/^0+/, '')).toBe(
    signer.serialNumber.toLowerCase().replace(/^0+/, ''),
  );
  expect(dss.crls).toHaveLength(2);
  const subjectDer = (name: string) => {
    const certificate = dss.certs.find((c) => cn(c) === name)!;
    return Buffer.from(pkijs.Certificate.fromBER(certificate.raw).subject.toSchema().toBER(false));
  };
  const crlIssuers = dss.crls.map((crl) => Buffer.from(crl.issuer.toSchema().toBER(false)));
  for (const ca of ['esign Sandbox TEST Issuing CA', 'esign Sandbox TEST Root CA']) {
    expect(crlIssuers.some((issuer) => issuer.equals(subjectDer(ca)))).toBe(true);
  }
}

function byteRanges(pdf: Buffer): number[][] {
  return [...pdf.toString('latin1').matchAll(/\/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\]/g)].map((m) =>
    m.slice(1, 5).map(Number),
  );
}

/** The last document timestamp: its token's imprint equals the SHA-256 of its ByteRange, which ends at `end`. */
async function expectDocTimestampCovers(pdf: Buffer, count: number): Promise<void> {
  const signatures = await findSignatures(await readPdf(bytesSource(pdf)));
  const stamps = signatures.filter((s) => s.kind === 'docTimeStamp');
  expect(stamps).toHaveLength(count);
  const ranges = byteRanges(pdf);
  const last = ranges.at(-1)!;
  const [, a = 0, b = 0, c = 0] = last;
  const signed = Buffer.concat([pdf.subarray(0, a), pdf.subarray(b, b + c)]);
  const token = parseTimeStampToken(stamps.at(-1)!.cms!);
  expect(Buffer.from(token.tstInfo.messageImprint.hashedMessage).equals(sha256(signed))).toBe(true);
  expect(pdf.toString('latin1', a - 400, a)).toMatch(/\/Type \/DocTimeStamp[\s\S]*\/SubFilter \/ETSI\.RFC3161/);
  expect(b + c).toBe(pdf.length);
}

describe('PAdES B-LT and B-LTA', () => {
  it('sign --level B-LT: a DSS update after the signature with the signer and TSA chains, OCSP and CRL', async () => {
    const dir = await tempDir();
    const input = join(dir, 'lt.pdf');
    const original = await makePdf(input);
    const { output, result } = await sign(input, 'B-LT');
    expect(result).toMatchObject({ level: 'B-LT', dss: { ocsps: 1, crls: 2 } });
    const pdf = await readFile(output);
    expect(await readFile(input)).toEqual(original);
    expect(pdf.subarray(0, original.length).equals(original)).toBe(true);
    expectCompleteDss(await dssOf(pdf));
    // The signature is the only one and the DSS comes after its ByteRange's end.
    const ranges = byteRanges(pdf);
    expect(ranges).toHaveLength(1);
    const [, , b = 0, c = 0] = ranges[0]!;
    expect(b + c).toBeLessThan(pdf.length);
    expect(pdf.toString('latin1', b + c)).toContain('/DSS');
    expect(result['sha256']).toBe(sha256(pdf).toString('hex'));
    expect(result['bytes']).toBe(pdf.length);
    await expectVerifiedAt(output, 'B-LT');
  });

  it('sign --level B-LTA: DSS, then a document timestamp over everything before it', async () => {
    const dir = await tempDir();
    const input = join(dir, 'lta.pdf');
    await makePdf(input);
    const { output, result } = await sign(input, 'B-LTA');
    expect(result).toMatchObject({ level: 'B-LTA' });
    expect(typeof result['archiveTimestamp']).toBe('string');
    const pdf = await readFile(output);
    expectCompleteDss(await dssOf(pdf));
    await expectDocTimestampCovers(pdf, 1);
    expect(pdf.toString('latin1').indexOf('/Type /DSS')).toBeLessThan(pdf.toString('latin1').indexOf('/DocTimeStamp'));
    expect(result['sha256']).toBe(sha256(pdf).toString('hex'));
    expect((await readdir(dir)).sort()).toEqual(['lta-signed.pdf', 'lta.pdf']);
    await expectVerifiedAt(output, 'B-LTA');
  });

  it('extend: B-T → B-LTA beside the input, then an LTA refresh in place adds a second archive timestamp', async () => {
    const dir = await tempDir();
    const input = join(dir, 'bt.pdf');
    await makePdf(input);
    const { output: signed } = await sign(input, 'B-T');
    const bt = await readFile(signed);

    const extended = await runCli(['--json', 'extend', '--level', 'B-LTA', signed], { env: sandbox.env });
    expect(extended.code, extended.stderr).toBe(0);
    const first = extended.json<Record<string, unknown>>();
    expect(first).toMatchObject({
      output: join(dir, 'bt-signed-lta.pdf'),
      level: 'B-LTA',
      signatures: 1,
      documentTimestamps: 1,
      dss: { ocsps: 1, crls: 2 },
    });
    expect(await readFile(signed)).toEqual(bt);
    const lta = await readFile(join(dir, 'bt-signed-lta.pdf'));
    expect(lta.subarray(0, bt.length).equals(bt)).toBe(true);
    expectCompleteDss(await dssOf(lta));
    await expectDocTimestampCovers(lta, 1);
    await expectVerifiedAt(join(dir, 'bt-signed-lta.pdf'), 'B-LTA');

    const refreshed = await runCli(['--json', 'extend', '--in-place', join(dir, 'bt-signed-lta.pdf')], {
      env: sandbox.env,
    });
    expect(refreshed.code, refreshed.stderr).toBe(0);
    expect(refreshed.json()).toMatchObject({ level: 'B-LTA', signatures: 1, documentTimestamps: 2 });
    const twice = await readFile(join(dir, 'bt-signed-lta.pdf'));
    expect(twice.subarray(0, lta.length).equals(lta)).toBe(true);
    await expectDocTimestampCovers(twice, 2);
    // The DSS holds no duplicates after the refresh.
    const dss = await dssOf(twice);
    expect(new Set(dss.certs.map((c) => c.fingerprint256)).size).toBe(dss.certs.length);
    await expectVerifiedAt(join(dir, 'bt-signed-lta.pdf'), 'B-LTA');
    expect((await readdir(dir)).sort()).toEqual(['bt-signed-lta.pdf', 'bt-signed.pdf', 'bt.pdf']);
  });

  it('extend --level B-LT writes NAME-lt.pdf; refuses an unsigned PDF and an existing output', async () => {
    const dir = await tempDir();
    const input = join(dir, 'x.pdf');
    await makePdf(input);
    const { output: signed } = await sign(input, 'B-T');
    const lt = await runCli(['extend', '--level', 'B-LT', signed], { env: sandbox.env });
    expect(lt.code, lt.stderr).toBe(0);
    expectCompleteDss(await dssOf(await readFile(join(dir, 'x-signed-lt.pdf'))));
    const again = await runCli(['--json', 'extend', '--level', 'B-LT', signed], { env: sandbox.env });
    expect(again.code).toBe(8);
    expect(again.json<{ error: { code: string } }>().error.code).toBe('OUTPUT_EXISTS');
    const unsigned = await runCli(['--json', 'extend', input], { env: sandbox.env });
    expect(unsigned.code).toBe(7);
    expect(unsigned.json<{ error: { code: string } }>().error.code).toBe('PDF_NOT_SIGNED');
    expect((await readdir(dir)).sort()).toEqual(['x-signed-lt.pdf', 'x-signed.pdf', 'x.pdf']);
  });

  it('an OCSP responder that is down: the CRL stands in, with a warning naming it; without the CRL a clear error naming both, and no output or temp file left', async () => {
    const dir = await tempDir();
    const input = join(dir, 'down.pdf');
    await makePdf(input);
    sandbox.sandbox.faults.inject({ route: 'pki POST /ocsp', fault: { kind: 'status', status: 503 }, times: 10 });
    const fallback = await runCli(
      ['--auto-approve', '--json', 'sign', '--level', 'B-LT', '-o', join(dir, 'fallback.pdf'), input],
      { env: sandbox.env },
    );
    expect(fallback.code, fallback.stderr).toBe(0);
    expect(fallback.stderr).toMatch(
      /OCSP responder at http:\/\/127\.0\.0\.1:\d+\/pki\/ocsp answered HTTP 503; the CRL of .* stands in for it/,
    );
    const dss = await dssOf(await readFile(join(dir, 'fallback.pdf')));
    expect(dss.ocsps).toHaveLength(0);
    expect(dss.crls).toHaveLength(2);
    await rm(join(dir, 'fallback.pdf'));

    sandbox.sandbox.faults.inject({ route: 'pki POST /ocsp', fault: { kind: 'status', status: 503 }, times: 10 });
    sandbox.sandbox.faults.inject({ route: 'pki GET /issuing.crl', fault: { kind: 'status', status: 503 }, times: 10 });
    const failed = await runCli(['--auto-approve', '--json', 'sign', '--level', 'B-LTA', input], { env: sandbox.env });
    expect(failed.code).toBe(5);
    const error = failed.json<{ error: { code: string; message: string; hint: string } }>().error;
    expect(error.code).toBe('REVOCATION_UNAVAILABLE');
    expect(error.message).toMatch(
      /OCSP responder at http:\/\/127\.0\.0\.1:\d+\/pki\/ocsp answered HTTP 503, and its CRL fallback failed too: .*issuing\.crl answered HTTP 503/,
    );
    expect(error.hint).toContain('esign extend');
    expect(await readdir(dir)).toEqual(['down.pdf']);

    sandbox.sandbox.faults.clear();
    const { output: signed } = await sign(input, 'B-T');
    const before = await readFile(signed);
    sandbox.sandbox.faults.inject({ route: 'pki POST /ocsp', fault: { kind: 'status', status: 503 }, times: 10 });
    sandbox.sandbox.faults.inject({ route: 'pki GET /issuing.crl', fault: { kind: 'status', status: 503 }, times: 10 });
    const inPlace = await runCli(['--json', 'extend', '--in-place', signed], { env: sandbox.env });
    expect(inPlace.code).toBe(5);
    expect(await readFile(signed)).toEqual(before);
    expect((await readdir(dir)).sort()).toEqual(['down-signed.pdf', 'down.pdf']);
  });

  /** The PIN-only bulk seal, over client credentials, in windows of `window` signatures. */
  const sealEnv = (window: number): Record<string, string> => ({
    ...sandbox.env,
    ESIGN_SERVICE_AUTH: 'client-credentials',
    ESIGN_CREDENTIAL_PIN: SANDBOX_SEAL.pin,
    ESIGN_CSC_MAX_SIGNATURES: String(window),
  });
  const served = (route: string): number => sandbox.sandbox.requestLog.filter((id) => id === route).length;

  it('a batch at B-LTA in windows: revocation data fetched once per certificate per window, issued after its signatures; every output valid at B-LTA', async () => {
    const dir = await tempDir();
    for (let index = 0; index < 5; index++) await makePdf(join(dir, `doc-${index}.pdf`));
    const before = {
      ocsp: served('pki POST /ocsp'),
      issuing: served('pki GET /issuing.crl'),
      root: served('pki GET /root.crl'),
    };
    const run = await runCli(['--json', 'sign', '--level', 'B-LTA', '--output-dir', join(dir, 'out'), dir], {
      env: sealEnv(2),
    });
    expect(run.code, run.stderr).toBe(0);
    // Three windows (2 + 2 + 1): the signer's OCSP response and the two CRLs once each per window.
    expect(served('pki POST /ocsp') - before.ocsp).toBe(3);
    expect(served('pki GET /issuing.crl') - before.issuing).toBe(3);
    expect(served('pki GET /root.crl') - before.root).toBe(3);
    const results = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { output: string; timestamp: string });
    expect(results).toHaveLength(5);
    for (const result of results) {
      const dss = await dssOf(await readFile(result.output));
      expectCompleteDss(dss, 'ACME Test Seal');
      // Produced no earlier than the signature's timestamp (to the second, as the responder stamps).
      expect(Math.floor(dss.ocsps[0]!.tbsResponseData.producedAt.getTime() / 1000)).toBeGreaterThanOrEqual(
        Math.floor(new Date(result.timestamp).getTime() / 1000),
      );
      await expectDocTimestampCovers(await readFile(result.output), 1);
      await expectVerifiedAt(result.output, 'B-LTA');
    }
  });

  it('an OCSP responder answering garbage for one window, then slow for the next: their files fall back to the CRLs, with a warning; all valid at B-LT', async () => {
    const dir = await tempDir();
    for (let index = 0; index < 4; index++) await makePdf(join(dir, `doc-${index}.pdf`));
    sandbox.sandbox.faults.inject({
      route: 'pki POST /ocsp',
      fault: { kind: 'malformed', body: 'not an OCSP response', contentType: 'application/ocsp-response' },
      times: 1,
    });
    sandbox.sandbox.faults.inject({ route: 'pki POST /ocsp', fault: { kind: 'delay', ms: 3_000 }, times: 10 });
    const run = await runCli(['--json', 'sign', '--level', 'B-LT', '--output-dir', join(dir, 'out'), dir], {
      env: { ...sealEnv(2), ESIGN_HTTP_TIMEOUT_MS: '400' },
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(
      /OCSP response from http:\/\/127\.0\.0\.1:\d+\/pki\/ocsp cannot be used: .*; the CRL of esign Sandbox TEST Issuing CA stands in for it/,
    );
    expect(run.stderr).toMatch(
      /OCSP responder at http:\/\/127\.0\.0\.1:\d+\/pki\/ocsp: .*did not answer within .*; the CRL of esign Sandbox TEST Issuing CA stands in for it/,
    );
    const results = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { output: string; dss: { ocsps: number; crls: number } });
    expect(results.map((result) => result.dss)).toEqual(
      Array.from({ length: 4 }, () => ({ certs: expect.any(Number), ocsps: 0, crls: 2 })),
    );
    for (const result of results) await expectVerifiedAt(result.output, 'B-LT');
  });

  it('extend over many files: the certificates they share get their revocation data once; each output valid at B-LTA', async () => {
    const dir = await tempDir();
    for (let index = 0; index < 3; index++) await makePdf(join(dir, `doc-${index}.pdf`));
    const signing = await runCli(['--json', 'sign', '--level', 'B-T', '--output-dir', join(dir, 'bt'), dir], {
      env: sealEnv(50),
    });
    expect(signing.code, signing.stderr).toBe(0);
    const signed = ['doc-0', 'doc-1', 'doc-2'].map((name) => join(dir, 'bt', `${name}-signed.pdf`));
    const before = { ocsp: served('pki POST /ocsp'), issuing: served('pki GET /issuing.crl') };
    const run = await runCli(['--json', 'extend', '--level', 'B-LTA', ...signed], { env: sandbox.env });
    expect(run.code, run.stderr).toBe(0);
    expect(served('pki POST /ocsp') - before.ocsp).toBe(1);
    expect(served('pki GET /issuing.crl') - before.issuing).toBe(1);
    const results = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { input: string; output: string });
    expect(results.map((result) => result.input)).toEqual(signed);
    for (const result of results) {
      expectCompleteDss(await dssOf(await readFile(result.output)), 'ACME Test Seal');
      await expectVerifiedAt(result.output, 'B-LTA');
    }
  });

  it('a certificate revoked between two windows is caught at the next: those files fail naming the revocation, the others are written (exit 10)', async () => {
    const dir = await tempDir();
    for (let index = 0; index < 4; index++) await makePdf(join(dir, `doc-${index}.pdf`));
    // Revoked once the first window has fetched the issuing CA's CRL, its last revocation data.
    sandbox.sandbox.revocations.arm({
      credentialID: SANDBOX_SEAL.pinOnlyCredentialID,
      after: { route: 'pki GET /issuing.crl', calls: 1 },
    });
    try {
      const run = await runCli(
        ['--json', 'sign', '--level', 'B-LT', '--continue-on-error', '--output-dir', join(dir, 'out'), dir],
        { env: sealEnv(2) },
      );
      expect(run.code, run.stderr).toBe(10);
      const lines = run.stdout
        .trim()
        .split('\n')
        .map(
          (line) => JSON.parse(line) as { input: string; output?: string; error?: { code: string; message: string } },
        );
      const written = lines.filter((line) => line.output && !line.error);
      const failed = lines.filter((line) => line.error);
      expect(written.map((line) => line.input).sort()).toEqual([join(dir, 'doc-0.pdf'), join(dir, 'doc-1.pdf')]);
      expect(failed).toHaveLength(2);
      for (const line of failed) {
        expect(line.error!.code).toBe('REVOCATION_CERT_REVOKED');
        expect(line.error!.message).toMatch(/ACME Test Seal.*was revoked on .*before it was used/);
      }
      for (const line of written) await expectVerifiedAt(line.output!, 'B-LT');
      expect((await readdir(join(dir, 'out'))).sort()).toEqual(['doc-0-signed.pdf', 'doc-1-signed.pdf']);
    } finally {
      const serial = sandbox.sandbox.pki.credentials.find(
        (credential) => credential.credentialID === SANDBOX_SEAL.pinOnlyCredentialID,
      )!.signer.serialNumberHex;
      sandbox.sandbox.pki.revocations.splice(
        sandbox.sandbox.pki.revocations.findIndex((revocation) => revocation.serialNumberHex === serial),
        1,
      );
    }
  });

  it('the signature just made is taken as built: the same chains and times as parsed back; any other CMS is parsed', async () => {
    const dir = await tempDir();
    const input = join(dir, 'known.pdf');
    await makePdf(input);
    const { output } = await sign(input, 'B-T');
    const doc = await readPdf(bytesSource(await readFile(output)));
    const [parsed] = await findSignatures(doc);
    const token = parseTimeStampToken(parsed!.timestampToken!);
    const tsaChain = [
      token.signerCertificate!,
      ...token.certificates.filter((der) => !Buffer.from(der).equals(token.signerCertificate!)),
    ];
    const timestampTarget = tokenTarget(parsed!.timestampToken!, {
      certificates: tsaChain,
      genTime: token.tstInfo.genTime,
    })[0];
    const known = {
      cms: parsed!.cms,
      certificates: parsed!.certificates,
      signerCertificate: parsed!.signerCertificate,
      timestampToken: parsed!.timestampToken,
      timestampTarget,
    };
    const summary = (targets: ReturnType<typeof targetsOf>) =>
      targets.map((target) => [
        target.role,
        sha256(target.leaf).toString('hex'),
        target.pool.length,
        target.usedAt?.toISOString(),
      ]);

    const taken = await findSignatures(doc, known);
    expect(taken[0]!.timestampTarget).toBe(timestampTarget);
    expect(summary(targetsOf(taken))).toEqual(summary(targetsOf([parsed!])));
    // A CMS other than the one built (here one byte off) is read from the document.
    const other = await findSignatures(doc, {
      ...known,
      cms: Uint8Array.from([...parsed!.cms!.subarray(0, -1), parsed!.cms!.at(-1)! ^ 1]),
    });
    expect(other[0]!.timestampTarget).toBeUndefined();
    expect(summary(targetsOf(other))).toEqual(summary(targetsOf([parsed!])));
  });
});
