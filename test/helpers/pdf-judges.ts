/**
 * The independent judges of a signed PDF, for interop tests: pdfsig (poppler, with an NSS database
 * that trusts the sandbox root), qpdf --check and openssl cms -verify of the last signature.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { startTestSandbox, type TestSandbox } from './sandbox.js';
import { tempDirForFile } from './tmp.js';

export interface Pdfsig {
  signatures: Array<{ valid: boolean; trusted: boolean; totalDocument: boolean; type: string }>;
  raw: string;
}

/**
 * Tools run asynchronously: pdfsig asks the sandbox's OCSP responder (in this process) about the
 * signer, so a synchronous spawn would block the very server it waits for.
 */
export function runTool(tool: string, args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(tool, args, { encoding: 'utf8', timeout: 60_000 }, (error, stdout, stderr) => {
      const status = error
        ? typeof (error as { code?: unknown }).code === 'number'
          ? (error as { code: number }).code
          : -1
        : 0;
      resolve({ status, stdout, stderr });
    });
  });
}

/** pdfsig's report; `extra` passes e.g. `-upw PASSWORD` for an encrypted file. */
export async function pdfsig(path: string, nssDir: string, extra: string[] = []): Promise<Pdfsig> {
  const result = await runTool('pdfsig', ['-nssdir', `sql:${nssDir}`, ...extra, path]);
  const raw = result.stdout + result.stderr;
  const blocks = raw.split(/^Signature #\d+:$/m).slice(1);
  return {
    raw,
    signatures: blocks.map((block) => ({
      valid: /Signature Validation: Signature is Valid\./.test(block),
      trusted: /Certificate Validation: Certificate is Trusted\./.test(block),
      totalDocument: /Total document signed/.test(block),
      type: /Signature Type: (\S+)/.exec(block)?.[1] ?? '',
    })),
  };
}

export async function qpdfCheck(path: string, extra: string[] = []): Promise<number> {
  return (await runTool('qpdf', ['--check', ...extra, path])).status;
}

/** The CMS of the last signature and the bytes its ByteRange covers. */
export function lastCms(pdf: Buffer): { cms: Buffer; signedBytes: Buffer } {
  const text = pdf.toString('latin1');
  const match = [...text.matchAll(/\/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\]/g)].at(-1)!;
  const [a, b, c] = [Number(match[2]), Number(match[3]), Number(match[4])];
  const hex = pdf.subarray(a + 1, b - 1).toString('latin1');
  const cms = Buffer.from(hex, 'hex');
  // DER length of the outer SEQUENCE tells where the zero padding starts.
  const length =
    cms[1]! & 0x80
      ? cms.subarray(2, 2 + (cms[1]! & 0x7f)).reduce((sum, byte) => sum * 256 + byte, 0) + 2 + (cms[1]! & 0x7f)
      : cms[1]! + 2;
  return { cms: cms.subarray(0, length), signedBytes: Buffer.concat([pdf.subarray(0, a), pdf.subarray(b, b + c)]) };
}

export async function opensslVerifiesCms(pdfPath: string, rootPemPath: string): Promise<void> {
  const { cms, signedBytes } = lastCms(await readFile(pdfPath));
  const cmsPath = `${pdfPath}.p7s`;
  const dataPath = `${pdfPath}.signed-bytes`;
  await writeFile(cmsPath, cms);
  await writeFile(dataPath, signedBytes);
  const verify = await runTool('openssl', [
    'cms',
    '-verify',
    '-binary',
    '-inform',
    'DER',
    '-in',
    cmsPath,
    '-content',
    dataPath,
    '-CAfile',
    rootPemPath,
    '-purpose',
    'any',
    '-out',
    '/dev/null',
  ]);
  expect(verify.status, verify.stderr).toBe(0);
  expect(verify.stderr).toContain('Verification successful');
}

/** An NSS database in `dir`/nss that trusts `rootPemPath` (the sandbox root), for pdfsig -nssdir. */
export async function nssDbTrusting(dir: string, rootPemPath: string): Promise<string> {
  const nssDir = join(dir, 'nss');
  await mkdir(nssDir);
  execFileSync('certutil', ['-N', '-d', `sql:${nssDir}`, '--empty-password']);
  execFileSync('certutil', [
    '-A',
    '-d',
    `sql:${nssDir}`,
    '-n',
    'esign-sandbox-root',
    '-t',
    'CT,C,C',
    '-i',
    rootPemPath,
  ]);
  return nssDir;
}

/** What an interop file judges with: an auto-approving sandbox, a work dir, and an NSS db (for pdfsig) trusting the sandbox root. */
export interface InteropSetup {
  sandbox: TestSandbox;
  work: { dir: string; remove: () => Promise<void> };
  nssDir: string;
}

export async function startInteropSetup(prefix: string): Promise<InteropSetup> {
  const sandbox = await startTestSandbox({ autoApprove: true });
  const work = await tempDirForFile(prefix);
  return { sandbox, work, nssDir: await nssDbTrusting(work.dir, sandbox.rootPemPath) };
}

export async function closeInteropSetup(setup: Partial<InteropSetup>): Promise<void> {
  await setup.sandbox?.close();
  await setup.work?.remove();
}
