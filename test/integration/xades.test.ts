/**
 * `esign sign --format xades` and the XAdES options, as the CLI runs them: what is refused (in one
 * line, with its exit code, before any approval, nothing written, the input untouched), the batch
 * options with enveloped XAdES, and that the XML libraries load only for XML work.
 */
import { createHash } from 'node:crypto';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, TESTING_EXECUTABLE } from '../helpers/run-cli.js';
import { sealEnv, startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/tmp.js';

let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox({ autoApprove: true });
});
afterAll(async () => {
  await sandbox?.close();
});

const INVOICE = '<?xml version="1.0" encoding="UTF-8"?>\n<Invoice><Total>10.00</Total></Invoice>\n';
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const sign = (args: string[]) =>
  runCli(['--auto-approve', '--json', 'sign', '--level', 'B-B', ...args], { env: sandbox.env });
const signHashes = (since: number) =>
  sandbox.sandbox.requestLog.slice(since).filter((call) => call.endsWith('signatures/signHash')).length;

describe('esign sign --format xades refuses, before any approval', () => {
  const cases: Array<[string, string, string, number, RegExp]> = [
    ['a file that is not XML', 'notes.txt', 'pay 100 EUR\n', 2, /notes\.txt is not an XML document.*--format asice/s],
    ['a DTD', 'dtd.xml', '<?xml version="1.0"?>\n<!DOCTYPE a [<!ENTITY x "y">]>\n<a>&x;</a>\n', 7, /DOCTYPE/],
    ['malformed XML', 'broken.xml', '<a><b></a>\n', 7, /not well-formed/],
    [
      'a document signed already',
      'signed.xml',
      '<a><ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#"/></a>',
      7,
      /signed already/,
    ],
    ['a root written as one empty tag', 'empty.xml', '<?xml version="1.0"?>\n<Invoice/>\n', 7, /no end tag/],
  ];
  for (const [what, name, content, exit, message] of cases)
    it(`${what}: exit ${exit}, one line naming it, nothing written, the input unchanged`, async () => {
      const dir = await tempDir();
      const input = join(dir, name);
      await writeFile(input, content);
      const before = sandbox.sandbox.requestLog.length;
      const result = await sign(['--format', 'xades', input]);
      expect(result.code, result.stderr).toBe(exit);
      expect(result.stderr).toMatch(message);
      expect(signHashes(before)).toBe(0);
      expect(await readdir(dir)).toEqual([name]);
      expect(await readFile(input, 'utf8')).toBe(content);
    });

  it('--signature-policy with a form that is not XAdES, and a policy it cannot read: exit 2', async () => {
    const dir = await tempDir();
    const input = join(dir, 'a.xml');
    await writeFile(input, INVOICE);
    const p7m = await sign(['--format', 'p7m', '--signature-policy', 'facturae-3.1', input]);
    expect(p7m.code).toBe(2);
    expect(p7m.stderr).toMatch(/--signature-policy applies to XAdES signatures only/);
    const cadesInside = await sign([
      '--format',
      'asice',
      '--asic-signature',
      'cades',
      '--signature-policy',
      'facturae-3.1',
      input,
    ]);
    expect(cadesInside.code).toBe(2);
    const unknown = await sign(['--format', 'xades', '--signature-policy', 'facturae-9', input]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/not a preset, nor OID,URL,ALG:HASH/);
    const misplaced = await sign(['--format', 'p7m', '--asic-signature', 'xades', input]);
    expect(misplaced.code).toBe(2);
    expect(await readdir(dir)).toEqual(['a.xml']);
  });
});

