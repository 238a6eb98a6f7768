/**
 * `--format p7m`: enveloping CAdES (the content inside the CMS), signed against the sandbox, read back
 * by esign verify (with --extract), and refused in one line where it is not one esign can check.
 */
import { createHash } from 'node:crypto';
import { readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSignedData } from '../../src/core/cms/parse.js';
import { runCli } from '../helpers/run-cli.js';
import { sealEnv, startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { removedAtSignIn } from '../helpers/batch-inputs.js';
import { tempDir } from '../helpers/tmp.js';

let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox({ autoApprove: true });
});
afterAll(async () => sandbox?.close());

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

async function signP7m(input: string, extra: string[] = []) {
  const result = await runCli(['--auto-approve', '--json', 'sign', '--format', 'p7m', ...extra, input], {
    env: sandbox.env,
  });
  expect(result.code, result.stderr).toBe(0);
  return result;
}

describe('esign sign --format p7m', () => {
  it('writes NAME.p7m with the content inside, signing-certificate-v2 and a timestamp, and verify --extract gives the content back', async () => {
    const dir = await tempDir();
    const input = join(dir, 'fattura.xml');
    const content = '<?xml version="1.0"?><Fattura>1</Fattura>\n';
    await writeFile(input, content);
    const result = await signP7m(input, ['--level', 'B-T']);
    const [line] = result.jsonLines() as Array<Record<string, unknown>>;
    expect(line).toMatchObject({ output: `${input}.p7m`, format: 'CAdES', packaging: 'enveloping', level: 'B-T' });
    const p7m = await readFile(`${input}.p7m`);
    expect(line!['sha256']).toBe(sha256(p7m));
    const parsed = parseSignedData(p7m);
    expect(Buffer.from(parsed.encapContent!).toString()).toBe(content);
    expect(parsed.signedAttributes!.attributes.map((attribute) => attribute.type)).toContain(
      '1.2.840.113549.1.9.16.2.47',
    );
    expect(parsed.signatureTimeStampToken).toBeDefined();

    const out = join(dir, 'extracted.xml');
    const verified = await runCli(['--json', 'verify', `${input}.p7m`, '--extract', out], { env: sandbox.env });
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.json()).toMatchObject({ kind: 'cades', packaging: 'enveloping', extracted: out, valid: true });
    expect(await readFile(out, 'utf8')).toBe(content);
  });

  it('streams a 20 MB file into the .p7m with definite lengths, byte for byte', async () => {
    const dir = await tempDir();
    const input = join(dir, 'large.bin');
    const bytes = Buffer.alloc(20 * 1024 * 1024 + 17);
    for (let index = 0; index < bytes.length; index += 4096) bytes[index] = index % 251;
    await writeFile(input, bytes);
    await signP7m(input, ['--level', 'B-B']);
    const p7m = await readFile(`${input}.p7m`);
    // ContentInfo with a four-byte definite length: 0x30 0x84.
    expect([p7m[0], p7m[1]]).toEqual([0x30, 0x84]);
    expect(Buffer.from(parseSignedData(p7m).encapContent!).equals(bytes)).toBe(true);
    const verified = await runCli(['verify', `${input}.p7m`], { env: sandbox.env });
    expect(verified.code, verified.stderr).toBe(0);
  });

  it('fails verify on a changed content byte, and extracts nothing', async () => {
    const dir = await tempDir();
    const input = join(dir, 'notes.txt');
    await writeFile(input, 'pay 100 EUR\n');
    await signP7m(input, ['--level', 'B-B']);
    const p7m = await readFile(`${input}.p7m`);
    const at = p7m.indexOf('100');
    p7m[at] = '9'.charCodeAt(0);
    await writeFile(`${input}.p7m`, p7m);
    const out = join(dir, 'out.txt');
    const verified = await runCli(['--json', 'verify', `${input}.p7m`, '--extract', out], { env: sandbox.env });
    expect(verified.code).toBe(9);
    expect(verified.json()).toMatchObject({ code: 'VERIFY_FAILED', valid: false });
    await expect(stat(out)).rejects.toThrow();
  });

  it('refuses a detached .p7m (a .p7s renamed) in one line, writing nothing', async () => {
    const dir = await tempDir();
    const input = join(dir, 'notes.txt');
    await writeFile(input, 'notes\n');
    const signed = await runCli(['--auto-approve', 'sign', '--level', 'B-B', input], { env: sandbox.env });
    expect(signed.code, signed.stderr).toBe(0);
    await writeFile(join(dir, 'detached.p7m'), await readFile(`${input}.p7s`));
    const before = await readdir(dir);
    const verified = await runCli(['verify', join(dir, 'detached.p7m'), '--extract', join(dir, 'x')], {
      env: sandbox.env,
    });
    expect(verified.code).not.toBe(0);
    expect(verified.stderr).toMatch(
      /detached\.p7m is a detached CAdES signature: it holds no content to check it against\. Name the file it signs and pass the signature with --signature/,
    );
    expect(verified.stderr).not.toMatch(/\n\s+at /);
    expect(await readdir(dir)).toEqual(before);
  });

  it('signs a batch into --output-dir, and --skip-existing then skips every .p7m already signed', async () => {
    const dir = await tempDir();
    const out = join(dir, 'signed');
    for (const name of ['a.txt', 'b.xml', 'c.pdf']) await writeFile(join(dir, name), `content of ${name}\n`);
    const inputs = ['a.txt', 'b.xml'].map((name) => join(dir, name));
    const first = await runCli(
      ['--auto-approve', '--json', 'sign', '--format', 'p7m', '--level', 'B-B', '--output-dir', out, ...inputs],
      { env: sandbox.env },
    );
    expect(first.code, first.stderr).toBe(0);
    expect((await readdir(out)).sort()).toEqual(['a.txt.p7m', 'b.xml.p7m']);
    const again = await runCli(
      [
        '--auto-approve',
        '--json',
        'sign',
        '--format',
        'p7m',
        '--level',
        'B-B',
        '--skip-existing',
        '--output-dir',
        out,
        ...inputs,
      ],
      { env: sandbox.env },
    );
    expect(again.code, again.stderr).toBe(0);
    expect((again.jsonLines() as Array<Record<string, unknown>>).every((line) => line['skipped'] === true)).toBe(true);
  });

  it('--continue-on-error: a .p7m or .asics batch reports the file gone before it was read, signs the rest, exits 10', async () => {
    for (const format of ['p7m', 'asics']) {
      const dir = await tempDir();
      const out = join(dir, 'out');
      for (const name of ['a.txt', 'b.txt', 'c.txt']) await writeFile(join(dir, name), `${name}\n`);
      const { globals, env } = await removedAtSignIn(dir, join(dir, 'b.txt'), sandbox.env);
      const inputs = ['a.txt', 'b.txt', 'c.txt'].map((name) => join(dir, name));
      const options = ['--format', format, '--level', 'B-B', '--continue-on-error', '--output-dir', out];
      const result = await runCli([...globals, '--json', 'sign', ...options, ...inputs], { env });
      expect(result.code, result.stderr).toBe(10);
      const failed = result.jsonLines<{ input: string; error?: { code: string } }>().filter((line) => line.error);
      expect(failed).toEqual([
        expect.objectContaining({
          input: join(dir, 'b.txt'),
          error: expect.objectContaining({ code: 'INPUT_NOT_FOUND' }),
        }),
      ]);
      expect((await readdir(out)).sort()).toEqual([`a.txt.${format}`, `c.txt.${format}`]);
      for (const name of await readdir(out))
        expect((await runCli(['verify', join(out, name)], { env: sandbox.env })).code).toBe(0);
    }
  });

  it('refuses --format pades for a file that is not a PDF, in one line', async () => {
    const dir = await tempDir();
    const input = join(dir, 'notes.txt');
    await writeFile(input, 'notes\n');
    const result = await runCli(['--auto-approve', 'sign', '--format', 'pades', input], { env: sandbox.env });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/is not a PDF, so it cannot get a PAdES signature/);
    expect(await readdir(dir)).toEqual(['notes.txt']);
  });

  it('adds a parallel signature to a .p7m in place: the earlier SignerInfo byte for byte, both verified', async () => {
    const dir = await tempDir();
    const input = join(dir, 'fattura.xml');
    await writeFile(input, '<Fattura>2</Fattura>\n');
    await signP7m(input, ['--level', 'B-B']);
    const first = parseSignedData(await readFile(`${input}.p7m`));
    const second = await signP7m(`${input}.p7m`, ['--level', 'B-T']);
    expect(second.json()).toMatchObject({ input: `${input}.p7m`, output: `${input}.p7m`, packaging: 'enveloping' });
    expect((await readdir(dir)).sort()).toEqual(['fattura.xml', 'fattura.xml.p7m']);
    const both = await readFile(`${input}.p7m`);
    expect(both.includes(Buffer.from(first.signatureValue))).toBe(true);
    const verified = await runCli(['--json', 'verify', `${input}.p7m`, '--extract', join(dir, 'out.xml')], {
      env: sandbox.env,
    });
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.json()).toMatchObject({
      valid: true,
      signatures: [
        { index: 1, status: 'valid' },
        { index: 2, status: 'valid' },
      ],
    });
    expect(await readFile(join(dir, 'out.xml'), 'utf8')).toBe('<Fattura>2</Fattura>\n');
  });

  it('goes through the split flow (--prepare, then --complete with a seal): a .p7m and an ASiC-S', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'a.xml'), '<a/>\n');
    const state = join(dir, 'state.json');
    for (const format of ['p7m', 'asics']) {
      const prepared = await runCli(
        ['sign', '--prepare', '--json', '--format', format, '--level', 'B-B', '--state', state, join(dir, 'a.xml')],
        { env: sealEnv(sandbox, 'v2') },
      );
      expect(prepared.code, prepared.stderr).toBe(0);
      const completed = await runCli(['sign', '--complete', '--json', '--state', state], {
        env: sealEnv(sandbox, 'v2'),
      });
      expect(completed.code, completed.stderr).toBe(0);
      expect(completed.json()).toMatchObject({
        output: join(dir, `a.xml.${format}`),
        packaging: format === 'p7m' ? 'enveloping' : 'asic-s',
      });
      const verified = await runCli(['verify', join(dir, `a.xml.${format}`)], { env: sandbox.env });
      expect(verified.code, verified.stderr).toBe(0);
    }
  });
});
