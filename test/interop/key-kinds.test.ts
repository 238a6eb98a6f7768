/**
 * Every key kind esign signs with (RSA PKCS#1 v1.5, RSASSA-PSS, ECDSA P-256/P-384/P-521), on both
 * CSC dialects, judged by tools we did not write: the PDF by pdfsig and qpdf --check (at B-T, then
 * extended to B-LTA; signed at B-LTA directly on v2), its signature and the .p7s by openssl cms
 * -verify, their signature timestamps by openssl ts -verify; `esign verify` agrees with them.
 */
import { spawnSync } from 'node:child_process';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OID } from '../../src/core/cms/oids.js';
import { parseSignedData } from '../../src/core/cms/parse.js';
import { SANDBOX_DIALECTS } from '../helpers/dialects.js';
import {
  lastCms,
  opensslVerifiesCms,
  pdfsig,
  qpdfCheck,
  runTool,
  startInteropSetup,
  closeInteropSetup,
} from '../helpers/pdf-judges.js';
import { runCli } from '../helpers/run-cli.js';
import { type TestSandbox } from '../helpers/sandbox.js';

const has = (tool: string) => spawnSync('which', [tool]).status === 0;
const missing = ['pdfsig', 'qpdf', 'openssl', 'certutil'].filter((tool) => !has(tool));
if (missing.length > 0)
  console.warn(`interop key-kind tests skipped: missing ${missing.join(', ')} (.ci/run installs them)`);

const KINDS = [
  {
    credential: 'alice-rsa2048',
    signatureAlgorithm: OID.sha256WithRSAEncryption,
    named: 'sha256WithRSAEncryption',
    digest: OID.sha256,
    pdfsigHash: 'SHA-256',
  },
  {
    credential: 'alice-rsa-pss',
    signatureAlgorithm: OID.rsassaPss,
    named: 'RSASSA-PSS (sha256, MGF1 sha256, salt 32)',
    digest: OID.sha256,
    pdfsigHash: 'SHA-256',
  },
  {
    credential: 'alice-ec-p256',
    signatureAlgorithm: OID.ecdsaWithSHA256,
    named: 'ecdsa-with-SHA256',
    digest: OID.sha256,
    pdfsigHash: 'SHA-256',
  },
  {
    credential: 'alice-ec-p384',
    signatureAlgorithm: OID.ecdsaWithSHA384,
    named: 'ecdsa-with-SHA384',
    digest: OID.sha384,
    pdfsigHash: 'SHA-384',
  },
  {
    credential: 'alice-ec-p521',
    signatureAlgorithm: OID.ecdsaWithSHA512,
    named: 'ecdsa-with-SHA512',
    digest: OID.sha512,
    pdfsigHash: 'SHA-512',
  },
] as const;

let sandbox: TestSandbox;
let work: { dir: string; remove: () => Promise<void> };
let nssDir: string;

beforeAll(async () => {
  if (missing.length > 0) return;
  ({ sandbox, work, nssDir } = await startInteropSetup('esign-interop-keys-'));
});
afterAll(() => closeInteropSetup({ sandbox, work }));

/** Runs esign on the dialect's profile; the outputs it reports, in the order of the inputs (a batch reports each as it finishes). */
async function esign(args: string[], profile: string): Promise<string[]> {
  const result = await runCli(['--auto-approve', '--json', '--profile', profile, ...args], { env: sandbox.env });
  expect(result.code, result.stderr).toBe(0);
  const lines = result.jsonLines<{ input: string; output: string }>();
  const position = (line: { input: string }) => args.indexOf(line.input);
  return [...lines].sort((a, b) => position(a) - position(b)).map((line) => line.output);
}

/** openssl ts -verify of a CMS's signature timestamp over its signature value (the imprint's hash is the token's). */
async function opensslVerifiesTimestamp(cms: Uint8Array, dir: string, name: string): Promise<string> {
  const parsed = parseSignedData(cms);
  expect(parsed.signatureTimeStampToken).toBeDefined();
  const token = join(dir, `${name}.tst`);
  const value = join(dir, `${name}.value`);
  await writeFile(token, parsed.signatureTimeStampToken!);
  await writeFile(value, parsed.signatureValue);
  const verified = await runTool('openssl', [
    'ts',
    '-verify',
    '-token_in',
    '-in',
    token,
    '-data',
    value,
    '-CAfile',
    sandbox.rootPemPath,
  ]);
  expect(verified.stdout + verified.stderr).toContain('Verification: OK');
  const shown = await runTool('openssl', ['ts', '-reply', '-token_in', '-in', token, '-token_out', '-text']);
  return /Hash Algorithm: (\S+)/.exec(shown.stdout)?.[1] ?? '';
}

