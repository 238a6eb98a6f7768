/**
 * ASiC containers: `--format asics` against the sandbox, read back by esign verify, and the
 * containers esign refuses to read (each in one line, nothing written, the input untouched).
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, open, readFile, readdir, writeFile } from 'node:fs/promises';
import { PDFDocument } from 'pdf-lib';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, TESTING_EXECUTABLE } from '../helpers/run-cli.js';
import { sealEnv, startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { removedAtSignIn } from '../helpers/batch-inputs.js';
import { tempDir, tempDirForFile } from '../helpers/tmp.js';

let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox({ autoApprove: true });
});
afterAll(async () => sandbox?.close());

const MAX_RSS_PRELOAD = new URL('../helpers/max-rss.js', import.meta.url).href;
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** A ZIP made by Info-ZIP's `zip` in `dir` from `files` (name → content), in that order, with `options`. */
function infoZip(dir: string, archive: string, names: string[], options: string[] = []): void {
  const made = spawnSync('zip', ['-q', '-X', ...options, archive, ...names], { cwd: dir });
  if (made.status !== 0) throw new Error(made.stderr.toString());
}

describe('esign sign --format asics', () => {
  it('writes one ASiC-S per input, which verify reports valid and covering its document', async () => {
    const dir = await tempDir();
    const out = join(dir, 'signed');
    await writeFile(join(dir, 'notes.txt'), 'release notes\n'.repeat(1000));
    await writeFile(join(dir, 'data.json'), '{"a":1}\n');
    const signed = await runCli(
      [
        '--auto-approve',
        '--json',
        'sign',
        '--format',
        'asics',
        '--level',
        'B-T',
        '--output-dir',
        out,
        join(dir, 'notes.txt'),
        join(dir, 'data.json'),
      ],
      { env: sandbox.env },
    );
    expect(signed.code, signed.stderr).toBe(0);
    const lines = signed.jsonLines() as Array<Record<string, unknown>>;
    expect(lines.map((line) => line['packaging'])).toEqual(['asic-s', 'asic-s']);
    expect((await readdir(out)).sort()).toEqual(['data.json.asics', 'notes.txt.asics']);
    const container = await readFile(join(out, 'notes.txt.asics'));
    const line = lines.find((entry) => entry['output'] === join(out, 'notes.txt.asics'));
    expect(line!['sha256']).toBe(sha256(container));
    expect(line!['bytes']).toBe(container.length);
    // mimetype first, stored, no extra field: its content at byte 38.
    expect(container.subarray(30, 38).toString()).toBe('mimetype');
    expect(container.readUInt16LE(8)).toBe(0);
    expect(container.readUInt16LE(28)).toBe(0);
    expect(container.subarray(38, 38 + 31).toString()).toBe('application/vnd.etsi.asic-s+zip');

    const verified = await runCli(['--json', 'verify', join(out, 'notes.txt.asics')], { env: sandbox.env });
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.json()).toMatchObject({
      packaging: 'asic-s',
      uncovered: [],
      valid: true,
      signatures: [{ covers: ['notes.txt'], level: 'B-T', status: 'valid' }],
    });
    // esign's own layout is the strict one: nothing to warn about.
    expect(verified.json()).not.toHaveProperty('warnings');
  });

  it('fails verify when the document inside was changed', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'pay.txt'), 'pay 100 EUR\n');
    const signed = await runCli(
      ['--auto-approve', 'sign', '--format', 'asics', '--level', 'B-B', join(dir, 'pay.txt')],
      {
        env: sandbox.env,
      },
    );
    expect(signed.code, signed.stderr).toBe(0);
    const work = join(dir, 'x');
    await mkdir(join(work, 'META-INF'), { recursive: true });
    spawnSync('unzip', ['-q', join(dir, 'pay.txt.asics'), '-d', work]);
    await writeFile(join(work, 'pay.txt'), 'pay 900 EUR\n');
    infoZip(work, 'changed.asics', ['mimetype'], ['-0']);
    infoZip(work, 'changed.asics', ['pay.txt', 'META-INF/signature.p7s']);
    const verified = await runCli(['--json', 'verify', join(work, 'changed.asics')], { env: sandbox.env });
    expect(verified.code).toBe(9);
    expect(verified.json()).toMatchObject({ code: 'VERIFY_FAILED', valid: false });
  });
});

