/**
 * B-LT and B-LTA outputs judged by tools we did not write: pdfsig (poppler; sandbox root trusted in
 * an NSS database) for every signature, qpdf --check for the structure, openssl ts -verify for every
 * document timestamp (with -data over its ByteRange bytes), and openssl ocsp / crl for the
 * revocation data stored in the DSS.
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bytesSource, readPdf } from '../../src/core/pdf/index.js';
import { decodeStream } from '../../src/core/pdf/filters.js';
import { PdfStream } from '../../src/core/pdf/objects.js';
import { findSignatures } from '../../src/core/ltv/index.js';
import { pdfLibPdf, qpdfObjectStreamsPdf } from '../helpers/pdf-fixtures.js';
import { nssDbTrusting } from '../helpers/pdf-judges.js';
import { runCli } from '../helpers/run-cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDirForFile } from '../helpers/tmp.js';
import { SANDBOX_SEAL } from '../../src/sandbox/deps.js';

const has = (tool: string) => spawnSync('which', [tool]).status === 0;
const tools = ['pdfsig', 'qpdf', 'openssl', 'certutil'];
const missing = tools.filter((tool) => !has(tool));
if (missing.length > 0)
  console.warn(`interop ltv tests skipped: missing ${missing.join(', ')} (.ci/run installs them)`);

let sandbox: TestSandbox;
let work: { dir: string; remove: () => Promise<void> };
let nssDir: string;
let issuingPem: string;
let caBundlePem: string;

beforeAll(async () => {
  if (missing.length > 0) return;
  sandbox = await startTestSandbox({ autoApprove: true });
  work = await tempDirForFile('esign-interop-ltv-');
  nssDir = await nssDbTrusting(work.dir, sandbox.rootPemPath);
  issuingPem = join(work.dir, 'issuing.pem');
  await writeFile(issuingPem, sandbox.sandbox.pki.issuingCa.certificatePem);
  caBundlePem = join(work.dir, 'ca-bundle.pem');
  await writeFile(caBundlePem, sandbox.sandbox.pki.issuingCa.certificatePem + sandbox.sandbox.pki.root.certificatePem);
});
afterAll(async () => {
  await sandbox?.close();
  await work?.remove();
});

/** Async on purpose: pdfsig asks the in-process sandbox's OCSP responder. */
function run(tool: string, args: string[]): Promise<{ status: number; out: string }> {
  return new Promise((resolve) => {
    execFile(tool, args, { encoding: 'utf8', timeout: 60_000 }, (error, stdout, stderr) => {
      const status = error
        ? typeof (error as { code?: unknown }).code === 'number'
          ? (error as { code: number }).code
          : -1
        : 0;
      resolve({ status, out: stdout + stderr });
    });
  });
}

interface PdfsigEntry {
  field: string;
  type: string;
  signer: string;
  valid: boolean;
  trusted: boolean;
  totalDocument: boolean;
}

