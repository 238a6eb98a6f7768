// npm run build:sea: esign as one executable, dist/sea/esign, from the Node running this script
// (an official build; it must carry the single-executable fuse), per Node's single executable
// application docs: a preparation blob from sea-config.json, injected with postject. Beside it:
// THIRD-PARTY-NOTICES.txt, the archive dist/sea/esign-<os>-<arch>.tar.xz and its SHA-256.
//
// The assets: the CLI bundle of `npm run build` (dist/cli/esign.cjs) and its source map, and each
// runtime package bundled on its own with the others left outside, so a run loads only what its
// command requires, and a package two others use (asn1js under pkijs) is one instance, as in
// node_modules. src/cli/sea-launch.ts is the main script.
import { build } from 'esbuild';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import process from 'node:process';

const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
const out = 'dist/sea';
const work = join(out, 'work');
const target = `${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`;
const executable = join(out, process.platform === 'win32' ? 'esign.exe' : 'esign');

const fail = (message) => {
  process.stderr.write(`build:sea: ${message}\n`);
  process.exit(1);
};
const node = readFileSync(process.execPath);
if (!node.includes(SEA_FUSE))
  fail(
    `${process.execPath} (Node ${process.version}) has no single-executable fuse; run this with an official Node build from nodejs.org.`,
  );
if (!existsSync('dist/cli/esign.cjs')) fail('dist/cli/esign.cjs is missing; run `npm run build` first.');

rmSync(out, { recursive: true, force: true });
mkdirSync(work, { recursive: true });

const dependencies = Object.keys(JSON.parse(readFileSync('package.json', 'utf8')).dependencies);
// commander is inside the CLI bundle already, fontkit beside it (scripts/bundle.mjs).
const packages = dependencies.filter((name) => name !== 'commander' && name !== '@pdf-lib/fontkit');
const assetName = (name) => `${name.replace(/^@/, '').replace(/\//g, '+')}.cjs`;

const bundledFiles = new Set();
for (const name of packages) {
  const result = await build({
    stdin: { contents: `module.exports = require(${JSON.stringify(name)});`, resolveDir: process.cwd(), loader: 'js' },
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    external: packages.filter((other) => other !== name),
    outfile: join(work, assetName(name)),
    minifyWhitespace: true,
    minifySyntax: true,
    // The main script has no import callback to give a vm.Script (as in scripts/bundle.mjs).
    supported: { 'dynamic-import': false },
    metafile: true,
    // ES module packages read import.meta.url only to find files beside them (open's xdg-open),
    // and fall back to the system's when it is empty, as here.
    logOverride: { 'empty-import-meta': 'silent' },
    logLevel: 'error',
  });
  for (const input of Object.keys(result.metafile.inputs)) bundledFiles.add(input);
}

/** name → { asset, ascii } for the main script; the files themselves for sea-config.json. */
const modules = {};
const assets = {};
const addAsset = (file, asset) => {
  const bytes = readFileSync(file);
  assets[asset] = file;
  return { asset, ascii: !bytes.some((byte) => byte > 0x7f) };
};
modules['esign'] = addAsset('dist/cli/esign.cjs', 'esign.cjs');
// fontkit as `npm run build` bundles it (its data unpacked lazily), required by the CLI bundle as the file beside it.
modules['./fontkit.cjs'] = addAsset('dist/cli/fontkit.cjs', 'fontkit.cjs');
addAsset('dist/cli/esign.cjs.map', 'esign.cjs.map');
for (const name of packages) modules[name] = addAsset(join(work, assetName(name)), assetName(name));
// The appearance's default font (scripts/bundle.mjs copies it into dist/fonts), read by
// src/cli/appearance-assets.ts with node:sea's getAsset.
assets['NotoSans-Regular.ttf'] = 'dist/fonts/NotoSans-Regular.ttf';

// The code cache is keyed by every asset's name and content.
const hash = createHash('sha256');
for (const [asset, file] of Object.entries(assets).sort())
  hash.update(`${asset}\0`).update(readFileSync(file)).update('\0');
const id = hash.digest('hex').slice(0, 20);