describe('esign verify refuses containers it will not read, in one line', () => {
  let dir: string;
  let removeDir: () => Promise<void>;
  let p7s: Buffer;
  afterAll(async () => removeDir?.());
  beforeAll(async () => {
    ({ dir, remove: removeDir } = await tempDirForFile());
    await writeFile(join(dir, 'doc.txt'), 'document\n');
    const signed = await runCli(['--auto-approve', 'sign', '--level', 'B-B', join(dir, 'doc.txt')], {
      env: sandbox.env,
    });
    expect(signed.code, signed.stderr).toBe(0);
    p7s = await readFile(join(dir, 'doc.txt.p7s'));
  });

  /** A container directory with mimetype, doc.txt and its signature, zipped by `build`. */
  async function refusal(name: string, build: (work: string) => Promise<string>): Promise<string> {
    const work = join(dir, name);
    await mkdir(join(work, 'META-INF'), { recursive: true });
    await writeFile(join(work, 'mimetype'), 'application/vnd.etsi.asic-s+zip');
    await writeFile(join(work, 'doc.txt'), 'document\n');
    await writeFile(join(work, 'META-INF', 'signature.p7s'), p7s);
    const archive = await build(work);
    const before = await readdir(work);
    const result = await runCli(['verify', join(work, archive)], { env: sandbox.env });
    expect(result.code, result.stderr).toBe(7);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(await readdir(work)).toEqual(before);
    return result.stderr;
  }

  it('a valid layout verifies (the fixture is right)', async () => {
    const work = join(dir, 'good');
    await mkdir(join(work, 'META-INF'), { recursive: true });
    await writeFile(join(work, 'mimetype'), 'application/vnd.etsi.asic-s+zip');
    await writeFile(join(work, 'doc.txt'), 'document\n');
    await writeFile(join(work, 'META-INF', 'signature.p7s'), p7s);
    infoZip(work, 'good.asics', ['mimetype'], ['-0']);
    infoZip(work, 'good.asics', ['doc.txt', 'META-INF/signature.p7s']);
    const result = await runCli(['verify', join(work, 'good.asics')], { env: sandbox.env });
    expect(result.code, result.stderr).toBe(0);
  });

  it('mimetype not first is read (as DSS reads it), with a warning; the layout rules refused are the ones below', async () => {
    const work = join(dir, 'not-first');
    await mkdir(join(work, 'META-INF'), { recursive: true });
    await writeFile(join(work, 'mimetype'), 'application/vnd.etsi.asic-s+zip');
    await writeFile(join(work, 'doc.txt'), 'document\n');
    await writeFile(join(work, 'META-INF', 'signature.p7s'), p7s);
    infoZip(work, 'c.asics', ['doc.txt', 'mimetype', 'META-INF/signature.p7s'], ['-0']);
    const result = await runCli(['--json', 'verify', join(work, 'c.asics')], { env: sandbox.env });
    expect(result.code, result.stderr).toBe(0);
    expect(result.json<{ warnings: string[] }>().warnings.join('\n')).toMatch(/not the first entry/);
  });

  it('a mimetype of no ASiC (an ASiC-E one makes it an ASiC-E, whatever its name)', async () => {
    const stderr = await refusal('wrong-type', async (work) => {
      await writeFile(join(work, 'mimetype'), 'application/zip');
      infoZip(work, 'c.asics', ['mimetype', 'doc.txt', 'META-INF/signature.p7s'], ['-0']);
      return 'c.asics';
    });
    expect(stderr).toMatch(/its "mimetype" is "application\/zip"/);
  });

  it('a truncated ZIP', async () => {
    const stderr = await refusal('truncated', async (work) => {
      infoZip(work, 'c.asics', ['mimetype', 'doc.txt', 'META-INF/signature.p7s'], ['-0']);
      const whole = await readFile(join(work, 'c.asics'));
      await writeFile(join(work, 'c.asics'), whole.subarray(0, whole.length - 30));
      return 'c.asics';
    });
    expect(stderr).toMatch(/c\.asics: Not a container esign reads: /);
  });

  it('a ZIP bomb (an entry that would expand a thousand times)', async () => {
    const stderr = await refusal('bomb', async (work) => {
      await writeFile(join(work, 'doc.txt'), Buffer.alloc(20 * 1024 * 1024));
      infoZip(work, 'c.asics', ['mimetype'], ['-0']);
      infoZip(work, 'c.asics', ['doc.txt', 'META-INF/signature.p7s'], ['-9']);
      return 'c.asics';
    });
    expect(stderr).toMatch(/the entry doc\.txt would expand \d+ times \(a ZIP bomb\?\)/);
  });

  it('an encrypted entry', async () => {
    const stderr = await refusal('encrypted', async (work) => {
      infoZip(work, 'c.asics', ['mimetype'], ['-0']);
      infoZip(work, 'c.asics', ['doc.txt', 'META-INF/signature.p7s'], ['-P', 'secret']);
      return 'c.asics';
    });
    expect(stderr).toMatch(/the entry doc\.txt is encrypted/);
  });

  it('an entry name with "..", and one with a backslash', async () => {
    const dotdot = await refusal('dotdot', async (work) => {
      infoZip(work, 'c.asics', ['mimetype', 'doc.txt', 'META-INF/signature.p7s'], ['-0']);
      const bytes = await readFile(join(work, 'c.asics'));
      // "doc.txt" → "../x.tx" in both the local header and the central directory (same length).
      await writeFile(
        join(work, 'c.asics'),
        Buffer.from(bytes.toString('latin1').replaceAll('doc.txt', '../x.tx'), 'latin1'),
      );
      return 'c.asics';
    });
    expect(dotdot).toMatch(/c\.asics: Not a container esign reads: .*\.\./);
    const backslash = await refusal('backslash', async (work) => {
      infoZip(work, 'c.asics', ['mimetype', 'doc.txt', 'META-INF/signature.p7s'], ['-0']);
      const bytes = await readFile(join(work, 'c.asics'));
      await writeFile(
        join(work, 'c.asics'),
        Buffer.from(bytes.toString('latin1').replaceAll('doc.txt', 'a\\b.txt'), 'latin1'),
      );
      return 'c.asics';
    });
    expect(backslash).toMatch(/c\.asics: Not a container esign reads: .*backslash/);
  });

  it('two entries of one name', async () => {
    const stderr = await refusal('duplicate', async (work) => {
      await writeFile(join(work, 'doc.tx2'), 'other\n');
      infoZip(work, 'c.asics', ['mimetype', 'doc.txt', 'doc.tx2', 'META-INF/signature.p7s'], ['-0']);
      const bytes = await readFile(join(work, 'c.asics'));
      await writeFile(
        join(work, 'c.asics'),
        Buffer.from(bytes.toString('latin1').replaceAll('doc.tx2', 'doc.txt'), 'latin1'),
      );
      return 'c.asics';
    });
    expect(stderr).toMatch(/it holds two entries named "doc\.txt"/);
  });
});

