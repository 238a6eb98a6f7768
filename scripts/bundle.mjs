// npm run build: the CLI as one CommonJS file, dist/cli/esign.cjs, and its launcher,
// dist/cli/launch.cjs. Node 20 spends about 30 ms of a 1 MB sign in its ES module loader
// (resolving, linking and evaluating some fifty modules one by one); a single CommonJS file loads
// in a fraction of that, and the launcher keeps its compiled code between runs (src/cli/launch.ts).
// Packages stay outside the bundle and load from node_modules only where a command needs them,
// except commander, which every run loads. fontkit, which only visible signatures load, is bundled
// on its own beside it, dist/cli/fontkit.cjs, with its data decompressed lazily
// (scripts/lazy-fontkit.mjs); the launcher compiles it with the code cache too. Type checking is
// `npm run typecheck`.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import process from 'node:process';
import { lazyFontkit } from './lazy-fontkit.mjs';

/** What `esign --version` names the build by: the commit (`-dirty` with uncommitted changes) and its date. */
function buildName() {
  const git = (...args) => {
    const result = spawnSync('git', args, { encoding: 'utf8' });
    return result.status === 0 ? result.stdout.trim() : undefined;
  };
  const commit = existsSync('.git') ? git('rev-parse', '--short=10', 'HEAD') : undefined;
  if (!commit) return 'unknown';
  const dirty = git('status', '--porcelain', '--untracked-files=no') ? '-dirty' : '';
  return `${commit}${dirty}, ${git('log', '-1', '--format=%cs')}`;
}

const manifest = JSON.parse(readFileSync('package.json', 'utf8'));
const dependencies = Object.keys(manifest.dependencies);
const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  external: dependencies.filter((name) => name !== 'commander'),
  // `import.meta.url` of the sources becomes the bundle's own URL. Nothing reads files relative to
  // it (the version is written in below): a single executable has no files beside it.
  define: { 'import.meta.url': 'importMetaUrl' },
  banner: { js: "const importMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
  logLevel: 'warning',
};

/** The CLI bundle requires fontkit from the file beside it. */
const fontkitBeside = {
  name: 'fontkit-beside',
  setup(build) {
    build.onResolve({ filter: /^@pdf-lib\/fontkit$/ }, () => ({ path: './fontkit.cjs', external: true }));
  },
};
await build({
  ...common,
  stdin: { contents: "module.exports = require('@pdf-lib/fontkit');", resolveDir: process.cwd(), loader: 'js' },
  outfile: 'dist/cli/fontkit.cjs',
  plugins: [lazyFontkit],
  minifyWhitespace: true,
  minifySyntax: true,
});
/**
 * commander requires node:child_process at load, for subcommands that are executables of their
 * own, which esign has none of: it gets a stand-in that loads child_process at its first spawn, so
 * that no run pays for loading it (about 1 ms of every start).
 */
const lazyChildProcessForCommander = {
  name: 'lazy-child-process-for-commander',
  setup(build) {
    build.onResolve({ filter: /^node:child_process$/ }, (args) =>
      /[\\/]node_modules[\\/]commander[\\/]/.test(args.importer)
        ? { path: 'commander-child-process', namespace: 'lazy' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'lazy' }, () => ({
      contents: "module.exports = { spawn: (...args) => require('node:child_process').spawn(...args) };",
      loader: 'js',
    }));
  },
};
await build({
  ...common,
  entryPoints: ['src/cli/main.ts'],
  outfile: 'dist/cli/esign.cjs',
  sourcemap: 'linked',
  plugins: [fontkitBeside, lazyChildProcessForCommander],
  // Less to read at each start; names stay, and --verbose traces go through the source map.
  minifyWhitespace: true,
  minifySyntax: true,
  // import() becomes require() (Node 20.19+ requires ES modules): V8 drops the import callback
  // of functions restored from a code cache.
  supported: { 'dynamic-import': false },
  define: {
    ...common.define,
    ESIGN_VERSION: JSON.stringify(manifest.version),
    ESIGN_BUILD: JSON.stringify(buildName()),
  },
});
const hash = createHash('sha256');
for (const file of ['dist/cli/esign.cjs', 'dist/cli/fontkit.cjs']) {
  const bundle = readFileSync(file);
  // esbuild escapes every non-ASCII character (its default charset), so the launcher reads the
  // bundles as latin1; a byte above 0x7f would change their meaning.
  if (bundle.some((byte) => byte > 0x7f)) throw new Error(`${file} is not ASCII; the launcher reads it as latin1`);
  hash.update(bundle);
}
// The launcher keys the code cache by the bundles' content, fixed here rather than hashed per run.
const bundleId = hash.digest('hex').slice(0, 20);
await build({
  ...common,
  entryPoints: ['src/cli/launch.ts'],
  outfile: 'dist/cli/launch.cjs',
  define: { ...common.define, BUNDLE_ID: JSON.stringify(bundleId) },
});

// The default font of visible signatures (src/cli/appearance-assets.ts) ships beside the bundle
// with its licence: Noto Sans Regular (Latin, Greek, Cyrillic), SIL Open Font License 1.1.
const noto = 'node_modules/@expo-google-fonts/noto-sans';
mkdirSync('dist/fonts', { recursive: true });
copyFileSync(`${noto}/400Regular/NotoSans_400Regular.ttf`, 'dist/fonts/NotoSans-Regular.ttf');
copyFileSync(`${noto}/LICENSE_FONT`, 'dist/fonts/NotoSans-OFL.txt');
