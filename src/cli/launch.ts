/**
 * What bin/esign.cjs runs: loads the CLI bundle (dist/cli/esign.cjs) and starts it.
 *
 * Compiling the 540 KB bundle is about a tenth of a short run. Node 22.1+ keeps compiled code
 * between runs itself (module.enableCompileCache). On Node 20 this does the same through node:vm:
 * the bundle is compiled with the V8 code cache of an earlier run, and a successful run without a
 * usable cache leaves one behind. A cache is keyed by the bundle (its hash from the build, its
 * size and mtime) and the Node version, one file per command (it holds the functions its run
 * compiled), and only ever speeds things up: a missing, stale, damaged or foreign cache means an
 * ordinary compile.
 *
 * The bundle holds no dynamic import() (scripts/bundle.mjs turns them into require): a vm.Script
 * needs an import callback for them, and on Node 20 functions restored from a code cache lose it
 * even when one is given ("A dynamic import callback was not specified").
 */
import { hash } from 'node:crypto';
import { closeSync, fstatSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import module, { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import vm from 'node:vm';
import { cacheDir } from '../io/paths.js';
import { commandNameIn } from './command-name.js';

/** The bundle's content hash, set by scripts/bundle.mjs. */
declare const BUNDLE_ID: string;

interface Bundle {
  start(): Promise<void>;
}

// A cache file is the SHA-256 of the V8 data, then the data: V8 (release builds) does not check
// the data itself, and a damaged payload behind an intact header crashes the process.
const DIGEST_BYTES = 32;
// Caches of other builds or Node versions unused for this long are removed.
const DAY_MS = 24 * 3600 * 1000;
const STALE_MS = 30 * DAY_MS;

export async function launch(bundlePath: string, argv = process.argv, env = process.env): Promise<void> {
  const verbose = argv.includes('--verbose') || argv.includes('-v');
  // Stack traces (printed only with --verbose) then name the TypeScript sources, not bundle lines.
  if (verbose) process.setSourceMapsEnabled(true);
  const dir = verbose || env['NODE_DISABLE_COMPILE_CACHE'] ? undefined : cacheDirOrNone(env);
  // Node 22.1+ (its types are not those of Node 20, the oldest supported).
  const { enableCompileCache } = module as { enableCompileCache?: (dir?: string) => void };
  if (enableCompileCache && dir) enableCompileCache(join(dir, 'node'));
  const cached = enableCompileCache || !dir ? undefined : loadWithCodeCache(bundlePath, argv, join(dir, 'v8'));
  const bundle = cached ?? (createRequire(bundlePath)(bundlePath) as Bundle);
  await bundle.start();
}

/** The cache dir, or none where there is no home to put it in (a user without one, HOME unset). */
function cacheDirOrNone(env: NodeJS.ProcessEnv): string | undefined {
  try {
    return cacheDir(env);
  } catch {
    return undefined;
  }
}

function loadWithCodeCache(bundlePath: string, argv: string[], root: string): Bundle | undefined {
  let source: string;
  let key: string;
  try {
    // The bundle is ASCII (checked when it is built): read as latin1, without UTF-8 decoding.
    source = readFileSync(bundlePath, 'latin1');
    const { size, mtimeMs } = statSync(bundlePath);
    key = `${BUNDLE_ID}-${size}-${Math.trunc(mtimeMs)}-${process.version}-${process.arch}`;
  } catch {
    return undefined;
  }
  const file = join(root, key, `${cacheName(argv)}.cache`);
  const cachedData = readCache(file);
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, { filename: bundlePath, cachedData });
  if (!cachedData || script.cachedDataRejected) {
    process.once('exit', (code) => {
      if (code === 0) writeCache(script, root, key, file);
    });
  } else markUsed(dirname(file));
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  const bundleModule = { exports: {} as Bundle };
  wrapper.call(bundleModule.exports, bundleModule.exports, createRequire(bundlePath), bundleModule, bundlePath, dirname(bundlePath));
  return bundleModule.exports;
}

/**
 * Which cache a run uses: its command; `help` for any help (a cache written by `sign --help` would
 * hold little of what a sign needs, and is never replaced); `version` for --version.
 */
function cacheName(argv: string[]): string {
  const args = argv.slice(2);
  const firstWord = args.find((arg) => !arg.startsWith('-'));
  if (args.includes('--help') || args.includes('-h') || firstWord === 'help') return 'help';
  const command = commandNameIn(args);
  if (command !== undefined) return /^[a-z][a-z-]{0,23}$/.test(command) ? command : 'other';
  return args.includes('--version') || args.includes('-V') ? 'version' : 'help';
}

/** The V8 data of a cache file that is ours, private and intact; otherwise undefined. */
function readCache(file: string): Buffer | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const { uid, mode } = fstatSync(fd);
    // Code that runs as this user: only from a file this user owns and nobody else may write
    // (POSIX; Windows reports every file as 0666 and has no uid).
    if (process.platform !== 'win32' && ((process.getuid && uid !== process.getuid()) || (mode & 0o022) !== 0)) return undefined;
    const content = readFileSync(fd);
    const data = content.subarray(DIGEST_BYTES);
    return content.length > DIGEST_BYTES && hash('sha256', data, 'buffer').equals(content.subarray(0, DIGEST_BYTES)) ? data : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Keeps a cache in use from looking stale to another build's clean-up (its mtime, at most daily). */
function markUsed(dir: string): void {
  try {
    if (Date.now() - statSync(dir).mtimeMs > DAY_MS) utimesSync(dir, new Date(), new Date());
  } catch {
    // only the clean-up's view of it
  }
}

function writeCache(script: vm.Script, root: string, key: string, file: string): void {
  const temp = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const data = script.createCachedData();
    const fd = openSync(temp, 'w', 0o600);
    try {
      writeFileSync(fd, Buffer.concat([hash('sha256', data, 'buffer'), data]));
      // On disk before it has the name: a power cut must not leave a named file of zeros.
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, file);
    for (const entry of readdirSync(root)) {
      const path = join(root, entry);
      if (entry !== key && Date.now() - statSync(path).mtimeMs > STALE_MS) rmSync(path, { recursive: true, force: true });
    }
  } catch {
    // A cache is only ever a speed-up; a read-only or full disk costs the next run a compile.
    try {
      rmSync(temp, { force: true });
    } catch {
      // nothing was written there either
    }
  }
}