describe('esign sign --format asice', () => {
  it('makes one container of files and a directory (recursively, names relative), one approval, which verify reports covered', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'a.txt'), 'first\n');
    await writeFile(join(dir, 'b c.xml'), '<b/>\n');
    await mkdir(join(dir, 'docs', 'sub'), { recursive: true });
    await writeFile(join(dir, 'docs', 'one.txt'), 'one\n');
    await writeFile(join(dir, 'docs', 'sub', 'two.json'), '{"two":2}\n');
    await writeFile(join(dir, 'docs', '.hidden'), 'left out\n');
    const bundle = join(dir, 'bundle.asice');
    const before = sandbox.sandbox.requestLog.length;
    const signed = await runCli(
      [
        '--auto-approve',
        '--json',
        'sign',
        '--format',
        'asice',
        '--asic-signature',
        'cades',
        '--level',
        'B-T',
        '-o',
        bundle,
        join(dir, 'a.txt'),
        join(dir, 'b c.xml'),
        join(dir, 'docs'),
      ],
      { env: sandbox.env },
    );
    expect(signed.code, signed.stderr).toBe(0);
    expect(
      sandbox.sandbox.requestLog.slice(before).filter((call) => call.endsWith('signatures/signHash')),
    ).toHaveLength(1);
    expect(signed.json()).toMatchObject({
      output: bundle,
      packaging: 'asic-e',
      files: ['a.txt', 'b c.xml', 'docs/one.txt', 'docs/sub/two.json'],
      level: 'B-T',
    });
    const container = await readFile(bundle);
    expect(container.subarray(38, 38 + 31).toString()).toBe('application/vnd.etsi.asic-e+zip');

    const verified = await runCli(['--json', 'verify', bundle], { env: sandbox.env });
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.json()).toMatchObject({
      packaging: 'asic-e',
      valid: true,
      uncovered: [],
      signatures: [
        { covers: ['a.txt', 'b c.xml', 'docs/one.txt', 'docs/sub/two.json'], level: 'B-T', status: 'valid' },
      ],
    });

    const extracted = join(dir, 'extracted');
    const extract = await runCli(['--json', 'verify', bundle, '--extract', extracted], { env: sandbox.env });
    expect(extract.code, extract.stderr).toBe(0);
    expect(extract.json()).toMatchObject({ extracted });
    expect(await readFile(join(extracted, 'docs', 'sub', 'two.json'), 'utf8')).toBe('{"two":2}\n');
    expect((await readdir(extracted)).sort()).toEqual(['a.txt', 'b c.xml', 'docs']);

    // An unsigned file added: reported apart, the container is not valid, and nothing is extracted.
    const work = join(dir, 'work');
    await mkdir(work);
    await writeFile(join(work, 'extra.txt'), 'slipped in\n');
    await writeFile(join(work, 'added.asice'), container);
    infoZip(work, 'added.asice', ['extra.txt']);
    const added = await runCli(['--json', 'verify', join(work, 'added.asice'), '--extract', join(work, 'out')], {
      env: sandbox.env,
    });
    expect(added.code).toBe(9);
    expect(added.json()).toMatchObject({ code: 'VERIFY_MODIFIED', uncovered: ['extra.txt'] });
    expect(added.json()).not.toHaveProperty('extracted');
    expect(await readdir(work)).not.toContain('out');

    // A covered file changed: that signature fails.
    spawnSync('unzip', ['-q', bundle, '-d', join(work, 'x')]);
    await writeFile(join(work, 'x', 'a.txt'), 'forged\n');
    infoZip(join(work, 'x'), 'changed.asice', ['mimetype'], ['-0']);
    infoZip(join(work, 'x'), 'changed.asice', ['-r', 'a.txt', 'b c.xml', 'docs', 'META-INF']);
    const changed = await runCli(['--json', 'verify', join(work, 'x', 'changed.asice')], { env: sandbox.env });
    expect(changed.code).toBe(9);
    expect(changed.json()).toMatchObject({
      code: 'VERIFY_FAILED',
      signatures: [{ status: 'invalid', indication: 'TOTAL-FAILED', subIndication: 'HASH_FAILURE' }],
    });

    // A file the manifest names, deleted: a change to the container (VERIFY_MODIFIED), named.
    await writeFile(join(work, 'missing.asice'), container);
    spawnSync('zip', ['-q', '-d', join(work, 'missing.asice'), 'docs/one.txt']);
    const missing = await runCli(['--json', 'verify', join(work, 'missing.asice')], { env: sandbox.env });
    expect(missing.code).toBe(9);
    expect(missing.json()).toMatchObject({ code: 'VERIFY_MODIFIED' });
    expect(JSON.stringify(missing.json())).toMatch(
      /META-INF\/ASiCManifest\.xml names docs\/one\.txt, which the container does not hold/,
    );
  });

  it('refuses two inputs of one name in the container, before any approval', async () => {
    const dir = await tempDir();
    await mkdir(join(dir, 'x'));
    await writeFile(join(dir, 'a.txt'), 'a\n');
    await writeFile(join(dir, 'x', 'a.txt'), 'other a\n');
    const result = await runCli(
      [
        '--auto-approve',
        'sign',
        '--format',
        'asice',
        '--asic-signature',
        'cades',
        '-o',
        join(dir, 'b.asice'),
        join(dir, 'a.txt'),
        join(dir, 'x', 'a.txt'),
      ],
      { env: sandbox.env },
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/would both be a\.txt in the container/);
    expect((await readdir(dir)).sort()).toEqual(['a.txt', 'x']);
  });

  it('adds a second signature with its own manifest, earlier manifest and signature byte for byte, replacing the container', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'a.txt'), 'first\n'.repeat(500));
    await writeFile(join(dir, 'b.pdf'), '%PDF-1.7 not really\n');
    const bundle = join(dir, 'bundle.asice');
    const first = await runCli(
      [
        '--auto-approve',
        'sign',
        '--format',
        'asice',
        '--asic-signature',
        'cades',
        '--level',
        'B-B',
        '-o',
        bundle,
        join(dir, 'a.txt'),
        join(dir, 'b.pdf'),
      ],
      { env: sandbox.env },
    );
    expect(first.code, first.stderr).toBe(0);
    const unzipOf = async (archive: string, into: string) => {
      spawnSync('unzip', ['-q', archive, '-d', into]);
      return {
        manifest: await readFile(join(into, 'META-INF', 'ASiCManifest.xml')),
        signature: await readFile(join(into, 'META-INF', 'signature001.p7s')),
      };
    };
    const before = await unzipOf(bundle, join(dir, 'before'));
    const second = await runCli(['--auto-approve', '--json', 'sign', '--level', 'B-T', bundle], { env: sandbox.env });
    expect(second.code, second.stderr).toBe(0);
    expect(second.json()).toMatchObject({ output: bundle, packaging: 'asic-e', files: ['a.txt', 'b.pdf'] });
    expect((await readdir(dir)).sort()).toEqual(['a.txt', 'b.pdf', 'before', 'bundle.asice']);
    const after = await unzipOf(bundle, join(dir, 'after'));
    expect(after.manifest.equals(before.manifest)).toBe(true);
    expect(after.signature.equals(before.signature)).toBe(true);
    const names = spawnSync('zipinfo', ['-1', bundle]).stdout.toString().trim().split('\n');
    expect(names).toEqual([
      'mimetype',
      'a.txt',
      'b.pdf',
      'META-INF/ASiCManifest.xml',
      'META-INF/signature001.p7s',
      'META-INF/ASiCManifest002.xml',
      'META-INF/signature002.p7s',
    ]);
    const verified = await runCli(['--json', 'verify', bundle], { env: sandbox.env });
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.json()).toMatchObject({
      valid: true,
      uncovered: [],
      signatures: [
        { index: 1, covers: ['a.txt', 'b.pdf'], level: 'B-B' },
        { index: 2, covers: ['a.txt', 'b.pdf'], level: 'B-T' },
      ],
    });
  });
});

