/**
 * What bin/esign.cjs runs: loads the CLI bundle (dist/cli/esign.cjs) and starts it.
 *
 * Compiling the 540 KB bundle is about a tenth of a short run. Node 22.1+ keeps compiled code
 * between runs itself (module.enableCompileCache). On Node 20 this does the same through node:vm:
 * the bundle is compiled with the V8 code cache of an earlier run, and a successful run without a
 * usable cache leaves one behind (the cache files: src/cli/code-cache.ts). A cache is keyed by the
 * bundle (its hash from the build, its size and mtime) and the Node version.
 *
 * The bundle holds no dynamic import() (scripts/bundle.mjs turns them into require): a vm.Script
 * needs an import callback for them, and on Node 20 functions restored from a code cache lose it
 * even when one is given ("A dynamic import callback was not specified").
 *
 * The bundles beside it (dist/cli/fontkit.cjs, which only visible signatures need) are compiled
 * the same way when the bundle requires them, each with its own cache file.
 */
import { readFileSync, statSync } from 'node:fs';
import module, { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import vm from 'node:vm';
import { cacheName, codeCacheRoot, markUsed, readCache, writeCache } from './code-cache.js';

/** The bundle's content hash, set by scripts/bundle.mjs. */
declare const BUNDLE_ID: string;

interface Bundle {
  start(): Promise<void>;
}

export async function launch(bundlePath: string, argv = process.argv, env = process.env): Promise<void> {
  // Stack traces (printed only with --verbose) then name the TypeScript sources, not bundle lines.
  if (argv.includes('--verbose') || argv.includes('-v')) process.setSourceMapsEnabled(true);
  const root = codeCacheRoot(argv, env);
  // Node 22.1+ (its types are not those of Node 20, the oldest supported).
  const { enableCompileCache } = module as { enableCompileCache?: (dir?: string) => void };
  if (enableCompileCache && root) enableCompileCache(join(dirname(root), 'node'));
  const cached = enableCompileCache || !root ? undefined : loadWithCodeCache(bundlePath, argv, root);
  const bundle = cached ?? (createRequire(bundlePath)(bundlePath) as Bundle);
  await bundle.start();
}

function loadWithCodeCache(bundlePath: string, argv: string[], root: string): Bundle | undefined {
  let key: string;
  try {
    const { size, mtimeMs } = statSync(bundlePath);
    key = `${BUNDLE_ID}-${size}-${Math.trunc(mtimeMs)}-${process.version}-${process.arch}`;
  } catch {
    return undefined;
  }
  const command = cacheName(argv);
  const uncached: { script: vm.Script; file: string }[] = [];
  process.once('exit', (code) => {
    if (code === 0) for (const { script, file } of uncached) writeCache(script.createCachedData(), root, key, file);
  });
  const load = (path: string, file: string): LoadedModule => {
    // The bundles are ASCII (checked when they are built): read as latin1, without UTF-8 decoding.
    const source = readFileSync(path, 'latin1');
    const cachedData = readCache(file);
    const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
      filename: path,
      cachedData,
    });
    if (!cachedData || script.cachedDataRejected) uncached.push({ script, file });
    else markUsed(dirname(file));
    const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
    const loaded: LoadedModule = { exports: {} };
    wrapper.call(loaded.exports, loaded.exports, bundleRequire, loaded, path, dirname(path));
    return loaded;
  };
  // The bundle's own require, but for the bundles built beside it (./fontkit.cjs), compiled with
  // the code cache of this command too.
  const nodeRequire = createRequire(bundlePath);
  const siblings = new Map<string, LoadedModule>();
  const bundleRequire = Object.assign((request: string): unknown => {
    if (!/^\.\/[a-z-]+\.cjs$/.test(request)) return nodeRequire(request);
    let loaded = siblings.get(request);
    if (!loaded) {
      loaded = load(join(dirname(bundlePath), request), join(root, key, `${command}.${request.slice(2, -4)}.cache`));
      siblings.set(request, loaded);
    }
    return loaded.exports;
  }, nodeRequire);
  return load(bundlePath, join(root, key, `${command}.cache`)).exports as Bundle;
}

interface LoadedModule {
  exports: unknown;
}
