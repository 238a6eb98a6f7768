/**
 * What bin/esign.cjs runs: loads the CLI bundle (dist/cli/esign.cjs) and starts it.
 *
 * Compiling the 540 KB bundle is about a tenth of a short run. Node 22.1+ keeps compiled code
 * between runs itself (module.enableCompileCache). On Node 20 this does the same through node:vm:
 * the bundle is compiled with the V8 code cache of an earlier run, and a run without a usable
 * cache leaves one behind when it succeeds. The cache is keyed by the bundle's content (hashed
 * when it is built) and the Node version, one file per command (a cache holds the functions its
 * run compiled), and only ever speeds things up: a missing, stale or unwritable cache means an
 * ordinary compile.
 *
 * The bundle holds no dynamic import() (scripts/bundle.mjs turns them into require): V8 drops the
 * import callback of functions restored from a code cache ("A dynamic import callback was not
 * specified").
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import module, { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import vm from 'node:vm';
import { cacheDir } from '../io/paths.js';

/** The bundle's content hash, set by scripts/bundle.mjs. */
declare const BUNDLE_ID: string;

interface Bundle {
  start(): Promise<void>;
}

export async function launch(bundlePath: string, argv = process.argv, env = process.env): Promise<void> {
  const verbose = argv.includes('--verbose') || argv.includes('-v');
  // Stack traces (printed only with --verbose) then name the TypeScript sources, not bundle lines.
  if (verbose) process.setSourceMapsEnabled(true);
  // Node 22.1+ (its types are not those of Node 20, the oldest supported).
  const { enableCompileCache } = module as { enableCompileCache?: () => void };
  enableCompileCache?.();
  const cached = enableCompileCache || verbose || env['NODE_DISABLE_COMPILE_CACHE'] ? undefined : loadWithCodeCache(bundlePath, argv, env);
  const bundle = cached ?? (createRequire(bundlePath)(bundlePath) as Bundle);
  await bundle.start();
}

function loadWithCodeCache(bundlePath: string, argv: string[], env: NodeJS.ProcessEnv): Bundle | undefined {
  let source: string;
  try {
    source = readFileSync(bundlePath, 'utf8');
  } catch {
    return undefined;
  }
  const key = `${BUNDLE_ID}-${process.version}-${process.arch}`;
  const root = join(cacheDir(env), 'v8');
  const file = join(root, key, `${commandName(argv)}.cache`);
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(file);
  } catch {
    cachedData = undefined;
  }
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, { filename: bundlePath, cachedData });
  if (!cachedData || script.cachedDataRejected) {
    process.once('exit', (code) => {
      if (code === 0) writeCache(script, root, key, file);
    });
  }
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  const bundleModule = { exports: {} as Bundle };
  wrapper.call(bundleModule.exports, bundleModule.exports, createRequire(bundlePath), bundleModule, bundlePath, dirname(bundlePath));
  return bundleModule.exports;
}

/** The command's name, which keys its cache file: the first word of argv that is not an option. */
function commandName(argv: string[]): string {
  const word = argv.slice(2).find((arg) => !arg.startsWith('-'));
  return word && /^[a-z][a-z-]{0,23}$/.test(word) ? word : 'other';
}

function writeCache(script: vm.Script, root: string, key: string, file: string): void {
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const temp = `${file}.${process.pid}.tmp`;
    writeFileSync(temp, script.createCachedData(), { mode: 0o600 });
    renameSync(temp, file);
    // Caches of earlier builds or Node versions are never read again.
    for (const entry of readdirSync(root)) if (entry !== key) rmSync(join(root, entry), { recursive: true, force: true });
  } catch {
    // A cache is only ever a speed-up; a read-only or full disk costs the next run a compile.
  }
}
