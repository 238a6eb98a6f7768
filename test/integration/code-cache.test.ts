/**
 * The V8 code cache of the CLI bundle on Node 20 (src/cli/launch.ts): bin/esign.cjs compiles
 * dist/cli/esign.cjs through node:vm with the cached data of an earlier run of the same command,
 * and leaves a cache behind when a run without a usable one exits 0. These tests run the built CLI
 * (dist/ must exist) and look at what it leaves in the cache dir, and check that a run restored
 * from a cache behaves as a compiled one, above all for commands that load packages lazily
 * (functions restored from a V8 code cache lose the dynamic import callback on Node 20: "A dynamic
 * import callback was not specified" once broke `esign login`).
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { chmod, copyFile, mkdir, readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import module from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, TESTING_EXECUTABLE, type CliResult } from '../helpers/run-cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/tmp.js';

const BUNDLE = fileURLToPath(new URL('../../dist/cli/esign.cjs', import.meta.url));
const FONTKIT_BUNDLE = fileURLToPath(new URL('../../dist/cli/fontkit.cjs', import.meta.url));
const SAMPLE_PDF = fileURLToPath(new URL('../../samples/contract.pdf', import.meta.url));

// Node 22.1+ caches compiled code itself and launch.ts then leaves the bundle to it.
const nodeCachesItself = typeof (module as { enableCompileCache?: unknown }).enableCompileCache === 'function';
const suiteName = TESTING_EXECUTABLE
  ? 'V8 code cache of the npm launcher (skipped: ESIGN_BIN is the single executable, whose cache test/integration/executable.test.ts checks)'
  : nodeCachesItself
    ? `V8 code cache of the bundle (skipped: Node ${process.version} has module.enableCompileCache, so launch.ts does not keep its own cache)`
    : `V8 code cache of the bundle on Node ${process.version} without module.enableCompileCache`;

/** The cache key launch.ts uses: the bundles' content hash (fixed at build time), the CLI bundle's size and mtime, Node version, arch. */
function cacheKey(): string {
  const bundle = readFileSync(BUNDLE);
  const bundleId = createHash('sha256').update(bundle).update(readFileSync(FONTKIT_BUNDLE)).digest('hex').slice(0, 20);
  return `${bundleId}-${bundle.length}-${Math.trunc(statSync(BUNDLE).mtimeMs)}-${process.version}-${process.arch}`;
}

/**
 * The environment of a run whose caches land in `<configDir>/cache`: ESIGN_CACHE_DIR and
 * NODE_DISABLE_COMPILE_CACHE of the environment running the tests are removed.
 */
function envFor(configDir: string, extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return { ESIGN_CONFIG_DIR: configDir, ESIGN_CACHE_DIR: undefined, NODE_DISABLE_COMPILE_CACHE: undefined, ...extra };
}

/** Every file and directory under `dir`, relative to it, sorted; [] when `dir` does not exist. */
async function listTree(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true }).catch(() => [] as string[]);
  return entries.map(String).sort();
}

const mode = async (path: string) => (await stat(path)).mode & 0o777;

/** Identity of a file: a rename-into-place (launch.ts's writeCache) gives it a new inode. */
async function identity(path: string): Promise<string> {
  const info = await stat(path);
  return `${info.ino}:${info.mtimeMs}:${info.size}`;
}

/** `esign --help` in a fresh config dir: its output, and the cache file the run left. */
async function helpWithCache(): Promise<{ config: string; first: CliResult; file: string }> {
  const config = await tempDir();
  const first = await runCli(['--help'], { env: envFor(config) });
  expectOk(first);
  return { config, first, file: join(config, 'cache', 'v8', cacheKey(), 'help.cache') };
}

function expectOk(result: CliResult): void {
  expect(result.signal, result.stderr).toBeNull();
  expect(result.code, result.stderr).toBe(0);
  expect(result.stderr).not.toMatch(/dynamic import callback/i);
}