describe('esign sign --format asice with the batch options', () => {
  const asice = (args: string[], { globals = ['--auto-approve'], env = sandbox.env } = {}) =>
    runCli(
      [...globals, '--json', 'sign', '--format', 'asice', '--asic-signature', 'cades', '--level', 'B-B', ...args],
      { env },
    );
  const signHashes = (since: number) =>
    sandbox.sandbox.requestLog.slice(since).filter((call) => call.endsWith('signatures/signHash')).length;

  it('--output-dir places the container; --skip-existing skips it while it holds these files signed, refuses it once one changed', async () => {
    const dir = await tempDir();
    const out = join(dir, 'out');
    await writeFile(join(dir, 'a.txt'), 'first\n');
    await mkdir(join(dir, 'docs'));
    await writeFile(join(dir, 'docs', 'one.xml'), '<one/>\n');
    const inputs = [join(dir, 'a.txt'), join(dir, 'docs')];
    const placedIn = ['--output-dir', out, '-o', 'bundle.asice', ...inputs];
    const first = await asice([...placedIn]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.json()).toMatchObject({ output: join(out, 'bundle.asice'), files: ['a.txt', 'docs/one.xml'] });
    expect(await readdir(out)).toEqual(['bundle.asice']);
    const container = await readFile(join(out, 'bundle.asice'));

    const before = sandbox.sandbox.requestLog.length;
    const again = await asice(['--skip-existing', ...placedIn]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.json()).toMatchObject({ output: join(out, 'bundle.asice'), skipped: true });
    expect(signHashes(before)).toBe(0);
    expect((await readFile(join(out, 'bundle.asice'))).equals(container)).toBe(true);

    await writeFile(join(dir, 'docs', 'one.xml'), '<one changed="yes"/>\n');
    const changed = await asice(['--skip-existing', ...placedIn]);
    expect(changed.code).toBe(8);
    expect(changed.stderr).toMatch(/bundle\.asice already exists and holds no signature by \S+ over these files/);
    expect((await readFile(join(out, 'bundle.asice'))).equals(container)).toBe(true);
    const forced = await asice([
      '--auto-approve',
      '--skip-existing',
      '--force',
      '--output-dir',
      out,
      '-o',
      'bundle.asice',
      ...inputs,
    ]);
    expect(forced.code, forced.stderr).toBe(0);
    expect((await runCli(['verify', join(out, 'bundle.asice')], { env: sandbox.env })).code).toBe(0);

    // A signature added to a container into --output-dir: a copy there, the original left as it was.
    const added = await runCli(
      [
        '--auto-approve',
        '--json',
        'sign',
        '--level',
        'B-B',
        '--output-dir',
        join(dir, 'second'),
        join(out, 'bundle.asice'),
      ],
      { env: sandbox.env },
    );
    expect(added.code, added.stderr).toBe(0);
    expect(added.json()).toMatchObject({ output: join(dir, 'second', 'bundle.asice') });
    const twice = await runCli(['--json', 'verify', join(dir, 'second', 'bundle.asice')], { env: sandbox.env });
    expect(twice.json()).toMatchObject({ valid: true, signatures: [{ index: 1 }, { index: 2 }] });

    const absolute = await asice(['--output-dir', out, '-o', join(dir, 'x.asice'), ...inputs]);
    expect(absolute.code).toBe(2);
    expect(absolute.stderr).toMatch(/is a full path, and --output-dir would put it elsewhere/);
  });

  it('--continue-on-error: a file gone before it is read is named and left out, the rest signed, exit 10; without it nothing is written', async () => {
    for (const continuing of [false, true]) {
      const dir = await tempDir();
      for (const name of ['a.txt', 'b.txt', 'c.txt']) await writeFile(join(dir, name), `${name}\n`);
      const bundle = join(dir, 'bundle.asice');
      const inputs = ['a.txt', 'b.txt', 'c.txt'].map((name) => join(dir, name));
      const run = await removedAtSignIn(dir, join(dir, 'b.txt'), sandbox.env);
      const result = await asice(['-o', bundle, ...(continuing ? ['--continue-on-error'] : []), ...inputs], run);
      if (!continuing) {
        expect(result.code).toBe(7);
        expect(result.stderr).toMatch(/b\.txt/);
        expect((await readdir(dir)).sort()).toEqual(['a.txt', 'browser.sh', 'c.txt']);
        continue;
      }
      expect(result.code, result.stderr).toBe(10);
      const lines = result.jsonLines<{ input?: string; error?: { code: string }; files?: string[] }>();
      expect(lines[0]).toMatchObject({ input: join(dir, 'b.txt'), error: { code: 'INPUT_NOT_FOUND' } });
      expect(lines[1]).toMatchObject({ output: bundle, files: ['a.txt', 'c.txt'] });
      expect(result.stderr).toContain('2 of 3 files signed; 1 failed');
      const verified = await runCli(['--json', 'verify', bundle], { env: sandbox.env });
      expect(verified.json()).toMatchObject({
        valid: true,
        uncovered: [],
        signatures: [{ covers: ['a.txt', 'c.txt'] }],
      });
    }
  });
});

