// npm run build && node bench/xades.js (npm run bench runs it after containers.js): XAdES (issue 48)
// in one run, as ratios of wall time, with peak RSS. BENCH_XADES_FILES (default 1000) one-page XML
// invoices, each to an enveloped XAdES at B-T against the same batch as .p7m at B-T; one XML file of
// BENCH_XADES_MB (default 20) enveloped at B-B (time and peak RSS, a .p7m of it beside); and one
// ASiC-E of the same small files with XAdES inside against the same with CAdES (--asic-signature
// cades), at B-B. Runs alternate, BENCH_XADES_RUNS times (default 3); medians. The seal flow
// (PIN-only bulk seal on the sandbox). BENCH_XADES_FILES=0 leaves out the small files (the large one alone).
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sealEnv } from './seal-env.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, 'bench', 'out', 'xades');
const bin = join(root, 'bin', 'esign.cjs');
const count = Number(process.env.BENCH_XADES_FILES ?? 1000);
const runs = Number(process.env.BENCH_XADES_RUNS ?? 3);
const largeMb = Number(process.env.BENCH_XADES_MB ?? 20);
rmSync(out, { recursive: true, force: true });
const inputs = join(out, 'in');
mkdirSync(inputs, { recursive: true });
const env = sealEnv(out);

/** One run under GNU time: wall seconds and peak RSS (MB); the output directory emptied first, untimed. */
function measure(args, outputDir) {
  rmSync(outputDir, { recursive: true, force: true });
  mkdirSync(outputDir, { recursive: true });
  spawnSync('sync');
  const started = process.hrtime.bigint();
  const result = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, bin, '--quiet', 'sign', ...args], {
    env,
    encoding: 'utf8',
    cwd: out,
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (result.status !== 0) throw new Error(`esign sign ${args.join(' ')}: ${result.stderr}`);
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

const invoice = (index) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<Invoice xmlns="urn:example:invoice">\n  <Number>${index}</Number>\n${'  <Line><Item>Tornillos M6</Item><Qty>2</Qty><Price>10.50</Price></Line>\n'.repeat(40)}</Invoice>\n`;
for (let index = 0; index < count; index++)
  writeFileSync(join(inputs, `invoice-${String(index).padStart(5, '0')}.xml`), invoice(index));

/** A large XML document: `mb` MB of invoice lines under one root, written in pieces. */
function writeLargeXml(path, mb) {
  const line = '  <Line><Item>Tornillos &amp; tuercas M6</Item><Qty>2</Qty><Price>10.50</Price></Line>\n';
  const block = line.repeat(Math.ceil((1024 * 1024) / line.length));
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, '<?xml version="1.0" encoding="UTF-8"?>\n<Invoices xmlns="urn:example:invoice">\n');
    for (let written = 0; written < mb * 1024 * 1024; written += block.length) writeSync(fd, block);
    writeSync(fd, '</Invoices>\n');
  } finally {
    closeSync(fd);
  }
}

const sandbox = spawn(process.execPath, [bin, 'sandbox', 'start', '--port', '0'], { env, stdio: 'ignore' });
try {
  for (let waited = 0; !existsSync(join(env.ESIGN_SANDBOX_DIR, 'runtime.json')); waited += 100) {
    if (waited > 60_000) throw new Error('the sandbox did not start');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (count > 0) smallFiles();

  if (largeMb > 0) {
    const big = join(out, 'big');
    mkdirSync(big, { recursive: true });
    writeLargeXml(join(big, 'large.xml'), largeMb);
    const one = (format, dir) => [
      ['--level', 'B-B', '--format', format, '--output-dir', dir, join(big, 'large.xml')],
      dir,
    ];
    const large = measureAll({
      [`${largeMb} MB XML, XAdES B-B`]: one('xades', join(out, 'large-xades')),
      [`${largeMb} MB XML, .p7m B-B`]: one('p7m', join(out, 'large-p7m')),
    });
    console.log(`XAdES (issue 48): one ${largeMb} MB XML document enveloped, seal, median of ${runs}`);
    for (const [name, { seconds, rssMb }] of Object.entries(large))
      console.log(`  ${name.padEnd(24)} ${seconds.toFixed(2)} s  ${rssMb.toFixed(0)} MB peak RSS`);
  }
} finally {
  sandbox.kill();
}

/** The batch of small invoices (enveloped XAdES against .p7m) and the containers of them (XAdES against CAdES). */
function smallFiles() {
  const batch = (format, level, dir) => [['--level', level, '--format', format, '--output-dir', dir, inputs], dir];
  const container = (signature, dir) => [
    ['--level', 'B-B', '--format', 'asice', '--asic-signature', signature, '-o', join(dir, 'all.asice'), inputs],
    dir,
  ];
  measure(...batch('xades', 'B-B', join(out, 'warm'))); // warms the code cache and the sandbox
  const result = measureAll({
    'enveloped XAdES B-T': batch('xades', 'B-T', join(out, 'xades')),
    '.p7m B-T': batch('p7m', 'B-T', join(out, 'p7m')),
    '.asice XAdES': container('xades', join(out, 'asice-xades')),
    '.asice CAdES': container('cades', join(out, 'asice-cades')),
  });
  console.log(`XAdES (issue 48): ${count} one-page XML invoices, seal, median of ${runs}`);
  for (const [name, { seconds, rssMb }] of Object.entries(result))
    console.log(
      `  ${name.padEnd(24)} ${seconds.toFixed(2)} s  ${(count / seconds).toFixed(0)} files/s  ${rssMb.toFixed(0)} MB`,
    );
  const ratio = (a, b) => (result[a].seconds / result[b].seconds).toFixed(2);
  console.log(`  XAdES B-T / .p7m B-T       ${ratio('enveloped XAdES B-T', '.p7m B-T')}×`);
  console.log(`  .asice XAdES / CAdES       ${ratio('.asice XAdES', '.asice CAdES')}×`);
}
