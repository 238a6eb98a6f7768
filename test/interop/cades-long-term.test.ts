/**
 * CAdES B-LT and long-term ASiC-E judged by tools we did not write: `openssl cms -verify
 * -crl_check_all` checks each chain against the CRLs embedded in the CMS (the .p7s with its content,
 * the .p7m with `-out` compared byte for byte, the ASiC-S and ASiC-E signatures with the document or
 * the manifest); `openssl ocsp` and `openssl crl` parse the embedded revocation data; `openssl ts
 * -verify` checks each ASiC-E archive timestamp against its archive manifest's bytes; `unzip -t` and
 * `zipinfo` the layout.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decode, encoded, isContext } from '../../src/core/cms/der.js';
import { parseSignedData } from '../../src/core/cms/parse.js';
import { expectedArchiveImprint, OID_ARCHIVE_TIMESTAMP_V3 } from '../../src/core/cms/archive-timestamp.js';
import { readEnveloping } from '../../src/core/cms/enveloping.js';
import { createHash } from 'node:crypto';
import { runTool } from '../helpers/pdf-judges.js';
import { runCli } from '../helpers/run-cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDirForFile } from '../helpers/tmp.js';

const has = (tool: string) => spawnSync('which', [tool]).status === 0;
const missing = ['openssl', 'unzip', 'zipinfo'].filter((tool) => !has(tool));

let sandbox: TestSandbox;
let work: { dir: string; remove: () => Promise<void> };
beforeAll(async () => {
  if (missing.length > 0) return;
  sandbox = await startTestSandbox({ autoApprove: true });
  work = await tempDirForFile('esign-interop-cades-lt-');
});
afterAll(async () => {
  await sandbox?.close();
  await work?.remove();
});

/** `openssl cms -verify` with the chain checked against the CRLs in the CMS (no other CRL is given). */
function opensslCmsVerifyWithCrls(args: string[]) {
  return runTool('openssl', [
    'cms',
    '-verify',
    '-binary',
    '-inform',
    'DER',
    ...args,
    '-CAfile',
    sandbox.rootPemPath,
    '-purpose',
    'any',
    '-crl_check_all',
  ]);
}

async function sign(args: string[]) {
  const signed = await runCli(['--auto-approve', '--quiet', 'sign', ...args], { env: sandbox.env });
  expect(signed.code, signed.stderr).toBe(0);
}

/** Writes the CMS's embedded CRLs and OCSP responses to files, and has openssl parse each. */
async function judgeRevocationData(cms: Uint8Array, prefix: string): Promise<{ crls: number; ocsps: number }> {
  const counts = { crls: 0, ocsps: 0 };
  for (const [index, der] of parseSignedData(cms).revocationChoices.entries()) {
    const choice = decode(der, 'RevocationInfoChoice');
    const file = `${prefix}-${index}.der`;
    if (isContext(choice, 1)) {
      await writeFile(file, encoded(choice.items![1]!));
      const parsed = await runTool('openssl', ['ocsp', '-respin', file, '-resp_text', '-noverify']);
      expect(parsed.status, parsed.stderr).toBe(0);
      expect(parsed.stdout).toMatch(/Cert Status: good/);
      counts.ocsps++;
    } else {
      await writeFile(file, der);
      const parsed = await runTool('openssl', ['crl', '-inform', 'DER', '-in', file, '-noout', '-text']);
      expect(parsed.status, parsed.stderr).toBe(0);
      counts.crls++;
    }
  }
  return counts;
}