async function pdfsig(path: string): Promise<{ entries: PdfsigEntry[]; raw: string }> {
  const { out } = await run('pdfsig', ['-nssdir', `sql:${nssDir}`, path]);
  const entries = out
    .split(/^Signature #\d+:$/m)
    .slice(1)
    .map((block) => ({
      field: /Signature Field Name: (.+)/.exec(block)?.[1] ?? '',
      type: /Signature Type: (\S+)/.exec(block)?.[1] ?? '',
      signer: /Signer Certificate Common Name: (.+)/.exec(block)?.[1] ?? '',
      valid: /Signature Validation: Signature is Valid\./.test(block),
      trusted: /Certificate Validation: Certificate is Trusted\./.test(block),
      totalDocument: /Total document signed/.test(block),
    }));
  return { entries, raw: out };
}

async function signAt(input: string, level: string): Promise<string> {
  const output = input.replace(/\.pdf$/, `-${level}.pdf`);
  const result = await runCli(['--auto-approve', '--quiet', 'sign', '--force', '--level', level, '-o', output, input], {
    env: sandbox.env,
  });
  expect(result.code, result.stderr).toBe(0);
  return output;
}

/**
 * pdfsig validates every CAdES signature (valid, trusted); poppler 22.x lists document timestamps
 * (ETSI.RFC3161) but does not validate them, so those go to openssl ts -verify instead.
 */
async function judge(
  path: string,
  expected: { signatures: number; docTimestamps: number; lastCoversAll?: boolean },
): Promise<void> {
  const report = await pdfsig(path);
  expect(report.entries, report.raw).toHaveLength(expected.signatures + expected.docTimestamps);
  const signatures = report.entries.filter((entry) => entry.type === 'ETSI.CAdES.detached');
  expect(signatures, report.raw).toHaveLength(expected.signatures);
  for (const signature of signatures) expect(signature, report.raw).toMatchObject({ valid: true, trusted: true });
  const stamps = report.entries.filter((entry) => entry.type !== 'ETSI.CAdES.detached');
  for (const stamp of stamps)
    expect(stamp, report.raw).toMatchObject({
      field: expect.stringMatching(/^Timestamp\d+$/),
      signer: 'esign Sandbox TEST Time-Stamping Authority',
    });
  // B-LT ends with a DSS update; B-LTA with a document timestamp over everything; B-T with the signature.
  expect(report.entries.at(-1)!.totalDocument, report.raw).toBe(expected.lastCoversAll ?? expected.docTimestamps > 0);

  const qpdf = await run('qpdf', ['--check', path]);
  expect(qpdf.status, qpdf.out).toBe(0);
  expect(qpdf.out).toContain('No syntax or stream encoding errors found');

  const pdf = await readFile(path);
  const found = await findSignatures(await readPdf(bytesSource(pdf)));
  const docStamps = found.filter((signature) => signature.kind === 'docTimeStamp');
  expect(docStamps).toHaveLength(expected.docTimestamps);
  const ranges = [
    ...pdf
      .toString('latin1')
      .matchAll(/\/Type \/DocTimeStamp[^]*?\/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\]/g),
  ].map((m) => m.slice(1, 5).map(Number));
  expect(ranges).toHaveLength(expected.docTimestamps);
  for (const [index, stamp] of docStamps.entries()) {
    const [, a = 0, b = 0, c = 0] = ranges[index]!;
    const tokenPath = `${path}.ts${index}.der`;
    const dataPath = `${path}.ts${index}.data`;
    await writeFile(tokenPath, stamp.cms!);
    await writeFile(dataPath, Buffer.concat([pdf.subarray(0, a), pdf.subarray(b, b + c)]));
    const verify = await run('openssl', [
      'ts',
      '-verify',
      '-token_in',
      '-in',
      tokenPath,
      '-data',
      dataPath,
      '-CAfile',
      sandbox.rootPemPath,
    ]);
    expect(verify.out).toContain('Verification: OK');
  }
}

/** The DSS's OCSP responses and CRLs, checked by openssl against the sandbox PKI. */
async function judgeDss(path: string, issuedAfter?: Date): Promise<void> {
  const doc = await readPdf(bytesSource(await readFile(path)));
  const dss = await doc.resolveDict((await doc.catalog()).dict.get('DSS'));
  const items = async (key: string): Promise<Uint8Array[]> => {
    const out: Uint8Array[] = [];
    for (const ref of (await doc.resolveArray(dss?.get(key))) ?? []) {
      const stream = await doc.resolve(ref);
      if (stream instanceof PdfStream) out.push(decodeStream(stream));
    }
    return out;
  };
  const ocsps = await items('OCSPs');
  const crls = await items('CRLs');
  expect(ocsps.length).toBeGreaterThan(0);
  expect(crls.length).toBeGreaterThanOrEqual(2); // the issuing CA's CRL and the root's
  for (const [index, ocsp] of ocsps.entries()) {
    const file = `${path}.ocsp${index}.der`;
    await writeFile(file, ocsp);
    const checked = await run('openssl', [
      'ocsp',
      '-respin',
      file,
      '-issuer',
      issuingPem,
      '-CAfile',
      sandbox.rootPemPath,
      '-resp_text',
    ]);
    expect(checked.out).toContain('Response verify OK');
    expect(checked.out).toContain('Cert Status: good');
    expect(checked.out).not.toContain('Status times invalid');
    // Fresh: produced no earlier than the signature's timestamp (to the second), as openssl reads both.
    if (issuedAfter) {
      const producedAt = new Date(/Produced At: (.+)/.exec(checked.out)![1]!.trim());
      expect(producedAt.getTime(), checked.out).toBeGreaterThanOrEqual(Math.floor(issuedAfter.getTime() / 1000) * 1000);
    }
  }
  for (const [index, crl] of crls.entries()) {
    const file = `${path}.crl${index}.der`;
    await writeFile(file, crl);
    const checked = await run('openssl', ['crl', '-inform', 'DER', '-in', file, '-CAfile', caBundlePem, '-noout']);
    expect(checked.out).toContain('verify OK');
  }
}