describe('esign sign --format asice through the split flow (--prepare, then --complete)', () => {
  it('with a browser approval: the container written at --complete holds the manifest prepared, byte for byte', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'a.txt'), 'first\n');
    await mkdir(join(dir, 'docs'));
    await writeFile(join(dir, 'docs', 'one.xml'), '<one/>\n');
    const bundle = join(dir, 'bundle.asice');
    const state = join(dir, 'state.json');
    // A fresh CI machine: no terminal, no browser, no cached sign-in.
    const env = { ...sandbox.env, ESIGN_CONFIG_DIR: join(dir, 'config') };
    const asice = ['--format', 'asice', '--asic-signature', 'cades', '--level', 'B-T', '-o', bundle];
    const inputs = [join(dir, 'a.txt'), join(dir, 'docs')];
    const prepare = (extra: string[]) =>
      runCli(['--json', 'sign', '--prepare', '--state', state, ...asice, ...extra, ...inputs], { env });
    const pending = await prepare([]);
    expect(pending.code, pending.stderr).toBe(0);
    const follow = async (url: string) => (await fetch(url, { redirect: 'manual' })).headers.get('location')!;
    const prepared = await prepare(['--redirect-url', await follow(pending.json<{ signInUrl: string }>().signInUrl)]);
    expect(prepared.code, prepared.stderr).toBe(0);
    expect(await readdir(dir)).not.toContain('bundle.asice');
    const saved = JSON.parse(await readFile(state, 'utf8')) as { container: { manifest: string } };
    const { approvals } = prepared.json<{ approvals: Array<{ authorizationUrl: string }> }>();
    expect(approvals).toHaveLength(1);
    const completed = await runCli(
      [
        '--json',
        'sign',
        '--complete',
        '--state',
        state,
        '--redirect-url',
        await follow(approvals[0]!.authorizationUrl),
      ],
      { env },
    );
    expect(completed.code, completed.stderr).toBe(0);
    expect(completed.json()).toMatchObject({
      output: bundle,
      packaging: 'asic-e',
      files: ['a.txt', 'docs/one.xml'],
      level: 'B-T',
    });
    expect(
      spawnSync('unzip', ['-p', bundle, 'META-INF/ASiCManifest.xml']).stdout.equals(
        Buffer.from(saved.container.manifest, 'base64'),
      ),
    ).toBe(true);
    const verified = await runCli(['--json', 'verify', bundle], { env: sandbox.env });
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.json()).toMatchObject({
      valid: true,
      signatures: [{ covers: ['a.txt', 'docs/one.xml'], level: 'B-T' }],
    });
    expect(await readdir(dir)).not.toContain('state.json');
  });

  it('with a seal: refuses at --complete an input changed since --prepare, naming it, writing nothing; adds a second signature', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'a.txt'), 'first\n');
    await writeFile(join(dir, 'b.xml'), '<b/>\n');
    const bundle = join(dir, 'bundle.asice');
    const state = join(dir, 'state.json');
    const env = sealEnv(sandbox, 'v2');
    const split = (args: string[]) => runCli(['--json', 'sign', '--state', state, ...args], { env });
    const files = [
      '--format',
      'asice',
      '--asic-signature',
      'cades',
      '--level',
      'B-B',
      '-o',
      bundle,
      join(dir, 'a.txt'),
      join(dir, 'b.xml'),
    ];
    expect((await split(['--prepare', ...files])).code).toBe(0);
    await writeFile(join(dir, 'b.xml'), '<b changed="1"/>\n');
    const refused = await split(['--complete']);
    expect(refused.code).toBe(7);
    expect(refused.stderr).toMatch(
      /b\.xml changed since --prepare: .*bundle\.asice would not be the container approved/,
    );
    expect((await readdir(dir)).sort()).toEqual(['a.txt', 'b.xml', 'state.json']);

    expect((await split(['--prepare', ...files])).code).toBe(0);
    expect((await split(['--complete'])).code).toBe(0);
    // A parallel signature through the split flow: the container as it was at --prepare, signed again.
    const added = await split(['--prepare', '--level', 'B-T', bundle]);
    expect(added.code, added.stderr).toBe(0);
    const completed = await split(['--complete']);
    expect(completed.code, completed.stderr).toBe(0);
    const verified = await runCli(['--json', 'verify', bundle], { env: sandbox.env });
    expect(verified.json()).toMatchObject({
      valid: true,
      signatures: [
        { index: 1, level: 'B-B' },
        { index: 2, level: 'B-T' },
      ],
    });
  });
});

