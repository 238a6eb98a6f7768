// npm run build && node bench/visible.js: what a visible signature (its font subset embedded)
// costs over an invisible one, for one 1 MB PDF, the two runs alternating (BENCH_RUNS, default 15);
// and the peak RSS of a batch of BENCH_VISIBLE_BATCH (default 1000) one-page PDFs signed --visible.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatePdf } from './generate.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, 'bench', 'out', 'visible');
const bin = join(root, 'bin', 'esign.cjs');
const runs = Number(process.env.BENCH_RUNS ?? 15);
const batch = Number(process.env.BENCH_VISIBLE_BATCH ?? 1000);
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const env = { ...process.env, ESIGN_CONFIG_DIR: join(out, 'config'), ESIGN_SANDBOX_DIR: join(out, 'sandbox'), NO_COLOR: '1', CI: 'true', ESIGN_SERVICE_AUTH: 'client-credentials', ESIGN_CREDENTIAL_PIN: '246810' };

function measure(args) {
  const started = process.hrtime.bigint();
  const result = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, bin, '--quiet', 'sign', ...args], { env, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(result.stderr);
  return { ms: Number(process.hrtime.bigint() - started) / 1e6, rssMb: Number(result.stderr.trim().split('\n').at(-1)) / 1024 };
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const sandbox = spawn(process.execPath, [bin, '--auto-approve', 'sandbox', 'start', '--port', '0'], { env, stdio: 'ignore' });
try {
  for (let waited = 0; !existsSync(join(env.ESIGN_SANDBOX_DIR, 'runtime.json')); waited += 100) {
    if (waited > 60_000) throw new Error('the sandbox did not start');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const input = join(out, 'in-1mb.pdf');
  await generatePdf(input, { targetBytes: 1024 * 1024, pages: 1, xref: 'table' });
  const visibleArgs = ['--visible', '--name', 'Ζωή Παπαδοπούλου', '--reason', 'Genehmigt – Zoë Łukasiewicz'];
  const plain = [];
  const visible = [];
  for (let run = 0; run < runs; run++) {
    plain.push(measure(['--level', 'B-B', '--force', '-o', join(out, 'plain.pdf'), input]));
    visible.push(measure(['--level', 'B-B', '--force', ...visibleArgs, '-o', join(out, 'visible.pdf'), input]));
  }
  const p = median(plain.map((s) => s.ms));
  const v = median(visible.map((s) => s.ms));
  console.log(`1 MB, median of ${runs}: invisible ${p.toFixed(0)} ms, visible ${v.toFixed(0)} ms: +${(v - p).toFixed(0)} ms (${(v / p).toFixed(2)}×); peak RSS ${Math.max(...plain.map((s) => s.rssMb)).toFixed(0)} / ${Math.max(...visible.map((s) => s.rssMb)).toFixed(0)} MB`);
  if (batch > 0) {
    const dir = join(out, 'batch');
    mkdirSync(dir);
    const one = join(out, 'one-page.pdf');
    await generatePdf(one, { targetBytes: 4096, pages: 1, xref: 'table' });
    for (let i = 0; i < batch; i++) spawnSync('cp', [one, join(dir, `doc-${String(i).padStart(6, '0')}.pdf`)]);
    const signed = measure(['--level', 'B-B', ...visibleArgs, '--output-dir', join(out, 'batch-signed'), dir]);
    console.log(`${batch} one-page PDFs --visible in one run: ${(signed.ms / 1000).toFixed(1)} s, peak RSS ${signed.rssMb.toFixed(0)} MB`);
  }
} finally {
  sandbox.kill();
}