describe('esign sign --format xades with the batch options', () => {
  it('a batch in one approval, to --output-dir; the report names XAdES enveloped', async () => {
    const dir = await tempDir();
    const inputs = [];
    for (let index = 0; index < 3; index++) {
      const input = join(dir, `invoice-${index}.xml`);
      await writeFile(input, INVOICE.replace('10.00', `${index}.00`));
      inputs.push(input);
    }
    const out = join(dir, 'out');
    const before = sandbox.sandbox.requestLog.length;
    const result = await sign(['--format', 'xades', '--output-dir', out, ...inputs]);
    expect(result.code, result.stderr).toBe(0);
    expect(signHashes(before)).toBe(1);
    const lines = result.jsonLines<{ output?: string; format?: string; packaging?: string; sha256?: string }>();
    const written = lines.filter((line) => line.output);
    expect(written).toHaveLength(3);
    for (const line of written) {
      expect(line).toMatchObject({ format: 'XAdES', packaging: 'enveloped' });
      expect(line.sha256).toBe(sha256(await readFile(line.output!)));
    }
    expect((await readdir(out)).sort()).toEqual([
      'invoice-0-signed.xml',
      'invoice-1-signed.xml',
      'invoice-2-signed.xml',
    ]);
  });

  it('--continue-on-error: a non-XML input among XML ones is named, the rest signed, exit 10', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'good.xml'), INVOICE);
    await writeFile(join(dir, 'bad.txt'), 'not xml\n');
    const result = await sign([
      '--format',
      'xades',
      '--continue-on-error',
      join(dir, 'good.xml'),
      join(dir, 'bad.txt'),
    ]);
    expect(result.code).toBe(10);
    expect(result.stdout + result.stderr).toMatch(/bad\.txt is not an XML document/);
    expect((await readdir(dir)).sort()).toEqual(['bad.txt', 'good-signed.xml', 'good.xml']);
  });
});

describe('the XML libraries', () => {
  async function xmlModulesLoaded(args: string[]): Promise<string[]> {
    const dir = await tempDir();
    const hook = join(dir, 'hook.cjs');
    const log = join(dir, 'modules.txt');
    await writeFile(
      hook,
      `const Module = require('node:module'); const seen = new Set(); const load = Module._load;
Module._load = function (request, ...rest) { seen.add(request); return load.call(this, request, ...rest); };
process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(log)}, [...seen].join('\\n')));`,
    );
    const result = await runCli(args, { env: { ...sandbox.env, NODE_OPTIONS: `--require ${hook}` } });
    expect(result.code, result.stderr).toBe(0);
    return (await readFile(log, 'utf8'))
      .split('\n')
      .filter((name) => /^(xml-crypto|@xmldom\/xmldom)$/.test(name))
      .sort();
  }

  // The single executable holds every package: which ones load is not seen by name there.
  it.skipIf(TESTING_EXECUTABLE)(
    'load for XML work only: not for --help, sign --help or a .p7s; for --format xades',
    async () => {
      const dir = await tempDir();
      await writeFile(join(dir, 'n.txt'), 'n\n');
      await writeFile(join(dir, 'a.xml'), INVOICE);
      expect(await xmlModulesLoaded(['--help'])).toEqual([]);
      expect(await xmlModulesLoaded(['sign', '--help'])).toEqual([]);
      expect(await xmlModulesLoaded(['--auto-approve', 'sign', '--level', 'B-B', join(dir, 'n.txt')])).toEqual([]);
      expect(
        await xmlModulesLoaded(['--auto-approve', 'sign', '--format', 'xades', '--level', 'B-B', join(dir, 'a.xml')]),
      ).toEqual(['@xmldom/xmldom', 'xml-crypto']);
    },
  );
});