describe.skipIf(missing.length > 0)('CAdES B-LT judged by openssl', () => {
  it('.p7s: openssl cms -verify -crl_check_all accepts it from its own CRLs; ocsp and crl parse what it holds', async () => {
    const input = join(work.dir, 'notes.txt');
    await writeFile(input, 'pay 100 EUR\n');
    await sign(['--level', 'B-LT', input]);
    const verified = await opensslCmsVerifyWithCrls(['-in', `${input}.p7s`, '-content', input, '-out', '/dev/null']);
    expect(verified.status, verified.stderr).toBe(0);
    // A B-T signature of the same file fails that check: the CRLs used were the B-LT CMS's own.
    const plain = join(work.dir, 'plain.txt');
    await writeFile(plain, 'pay 100 EUR\n');
    await sign(['--level', 'B-T', plain]);
    const bare = await opensslCmsVerifyWithCrls(['-in', `${plain}.p7s`, '-content', plain, '-out', '/dev/null']);
    expect(bare.status).not.toBe(0);
    expect(bare.stderr).toMatch(/CRL/);
    expect(await judgeRevocationData(await readFile(`${input}.p7s`), join(work.dir, 'p7s'))).toEqual({
      crls: 2,
      ocsps: 1,
    });
    const printed = await runTool('openssl', ['cms', '-cmsout', '-print', '-inform', 'DER', '-in', `${input}.p7s`]);
    expect(printed.stdout).toMatch(/version: 5/);
    expect(printed.stdout).toContain('crls:');
  });

  it('.p7m with a parallel B-LT signature: -out is the content byte for byte', async () => {
    const input = join(work.dir, 'fattura.xml');
    const content = Buffer.concat([Buffer.from('<?xml version="1.0"?>\n<Fattura>'), Buffer.alloc(100_000, 0x42)]);
    await writeFile(input, content);
    await sign(['--format', 'p7m', '--level', 'B-LT', input]);
    await sign(['--format', 'p7m', '--level', 'B-LT', `${input}.p7m`]);
    const out = join(work.dir, 'fattura.out.xml');
    const verified = await opensslCmsVerifyWithCrls(['-in', `${input}.p7m`, '-out', out]);
    expect(verified.status, verified.stderr).toBe(0);
    expect((await readFile(out)).equals(content)).toBe(true);
  });

  it('ASiC-S: the signature verifies over the document with its own CRLs', async () => {
    const dir = join(work.dir, 'asics');
    await mkdir(dir, { recursive: true });
    const input = join(dir, 'data.csv');
    await writeFile(input, 'a,b\n1,2\n');
    await sign(['--format', 'asics', '--level', 'B-LT', input]);
    expect((await runTool('unzip', ['-t', `${input}.asics`])).stdout).toContain('No errors detected');
    const out = join(dir, 'out');
    expect((await runTool('unzip', ['-q', `${input}.asics`, '-d', out])).status).toBe(0);
    const verified = await opensslCmsVerifyWithCrls([
      '-in',
      join(out, 'META-INF', 'signature.p7s'),
      '-content',
      join(out, 'data.csv'),
      '-out',
      '/dev/null',
    ]);
    expect(verified.status, verified.stderr).toBe(0);
  });
});

describe.skipIf(missing.length > 0)('CAdES B-LTA judged by openssl cms and ts', () => {
  it('a B-LTA .p7m: cms -verify gives the content back; ts -verify accepts its archive timestamp over the recomputed imprint', async () => {
    const input = join(work.dir, 'archived.xml');
    const content = Buffer.from('<Fattura>archived</Fattura>\n');
    await writeFile(input, content);
    await sign(['--format', 'p7m', '--level', 'B-LTA', input]);
    const out = join(work.dir, 'archived.out.xml');
    const verified = await opensslCmsVerifyWithCrls(['-in', `${input}.p7m`, '-out', out]);
    expect(verified.status, verified.stderr).toBe(0);
    expect((await readFile(out)).equals(content)).toBe(true);
    const p7m = await readFile(`${input}.p7m`);
    const source = { size: p7m.length, read: async (at: number, length: number) => p7m.subarray(at, at + length) };
    const detached = (await readEnveloping(source)).detached;
    const archive = parseSignedData(detached).unsignedAttributes.find((a) => a.type === OID_ARCHIVE_TIMESTAMP_V3);
    const token = archive!.values[0]!;
    const tokenFile = join(work.dir, 'archive.tst');
    await writeFile(tokenFile, token);
    const { imprint } = expectedArchiveImprint(
      detached,
      token,
      new Uint8Array(createHash('sha256').update(content).digest()),
      'sha256',
    );
    const stamp = ['ts', '-verify', '-token_in', '-in', tokenFile, '-CAfile', sandbox.rootPemPath];
    const accepted = await runTool('openssl', [...stamp, '-digest', Buffer.from(imprint!).toString('hex')]);
    expect(accepted.stdout + accepted.stderr).toContain('Verification: OK');
    const parsed = await runTool('openssl', ['asn1parse', '-inform', 'DER', '-in', `${input}.p7m`]);
    expect(parsed.stdout).toContain('0.4.0.1733.2.4');
    expect(parsed.stdout).toContain('0.4.0.19122.1.5');
  });
});

