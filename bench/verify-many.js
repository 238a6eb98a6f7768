// npm run build && node bench/verify-many.js (npm run bench runs it last): `esign verify DIR` of many
// files in one run against the same files verified by one `esign verify FILE` run each (issue 49), in
// one run, as a ratio of wall time, with files/s and peak RSS. One signed file of each kind is made
// once with the sandbox (the PIN-only bulk seal, B-T) and copied N times (copies verify as the
// original does): BENCH_VERIFY_PDFS one-page PDFs (default 1000), BENCH_VERIFY_P7MS .p7m files
// (default 1000), BENCH_VERIFY_ASICES ASiC-E containers of two files (default 100). The separate runs
// are BENCH_VERIFY_SINGLES of them (default: every file), timed and scaled to the whole set when
// fewer. Verification on the sandbox profile: its anchors and TEST trusted lists, revocation fetched
// from the sandbox once per run in one run; in separate runs the first fetches and the others read
// the revocation cache (as a user's second `esign verify` does), each still checking the answers.
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatePdf } from './generate.js';
import { sealEnv } from './seal-env.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, 'bench', 'out', 'verify-many');
const bin = join(root, 'bin', 'esign.cjs');
const counts = {
  pdf: Number(process.env.BENCH_VERIFY_PDFS ?? 1000),
  p7m: Number(process.env.BENCH_VERIFY_P7MS ?? 1000),
  asice: Number(process.env.BENCH_VERIFY_ASICES ?? 100),
};
const singlesWanted = process.env.BENCH_VERIFY_SINGLES ? Number(process.env.BENCH_VERIFY_SINGLES) : undefined;
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const env = sealEnv(out);

/** One command under GNU time: wall seconds, CPU seconds (user + system) and peak RSS (MB). */
function measure(args) {
  const started = process.hrtime.bigint();
  const result = spawnSync('/usr/bin/time', ['-f', '%U %S %M', process.execPath, bin, ...args], {
    env,
    encoding: 'utf8',
    cwd: out,
    maxBuffer: 512 * 1024 * 1024,
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (result.status !== 0) throw new Error(`esign ${args.join(' ')}: exit ${result.status}: ${result.stderr}`);
  const [user, system, rss] = result.stderr.trim().split('\n').at(-1).split(' ').map(Number);
  return { seconds, cpu: user + system, rssMb: rss / 1024, stdout: result.stdout };
}

function sign(args) {
  const result = spawnSync(process.execPath, [bin, '--quiet', 'sign', '--level', 'B-T', ...args], {
    env,
    encoding: 'utf8',
    cwd: out,
  });
  if (result.status !== 0) throw new Error(`esign sign ${args.join(' ')}: ${result.stderr}`);
}

const sandbox = spawn(process.execPath, [bin, 'sandbox', 'start', '--port', '0'], { env, stdio: 'ignore' });
try {
  for (let waited = 0; !existsSync(join(env.ESIGN_SANDBOX_DIR, 'runtime.json')); waited += 100) {
    if (waited > 60_000) throw new Error('the sandbox did not start');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const made = join(out, 'made');
  mkdirSync(made);
  await generatePdf(join(made, 'page.pdf'), { targetBytes: 4000, pages: 1, xref: 'table' });
  writeFileSync(join(made, 'fattura.xml'), `<?xml version="1.0"?><Fattura>${'<Riga>x</Riga>'.repeat(40)}</Fattura>\n`);
  writeFileSync(join(made, 'notes.txt'), 'release notes\n');
  sign([join(made, 'page.pdf')]);
  sign(['--format', 'p7m', join(made, 'fattura.xml')]);
  sign(['--format', 'asice', '-o', join(made, 'both.asice'), join(made, 'fattura.xml'), join(made, 'notes.txt')]);
  const originals = {
    pdf: [join(made, 'page-signed.pdf'), 'pdf'],
    p7m: [join(made, 'fattura.xml.p7m'), 'xml.p7m'],
    asice: [join(made, 'both.asice'), 'asice'],
  };
  const trust = [];
  console.log(
    'esign verify of many files (issue 49): one run of DIR against one run per FILE; B-T, the sandbox profile',
  );
  for (const [kind, count] of Object.entries(counts)) {
    if (count <= 0) continue;
    const dir = join(out, kind);
    mkdirSync(dir);
    const [original, extension] = originals[kind];
    const files = Array.from({ length: count }, (_, i) => join(dir, `f${String(i).padStart(5, '0')}.${extension}`));
    for (const file of files) copyFileSync(original, file);
    measure(['--json', 'verify', ...trust, files[0]]); // warms the code cache and the sandbox
    const one = measure(['--json', 'verify', ...trust, dir]);
    const summary = JSON.parse(one.stdout.trim().split('\n').at(-1));
    if (summary.summary?.outcomes?.valid !== count)
      throw new Error(`${kind}: not every file valid: ${JSON.stringify(summary)}`);
    const singles = Math.min(count, singlesWanted ?? count);
    let singleSeconds = 0;
    let singleCpu = 0;
    let singleRss = 0;
    for (const file of files.slice(0, singles)) {
      const run = measure(['--json', 'verify', ...trust, file]);
      singleSeconds += run.seconds;
      singleCpu += run.cpu;
      singleRss = Math.max(singleRss, run.rssMb);
    }
    const separate = (singleSeconds / singles) * count;
    const separateCpu = (singleCpu / singles) * count;
    console.log(
      `  ${String(count).padStart(5)} ${kind.padEnd(6)} one run   ${one.seconds.toFixed(2).padStart(7)} s  ${(count / one.seconds).toFixed(1).padStart(6)} files/s  CPU ${one.cpu.toFixed(2)} s  ${one.rssMb.toFixed(0)} MB`,
    );
    console.log(
      `  ${String(count).padStart(5)} ${kind.padEnd(6)} per file  ${separate.toFixed(2).padStart(7)} s  ${(count / separate).toFixed(1).padStart(6)} files/s  CPU ${separateCpu.toFixed(2)} s  ${singleRss.toFixed(0)} MB${singles < count ? ` (${singles} runs timed, scaled)` : ''}`,
    );
    console.log(
      `        ${kind.padEnd(6)} one run is ${(separate / one.seconds).toFixed(1)}× faster in wall time, ${(separateCpu / one.cpu).toFixed(1)}× in CPU time (target ≥ 10×)`,
    );
    rmSync(dir, { recursive: true, force: true });
  }
} finally {
  sandbox.kill('SIGTERM');
}