describe.skipIf(missing.length > 0)('B-LT and B-LTA outputs judged by pdfsig, qpdf and openssl', () => {
  for (const [producer, make] of [
    ['pdf-lib', (dir: string) => pdfLibPdf(dir, { objectStreams: false })],
    ['qpdf with object streams', qpdfObjectStreamsPdf],
  ] as const) {
    it(`signs a ${producer} PDF at B-LT and B-LTA`, async () => {
      const dir = join(work.dir, producer.replace(/\W+/g, '-'));
      await mkdir(dir, { recursive: true });
      const input = await make(dir);
      const lt = await signAt(input, 'B-LT');
      await judge(lt, { signatures: 1, docTimestamps: 0 });
      await judgeDss(lt);
      const lta = await signAt(input, 'B-LTA');
      await judge(lta, { signatures: 1, docTimestamps: 1 });
      await judgeDss(lta);
    });
  }

  it('extends B-T to B-LTA, refreshes it, and extends a file with two signatures', async () => {
    const dir = join(work.dir, 'extend');
    await mkdir(dir, { recursive: true });
    const bt = await signAt(await pdfLibPdf(dir), 'B-T');
    await judge(bt, { signatures: 1, docTimestamps: 0, lastCoversAll: true });
    const extended = await runCli(['--quiet', 'extend', '--level', 'B-LTA', '-o', join(dir, 'lta.pdf'), bt], {
      env: sandbox.env,
    });
    expect(extended.code, extended.stderr).toBe(0);
    await judge(join(dir, 'lta.pdf'), { signatures: 1, docTimestamps: 1 });
    await judgeDss(join(dir, 'lta.pdf'));
    const refreshed = await runCli(['--quiet', 'extend', '--in-place', join(dir, 'lta.pdf')], { env: sandbox.env });
    expect(refreshed.code, refreshed.stderr).toBe(0);
    await judge(join(dir, 'lta.pdf'), { signatures: 1, docTimestamps: 2 });

    const twice = await signAt(bt, 'B-T');
    await judge(twice, { signatures: 2, docTimestamps: 0, lastCoversAll: true });
    const both = await runCli(['--quiet', 'extend', '--level', 'B-LT', '-o', join(dir, 'two-lt.pdf'), twice], {
      env: sandbox.env,
    });
    expect(both.code, both.stderr).toBe(0);
    await judge(join(dir, 'two-lt.pdf'), { signatures: 2, docTimestamps: 0 });
    await judgeDss(join(dir, 'two-lt.pdf'));
  });

  it('a batch in windows at B-LT and B-LTA with the bulk seal: every output judged; its DSS checked by openssl, OCSP produced after the signature timestamp', async () => {
    const dir = join(work.dir, 'batch');
    await mkdir(dir, { recursive: true });
    const input = await pdfLibPdf(dir);
    const inputs = join(dir, 'in');
    await mkdir(inputs, { recursive: true });
    for (let index = 0; index < 5; index++) await writeFile(join(inputs, `doc-${index}.pdf`), await readFile(input));
    const env = {
      ...sandbox.env,
      ESIGN_SERVICE_AUTH: 'client-credentials',
      ESIGN_CREDENTIAL_PIN: SANDBOX_SEAL.pin,
      ESIGN_CSC_MAX_SIGNATURES: '2',
    };
    for (const level of ['B-LT', 'B-LTA'] as const) {
      const out = join(dir, level);
      const signed = await runCli(['--quiet', 'sign', '--level', level, '--output-dir', out, inputs], { env });
      expect(signed.code, signed.stderr).toBe(0);
      for (let index = 0; index < 5; index++) {
        const path = join(out, `doc-${index}-signed.pdf`);
        await judge(path, { signatures: 1, docTimestamps: level === 'B-LTA' ? 1 : 0 });
        const [signature] = await findSignatures(await readPdf(bytesSource(await readFile(path))));
        const tokenPath = `${path}.sig-ts.der`;
        await writeFile(tokenPath, signature!.timestampToken!);
        const token = await run('openssl', ['ts', '-reply', '-token_in', '-in', tokenPath, '-token_out', '-text']);
        const stamped = new Date(/Time stamp: (.+)/.exec(token.out)![1]!.trim());
        await judgeDss(path, stamped);
        const verified = await runCli(['verify', '--level', level, path], { env: sandbox.env });
        expect(verified.code, verified.stdout).toBe(0);
      }
    }
  });
});
