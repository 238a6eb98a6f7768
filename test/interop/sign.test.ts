/**
 * esign's signed outputs judged by tools we did not write: pdfsig (poppler, with the sandbox root
 * trusted in an NSS database), qpdf --check, openssl cms -verify and openssl ts -verify.
 */
import { spawnSync } from 'node:child_process';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSignedData } from '../../src/core/cms/parse.js';
import {
  emptySignatureFieldPdf,
  ghostscriptPdf,
  linearizedPdf,
  multiRevisionPdf,
  mupdfPdf,
  pdfLibPdf,
  qpdfObjectStreamsPdf,
} from '../helpers/pdf-fixtures.js';
import {
  lastCms,
  nssDbTrusting,
  opensslVerifiesCms as opensslVerifies,
  pdfsig as judgedByPdfsig,
  qpdfCheck,
  runTool,
} from '../helpers/pdf-judges.js';
import { runCli } from '../helpers/run-cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDirForFile } from '../helpers/tmp.js';

const has = (tool: string) => spawnSync('which', [tool]).status === 0;
const tools = ['pdfsig', 'qpdf', 'openssl', 'gs', 'certutil', 'mutool'];
const missing = tools.filter((tool) => !has(tool));
if (missing.length > 0)
  console.warn(`interop sign tests skipped: missing ${missing.join(', ')} (.ci/run installs them)`);

let sandbox: TestSandbox;
let work: { dir: string; remove: () => Promise<void> };
let nssDir: string;
let tsaRootPem: string;

beforeAll(async () => {
  if (missing.length > 0) return;
  sandbox = await startTestSandbox({ autoApprove: true });
  work = await tempDirForFile('esign-interop-sign-');
  nssDir = await nssDbTrusting(work.dir, sandbox.rootPemPath);
  tsaRootPem = sandbox.rootPemPath;
});
afterAll(async () => {
  await sandbox?.close();
  await work?.remove();
});

const run = runTool;
const pdfsig = (path: string) => judgedByPdfsig(path, nssDir);
const opensslVerifiesCms = (path: string) => opensslVerifies(path, sandbox.rootPemPath);

async function sign(input: string, extra: string[] = []): Promise<string> {
  const output = input.replace(/\.pdf$/, '-signed.pdf');
  const result = await runCli(['--auto-approve', '--quiet', 'sign', '--force', '-o', output, ...extra, input], {
    env: sandbox.env,
  });
  expect(result.code, result.stderr).toBe(0);
  return output;
}