describe('what esign writes in XAdES, read back by esign verify', () => {
  const verify = (file: string) => runCli(['--json', 'verify', file], { env: sandbox.env });

  for (const level of ['B-B', 'B-T', 'B-LT', 'B-LTA'] as const)
    it(`an enveloped signature at ${level} verifies at ${level}; --skip-existing then signs nothing again`, async () => {
      const dir = await tempDir();
      const input = join(dir, 'invoice.xml');
      await writeFile(input, INVOICE);
      const signed = await runCli(['--auto-approve', '--json', 'sign', '--format', 'xades', '--level', level, input], {
        env: sandbox.env,
      });
      expect(signed.code, signed.stderr).toBe(0);
      const verified = await verify(join(dir, 'invoice-signed.xml'));
      expect(verified.code, verified.stdout + verified.stderr).toBe(0);
      expect(verified.json()).toMatchObject({ valid: true, signatures: [{ level }] });
      const before = sandbox.sandbox.requestLog.length;
      const again = await runCli(
        ['--auto-approve', '--json', 'sign', '--format', 'xades', '--level', level, '--skip-existing', input],
        { env: sandbox.env },
      );
      expect(again.code, again.stderr).toBe(0);
      expect(signHashes(before)).toBe(0);
    });

  it('an ASiC-E with XAdES, signed twice, and an ASiC-S with XAdES verify, every file covered', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'a.txt'), 'a\n');
    await writeFile(join(dir, 'b.xml'), INVOICE);
    const bundle = join(dir, 'bundle.asice');
    expect((await sign(['--format', 'asice', '-o', bundle, join(dir, 'a.txt'), join(dir, 'b.xml')])).code).toBe(0);
    expect((await sign(['--level', 'B-T', bundle])).code).toBe(0);
    const container = await verify(bundle);
    expect(container.code, container.stdout + container.stderr).toBe(0);
    expect(container.json()).toMatchObject({
      valid: true,
      uncovered: [],
      signatures: [
        { covers: ['a.txt', 'b.xml'], level: 'B-B' },
        { covers: ['a.txt', 'b.xml'], level: 'B-T' },
      ],
    });
    expect((await sign(['--format', 'asics', '--asic-signature', 'xades', join(dir, 'a.txt')])).code).toBe(0);
    const single = await verify(join(dir, 'a.txt.asics'));
    expect(single.code, single.stdout + single.stderr).toBe(0);
  });
});

describe('--skip-existing of an ASiC-E with XAdES', () => {
  it('skips the container while it holds these files signed by the same credential; refuses it once one changed', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'a.txt'), 'a\n');
    const bundle = join(dir, 'skip.asice');
    const args = ['--format', 'asice', '--skip-existing', '-o', bundle, join(dir, 'a.txt')];
    expect((await sign(args)).code).toBe(0);
    const before = sandbox.sandbox.requestLog.length;
    const skipped = await sign(args);
    expect(skipped.code, skipped.stderr).toBe(0);
    expect(skipped.stdout).toContain('"skipped":true');
    expect(signHashes(before)).toBe(0);
    await writeFile(join(dir, 'a.txt'), 'changed\n');
    const refused = await sign(args);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/already exists/);
  });
});

describe('XAdES through the split flow (--prepare, then --complete)', () => {
  it('an enveloped B-T signature under a policy, and an ASiC-E with XAdES, as prepared; esign verify accepts both', async () => {
    const dir = await tempDir();
    const input = join(dir, 'invoice.xml');
    await writeFile(input, INVOICE);
    const state = join(dir, 'state.json');
    const env = sealEnv(sandbox, 'v2');
    const split = (args: string[]) => runCli(['--json', 'sign', '--state', state, ...args], { env });
    const prepared = await split([
      '--prepare',
      '--format',
      'xades',
      '--level',
      'B-T',
      '--signature-policy',
      'facturae-3.1',
      input,
    ]);
    expect(prepared.code, prepared.stderr).toBe(0);
    const completed = await split(['--complete']);
    expect(completed.code, completed.stderr).toBe(0);
    const output = join(dir, 'invoice-signed.xml');
    expect(await readFile(output, 'utf8')).toContain('Ohixl6upD6av8N7pEvDABhEL6hM=');
    const verified = await runCli(['--json', 'verify', output], { env: sandbox.env });
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(verified.json()).toMatchObject({ valid: true, signatures: [{ level: 'B-T' }] });

    const bundle = join(dir, 'bundle.asice');
    expect((await split(['--prepare', '--format', 'asice', '--level', 'B-T', '-o', bundle, input])).code).toBe(0);
    const container = await split(['--complete']);
    expect(container.code, container.stderr).toBe(0);
    const checked = await runCli(['--json', 'verify', bundle], { env: sandbox.env });
    expect(checked.code, checked.stdout + checked.stderr).toBe(0);
    expect(checked.json()).toMatchObject({ valid: true, signatures: [{ level: 'B-T', covers: ['invoice.xml'] }] });
  });
});