async function esignVerifies(
  path: string,
  profile: string,
): Promise<Array<{ status: string; signatureValue: { algorithm: string } }>> {
  const result = await runCli(['--json', '--profile', profile, 'verify', path], { env: sandbox.env });
  expect(result.code, result.stdout + result.stderr).toBe(0);
  return (result.jsonLines()[0] as { signatures: Array<{ status: string; signatureValue: { algorithm: string } }> })
    .signatures;
}

describe.skipIf(missing.length > 0).each(SANDBOX_DIALECTS)('every key kind on $name', (dialect) => {
  it.each(KINDS)(
    '$credential: PDF (pdfsig, qpdf, openssl cms and ts, B-LTA) and .p7s (openssl cms and ts) are valid',
    async (kind) => {
      const dir = join(work.dir, `${dialect.profile}-${kind.credential}`);
      await mkdir(dir, { recursive: true });
      const pdf = join(dir, 'contract.pdf');
      const text = join(dir, 'notes.txt');
      await copyFile(join(import.meta.dirname, '../../samples/contract.pdf'), pdf);
      await writeFile(text, `signed with ${kind.credential}\n`);
      const [signed, signature] = (await esign(
        ['sign', '--credential', kind.credential, '--level', 'B-T', '--output-dir', join(dir, 'out'), pdf, text],
        dialect.profile,
      )) as [string, string];

      // The signature itself: algorithms as the key says, accepted by OpenSSL, its timestamp too.
      const { cms } = lastCms(await readFile(signed));
      const parsed = parseSignedData(cms);
      expect([parsed.signatureAlgorithm, parsed.digestAlgorithm]).toEqual([kind.signatureAlgorithm, kind.digest]);
      await opensslVerifiesCms(signed, sandbox.rootPemPath);
      expect((await opensslVerifiesTimestamp(cms, dir, 'pdf')).toUpperCase().replace('SHA', 'SHA-')).toBe(
        kind.pdfsigHash,
      );
      const p7s = await readFile(signature);
      expect(parseSignedData(p7s).signatureAlgorithm).toBe(kind.signatureAlgorithm);
      const cmsVerify = await runTool('openssl', [
        'cms',
        '-verify',
        '-binary',
        '-content',
        text,
        '-inform',
        'DER',
        '-in',
        signature,
        '-CAfile',
        sandbox.rootPemPath,
        '-purpose',
        'any',
        '-out',
        '/dev/null',
      ]);
      expect(cmsVerify.status, cmsVerify.stderr).toBe(0);
      await opensslVerifiesTimestamp(p7s, dir, 'p7s');

      // Raised to B-LTA: by `esign extend` on v1, by `sign --level B-LTA` on v2.
      const lta = join(dir, 'lta.pdf');
      if (dialect.profile === 'sandbox')
        await esign(['extend', '--level', 'B-LTA', '-o', lta, signed], dialect.profile);
      else await esign(['sign', '--credential', kind.credential, '--level', 'B-LTA', '-o', lta, pdf], dialect.profile);
      const report = await pdfsig(lta, nssDir);
      expect(report.signatures[0], report.raw).toMatchObject({
        valid: true,
        trusted: true,
        type: 'ETSI.CAdES.detached',
      });
      expect(report.raw.split(/^Signature #2:$/m)[0]).toContain(`Signing Hash Algorithm: ${kind.pdfsigHash}`);
      expect(await qpdfCheck(lta)).toBe(0);
      const verdicts = await esignVerifies(lta, dialect.profile);
      expect(verdicts.map((signature) => signature.status)).toEqual(['valid', 'valid']);
      expect(verdicts[0]?.signatureValue.algorithm).toBe(kind.named);
    },
  );
});
