// npm run build && node bench/visible.js (npm run bench runs it last): what a visible signature (its
// font subset embedded) costs over an invisible one, for one 1 MB PDF, in BENCH_RUNS pairs (default
// 15) run back to back: medians of wall time and of CPU time (user + system, steadier on a shared
// machine), the extra as the median of the pairs' differences, peak RSS, and the target (at most
// 15 ms more CPU) met or missed by how much. Then where the font work's time goes,
// step by step, on each of its two paths: esign's TrueType reader (text that needs no shaping, in
// a TrueType font: the default) and fontkit (text that needs shaping, CFF, WOFF, collections).
// Then the peak RSS of a batch of BENCH_VISIBLE_BATCH (default 1000) one-page PDFs signed
// --visible, by each build. BENCH_BASELINE=DIR (another checkout of esign, built) runs its bin/esign.cjs beside
// this one's in the same run, for before/after ratios.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { lazyFontkit } from '../scripts/lazy-fontkit.mjs';
import { generatePdf } from './generate.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, 'bench', 'out', 'visible');
const runs = Number(process.env.BENCH_RUNS ?? 15);
const batch = Number(process.env.BENCH_VISIBLE_BATCH ?? 1000);
const TARGET_MS = 15;
const builds = [{ label: 'this build', bin: join(root, 'bin', 'esign.cjs') }];
if (process.env.BENCH_BASELINE)
  builds.push({
    label: `baseline (${process.env.BENCH_BASELINE})`,
    bin: join(resolve(process.env.BENCH_BASELINE), 'bin', 'esign.cjs'),
  });
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const env = {
  ...process.env,
  ESIGN_CONFIG_DIR: join(out, 'config'),
  ESIGN_SANDBOX_DIR: join(out, 'sandbox'),
  ESIGN_CACHE_DIR: join(out, 'cache'),
  NO_COLOR: '1',
  CI: 'true',
  ESIGN_SERVICE_AUTH: 'client-credentials',
  ESIGN_CREDENTIAL_PIN: '246810',
};

/**
 * One run: wall time, CPU time (user + system) of the process and its children from bash's `times`
 * (to the millisecond; GNU time's %U and %S count hundredths), and peak RSS from /usr/bin/time.
 */
function measure(bin, args) {
  const started = process.hrtime.bigint();
  const script = '/usr/bin/time -f "%M" "$@"; status=$?; times >&2; exit $status';
  const result = spawnSync('bash', ['-c', script, 'bash', process.execPath, bin, '--quiet', 'sign', ...args], {
    env,
    encoding: 'utf8',
  });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) throw new Error(result.stderr);
  const lines = result.stderr.trim().split('\n');
  const seconds = (text) => Number(/(\d+)m([\d.]+)s/.exec(text)[1]) * 60 + Number(/(\d+)m([\d.]+)s/.exec(text)[2]);
  const [user, system] = lines.at(-1).split(' ').map(seconds);
  return { ms, cpuMs: (user + system) * 1000, rssMb: Number(lines.at(-3)) / 1024 };
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/**
 * The instructions one run executes, all its threads, counted by valgrind's callgrind: the same
 * within about 1 M from run to run, where this machine's CPU times swing by tens of ms. Less V8's
 * primality test on the random hash seed it draws at each start (detail::sprp, 5 to 20 M a run).
 * Undefined where valgrind is not installed.
 */
function instructions(bin, args) {
  const file = join(out, 'callgrind.out');
  const run = spawnSync(
    'valgrind',
    ['--tool=callgrind', `--callgrind-out-file=${file}`, process.execPath, bin, '--quiet', 'sign', ...args],
    { env, encoding: 'utf8' },
  );
  if (run.error || run.status !== 0) return undefined;
  const annotated =
    spawnSync('callgrind_annotate', ['--threshold=100', file], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 })
      .stdout ?? '';
  let total = 0;
  let seed = 0;
  for (const line of annotated.split('\n')) {
    const count = /^\s*([\d,]+) /.exec(line)?.[1];
    if (!count) continue;
    if (line.includes('PROGRAM TOTALS')) total = Number(count.replaceAll(',', ''));
    else if (/detail::sprp|HashSeed::/.test(line)) seed += Number(count.replaceAll(',', ''));
  }
  return total > 0 ? total - seed : undefined;
}
const fixed = (value) => value.toFixed(0);
const signed = (value) => `${value < 0 ? '−' : '+'}${Math.abs(value).toFixed(0)}`;

