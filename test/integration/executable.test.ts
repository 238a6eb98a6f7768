/**
 * The single executable as shipped (`npm run build:sea`; run with ESIGN_BIN=dist/sea/esign, as the
 * CI job does): it runs with no `node` on PATH, keeps a V8 code cache per command and asset
 * (src/cli/sea-launch.ts) the way the npm launcher keeps one per command, and with --verbose its
 * traces name the TypeScript sources through the source map inside it. Skipped for the npm package.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ESIGN_BIN, runCli, TESTING_EXECUTABLE, type CliResult } from '../helpers/run-cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/tmp.js';

const SAMPLE_PDF = join(import.meta.dirname, '../../samples/contract.pdf');
const suite = TESTING_EXECUTABLE
  ? `the single executable ${ESIGN_BIN}`
  : 'the single executable (skipped: ESIGN_BIN names none; npm run build:sea, then ESIGN_BIN=dist/sea/esign)';

function expectOk(result: CliResult): void {
  expect(result.signal, result.stderr).toBeNull();
  expect(result.code, result.stderr).toBe(0);
}

/** The one cache key dir the executable made under `<config>/cache/v8`. */
async function keyDir(config: string): Promise<string> {
  const keys = await readdir(join(config, 'cache', 'v8'));
  expect(keys).toHaveLength(1);
  expect(keys[0]).toMatch(new RegExp(`^sea-[0-9a-f]{20}-${process.version.replaceAll('.', '\\.')}-${process.arch}$`));
  return join(config, 'cache', 'v8', keys[0]!);
}