describe('esign sign --format asics --skip-existing', () => {
  it('skips an ASiC-S that holds its input signed by the same credential, and refuses one that does not', async () => {
    const dir = await tempDir();
    const out = join(dir, 'out');
    for (const name of ['a.txt', 'b.json']) await writeFile(join(dir, name), `${name}\n`);
    const inputs = [join(dir, 'a.txt'), join(dir, 'b.json')];
    const options = ['--format', 'asics', '--level', 'B-B', '--output-dir', out];
    const sign = (extra: string[]) =>
      runCli(['--auto-approve', '--json', 'sign', ...options, ...extra, ...inputs], { env: sandbox.env });
    expect((await sign([])).code).toBe(0);
    const again = await sign(['--skip-existing']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.jsonLines<{ skipped?: boolean }>().map((line) => line.skipped)).toEqual([true, true]);
    await writeFile(join(dir, 'a.txt'), 'changed\n');
    const changed = await sign(['--skip-existing', '--continue-on-error']);
    expect(changed.code).toBe(10);
    const lines = changed.jsonLines<{ input: string; skipped?: boolean; error?: { message: string } }>();
    expect(lines.find((line) => line.input === inputs[0])?.error?.message).toMatch(
      /a\.txt\.asics already exists and is not a signature of .*a\.txt .*\(it does not hold the input as it is now\)/,
    );
    expect(lines.find((line) => line.input === inputs[1])).toMatchObject({ skipped: true });
  });
});

