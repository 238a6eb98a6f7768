/**
 * The main script of the single executable (`npm run build:sea`, scripts/build-sea.mjs): loads the
 * CLI bundle and the packages it needs from the executable's assets and starts it.
 *
 * Each runtime package is its own asset, loaded only when a command requires it, as the npm
 * launcher loads it from node_modules; one bundle of everything would compile and keep in memory
 * what a run never uses. Each asset is compiled with the V8 code cache of an earlier run of the
 * same command (as src/cli/launch.ts does for the npm package), keyed by the assets' hash, the
 * Node version and the arch, one file per command and asset.
 *
 * With --verbose there is no cache, and modules compile as Node compiles files, with the CLI
 * bundle's source map (an asset too), so traces name the TypeScript sources.
 */
import Module, { createRequire, isBuiltin } from 'node:module';
import { dirname, join } from 'node:path';
import { getRawAsset } from 'node:sea';
import vm from 'node:vm';
import { cacheName, codeCacheRoot, markUsed, readCache, writeCache } from './code-cache.js';

/** Set by scripts/build-sea.mjs: the assets' hash, and per module name its asset and whether it is ASCII. */
declare const SEA_ASSETS: {
  id: string;
  main: string;
  sourceMap: string;
  modules: Record<string, { asset: string; ascii: boolean }>;
};

interface LoadedModule {
  exports: unknown;
}

interface Bundle {
  start(): Promise<void>;
}

// Built-in modules only: nothing is loaded from the disk beside the executable.
const builtinRequire = createRequire(process.execPath);
const verbose = process.argv.includes('--verbose') || process.argv.includes('-v');
// Stack traces (printed only with --verbose) then name the TypeScript sources, not bundle lines.
if (verbose) process.setSourceMapsEnabled(true);
const root = codeCacheRoot(process.argv, process.env);
const key = `sea-${SEA_ASSETS.id}-${process.version}-${process.arch}`;
const command = cacheName(process.argv);
const loaded = new Map<string, LoadedModule>();
const uncached: { script: vm.Script; file: string }[] = [];

function assetSource(name: string, entry: { asset: string; ascii: boolean }): string {
  const bytes = Buffer.from(getRawAsset(entry.asset) as ArrayBuffer);
  // ASCII assets (checked when built) are read as latin1, without UTF-8 decoding.
  const source = bytes.toString(entry.ascii ? 'latin1' : 'utf8');
  if (!verbose || name !== SEA_ASSETS.main) return source;
  const map = Buffer.from(getRawAsset(SEA_ASSETS.sourceMap) as ArrayBuffer).toString('base64');
  return `${source}\n//# sourceMappingURL=data:application/json;base64,${map}\n`;
}

function seaRequire(name: string): unknown {
  if (isBuiltin(name)) return builtinRequire(name);
  const cached = loaded.get(name);
  if (cached) return cached.exports;
  const entry = SEA_ASSETS.modules[name];
  if (!entry)
    throw Object.assign(new Error(`Cannot find module '${name}': this esign executable does not hold it`), {
      code: 'MODULE_NOT_FOUND',
    });
  // Traces name the module inside the executable: /usr/local/bin/esign/esign.cjs
  const filename = join(process.execPath, entry.asset);
  const source = assetSource(name, entry);
  if (verbose) {
    const module = new Module(filename);
    Object.assign(module, { filename, paths: [], require: seaRequire });
    loaded.set(name, module);
    (module as unknown as { _compile(source: string, filename: string): void })._compile(source, filename);
    return module.exports;
  }
  const module: LoadedModule = { exports: {} };
  // Before it runs, as Node does: a cycle sees the exports so far.
  loaded.set(name, module);
  const file = root ? join(root, key, `${command}.${entry.asset}.cache`) : undefined;
  const cachedData = file ? readCache(file) : undefined;
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename,
    cachedData,
  });
  if (file && (!cachedData || script.cachedDataRejected)) uncached.push({ script, file });
  else if (file) markUsed(dirname(file));
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  wrapper.call(module.exports, module.exports, seaRequire, module, filename, dirname(filename));
  return module.exports;
}

if (root) {
  process.once('exit', (code) => {
    if (code === 0) for (const { script, file } of uncached) writeCache(script.createCachedData(), root, key, file);
  });
}
void (seaRequire(SEA_ASSETS.main) as Bundle).start();