describe.skipIf(nodeCachesItself || TESTING_EXECUTABLE)(suiteName, () => {
  it('the bundle holds no dynamic import() (the vm.Script it runs in has no import callback)', () => {
    const source = readFileSync(BUNDLE, 'latin1');
    expect(source.match(/(?:^|[^\w$.])import\s*\(/g) ?? []).toEqual([]);
  });

  it('leaves the cache of a successful run (0600 in 0700 dirs), and none after a failed run', async () => {
    const config = await tempDir();
    const cache = join(config, 'cache');

    const unknown = await runCli(['--no-such-flag'], { env: envFor(config) });
    expect(unknown.code).toBe(2);
    const failedCommand = await runCli(['config', '--no-such-flag'], { env: envFor(config) });
    expect(failedCommand.code).toBe(2);
    expect(await listTree(cache)).toEqual([]);

    expectOk(await runCli(['--version'], { env: envFor(config) }));
    const key = cacheKey();
    const file = join(cache, 'v8', key, 'version.cache');
    // Exactly the one file: no temp file left beside it, nothing for the failed runs.
    expect(await listTree(cache)).toEqual(['v8', join('v8', key), join('v8', key, 'version.cache')]);
    expect(await mode(file)).toBe(0o600);
    expect((await stat(file)).size).toBeGreaterThan(1024);
    for (const dir of [cache, join(cache, 'v8'), join(cache, 'v8', key)]) expect(await mode(dir), dir).toBe(0o700);

    // One file per command, named by it (a global option's value is not the command); a failure
    // of a command with a cache leaves that one alone.
    expectOk(await runCli(['--profile', 'sandbox', 'config', 'path'], { env: envFor(config) }));
    const configCache = join(cache, 'v8', key, 'config.cache');
    const before = await identity(configCache);
    expect((await runCli(['config', '--no-such-flag'], { env: envFor(config) })).code).toBe(2);
    expect(await listTree(join(cache, 'v8', key))).toEqual(['config.cache', 'version.cache']);
    expect(await mode(configCache)).toBe(0o600);
    expect(await identity(configCache)).toBe(before);
  });

  it('prints the same when restored from the cache, and keeps a cache it could use', async () => {
    const { config, first, file } = await helpWithCache();
    const written = await identity(file);

    const second = await runCli(['--help'], { env: envFor(config) });
    expectOk(second);
    expect(second.stdout).toBe(first.stdout);
    expect(second.stderr).toBe(first.stderr);
    expect(second.stdout).toMatch(/^ {2}sign\b/m);
    // Not rewritten: V8 accepted it, so the second run was the one restored from the cache.
    expect(await identity(file)).toBe(written);
  });

  it('survives a cache file of garbage bytes: same output, exit 0, and the cache rewritten', async () => {
    const { config, first, file } = await helpWithCache();
    const garbage = randomBytes((await stat(file)).size);
    await writeFile(file, garbage);

    const restored = await runCli(['--help'], { env: envFor(config) });
    expectOk(restored);
    expect(restored.stdout).toBe(first.stdout);
    const rewritten = await readFile(file);
    expect(rewritten.equals(garbage)).toBe(false);
    expect(rewritten.length).toBeGreaterThan(1024);
    expect(await mode(file)).toBe(0o600);

    // The rewritten cache is a usable one: the next run keeps it.
    const kept = await identity(file);
    expectOk(await runCli(['--help'], { env: envFor(config) }));
    expect(await identity(file)).toBe(kept);
  });

  // V8 in release builds does not checksum a code cache (--verify-snapshot-checksum is off), so a
  // cache whose header is intact but whose payload is damaged was accepted and crashed node while
  // deserializing (SIGSEGV or SIGTRAP "Check failed"), and every later run of that command with
  // it. launch.ts now keeps a SHA-256 of the data in front of it.
  it('survives a cache whose V8 payload was zeroed behind an intact header', async () => {
    const { config, first, file } = await helpWithCache();
    const damaged = await readFile(file);
    damaged.fill(0, 32 + 64); // the digest and V8's header stay
    await writeFile(file, damaged);

    const restored = await runCli(['--help'], { env: envFor(config) });
    expectOk(restored);
    expect(restored.stdout).toBe(first.stdout);
    expect((await readFile(file)).equals(damaged)).toBe(false);
  });

  it('ignores a cache that others may write (group- or world-writable), and replaces it with a private one', async () => {
    const { config, file } = await helpWithCache();
    await chmod(file, 0o666);
    const shared = await identity(file);
    expectOk(await runCli(['--help'], { env: envFor(config) }));
    expect(await identity(file)).not.toBe(shared);
    expect(await mode(file)).toBe(0o600);
  });

  it('removes the caches of other keys unused for 30 days when it writes a new one, and keeps recent ones', async () => {
    const config = await tempDir();
    const v8 = join(config, 'cache', 'v8');
    const staleBuild = join(v8, '0000-old');
    const otherInstall = join(v8, `${cacheKey().split('-')[0]}-1-1-v22.0.0-${process.arch}`);
    for (const dir of [staleBuild, otherInstall]) {
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, 'version.cache'), 'stale');
    }
    const longAgo = new Date(Date.now() - 31 * 24 * 3600 * 1000);
    await utimes(staleBuild, longAgo, longAgo);
    expectOk(await runCli(['--version'], { env: envFor(config) }));
    const key = cacheKey();
    expect((await readdir(v8)).sort()).toEqual([key, otherInstall.split('/').at(-1)].sort());
    expect(await readdir(join(v8, key))).toEqual(['version.cache']);
  });

  it('marks a cache it runs from as used, so that another build does not take it for stale', async () => {
    const { config, file } = await helpWithCache();
    const keyDir = join(config, 'cache', 'v8', cacheKey());
    const longAgo = new Date(Date.now() - 31 * 24 * 3600 * 1000);
    await utimes(keyDir, longAgo, longAgo);
    const written = await identity(file);
    expectOk(await runCli(['--help'], { env: envFor(config) }));
    expect(await identity(file)).toBe(written); // read, not rewritten
    expect(Date.now() - (await stat(keyDir)).mtimeMs).toBeLessThan(3600 * 1000);
  });

  it('keeps its cache in ESIGN_CACHE_DIR when set, and in none with NODE_DISABLE_COMPILE_CACHE=1 or --verbose', async () => {
    const dir = await tempDir();
    const config = join(dir, 'config');
    const elsewhere = join(dir, 'elsewhere');
    expectOk(await runCli(['--version'], { env: envFor(config, { ESIGN_CACHE_DIR: elsewhere }) }));
    expect(await listTree(join(elsewhere, 'v8'))).toEqual([cacheKey(), join(cacheKey(), 'version.cache')]);
    expect(await listTree(join(config, 'cache'))).toEqual([]);

    const disabled = join(dir, 'disabled');
    const off = await runCli(['--version'], { env: envFor(disabled, { NODE_DISABLE_COMPILE_CACHE: '1' }) });
    expectOk(off);
    expect(off.stdout.trim()).toMatch(/^\d+\.\d+\.\d+ \(build [^)]+\)$/);
    expectOk(await runCli(['--verbose', 'config', 'path'], { env: envFor(disabled) }));
    expect(await listTree(join(disabled, 'cache'))).toEqual([]);

    // A cache dir that cannot be made costs only the cache: not a word about it.
    const blocker = join(dir, 'a-file');
    await writeFile(blocker, '');
    const unwritable = await runCli(['--version'], {
      env: envFor(config, { ESIGN_CACHE_DIR: join(blocker, 'cache') }),
    });
    expectOk(unwritable);
    expect(unwritable.stdout).toBe(off.stdout);
    expect(unwritable.stderr).toBe('');
  });

  it('keeps help in its own cache, so that `sign --help` does not make the cache a sign runs from', async () => {
    const config = await tempDir();
    for (const args of [
      ['sign', '--help'],
      ['help', 'sign'],
      ['sign', '-h'],
    ])
      expectOk(await runCli(args, { env: envFor(config) }));
    expect(await listTree(join(config, 'cache', 'v8', cacheKey()))).toEqual(['help.cache']);
  });

  it('takes an XDG_CACHE_HOME that is not an absolute path as unset (never a cache in the working directory)', async () => {
    const home = await tempDir();
    const cwd = await tempDir();
    const env = {
      HOME: home,
      XDG_CACHE_HOME: 'relative',
      XDG_CONFIG_HOME: join(home, 'config'),
      ESIGN_CONFIG_DIR: undefined,
      ESIGN_CACHE_DIR: undefined,
      NODE_DISABLE_COMPILE_CACHE: undefined,
    };
    expectOk(await runCli(['--version'], { env, cwd }));
    expect(await listTree(cwd)).toEqual([]);
    expect(await listTree(join(home, '.cache', 'esign', 'v8'))).toEqual([
      cacheKey(),
      join(cacheKey(), 'version.cache'),
    ]);
  });

  describe('commands that load packages lazily, restored from the cache (against the sandbox)', () => {
    let sandbox: TestSandbox;
    beforeAll(async () => {
      sandbox = await startTestSandbox({ autoApprove: true });
    });
    afterAll(async () => sandbox?.close());

    it('esign --auto-approve login works a second time, from the cache', async () => {
      const config = await tempDir();
      const env = { ...sandbox.env, ...envFor(config) };
      const first = await runCli(['--auto-approve', 'login'], { env });
      expectOk(first);
      const file = join(config, 'cache', 'v8', cacheKey(), 'login.cache');
      const written = await identity(file);

      const second = await runCli(['--auto-approve', 'login'], { env });
      expectOk(second);
      // The same, but for when the new session ends.
      const withoutTimes = (text: string) => text.replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>');
      expect(withoutTimes(second.stdout)).toBe(withoutTimes(first.stdout));
      expect(second.stdout).toMatch(/^Signed in at the identity service as /);
      expect(second.stderr).toBe(first.stderr);
      expect(await identity(file)).toBe(written);
    });

    it('esign --auto-approve sign works a second time, from the cache', async () => {
      const dir = await tempDir();
      const input = join(dir, 'contract.pdf');
      await copyFile(SAMPLE_PDF, input);
      const original = await readFile(input);
      // One cache dir, two config dirs: both runs sign in to the signing service, and differ only
      // in whether there was a cache to start from.
      const cache = join(dir, 'cache');
      const sign = (output: string) =>
        runCli(['--auto-approve', '--json', 'sign', '--level', 'B-B', '--output', join(dir, output), input], {
          env: { ...sandbox.env, ...envFor(join(dir, `config-${output}`), { ESIGN_CACHE_DIR: cache }) },
        });

      const first = await sign('first.pdf');
      expectOk(first);
      const file = join(cache, 'v8', cacheKey(), 'sign.cache');
      const written = await identity(file);

      const second = await sign('second.pdf');
      expectOk(second);
      expect(await identity(file)).toBe(written);
      const [a, b] = [first, second].map((run) => run.json<Record<string, unknown>>());
      expect(a).toMatchObject({ input, output: join(dir, 'first.pdf'), format: 'PAdES', level: 'B-B' });
      expect(b).toMatchObject({ input, output: join(dir, 'second.pdf') });
      // The same but for the output (its name, and the signature in it).
      const outcome = (json: Record<string, unknown> | undefined) => ({
        ...json,
        output: undefined,
        bytes: undefined,
        sha256: undefined,
      });
      expect(outcome(b)).toEqual(outcome(a));
      expect(second.stderr).toBe(first.stderr);
      for (const name of ['first.pdf', 'second.pdf']) {
        const signed = await readFile(join(dir, name));
        // An incremental update of the input with a signature dictionary.
        expect(signed.subarray(0, original.length).equals(original), name).toBe(true);
        expect(signed.toString('latin1'), name).toMatch(/\/ByteRange\s*\[/);
      }
    });

    it('sign --visible keeps its own caches (the font code an invisible sign never loads), fontkit only once text needs shaping, and works a second time from them', async () => {
      const dir = await tempDir();
      const input = join(dir, 'contract.pdf');
      await copyFile(SAMPLE_PDF, input);
      const cache = join(dir, 'cache');
      const sign = (output: string, visible: string[]) =>
        runCli(
          ['--auto-approve', '--json', 'sign', '--level', 'B-B', ...visible, '--output', join(dir, output), input],
          {
            env: { ...sandbox.env, ...envFor(join(dir, `config-${output}`), { ESIGN_CACHE_DIR: cache }) },
          },
        );
      const greek = ['--visible', '--name', 'Ζωή Παπαδοπούλου'];
      // Arabic needs shaping (fontkit's GSUB joining forms), in DejaVu Sans (fonts-dejavu-core, installed by .ci/run).
      const arabic = ['--visible', '--name', 'محمد علي', '--font', '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf'];

      expectOk(await sign('invisible.pdf', []));
      const first = await sign('first.pdf', greek);
      expectOk(first);
      // Greek in the default font needs no shaping: esign's TrueType reader draws it, fontkit never loads.
      expect((await readdir(join(cache, 'v8', cacheKey()))).sort()).toEqual(['sign-visible.cache', 'sign.cache']);
      const shaped = await sign('shaped.pdf', arabic);
      expectOk(shaped);
      // fontkit, in the bundle beside the CLI's (dist/cli/fontkit.cjs), has a cache file of its own.
      expect((await readdir(join(cache, 'v8', cacheKey()))).sort()).toEqual([
        'sign-visible.cache',
        'sign-visible.fontkit.cache',
        'sign.cache',
      ]);
      const caches = ['sign-visible.cache', 'sign-visible.fontkit.cache'].map((name) =>
        join(cache, 'v8', cacheKey(), name),
      );
      const written = await Promise.all(caches.map(identity));

      const second = await sign('second.pdf', greek);
      expectOk(second);
      const shapedAgain = await sign('shaped-again.pdf', arabic);
      expectOk(shapedAgain);
      expect(await Promise.all(caches.map(identity))).toEqual(written);
      expect(second.stderr).toBe(first.stderr);
      expect(shapedAgain.stderr).toBe(shaped.stderr);
      for (const name of ['first.pdf', 'second.pdf', 'shaped.pdf', 'shaped-again.pdf'])
        expect((await readFile(join(dir, name))).toString('latin1'), name).toMatch(/\/FontFile2 \d+ 0 R/);
    });
  });
});