const sandbox = spawn(process.execPath, [builds[0].bin, '--auto-approve', 'sandbox', 'start', '--port', '0'], {
  env,
  stdio: 'ignore',
});
try {
  for (let waited = 0; !existsSync(join(env.ESIGN_SANDBOX_DIR, 'runtime.json')); waited += 100) {
    if (waited > 60_000) throw new Error('the sandbox did not start');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const input = join(out, 'in-1mb.pdf');
  await generatePdf(input, { targetBytes: 1024 * 1024, pages: 1, xref: 'table' });
  const name = 'Ζωή Παπαδοπούλου';
  const reason = 'Genehmigt – Zoë Łukasiewicz';
  const visibleArgs = ['--visible', '--name', name, '--reason', reason];
  const samples = builds.map(() => ({ plain: [], visible: [] }));
  // One untimed run of each kind first: it leaves the code cache the timed runs start from.
  for (const { bin } of builds)
    for (const args of [[], visibleArgs])
      measure(bin, ['--level', 'B-B', '--force', ...args, '-o', join(out, 'warm.pdf'), input]);
  for (let run = 0; run < runs; run++) {
    for (const [i, { bin }] of builds.entries()) {
      // Each pair runs back to back, in turns first and second: the machine's slow spells fall on both.
      const plain = () =>
        samples[i].plain.push(measure(bin, ['--level', 'B-B', '--force', '-o', join(out, 'plain.pdf'), input]));
      const visible = () =>
        samples[i].visible.push(
          measure(bin, ['--level', 'B-B', '--force', ...visibleArgs, '-o', join(out, 'visible.pdf'), input]),
        );
      for (const step of run % 2 === 0 ? [plain, visible] : [visible, plain]) step();
    }
  }
  const extras = [];
  for (const [i, { label }] of builds.entries()) {
    const { plain, visible } = samples[i];
    const [p, v] = [plain, visible].map((list) => median(list.map((s) => s.ms)));
    const [pc, vc] = [plain, visible].map((list) => median(list.map((s) => s.cpuMs)));
    const [pr, vr] = [plain, visible].map((list) => Math.max(...list.map((s) => s.rssMb)));
    // The extra is the median of each pair's difference, steadier than the difference of the medians.
    const wall = median(visible.map((s, k) => s.ms - plain[k].ms));
    const cpu = median(visible.map((s, k) => s.cpuMs - plain[k].cpuMs));
    extras.push({ wall, cpu });
    console.log(
      `${label}, 1 MB, median of ${runs}: invisible ${fixed(p)} ms (CPU ${fixed(pc)} ms), visible ${fixed(v)} ms (CPU ${fixed(vc)} ms); visible's extra, median of the ${runs} pairs: ${signed(wall)} ms wall, ${signed(cpu)} ms CPU (${((pc + cpu) / pc).toFixed(2)}×); peak RSS ${fixed(pr)} / ${fixed(vr)} MB`,
    );
  }
  const ratio = (a, b) => (a > 0 && b > 0 ? `${(a / b).toFixed(2)}×` : 'n/a (an extra at or below zero: noise)');
  if (builds.length === 2)
    console.log(
      `visible's extra cost, this build / baseline: wall ${ratio(extras[0].wall, extras[1].wall)}, CPU ${ratio(extras[0].cpu, extras[1].cpu)}`,
    );
  const over = extras[0].cpu - TARGET_MS;
  console.log(
    over <= 0
      ? `target (at most +${TARGET_MS} ms): met (${signed(extras[0].cpu)} ms CPU)`
      : `target (at most +${TARGET_MS} ms): NOT met, by ${fixed(over)} ms of CPU (+${fixed(extras[0].cpu)} ms)`,
  );

  // The same extra in instructions, which repeat where times do not: once each, the date in the
  // text fixed (its digits change the glyphs), turned into ms at the CPU time per instruction of
  // this build's invisible runs (the extra code, cold like the rest of a run, at the run's pace).
  const fixedDate = [
    '--appearance-text',
    'Digitally signed by {name}\nDate: 2026-01-01 12:34:56 UTC\nReason: {reason}',
  ];
  const counted = [];
  for (const [i, { label, bin }] of builds.entries()) {
    const plain = instructions(bin, ['--level', 'B-B', '--force', '-o', join(out, 'plain.pdf'), input]);
    const visible =
      plain &&
      instructions(bin, [
        '--level',
        'B-B',
        '--force',
        ...visibleArgs,
        ...fixedDate,
        '-o',
        join(out, 'visible.pdf'),
        input,
      ]);
    if (!plain || !visible) {
      console.log('instructions: valgrind is not installed (or failed): apt-get install valgrind');
      break;
    }
    const msPerInstruction = median(samples[i].plain.map((s) => s.cpuMs)) / plain;
    const extra = (visible - plain) * msPerInstruction;
    counted.push(visible - plain);
    console.log(
      `${label}, instructions (callgrind): invisible ${(plain / 1e6).toFixed(1)} M, visible ${(visible / 1e6).toFixed(1)} M: +${((visible - plain) / 1e6).toFixed(1)} M (+${(((visible - plain) / plain) * 100).toFixed(1)}%), about +${extra.toFixed(1)} ms of CPU${i === 0 ? `: target ${extra <= TARGET_MS ? 'met' : 'NOT met'} by this measure` : ''}`,
    );
  }
  if (counted.length === 2)
    console.log(`visible's extra instructions, this build / baseline: ${ratio(counted[0], counted[1])}`);

  // The font work alone, in one process per path: the TrueType reader and fontkit, each bundled as
  // the CLI bundles it (compiled without the code cache the CLI has, so the loads are upper bounds).
  const bundles = { truetype: join(out, 'truetype.cjs'), fontkit: join(out, 'fontkit.cjs') };
  const bundled = {
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: 'warning',
  };
  await build({
    ...bundled,
    entryPoints: [join(root, 'src', 'core', 'pdf', 'truetype.ts')],
    outfile: bundles.truetype,
  });
  await build({
    ...bundled,
    stdin: { contents: "module.exports = require('@pdf-lib/fontkit');", resolveDir: root, loader: 'js' },
    outfile: bundles.fontkit,
    plugins: [lazyFontkit],
  });
  const font = join(root, 'dist', 'fonts', 'NotoSans-Regular.ttf');
  const text = `Digitally signed by ${name} Date: 2026-01-01 12:00:00 UTC Reason: ${reason}`;
  for (const [path, label] of [
    ['truetype', "esign's TrueType reader (this text, the default font)"],
    ['fontkit', 'fontkit (text that needs shaping; CFF, WOFF, collections)'],
  ]) {
    const steps = [];
    for (let run = 0; run < Math.max(5, Math.min(runs, 15)); run++) {
      const result = spawnSync(
        process.execPath,
        [join(root, 'bench', 'visible-phases.cjs'), path, bundles[path], font, text],
        { encoding: 'utf8' },
      );
      if (result.status !== 0) throw new Error(result.stderr);
      steps.push(JSON.parse(result.stdout));
    }
    console.log(
      `  font work by ${label}, CPU median: ${Object.keys(steps[0])
        .map((step) => `${step} ${median(steps.map((s) => s[step])).toFixed(1)} ms`)
        .join(', ')}`,
    );
  }

  if (batch > 0) {
    const dir = join(out, 'batch');
    mkdirSync(dir);
    const one = join(out, 'one-page.pdf');
    await generatePdf(one, { targetBytes: 4096, pages: 1, xref: 'table' });
    for (let i = 0; i < batch; i++) spawnSync('cp', [one, join(dir, `doc-${String(i).padStart(6, '0')}.pdf`)]);
    for (const [i, { label, bin }] of builds.entries()) {
      const signed = measure(bin, [
        '--level',
        'B-B',
        ...visibleArgs,
        '--output-dir',
        join(out, `batch-signed-${i}`),
        dir,
      ]);
      console.log(
        `${label}: ${batch} one-page PDFs --visible in one run: ${(signed.ms / 1000).toFixed(1)} s (CPU ${(signed.cpuMs / 1000).toFixed(1)} s), peak RSS ${fixed(signed.rssMb)} MB`,
      );
      rmSync(join(out, `batch-signed-${i}`), { recursive: true, force: true });
    }
  }
} finally {
  sandbox.kill();
}