await build({
  entryPoints: ['src/cli/sea-launch.ts'],
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  outfile: join(work, 'main.cjs'),
  define: { SEA_ASSETS: JSON.stringify({ id, main: 'esign', sourceMap: 'esign.cjs.map', modules }) },
  logLevel: 'warning',
});

const blob = join(work, 'sea-prep.blob');
writeFileSync(
  join(work, 'sea-config.json'),
  JSON.stringify(
    {
      main: join(work, 'main.cjs'),
      output: blob,
      disableExperimentalSEAWarning: true,
      useSnapshot: false,
      useCodeCache: false,
      assets,
    },
    null,
    2,
  ),
);
execFileSync(process.execPath, ['--experimental-sea-config', join(work, 'sea-config.json')], {
  stdio: ['ignore', 'ignore', 'inherit'],
});

copyFileSync(process.execPath, executable);
// Node's debug symbols are most of what strip removes; nothing at run time reads them.
if (process.platform === 'linux' && spawnSync('strip', ['--version'], { stdio: 'ignore' }).status === 0)
  execFileSync('strip', ['--strip-all', executable]);
const { inject } = createRequire(import.meta.url)('postject');
await inject(executable, 'NODE_SEA_BLOB', readFileSync(blob), { sentinelFuse: SEA_FUSE, machoSegmentName: 'NODE_SEA' });
if (process.platform === 'darwin') execFileSync('codesign', ['--sign', '-', executable]);

writeFileSync(
  join(out, 'THIRD-PARTY-NOTICES.txt'),
  notices([...bundledFiles, ...bundleInputs('dist/cli/esign.cjs.map')]),
);

const archiveName = `esign-${target}`;
const archive = join(out, `${archiveName}.tar.xz`);
const staging = join(work, archiveName);
mkdirSync(staging);
copyFileSync(executable, join(staging, basename(executable)));
copyFileSync(join(out, 'THIRD-PARTY-NOTICES.txt'), join(staging, 'THIRD-PARTY-NOTICES.txt'));
execFileSync('tar', ['-cJf', archive, '-C', work, archiveName], { env: { ...process.env, XZ_OPT: '-6 -T0' } });
const sha256 = createHash('sha256').update(readFileSync(archive)).digest('hex');
writeFileSync(`${archive}.sha256`, `${sha256}  ${basename(archive)}\n`);
rmSync(work, { recursive: true, force: true });
const mb = (file) => (readFileSync(file).length / 1e6).toFixed(1);
process.stdout.write(`${executable} (${mb(executable)} MB), ${archive} (${mb(archive)} MB)\nsha256 ${sha256}\n`);

/** The source files (node_modules/…) the CLI bundle was made from, from its source map. */
function bundleInputs(mapFile) {
  const map = JSON.parse(readFileSync(mapFile, 'utf8'));
  return map.sources.map((source) => join(dirname(mapFile), source));
}

/** Node's licence, then each package's licence file, for every package whose code is inside. */
function notices(files) {
  const packageDirs = new Set();
  for (const file of files) {
    const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(file.replace(/\\/g, '/'));
    if (match) packageDirs.add(match[1]);
  }
  const sections = [];
  const nodeLicence = [join(dirname(process.execPath), '../LICENSE'), '/usr/share/doc/nodejs/LICENSE'].find(existsSync);
  if (!nodeLicence)
    fail(
      `no LICENSE of Node ${process.version} found beside ${process.execPath}; the executable is Node and ships its licence.`,
    );
  sections.push(`Node.js ${process.version}\n\n${readFileSync(nodeLicence, 'utf8')}`);
  for (const dir of [...packageDirs].sort()) {
    const { name, version, license } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    const licenceFile = readdirSync(dir).find((file) => /^(licen[sc]e|copying)(\.|$)/i.test(file));
    const text = licenceFile
      ? readFileSync(join(dir, licenceFile), 'utf8')
      : `Licence: ${license ?? 'not stated'} (no licence file in the package)`;
    sections.push(`${name} ${version}\n\n${text.trim()}`);
  }
  sections.push(
    `Noto Sans (the default font of visible signatures)\n\n${readFileSync('dist/fonts/NotoSans-OFL.txt', 'utf8').trim()}`,
  );
  return `esign ${target} contains the following software.\n\n${sections.join(`\n\n${'-'.repeat(72)}\n\n`)}\n`;
}
