// Part of npm run bench (bench/run.js runs it; BENCH_TRUST=0 leaves it out): `esign trust update` of
// the sandbox's TEST LOTL and 30 national lists of a real list's size (about 400 KB, 150 services
// each) on loopback, cold (empty cache: every list downloaded and checked) and warm (conditional
// requests, all 304), `esign verify` of a signed PDF with that full cache against the same with only a
// root file (`--trust root.pem`, no cache), and `esign trust import` of the real lists in
// test/fixtures/trusted-lists. Wall time and CPU (user + system of esign alone), median of
// BENCH_TRUST_RUNS (default 3; BENCH_TRUST_VERIFY_RUNS, default 9, for the verifications).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, 'bench', 'out', 'trust');
const bin = join(root, 'bin', 'esign.cjs');
const runs = Number(process.env.BENCH_TRUST_RUNS ?? 3);
const verifyRuns = Number(process.env.BENCH_TRUST_VERIFY_RUNS ?? 9);
const LISTS = 30;
rmSync(out, { recursive: true, force: true });
const env = {
  ...process.env,
  ESIGN_CONFIG_DIR: join(out, 'config'),
  ESIGN_SANDBOX_DIR: join(out, 'sandbox'),
  ESIGN_CACHE_DIR: join(out, 'cache'),
  NO_COLOR: '1',
  CI: 'true',
};

function measure(args, options = {}) {
  const started = process.hrtime.bigint();
  const result = spawnSync('/usr/bin/time', ['-f', '%M %U %S', process.execPath, bin, ...args], {
    env: options.env ?? env,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const [kb, user, system] = result.stderr.trim().split('\n').at(-1).split(' ').map(Number);
  if (result.status !== 0) throw new Error(`esign ${args.join(' ')} failed (${result.status}): ${result.stderr}`);
  return { seconds, cpuSeconds: user + system, rssMb: kb / 1024, stdout: result.stdout };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
function line(label, samples) {
  const wall = median(samples.map((s) => s.seconds));
  const cpu = median(samples.map((s) => s.cpuSeconds));
  const rss = Math.max(...samples.map((s) => s.rssMb));
  return `${label.padEnd(58)} ${wall.toFixed(2)} s wall, ${cpu.toFixed(2)} s CPU, ${rss.toFixed(0)} MB peak RSS`;
}

const sandbox = spawn(process.execPath, [bin, 'sandbox', 'start', '--port', '0', '--trust-lists', String(LISTS)], {
  env,
  stdio: ['ignore', 'ignore', 'inherit'],
});
try {
  for (let waited = 0; !existsSync(join(env.ESIGN_SANDBOX_DIR, 'runtime.json')); waited += 100) {
    if (waited > 60_000) throw new Error('the sandbox did not start');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // Once untimed: the sandbox signs each list on its first request.
  const first = measure(['--json', 'trust', 'update']);
  const lists = JSON.parse(first.stdout).lists;
  if (lists.length !== LISTS + 1 || lists.some((l) => l.state === 'failed'))
    throw new Error(`expected ${LISTS + 1} verified lists: ${first.stdout.slice(0, 500)}`);
  const cold = [];
  const warm = [];
  for (let run = 0; run < runs; run++) {
    rmSync(join(env.ESIGN_CACHE_DIR, 'trusted-lists'), { recursive: true, force: true });
    cold.push(measure(['--quiet', 'trust', 'update']));
    warm.push(measure(['--quiet', 'trust', 'update']));
  }
  console.log(`esign trust update: the sandbox's TEST LOTL and ${LISTS} lists of about 400 KB on loopback`);
  console.log(line('  cold (empty cache: all downloaded and checked)', cold));
  console.log(line('  warm (conditional requests: all 304 Not Modified)', warm));

  // A PDF sealed by the sandbox at B-T (its TSA too is on the ZZ list), verified with the full cache
  // (the sandbox profile's anchors and the 31 lists) and with the root file alone (an empty cache);
  // and, to isolate what the lists cost, with the root file and the full cache (the same command line).
  const signed = join(out, 'contract-signed.pdf');
  measure(['--quiet', 'sign', '--level', 'B-T', '-o', signed, join(root, 'samples', 'contract.pdf')], {
    env: { ...env, ESIGN_SERVICE_AUTH: 'client-credentials', ESIGN_CREDENTIAL_PIN: '246810' },
  });
  const rootPem = join(env.ESIGN_SANDBOX_DIR, 'root.pem');
  if (!existsSync(rootPem)) throw new Error(`no sandbox root at ${rootPem}`);
  const rootOnlyEnv = { ...env, ESIGN_CACHE_DIR: join(out, 'empty-cache') };
  const withLists = [];
  const rootAndLists = [];
  const withRoot = [];
  const qualified = (sample) => JSON.parse(sample.stdout).signatures[0]?.qualification?.name;
  for (let run = 0; run < verifyRuns; run++) {
    withLists.push(measure(['--json', 'verify', signed]));
    rootAndLists.push(measure(['--json', 'verify', '--trust', rootPem, signed]));
    withRoot.push(measure(['--json', 'verify', '--trust', rootPem, signed], { env: rootOnlyEnv }));
  }
  const qualification = qualified(withLists[0]);
  if (qualification !== 'QESeal' || qualified(rootAndLists[0]) !== 'QESeal' || qualified(withRoot[0]) !== undefined)
    throw new Error(
      `verify: unexpected qualifications ${qualification}, ${qualified(rootAndLists[0])}, ${qualified(withRoot[0])}`,
    );
  const versus = (samples, base) => {
    const of = (key, from) => median(from.map((s) => s[key]));
    const part = (key, unit) =>
      `${((of(key, samples) - of(key, base)) * 1000).toFixed(0)} ms ${unit} (×${(of(key, samples) / of(key, base)).toFixed(2)})`;
    return `${part('seconds', 'wall')}, ${part('cpuSeconds', 'CPU')}; target ≤ +20 ms`;
  };
  console.log(`esign verify of a B-T PDF, median of ${verifyRuns}`);
  console.log(line(`  full cache (${LISTS + 1} lists), profile anchors: ${qualification}`, withLists));
  console.log(line(`  full cache, --trust root.pem: ${qualification}`, rootAndLists));
  console.log(line('  --trust root.pem, no cache', withRoot));
  console.log(`  full cache vs root file:                 ${versus(withLists, withRoot)}`);
  console.log(`  the lists alone (same command line):     ${versus(rootAndLists, withRoot)}`);

  const fixtures = join(root, 'test', 'fixtures', 'trusted-lists');
  const files = readdirSync(fixtures)
    .filter((name) => name.endsWith('.xml'))
    .map((name) => join(fixtures, name));
  const importEnv = { ...env, ESIGN_PROFILE: 'env', ESIGN_CACHE_DIR: join(out, 'import-cache') };
  const imports = Array.from({ length: runs }, () => {
    rmSync(importEnv.ESIGN_CACHE_DIR, { recursive: true, force: true });
    return measure(['--quiet', 'trust', 'import', ...files], { env: importEnv });
  });
  console.log(line(`esign trust import of the ${files.length} real lists (test/fixtures/trusted-lists)`, imports));
} finally {
  sandbox.kill('SIGTERM');
}
