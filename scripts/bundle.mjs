// npm run build: the CLI as one CommonJS file, dist/cli/esign.cjs. Node 20 spends about 30 ms of a
// 1 MB sign in its ES module loader (resolving, linking and evaluating some fifty modules one by
// one); a single CommonJS file loads in a fraction of that. Packages stay outside the bundle and
// load from node_modules only where a command imports them. Type checking is `npm run typecheck`.
import { build } from 'esbuild';

await build({
  entryPoints: ['src/cli/main.ts'],
  outfile: 'dist/cli/esign.cjs',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  packages: 'external',
  // `import.meta.url` of the sources becomes the bundle's own URL; it lives in dist/cli/ as the
  // modules did, so paths relative to it (../../package.json) still hold.
  define: { 'import.meta.url': 'importMetaUrl' },
  banner: { js: "const importMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
  sourcemap: 'linked',
  logLevel: 'warning',
});