describe.skipIf(!TESTING_EXECUTABLE)(suite, () => {
  let t: TestSandbox;
  beforeAll(async () => {
    t = await startTestSandbox();
  });
  afterAll(() => t?.close());

  it('signs with no node on PATH (an empty PATH)', async () => {
    const dir = await tempDir();
    const emptyBin = join(dir, 'bin');
    await mkdir(emptyBin);
    await writeFile(join(dir, 'notes.txt'), 'release notes\n');
    const version = await runCli(['--version'], { env: { PATH: emptyBin } });
    expectOk(version);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+ \(build /);
    const signed = await runCli(['--auto-approve', '--quiet', 'sign', '--level', 'B-T', join(dir, 'notes.txt')], {
      env: { ...t.env, PATH: emptyBin },
    });
    expectOk(signed);
    const verified = await runCli(
      ['--json', 'verify', join(dir, 'notes.txt'), '--signature', join(dir, 'notes.txt.p7s')],
      { env: { ...t.env, PATH: emptyBin } },
    );
    expectOk(verified);
  });

  it('needs no glibc newer than 2.28 and nothing but the C and C++ runtimes, as README "Install" says', () => {
    // objdump (binutils) reads the versions of the dynamic symbols the loader must resolve.
    const symbols = spawnSync('objdump', ['-T', ESIGN_BIN], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    expect(symbols.status, symbols.stderr).toBe(0);
    const glibc = [
      ...new Set(
        [...symbols.stdout.matchAll(/\bGLIBC_(\d+)\.(\d+)/g)].map(
          (match) => Number(match[1]) * 1000 + Number(match[2]),
        ),
      ),
    ];
    expect(glibc.length).toBeGreaterThan(0);
    expect(Math.max(...glibc), 'the newest glibc symbol version the executable needs').toBeLessThanOrEqual(2028);
    const needed = spawnSync('objdump', ['-p', ESIGN_BIN], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    const libraries = [...needed.stdout.matchAll(/^\s+NEEDED\s+(\S+)$/gm)].map((match) => match[1]).sort();
    expect(libraries).toEqual([
      'ld-linux-x86-64.so.2',
      'libc.so.6',
      'libdl.so.2',
      'libgcc_s.so.1',
      'libm.so.6',
      'libpthread.so.0',
      'libstdc++.so.6',
    ]);
  });

  it('keeps one code cache file per command and asset (0600), used by the next run and not rewritten', async () => {
    const config = await tempDir();
    const env = { ESIGN_CONFIG_DIR: config, ESIGN_CACHE_DIR: undefined, NODE_DISABLE_COMPILE_CACHE: undefined };
    const first = await runCli(['--help'], { env });
    expectOk(first);
    const dir = await keyDir(config);
    const files = await readdir(dir);
    // --help loads the CLI bundle only: no package is compiled, so none is cached.
    expect(files).toEqual(['help.esign.cjs.cache']);
    const file = join(dir, 'help.esign.cjs.cache');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    const written = (await stat(file)).mtimeMs;
    const second = await runCli(['--help'], { env });
    expectOk(second);
    expect(second.stdout).toBe(first.stdout);
    expect((await stat(file)).mtimeMs).toBe(written);

    // A command that loads packages caches each asset it compiled, under its own name: a sign on
    // an embedded sandbox (a data dir with no running one) loads pkijs and asn1js for it.
    expectOk(
      await runCli(
        ['--auto-approve', '--quiet', 'sign', '--level', 'B-B', '--output-dir', join(config, 'out'), SAMPLE_PDF],
        { env: { ...env, ESIGN_SANDBOX_DIR: join(config, 'sandbox') } },
      ),
    );
    const signFiles = (await readdir(dir)).filter((name) => name.startsWith('sign.'));
    expect(signFiles).toEqual(
      expect.arrayContaining(['sign.esign.cjs.cache', 'sign.pkijs.cjs.cache', 'sign.asn1js.cjs.cache']),
    );
  });

  it('runs as compiled when a cache file is damaged, and replaces it', async () => {
    const config = await tempDir();
    const env = { ESIGN_CONFIG_DIR: config, ESIGN_CACHE_DIR: undefined, NODE_DISABLE_COMPILE_CACHE: undefined };
    const first = await runCli(['--version'], { env });
    expectOk(first);
    const file = join(await keyDir(config), 'version.esign.cjs.cache');
    const content = await readFile(file);
    content.writeUInt8(content.readUInt8(content.length - 100) ^ 0xff, content.length - 100);
    await writeFile(file, content, { mode: 0o600 });
    const second = await runCli(['--version'], { env });
    expectOk(second);
    expect(second.stdout).toBe(first.stdout);
    const rewritten = await readFile(file);
    const data = rewritten.subarray(32);
    expect(createHash('sha256').update(data).digest().equals(rewritten.subarray(0, 32))).toBe(true);
  });

  it('names the TypeScript sources in --verbose traces (the source map inside), and keeps no cache then', async () => {
    const config = await tempDir();
    const result = await runCli(['--verbose', 'verify', join(config, 'missing.pdf')], {
      env: { ...t.env, ESIGN_CONFIG_DIR: config },
    });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/at .*src\/io\/file-source\.ts:\d+:\d+/);
    expect(await readdir(join(config, 'cache')).catch(() => [])).toEqual([]);
  });

  it('ships its third-party licence notices beside it, Node first', async () => {
    const notices = await readFile(join(dirname(ESIGN_BIN), 'THIRD-PARTY-NOTICES.txt'), 'utf8');
    expect(notices).toMatch(
      new RegExp(
        `^esign linux-x64 contains the following software\\.\\n\\nNode\\.js ${process.version.replaceAll('.', '\\.')}\\n`,
      ),
    );
    for (const name of ['pdf-lib', 'pkijs', 'asn1js', 'commander', '@aws-sdk/client-s3', 's3rver'])
      expect(notices).toMatch(new RegExp(`^${name} \\d+\\.\\d+`, 'm'));
  });

  it('is what its archive holds, and the archive matches its .sha256', async () => {
    const archive = join(dirname(ESIGN_BIN), 'esign-linux-x64.tar.xz');
    const [sum, name] = (await readFile(`${archive}.sha256`, 'utf8')).trim().split(/\s+/);
    expect(name).toBe('esign-linux-x64.tar.xz');
    expect(createHash('sha256').update(readFileSync(archive)).digest('hex')).toBe(sum);
    const listing = spawnSync('tar', ['-tJf', archive], { encoding: 'utf8' });
    expect(listing.stdout.split('\n').filter(Boolean).sort()).toEqual([
      'esign-linux-x64/',
      'esign-linux-x64/THIRD-PARTY-NOTICES.txt',
      'esign-linux-x64/esign',
    ]);
    const inside = spawnSync('tar', ['-xJOf', archive, 'esign-linux-x64/esign'], { maxBuffer: 512 * 1024 * 1024 });
    expect(createHash('sha256').update(inside.stdout).digest('hex')).toBe(
      createHash('sha256').update(readFileSync(ESIGN_BIN)).digest('hex'),
    );
  });
});