describe.skipIf(missing.length > 0)('signed PDFs judged by pdfsig, qpdf and openssl', () => {
  const producers: Array<[string, (dir: string) => Promise<string>]> = [
    ['ghostscript', ghostscriptPdf],
    ['qpdf --object-streams=generate', qpdfObjectStreamsPdf],
    ['qpdf --linearize', (dir) => linearizedPdf(dir)],
    ['qpdf --linearize with object streams', (dir) => linearizedPdf(dir, { objectStreams: true })],
    ['pdf-lib (classic xref)', (dir) => pdfLibPdf(dir, { objectStreams: false })],
    ['pdf-lib (xref stream)', (dir) => pdfLibPdf(dir, { objectStreams: true })],
    ['a multi-revision file', multiRevisionPdf],
    ['mutool clean', (dir) => mupdfPdf(dir, 'clean')],
    ['mutool convert', (dir) => mupdfPdf(dir, 'convert')],
    [
      'the sample contract',
      async (dir) => {
        const path = join(dir, 'contract.pdf');
        await copyFile(join(import.meta.dirname, '../../samples/contract.pdf'), path);
        return path;
      },
    ],
  ];

  for (const [producer, make] of producers) {
    it(`signs a PDF from ${producer}: pdfsig valid and trusted, qpdf clean, openssl cms verifies`, async () => {
      const dir = join(work.dir, producer.replace(/\W+/g, '-'));
      await mkdir(dir, { recursive: true });
      const output = await sign(await make(dir));
      const report = await pdfsig(output);
      expect(report.signatures, report.raw).toHaveLength(1);
      expect(report.signatures[0], report.raw).toMatchObject({
        valid: true,
        trusted: true,
        totalDocument: true,
        type: 'ETSI.CAdES.detached',
      });
      expect(await qpdfCheck(output)).toBe(0);
      await opensslVerifiesCms(output);
    });
  }

  it("signs a mutool clean file whose table starts with MuPDF's free-list head (object 0, generation 65536)", async () => {
    const dir = join(work.dir, 'mupdf-free-list-head');
    await mkdir(dir, { recursive: true });
    const input = await mupdfPdf(dir, 'clean');
    expect((await readFile(input, 'latin1')).match(/\nxref\s+0 \d+\s+(\d{10} \d{5} f)/)?.[1]).toBe(
      '0000000000 65536 f',
    );
    expect(await qpdfCheck(input)).toBe(0);
    const output = await sign(input);
    const report = await pdfsig(output);
    expect(report.signatures[0], report.raw).toMatchObject({ valid: true, trusted: true, totalDocument: true });
    expect(await qpdfCheck(output)).toBe(0);
    const verified = await runCli(['verify', output], { env: sandbox.env });
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
  });

  it('signs on the CSC API v2 sandbox (--profile sandbox-v2) a PDF and a file: pdfsig, qpdf and openssl cms accept both', async () => {
    const dir = join(work.dir, 'csc-v2');
    await mkdir(dir, { recursive: true });
    const pdf = await pdfLibPdf(dir, { objectStreams: true });
    const text = join(dir, 'notes.txt');
    await writeFile(text, 'signed over CSC API v2\n');
    const result = await runCli(
      ['--auto-approve', '--json', 'sign', '--profile', 'sandbox-v2', '--level', 'B-T', pdf, text],
      { env: sandbox.env },
    );
    expect(result.code, result.stderr).toBe(0);
    // Each line is printed as its file finishes: told apart by input, not by order.
    const lines = result.jsonLines<{ input: string; output: string; credential: string }>();
    const signedPdf = lines.find((line) => line.input === pdf);
    const signedText = lines.find((line) => line.input === text);
    expect(sandbox.sandbox.requestLog).toContain('signing-v2 POST /csc/v2/signatures/signHash');
    const report = await pdfsig(signedPdf!.output);
    expect(report.signatures[0], report.raw).toMatchObject({ valid: true, trusted: true, totalDocument: true });
    expect(await qpdfCheck(signedPdf!.output)).toBe(0);
    await opensslVerifiesCms(signedPdf!.output);
    const verify = await run('openssl', [
      'cms',
      '-verify',
      '-binary',
      '-content',
      text,
      '-inform',
      'DER',
      '-in',
      signedText!.output,
      '-CAfile',
      sandbox.rootPemPath,
      '-purpose',
      'any',
      '-out',
      '/dev/null',
    ]);
    expect(verify.status, verify.stderr).toBe(0);
  });

  it('signs into an existing empty signature field', async () => {
    const dir = join(work.dir, 'field');
    await mkdir(dir, { recursive: true });
    const output = await sign(await emptySignatureFieldPdf(dir), ['--field', 'Approval']);
    const report = await pdfsig(output);
    expect(report.raw).toContain('Signature Field Name: Approval');
    expect(report.signatures[0]).toMatchObject({ valid: true, trusted: true, totalDocument: true });
    expect(await qpdfCheck(output)).toBe(0);
    await opensslVerifiesCms(output);
  });

  it('signs a signed file again: both signatures stay valid, the last covers the whole file', async () => {
    const dir = join(work.dir, 'twice');
    await mkdir(dir, { recursive: true });
    const once = await sign(await pdfLibPdf(dir));
    const twice = await sign(once, ['--visible', '--reason', 'Approved']);
    const report = await pdfsig(twice);
    expect(report.signatures, report.raw).toHaveLength(2);
    expect(report.signatures.every((signature) => signature.valid && signature.trusted)).toBe(true);
    expect(report.signatures[0]!.totalDocument).toBe(false);
    expect(report.signatures[1]!.totalDocument).toBe(true);
    expect(await qpdfCheck(twice)).toBe(0);
    await opensslVerifiesCms(once);
    await opensslVerifiesCms(twice);
  });

  // Bytes before `%PDF-` (a server's response header saved with the file): poppler and qpdf count
  // the file's offsets from the header. The output is the document from its header on, plus the
  // update, so every reader finds the same offsets; an earlier signature stays valid.
  it('signs PDFs with bytes before the header (classic xref, object streams, already signed): pdfsig valid, qpdf clean, openssl verifies', async () => {
    const dir = join(work.dir, 'leading-bytes');
    await mkdir(dir, { recursive: true });
    const prefix = Buffer.from('HTTP/1.1 200 OK\r\nContent-Type: application/pdf\r\n\r\n');
    const signedOnce = await sign(await pdfLibPdf(dir));
    for (const [name, original] of [
      ['classic', await readFile(await pdfLibPdf(dir, { objectStreams: false }))],
      ['object-streams', await readFile(await qpdfObjectStreamsPdf(dir))],
      ['signed', await readFile(signedOnce)],
    ] as const) {
      const input = join(dir, `${name}-leading.pdf`);
      await writeFile(input, Buffer.concat([prefix, original]));
      expect(await qpdfCheck(input), name).toBe(0);
      const output = await sign(input);
      const signed = await readFile(output);
      expect(
        signed.subarray(0, original.length).equals(original),
        `${name}: the document's bytes, from its header on, start the output`,
      ).toBe(true);
      const report = await pdfsig(output);
      expect(report.signatures, report.raw).toHaveLength(name === 'signed' ? 2 : 1);
      expect(
        report.signatures.every((signature) => signature.valid && signature.trusted),
        report.raw,
      ).toBe(true);
      expect(report.signatures.at(-1)!.totalDocument, report.raw).toBe(true);
      expect(await qpdfCheck(output), name).toBe(0);
      await opensslVerifiesCms(output);
      expect((await readFile(input)).equals(Buffer.concat([prefix, original])), `${name}: input unchanged`).toBe(true);
    }
    // Bytes put in front of a signed file are covered by no signature: pdfsig counts the ByteRange
    // from the first byte and finds the signature broken; esign reads the file and says modified.
    const prefixed = join(dir, 'prefixed-after-signing.pdf');
    await writeFile(prefixed, Buffer.concat([prefix, await readFile(signedOnce)]));
    expect((await pdfsig(prefixed)).signatures[0]).toMatchObject({ valid: false });
    const verified = await runCli(['--json', 'verify', prefixed, '--trust', sandbox.rootPemPath], { env: sandbox.env });
    expect(verified.code, verified.stdout + verified.stderr).toBe(9);
    const report = verified.json<{
      status: string;
      signatures: Array<{ status: string; warnings: string[]; integrity: { valid: boolean } }>;
    }>();
    expect(report.status).toBe('modified');
    expect(report.signatures[0]!.integrity.valid).toBe(true);
    expect(report.signatures[0]!.warnings.join('\n')).toContain(
      `${prefix.length} bytes before the %PDF- header are covered by no signature`,
    );
  });

  it('embeds a B-T signature timestamp that openssl ts -verify accepts against the sandbox TSA root', async () => {
    const dir = join(work.dir, 'bt');
    await mkdir(dir, { recursive: true });
    const output = await sign(await pdfLibPdf(dir), ['--level', 'B-T']);
    const { cms } = lastCms(await readFile(output));
    const parsed = parseSignedData(cms);
    expect(parsed.signatureTimeStampToken).toBeDefined();
    const tokenPath = join(dir, 'token.der');
    const valuePath = join(dir, 'signature-value.bin');
    await writeFile(tokenPath, parsed.signatureTimeStampToken!);
    await writeFile(valuePath, parsed.signatureValue);
    const verify = await run('openssl', [
      'ts',
      '-verify',
      '-token_in',
      '-in',
      tokenPath,
      '-data',
      valuePath,
      '-CAfile',
      tsaRootPem,
    ]);
    expect(verify.stdout + verify.stderr).toContain('Verification: OK');
  });

  it('writes CAdES .p7s files that openssl cms -verify accepts with the content', async () => {
    const dir = join(work.dir, 'cades');
    await mkdir(dir, { recursive: true });
    const input = join(dir, 'release-notes.txt');
    await copyFile(join(import.meta.dirname, '../../samples/release-notes.txt'), input);
    const result = await runCli(['--auto-approve', '--quiet', 'sign', input], { env: sandbox.env });
    expect(result.code, result.stderr).toBe(0);
    const verify = await run('openssl', [
      'cms',
      '-verify',
      '-binary',
      '-content',
      input,
      '-inform',
      'DER',
      '-in',
      `${input}.p7s`,
      '-CAfile',
      sandbox.rootPemPath,
      '-purpose',
      'any',
      '-out',
      '/dev/null',
    ]);
    expect(verify.status, verify.stderr).toBe(0);
    // The default level on the sandbox is B-T: the .p7s carries a signature timestamp openssl accepts.
    const parsed = parseSignedData(await readFile(`${input}.p7s`));
    expect(parsed.signatureTimeStampToken).toBeDefined();
    await writeFile(join(dir, 'p7s-token.der'), parsed.signatureTimeStampToken!);
    await writeFile(join(dir, 'p7s-signature-value.bin'), parsed.signatureValue);
    const stamped = await run('openssl', [
      'ts',
      '-verify',
      '-token_in',
      '-in',
      join(dir, 'p7s-token.der'),
      '-data',
      join(dir, 'p7s-signature-value.bin'),
      '-CAfile',
      tsaRootPem,
    ]);
    expect(stamped.stdout + stamped.stderr).toContain('Verification: OK');
    await writeFile(input, 'tampered\n');
    const tampered = await run('openssl', [
      'cms',
      '-verify',
      '-binary',
      '-content',
      input,
      '-inform',
      'DER',
      '-in',
      `${input}.p7s`,
      '-CAfile',
      sandbox.rootPemPath,
      '-purpose',
      'any',
      '-out',
      '/dev/null',
    ]);
    expect(tampered.status).not.toBe(0);
  });

  it('writes .tsr replies with esign timestamp that openssl ts -verify accepts for the file', async () => {
    const dir = join(work.dir, 'tsr');
    await mkdir(dir, { recursive: true });
    const input = join(dir, 'artifact.tar.gz');
    await writeFile(input, 'pretend release artifact\n');
    const result = await runCli(['--quiet', 'timestamp', input], { env: sandbox.env });
    expect(result.code, result.stderr).toBe(0);
    const verify = await run('openssl', [
      'ts',
      '-verify',
      '-data',
      input,
      '-in',
      `${input}.tsr`,
      '-CAfile',
      tsaRootPem,
    ]);
    expect(verify.stdout + verify.stderr).toContain('Verification: OK');
    await writeFile(input, 'another artifact\n');
    const tampered = await run('openssl', [
      'ts',
      '-verify',
      '-data',
      input,
      '-in',
      `${input}.tsr`,
      '-CAfile',
      tsaRootPem,
    ]);
    expect(tampered.stdout + tampered.stderr).not.toContain('Verification: OK');
  });
});
