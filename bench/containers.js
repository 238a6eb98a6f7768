// npm run build && node bench/containers.js (npm run bench runs it after visible.js): the forms of
// issue 41 beside the detached .p7s, in one run, as ratios of wall time, with peak RSS. A batch of
// BENCH_CONTAINER_FILES (default 1000) small XML files, each to its own .p7m against the same batch
// as .p7s; the same files into one ASiC-E (one approval) against `zip -0 -r` of them plus
// `openssl dgst -sha256` of each (and `zip -r`, deflating as the ASiC-E does XML). Then one large
// file of BENCH_ASICE_MB (default 500; 0 leaves it out) into an ASiC-E against `zip -0` of it plus
// `openssl dgst -sha256`, with a 1 MB file's ASiC-E beside it: their peak RSS should be the same
// (memory flat in the size). Then the deflate decision (issue 48's Measure): one random file named
// `big.bin` of BENCH_ASICE_BIN_MB (default 300; 0 leaves it out), a name that says nothing of its
// content, page-cached, into an ASiC-E against `zip -0` of it plus `openssl dgst -sha256`: the writer
// must store it from a sample of its content (target at most 1.2×), peak RSS flat beside a 1 MB
// `small.bin`. BENCH_CONTAINER_FILES=0 leaves out the XML files (to run the large files alone).
// Runs alternate, BENCH_CONTAINER_RUNS times (default 3); medians.
// The seal flow (PIN-only bulk seal on the sandbox), at B-B.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sealEnv } from './seal-env.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, 'bench', 'out', 'containers');
const bin = join(root, 'bin', 'esign.cjs');
const count = Number(process.env.BENCH_CONTAINER_FILES ?? 1000);
const runs = Number(process.env.BENCH_CONTAINER_RUNS ?? 3);
const largeMb = Number(process.env.BENCH_ASICE_MB ?? 500);
const binMb = Number(process.env.BENCH_ASICE_BIN_MB ?? 300);
rmSync(out, { recursive: true, force: true });
const inputs = join(out, 'in');
mkdirSync(inputs, { recursive: true });
const env = sealEnv(out);