describe('esign sign --upload of containers and .p7m (the sandbox S3 store)', () => {
  let storage: TestSandbox;
  beforeAll(async () => {
    storage = await startTestSandbox({ s3: true, autoApprove: true });
    const login = await runCli(['login', '--auto-approve', '--scope', 'com.vendor.storage'], { env: storage.env });
    expect(login.code, login.stderr).toBe(0);
  });
  afterAll(async () => storage?.close());

  it('uploads the .asice, each .asics and each .p7m once written, as BASENAME, byte for byte', async () => {
    const dir = await tempDir();
    for (const name of ['up-a.txt', 'up-b.xml']) await writeFile(join(dir, name), `${name}\n`);
    const inputs = [join(dir, 'up-a.txt'), join(dir, 'up-b.xml')];
    const sign = (args: string[]) =>
      runCli(['--auto-approve', '--json', 'sign', '--level', 'B-B', '--upload', ...args], { env: storage.env });
    const uploaded = new Map<string, string>();
    for (const args of [
      ['--format', 'asice', '--asic-signature', 'cades', '-o', join(dir, 'up-bundle.asice'), ...inputs],
      ['--format', 'asics', ...inputs],
      ['--format', 'p7m', ...inputs],
    ]) {
      const result = await sign(args);
      expect(result.code, result.stderr + result.stdout).toBe(0);
      for (const line of result.jsonLines<{ file?: string; key?: string; sha256?: string }>())
        if (line.key) uploaded.set(line.key, line.sha256!);
    }
    expect([...uploaded.keys()].sort()).toEqual([
      'up-a.txt.asics',
      'up-a.txt.p7m',
      'up-b.xml.asics',
      'up-b.xml.p7m',
      'up-bundle.asice',
    ]);
    for (const [key, digest] of uploaded) expect(digest).toBe(sha256(await readFile(join(dir, key))));
    const listed = await runCli(['storage', 'ls', 'up-', '--json'], { env: storage.env });
    expect(
      listed
        .json<{ objects: Array<{ key: string }> }>()
        .objects.map((object) => object.key)
        .sort(),
    ).toEqual([...uploaded.keys()].sort());
    // The split flow uploads at --complete, where the container is written.
    const state = join(dir, 'state.json');
    const split = [
      '--format',
      'asice',
      '--asic-signature',
      'cades',
      '--level',
      'B-B',
      '-o',
      join(dir, 'up-split.asice'),
      ...inputs,
    ];
    const prepare = (extra: string[]) =>
      runCli(['--json', 'sign', '--prepare', '--state', state, ...split, ...extra], { env: storage.env });
    const follow = async (url: string) => (await fetch(url, { redirect: 'manual' })).headers.get('location')!;
    let prepared = await prepare([]);
    const signInUrl = prepared.json<{ signInUrl?: string }>().signInUrl;
    if (signInUrl) prepared = await prepare(['--redirect-url', await follow(signInUrl)]);
    expect(prepared.code, prepared.stderr).toBe(0);
    const approved = await follow(
      prepared.json<{ approvals: Array<{ authorizationUrl: string }> }>().approvals[0]!.authorizationUrl,
    );
    const completed = await runCli(
      ['--json', 'sign', '--complete', '--upload', '--state', state, '--redirect-url', approved],
      {
        env: storage.env,
      },
    );
    expect(completed.code, completed.stderr).toBe(0);
    expect(completed.jsonLines<{ key?: string; sha256?: string }>().find((line) => line.key)).toMatchObject({
      key: 'up-split.asice',
      sha256: sha256(await readFile(join(dir, 'up-split.asice'))),
    });
    // An object there is not replaced unasked, as for any output.
    const again = await sign([
      '--force',
      '--format',
      'asice',
      '--asic-signature',
      'cades',
      '-o',
      join(dir, 'up-bundle.asice'),
      ...inputs,
    ]);
    expect(again.code).toBe(8);
    expect(again.stderr).toMatch(/up-bundle\.asice was written but not uploaded: .*already exists in bucket/);
  });
});

