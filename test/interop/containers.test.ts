/**
 * Signed containers judged by tools we did not write: `openssl cms -verify` on an enveloping .p7m
 * (its -out compared byte for byte with the input); `unzip -t` and `zipinfo` on the layout of an
 * ASiC-S and an ASiC-E, and `openssl cms -verify` on their signatures with the document (ASiC-S) or
 * the manifest (ASiC-E) unzipped as the content; `xmllint` on the manifest.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
  work = await tempDirForFile('esign-interop-containers-');
});
afterAll(async () => {
  await sandbox?.close();
  await work?.remove();
});

function opensslCmsVerify(args: string[]) {
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
  ]);
}

describe.skipIf(missing.length > 0)('enveloping CAdES (.p7m) judged by openssl cms -verify', () => {
  it.each(['B-B', 'B-T'])('gives back the content byte for byte at %s, and refuses a changed byte', async (level) => {
    const input = join(work.dir, `fattura-${level}.xml`);
    const content = Buffer.concat([Buffer.from('<?xml version="1.0"?>\n<Fattura>'), Buffer.alloc(300_000, 0x41)]);
    content[content.length - 1] = 0; // binary: -binary must keep every byte
    await writeFile(input, content);
    const signed = await runCli(['--auto-approve', '--quiet', 'sign', '--format', 'p7m', '--level', level, input], {
      env: sandbox.env,
    });
    expect(signed.code, signed.stderr).toBe(0);
    const out = join(work.dir, `out-${level}.xml`);
    const verified = await opensslCmsVerify(['-in', `${input}.p7m`, '-out', out]);
    expect(verified.status, verified.stderr).toBe(0);
    expect((await readFile(out)).equals(content)).toBe(true);

    const p7m = await readFile(`${input}.p7m`);
    const at = p7m.indexOf('<Fattura>') + 1;
    p7m[at] = p7m[at]! ^ 1;
    await writeFile(join(work.dir, `tampered-${level}.p7m`), p7m);
    const tampered = await opensslCmsVerify(['-in', join(work.dir, `tampered-${level}.p7m`), '-out', '/dev/null']);
    expect(tampered.status).not.toBe(0);
  });
});

describe.skipIf(missing.length > 0)('a .p7m with a parallel signature judged by openssl cms -verify', () => {
  it('verifies both SignerInfos and gives the content back byte for byte', async () => {
    const input = join(work.dir, 'cosigned.xml');
    await writeFile(input, '<Fattura>co-signed</Fattura>\n');
    for (const target of [input, `${input}.p7m`]) {
      const signed = await runCli(['--auto-approve', '--quiet', 'sign', '--format', 'p7m', target], {
        env: sandbox.env,
      });
      expect(signed.code, signed.stderr).toBe(0);
    }
    const printed = await runTool('openssl', ['cms', '-cmsout', '-print', '-inform', 'DER', '-in', `${input}.p7m`]);
    expect(printed.stdout.match(/signatureAlgorithm:/g)).toHaveLength(2);
    const out = join(work.dir, 'cosigned.out');
    const verified = await opensslCmsVerify(['-in', `${input}.p7m`, '-out', out]);
    expect(verified.status, verified.stderr).toBe(0);
    expect(await readFile(out, 'utf8')).toBe('<Fattura>co-signed</Fattura>\n');
  });
});

describe.skipIf(missing.length > 0)('ASiC-S judged by unzip -t, zipinfo and openssl cms -verify', () => {
  it('puts mimetype first and stored, deflates text, stores a PDF, and its signature verifies over the document', async () => {
    const dir = join(work.dir, 'asics');
    await mkdir(dir, { recursive: true });
    const text = join(dir, 'report.txt');
    const content = Buffer.from('quarterly report, line after line\n'.repeat(5000));
    await writeFile(text, content);
    const pdf = join(dir, 'scan.pdf');
    await writeFile(pdf, Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(50_000, 7)]));
    const signed = await runCli(['--auto-approve', '--quiet', 'sign', '--format', 'asics', text, pdf], {
      env: sandbox.env,
    });
    expect(signed.code, signed.stderr).toBe(0);

    const tested = await runTool('unzip', ['-t', `${text}.asics`]);
    expect(tested.status, tested.stdout + tested.stderr).toBe(0);
    expect(tested.stdout).toContain('No errors detected');
    // zipinfo -v: the first entry's name, method and extra field, as Info-ZIP reads them.
    const listing = await runTool('zipinfo', ['-v', `${text}.asics`]);
    expect(listing.status).toBe(0);
    const first = listing.stdout.split('Central directory entry #2')[0]!;
    expect(first).toMatch(/Central directory entry #1:\s+-+\s+mimetype/);
    expect(first).toMatch(/compression method:\s+none \(stored\)/);
    expect(first).toMatch(/length of extra field:\s+0 bytes/);
    const short = await runTool('zipinfo', ['-1', `${text}.asics`]);
    expect(short.stdout.trim().split('\n')).toEqual(['mimetype', 'report.txt', 'META-INF/signature.p7s']);
    const methods = await runTool('zipinfo', [`${text}.asics`]);
    expect(methods.stdout).toMatch(/report\.txt/);
    expect(methods.stdout.split('\n').find((line) => line.endsWith('report.txt'))).toMatch(/ defN /);
    const pdfListing = await runTool('zipinfo', [`${pdf}.asics`]);
    expect(pdfListing.stdout.split('\n').find((line) => line.endsWith('scan.pdf'))).toMatch(/ stor /);

    const out = join(dir, 'unzipped');
    const unzipped = await runTool('unzip', ['-q', `${text}.asics`, '-d', out]);
    expect(unzipped.status).toBe(0);
    expect((await readFile(join(out, 'report.txt'))).equals(content)).toBe(true);
    const signature = ['-in', join(out, 'META-INF', 'signature.p7s'), '-content', join(out, 'report.txt')];
    const verified = await opensslCmsVerify([...signature, '-out', '/dev/null']);
    expect(verified.status, verified.stderr).toBe(0);
    await writeFile(join(out, 'report.txt'), 'changed\n');
    const tampered = await opensslCmsVerify([...signature, '-out', '/dev/null']);
    expect(tampered.status).not.toBe(0);
  });
});

describe.skipIf(missing.length > 0)('ASiC-E judged by unzip -t, zipinfo, xmllint and openssl cms -verify', () => {
  it('holds the files, the manifest and its signature, which openssl verifies over the manifest', async () => {
    const dir = join(work.dir, 'asice');
    await mkdir(join(dir, 'in', 'docs'), { recursive: true });
    await writeFile(join(dir, 'in', 'fattura.xml'), '<Fattura/>\n');
    await writeFile(join(dir, 'in', 'docs', 'notes.txt'), 'notes\n'.repeat(100));
    const bundle = join(dir, 'bundle.asice');
    const signed = await runCli(
      [
        '--auto-approve',
        '--quiet',
        'sign',
        '--format',
        'asice',
        '--asic-signature',
        'cades',
        '-o',
        bundle,
        join(dir, 'in', 'fattura.xml'),
        join(dir, 'in', 'docs'),
      ],
      { env: sandbox.env },
    );
    expect(signed.code, signed.stderr).toBe(0);
    const tested = await runTool('unzip', ['-t', bundle]);
    expect(tested.stdout).toContain('No errors detected');
    const names = await runTool('zipinfo', ['-1', bundle]);
    expect(names.stdout.trim().split('\n')).toEqual([
      'mimetype',
      'fattura.xml',
      'docs/notes.txt',
      'META-INF/ASiCManifest.xml',
      'META-INF/signature001.p7s',
    ]);
    const listing = await runTool('zipinfo', ['-v', bundle]);
    const first = listing.stdout.split('Central directory entry #2')[0]!;
    expect(first).toMatch(/compression method:\s+none \(stored\)/);
    expect(first).toMatch(/length of extra field:\s+0 bytes/);

    const out = join(dir, 'out');
    expect((await runTool('unzip', ['-q', bundle, '-d', out])).status).toBe(0);
    const manifest = join(out, 'META-INF', 'ASiCManifest.xml');
    if (has('xmllint')) expect((await runTool('xmllint', ['--noout', manifest])).status).toBe(0);
    const text = await readFile(manifest, 'utf8');
    expect(text).toContain('URI="docs/notes.txt" MimeType="text/plain"');
    const signature = ['-in', join(out, 'META-INF', 'signature001.p7s'), '-content', manifest];
    const verified = await opensslCmsVerify([...signature, '-out', '/dev/null']);
    expect(verified.status, verified.stderr).toBe(0);
    await writeFile(manifest, text.replace('fattura.xml', 'fattura.xm_'));
    expect((await opensslCmsVerify([...signature, '-out', '/dev/null'])).status).not.toBe(0);
  });
});

describe.skipIf(missing.length > 0)('esign timestamp --format asics judged by openssl ts -verify', () => {
  it('puts the file and its token (META-INF/timestamp.tst) in an ASiC-S that openssl ts -verify accepts', async () => {
    const dir = join(work.dir, 'tst');
    await mkdir(dir, { recursive: true });
    const input = join(dir, 'artifact.bin');
    await writeFile(input, Buffer.alloc(100_000, 3));
    const stamped = await runCli(['--quiet', 'timestamp', '--format', 'asics', input], { env: sandbox.env });
    expect(stamped.code, stamped.stderr).toBe(0);
    const names = await runTool('zipinfo', ['-1', `${input}.asics`]);
    expect(names.stdout.trim().split('\n')).toEqual(['mimetype', 'artifact.bin', 'META-INF/timestamp.tst']);
    expect((await runTool('unzip', ['-t', `${input}.asics`])).stdout).toContain('No errors detected');
    const out = join(dir, 'out');
    expect((await runTool('unzip', ['-q', `${input}.asics`, '-d', out])).status).toBe(0);
    const token = ['-token_in', '-in', join(out, 'META-INF', 'timestamp.tst'), '-CAfile', sandbox.rootPemPath];
    const verified = await runTool('openssl', ['ts', '-verify', ...token, '-data', join(out, 'artifact.bin')]);
    expect(verified.stdout + verified.stderr).toContain('Verification: OK');
    await writeFile(join(out, 'artifact.bin'), 'changed');
    const tampered = await runTool('openssl', ['ts', '-verify', ...token, '-data', join(out, 'artifact.bin')]);
    expect(tampered.stdout + tampered.stderr).not.toContain('Verification: OK');
  });
});