describe.skipIf(missing.length > 0)('ASiC-E at B-LTA judged by unzip, zipinfo, openssl ts and cms', () => {
  it('each archive timestamp verifies over its archive manifest, before and after a renewal', async () => {
    const dir = join(work.dir, 'asice');
    await mkdir(join(dir, 'in', 'docs'), { recursive: true });
    await writeFile(join(dir, 'in', 'docs', 'contract.txt'), 'contract\n'.repeat(50));
    await writeFile(join(dir, 'in', 'docs', 'annex.pdf'), '%PDF-1.7\n%%EOF\n');
    const bundle = join(dir, 'bundle.asice');
    await sign([
      '--format',
      'asice',
      '--asic-signature',
      'cades',
      '--level',
      'B-LTA',
      '-o',
      bundle,
      join(dir, 'in', 'docs'),
    ]);
    await sign(['--level', 'B-LTA', bundle]);
    expect((await runTool('unzip', ['-t', bundle])).stdout).toContain('No errors detected');
    const names = (await runTool('zipinfo', ['-1', bundle])).stdout.trim().split('\n');
    expect(names).toEqual([
      'mimetype',
      'docs/annex.pdf',
      'docs/contract.txt',
      'META-INF/ASiCManifest.xml',
      'META-INF/signature001.p7s',
      'META-INF/ASiCArchiveManifest001.xml',
      'META-INF/timestamp001.tst',
      'META-INF/ASiCManifest002.xml',
      'META-INF/signature002.p7s',
      'META-INF/ASiCArchiveManifest.xml',
      'META-INF/timestamp002.tst',
    ]);
    const out = join(dir, 'out');
    expect((await runTool('unzip', ['-q', bundle, '-d', out])).status).toBe(0);
    const meta = (name: string) => join(out, 'META-INF', name);
    for (const [manifest, token] of [
      ['ASiCArchiveManifest001.xml', 'timestamp001.tst'],
      ['ASiCArchiveManifest.xml', 'timestamp002.tst'],
    ] as const) {
      const stamp = ['ts', '-verify', '-token_in', '-in', meta(token), '-CAfile', sandbox.rootPemPath];
      const verified = await runTool('openssl', [...stamp, '-data', meta(manifest)]);
      expect(verified.stdout + verified.stderr).toContain('Verification: OK');
      // The other manifest's bytes are not what the token covers.
      const other = manifest === 'ASiCArchiveManifest.xml' ? 'ASiCArchiveManifest001.xml' : 'ASiCArchiveManifest.xml';
      expect((await runTool('openssl', [...stamp, '-data', meta(other)])).stdout).not.toContain('Verification: OK');
    }
    expect(await readFile(meta('ASiCArchiveManifest.xml'), 'utf8')).toContain(
      'URI="META-INF/ASiCArchiveManifest001.xml"',
    );
    for (const [signature, manifest] of [
      ['signature001.p7s', 'ASiCManifest.xml'],
      ['signature002.p7s', 'ASiCManifest002.xml'],
    ] as const) {
      const verified = await opensslCmsVerifyWithCrls([
        '-in',
        meta(signature),
        '-content',
        meta(manifest),
        '-out',
        '/dev/null',
      ]);
      expect(verified.status, verified.stderr).toBe(0);
    }
  });
});