// Slow (minutes, 4 GiB written): only with ESIGN_SLOW_TESTS=1 (CONTRIBUTING.md). The input is sparse, so it costs
// no disk; the container is 4 GiB of real blocks, removed with the test's directory.
describe.skipIf(!process.env['ESIGN_SLOW_TESTS'])('an ASiC-E past 4 GiB (ESIGN_SLOW_TESTS=1)', () => {
  it('is written with Zip64 records, verifies, and unzip -t and zipinfo accept it; memory stays flat', async () => {
    const dir = await tempDir();
    const big = join(dir, 'image.tgz');
    const size = 4 * 1024 ** 3 + 3 * 1024 * 1024 + 7;
    const handle = await open(big, 'w');
    try {
      await handle.truncate(size);
      await handle.write(Buffer.from('the first bytes\n'), 0, 16, 0);
      await handle.write(Buffer.from('the last bytes\n'), 0, 15, size - 15);
    } finally {
      await handle.close();
    }
    await writeFile(join(dir, 'note.txt'), 'after the large one: its local header lies past 4 GiB\n');
    const bundle = join(dir, 'big.asice');
    const rssFile = join(dir, 'max-rss.txt');
    const started = Date.now();
    const asice = ['--format', 'asice', '--asic-signature', 'cades', '--level', 'B-B', '-o', bundle];
    const signed = await runCli(['--auto-approve', '--json', 'sign', ...asice, big, join(dir, 'note.txt')], {
      env: { ...sandbox.env, NODE_OPTIONS: `--import ${MAX_RSS_PRELOAD}`, ESIGN_TEST_MAX_RSS_FILE: rssFile },
      timeoutMs: 1_200_000,
    });
    const seconds = (Date.now() - started) / 1000;
    expect(signed.code, signed.stderr).toBe(0);
    const peakMiB = TESTING_EXECUTABLE ? undefined : Number(await readFile(rssFile, 'utf8')) / 1024;
    console.log(
      `Zip64 ASiC-E of ${size} bytes: signed in ${seconds.toFixed(1)} s, peak RSS ${peakMiB?.toFixed(0) ?? '?'} MiB`,
    );
    if (peakMiB !== undefined) expect(peakMiB).toBeLessThan(200);

    // The Zip64 end of central directory record and its locator, before the classic end record.
    const tail = Buffer.alloc(22 + 20 + 56);
    const container = await open(bundle, 'r');
    try {
      const { size: bytes } = await container.stat();
      expect(bytes).toBeGreaterThan(size);
      await container.read(tail, 0, tail.length, bytes - tail.length);
    } finally {
      await container.close();
    }
    expect(tail.readUInt32LE(0)).toBe(0x06064b50);
    expect(tail.readUInt32LE(56)).toBe(0x07064b50);
    expect(tail.readUInt32LE(76)).toBe(0x06054b50);

    const listing = spawnSync('zipinfo', [bundle], { encoding: 'utf8' });
    expect(listing.status, listing.stderr).toBe(0);
    expect(listing.stdout).toMatch(new RegExp(`\\s${size}\\s.*\\simage\\.tgz\\n`));
    const tested = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn('unzip', ['-t', bundle]);
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.on('close', (code) => resolve({ code, out }));
    });
    expect(tested.code, tested.out).toBe(0);
    expect(tested.out).toMatch(/No errors detected/);

    const verified = await runCli(['--json', 'verify', bundle], { env: sandbox.env, timeoutMs: 1_200_000 });
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.json()).toMatchObject({
      valid: true,
      uncovered: [],
      signatures: [{ covers: ['image.tgz', 'note.txt'], status: 'valid' }],
    });
  }, 2_400_000);
});

describe('esign timestamp --format asics', () => {
  it('writes an ASiC-S of the file and its token, which verify reports as a valid document timestamp', async () => {
    const dir = await tempDir();
    const input = join(dir, 'build.tar');
    await writeFile(input, Buffer.alloc(5000, 9));
    const stamped = await runCli(['--json', 'timestamp', '--format', 'asics', input], { env: sandbox.env });
    expect(stamped.code, stamped.stderr).toBe(0);
    expect(stamped.json()).toMatchObject({ input, output: `${input}.asics` });
    const verified = await runCli(['--json', 'verify', `${input}.asics`], { env: sandbox.env });
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.json()).toMatchObject({
      packaging: 'asic-s',
      valid: true,
      signatures: [{ kind: 'docTimeStamp', covers: ['build.tar'], status: 'valid', indication: 'TOTAL-PASSED' }],
    });

    const work = join(dir, 'x');
    spawnSync('unzip', ['-q', `${input}.asics`, '-d', work]);
    await writeFile(join(work, 'build.tar'), Buffer.alloc(5000, 8));
    infoZip(work, 'changed.asics', ['mimetype'], ['-0']);
    infoZip(work, 'changed.asics', ['build.tar', 'META-INF/timestamp.tst']);
    const changed = await runCli(['--json', 'verify', join(work, 'changed.asics')], { env: sandbox.env });
    expect(changed.code).toBe(9);
    expect(changed.json()).toMatchObject({
      code: 'VERIFY_FAILED',
      signatures: [{ status: 'invalid', subIndication: 'HASH_FAILURE' }],
    });
  });
});

describe('the ZIP libraries', () => {
  /** The packages a run required, as Node's module loader saw them (a --require hook that logs them at exit). */
  async function zipModulesLoaded(args: string[]): Promise<string[]> {
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
    return (await readFile(log, 'utf8')).split('\n').filter((name) => /^(yazl|yauzl)$/.test(name));
  }

  // The single executable holds every package: which ones load is not seen by name there.
  it.skipIf(TESTING_EXECUTABLE)('load for containers only: not for --help, a PDF or a .p7s', async () => {
    const dir = await tempDir();
    const pdf = join(dir, 'c.pdf');
    const document = await PDFDocument.create();
    document.addPage();
    await writeFile(pdf, await document.save());
    await writeFile(join(dir, 'n.txt'), 'n\n');
    expect(await zipModulesLoaded(['--help'])).toEqual([]);
    expect(await zipModulesLoaded(['sign', '--help'])).toEqual([]);
    expect(await zipModulesLoaded(['--auto-approve', 'sign', '--level', 'B-B', pdf, join(dir, 'n.txt')])).toEqual([]);
    expect(
      await zipModulesLoaded(['--auto-approve', 'sign', '--format', 'asics', '--level', 'B-B', join(dir, 'n.txt')]),
    ).toEqual(['yazl']);
  });
});
