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
      if (code === 0) writeCache(script.createCachedData(), root, key, file);
    });
  } else markUsed(dirname(file));
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  const bundleModule = { exports: {} as Bundle };
  wrapper.call(bundleModule.exports, bundleModule.exports, createRequire(bundlePath), bundleModule, bundlePath, dirname(bundlePath));
  return bundleModule.exports;
}