/** One run under GNU time: wall seconds and peak RSS (MB); the output directory emptied first, untimed. */
function measure(command, args, outputDir) {
  rmSync(outputDir, { recursive: true, force: true });
  mkdirSync(outputDir, { recursive: true });
  spawnSync('sync');
  const started = process.hrtime.bigint();
  const result = spawnSync('/usr/bin/time', ['-f', '%M', command, ...args], { env, encoding: 'utf8', cwd: out });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')}: ${result.stderr}`);
  return { seconds, rssMb: Number(result.stderr.trim().split('\n').at(-1)) / 1024 };
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** Each case `runs` times, the cases alternating; the median time and the highest peak RSS of each. */
function measureAll(cases) {
  const samples = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
  for (let run = 0; run < runs; run++)
    for (const [name, args] of Object.entries(cases)) samples[name].push(measure(...args));
  return Object.fromEntries(
    Object.entries(samples).map(([name, list]) => [
      name,
      { seconds: median(list.map((s) => s.seconds)), rssMb: Math.max(...list.map((s) => s.rssMb)) },
    ]),
  );
}

/** `size` bytes of an already-compressed kind (.tgz: stored in a container, as `zip -0` stores it), random. */
function writeLarge(path, size) {
  const block = randomBytes(1024 * 1024);
  const fd = openSync(path, 'w');
  try {
    for (let written = 0; written < size; written += block.length)
      writeSync(fd, block, 0, Math.min(block.length, size - written));
  } finally {
    closeSync(fd);
  }
}

for (let index = 0; index < count; index++)
  writeFileSync(
    join(inputs, `fattura-${String(index).padStart(5, '0')}.xml`),
    `<?xml version="1.0"?><FatturaElettronica><Numero>${index}</Numero>${'<Riga>prodotto</Riga>'.repeat(40)}</FatturaElettronica>\n`,
  );

const sandbox = spawn(process.execPath, [bin, 'sandbox', 'start', '--port', '0'], { env, stdio: 'ignore' });
try {
  for (let waited = 0; !existsSync(join(env.ESIGN_SANDBOX_DIR, 'runtime.json')); waited += 100) {
    if (waited > 60_000) throw new Error('the sandbox did not start');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (count > 0) smallFiles();
  if (largeMb > 0) largeFile();
  if (binMb > 0) sampledDeflate();
} finally {
  sandbox.kill();
}

/** The XML files: each to a .p7s and a .p7m, and all into one ASiC-E, beside zip and openssl. */
function smallFiles() {
  const esign = (format, outputDir) => [
    process.execPath,
    [bin, '--quiet', 'sign', '--level', 'B-B', '--format', format, '--output-dir', outputDir, inputs],
    outputDir,
  ];
  const asice = join(out, 'asice');
  const zipDir = join(out, 'zip');
  const digests = readdirSync(inputs).map((name) => join(inputs, name));
  const cases = {
    p7s: esign('cades', join(out, 'p7s')),
    p7m: esign('p7m', join(out, 'p7m')),
    asice: [
      process.execPath,
      [bin, '--quiet', 'sign', '--level', 'B-B', '--format', 'asice', '-o', join(asice, 'all.asice'), inputs],
      asice,
    ],
    'zip -0 + openssl dgst': [
      'bash',
      ['-c', `zip -q -0 -r "$1/all.zip" in && openssl dgst -sha256 "\${@:2}" > /dev/null`, 'bash', zipDir, ...digests],
      zipDir,
    ],
    'zip + openssl dgst': [
      'bash',
      ['-c', `zip -q -r "$1/all.zip" in && openssl dgst -sha256 "\${@:2}" > /dev/null`, 'bash', zipDir, ...digests],
      zipDir,
    ],
  };
  measure(...cases.p7s); // warms the code cache and the sandbox
  const result = measureAll(cases);
  console.log(`Containers (issue 41): ${count} XML files, B-B, seal, median of ${runs}`);
  for (const [name, { seconds, rssMb }] of Object.entries(result))
    console.log(
      `  ${name.padEnd(24)} ${seconds.toFixed(2)} s  ${(count / seconds).toFixed(0)} files/s  ${rssMb.toFixed(0)} MB`,
    );
  console.log(`  .p7m / .p7s               ${(result.p7m.seconds / result.p7s.seconds).toFixed(2)}×`);
  console.log(
    `  one .asice / zip -0+dgst  ${(result.asice.seconds / result['zip -0 + openssl dgst'].seconds).toFixed(2)}×`,
  );
  console.log(
    `  one .asice / zip+dgst     ${(result.asice.seconds / result['zip + openssl dgst'].seconds).toFixed(2)}×`,
  );
}

/** A run putting one file into `into`/x.asice, as measure() takes it. */
function asiceOf(file, into) {
  return [
    process.execPath,
    [bin, '--quiet', 'sign', '--level', 'B-B', '--format', 'asice', '-o', join(into, 'x.asice'), file],
    into,
  ];
}

/** One large .tgz (stored by its name as by its content) into an ASiC-E, beside zip -0 and openssl. */
function largeFile() {
  const big = join(out, 'big');
  mkdirSync(big, { recursive: true });
  writeLarge(join(big, 'large.tgz'), largeMb * 1024 * 1024);
  writeLarge(join(big, 'small.tgz'), 1024 * 1024);
  const zipped = join(out, 'zip-large');
  const large = measureAll({
    [`.asice of ${largeMb} MB`]: asiceOf(join(big, 'large.tgz'), join(out, 'asice-large')),
    'zip -0 + openssl dgst': [
      'bash',
      ['-c', `zip -q -0 -j "$1/x.zip" big/large.tgz && openssl dgst -sha256 big/large.tgz > /dev/null`, 'bash', zipped],
      zipped,
    ],
    '.asice of 1 MB': asiceOf(join(big, 'small.tgz'), join(out, 'asice-small')),
  });
  console.log(`Containers (issue 41): one ${largeMb} MB file into an ASiC-E (stored), B-B, seal, median of ${runs}`);
  for (const [name, { seconds, rssMb }] of Object.entries(large))
    console.log(
      `  ${name.padEnd(24)} ${seconds.toFixed(2)} s  ${((largeMb * 1.048576) / seconds).toFixed(0)} MB/s  ${rssMb.toFixed(0)} MB`,
    );
  const [asiceLarge, zipLarge, asiceSmall] = Object.values(large);
  console.log(`  .asice / zip -0+dgst      ${(asiceLarge.seconds / zipLarge.seconds).toFixed(2)}×`);
  console.log(`  peak RSS ${largeMb} MB / 1 MB   ${asiceLarge.rssMb.toFixed(0)} / ${asiceSmall.rssMb.toFixed(0)} MB`);
}

/**
 * A random `big.bin`: stored because its first 64 KiB do not deflate, not because of its name. Read
 * once before the runs, so every run (and `zip -0`) reads it from the page cache.
 */
function sampledDeflate() {
  const dir = join(out, 'bin');
  mkdirSync(dir, { recursive: true });
  writeLarge(join(dir, 'big.bin'), binMb * 1024 * 1024);
  writeLarge(join(dir, 'small.bin'), 1024 * 1024);
  spawnSync('cat', [join(dir, 'big.bin'), join(dir, 'small.bin')], { stdio: ['ignore', 'ignore', 'inherit'] });
  const zipped = join(out, 'zip-bin');
  const result = measureAll({
    [`.asice of ${binMb} MB big.bin`]: asiceOf(join(dir, 'big.bin'), join(out, 'asice-bin')),
    'zip -0 + openssl dgst': [
      'bash',
      ['-c', `zip -q -0 -j "$1/x.zip" bin/big.bin && openssl dgst -sha256 bin/big.bin > /dev/null`, 'bash', zipped],
      zipped,
    ],
    '.asice of 1 MB small.bin': asiceOf(join(dir, 'small.bin'), join(out, 'asice-bin-small')),
  });
  const listing = spawnSync('zipinfo', [join(out, 'asice-bin', 'x.asice')], { encoding: 'utf8' }).stdout;
  const method = / (stor|defN|defX|defF|defS) .* big\.bin$/m.exec(listing)?.[1] ?? 'not found';
  console.log(
    `Containers (issue 48): one random ${binMb} MB big.bin into an ASiC-E, page-cached, B-B, seal, median of ${runs}`,
  );
  for (const [name, { seconds, rssMb }] of Object.entries(result))
    console.log(
      `  ${name.padEnd(28)} ${seconds.toFixed(2)} s  ${((binMb * 1.048576) / seconds).toFixed(0)} MB/s  ${rssMb.toFixed(0)} MB`,
    );
  const [asiceBig, zipBig, asiceSmall] = Object.values(result);
  const ratio = asiceBig.seconds / zipBig.seconds;
  console.log(`  big.bin entry method        ${method} (target: stor)`);
  console.log(
    `  .asice / zip -0+dgst        ${ratio.toFixed(2)}× (target ≤ 1.20×: ${ratio <= 1.2 ? 'met' : 'missed'})`,
  );
  console.log(`  peak RSS ${binMb} MB / 1 MB      ${asiceBig.rssMb.toFixed(0)} / ${asiceSmall.rssMb.toFixed(0)} MB`);
}
