// The single executable (npm run build:sea) against the npm launcher (node bin/esign.cjs), in the
// bench's own run: --version, --help and a 1 MB seal sign, interleaved, wall time and peak RSS.
// Each side runs once untimed first, so both start with their V8 code cache written.
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * @param {object} bench what run.js measures with: root, out, bin, runs, env, interleaved(commands,
 *   count), sealSign(command, prefixArgs, input, output) → [command, args, options], input (1 MB PDF)
 * @returns {{ target: string, met: boolean | undefined }[]}
 */
export function benchExecutable({ root, out, bin, runs, env, interleaved, sealSign, input }) {
  const executable = process.env.BENCH_SEA ?? join(root, 'dist', 'sea', 'esign');
  const target = '--version, --help and a 1 MB seal sign of the single executable each ≤ 1.0× the npm launcher';
  if (!existsSync(executable)) {
    console.log(`single executable: not in this run (${executable} missing; npm run build:sea first)`);
    return [{ target, met: undefined }];
  }
  const versionOf = (command, args) =>
    spawnSync(command, [...args, '--version'], { env, encoding: 'utf8' }).stdout.trim();
  if (versionOf(executable, []) !== versionOf(process.execPath, [bin])) {
    console.log(`single executable: not in this run (${executable} is of another build; npm run build:sea again)`);
    return [{ target, met: undefined }];
  }
  const pairs = [
    ['--version', [process.execPath, [bin, '--version']], [executable, ['--version']]],
    ['--help', [process.execPath, [bin, '--help']], [executable, ['--help']]],
    [
      '1 MB seal sign',
      sealSign(process.execPath, [bin], input, join(out, 'esign.pdf')),
      sealSign(executable, [], input, join(out, 'esign.pdf')),
    ],
  ];
  const ratios = [];
  for (const [name, npm, sea] of pairs) {
    for (const [command, args, options] of [npm, sea]) spawnSync(command, args, { env, ...options, stdio: 'ignore' });
    const [npmRun, seaRun] = interleaved([npm, sea], Math.max(runs, 9));
    const ratio = npmRun.ok && seaRun.ok ? seaRun.seconds / npmRun.seconds : NaN;
    ratios.push(ratio);
    // CPU time (user + system) as well: on a loaded machine it is the steadier of the two.
    const cpuRatio = npmRun.ok && seaRun.ok ? seaRun.cpuSeconds / npmRun.cpuSeconds : NaN;
    const figures = (run) =>
      run.ok
        ? `${(run.seconds * 1000).toFixed(0)} ms, CPU ${(run.cpuSeconds * 1000).toFixed(0)} ms, peak RSS ${run.rssMb.toFixed(0)} MB`
        : `FAILED: ${run.stderr.trim().split('\n')[0]}`;
    const times = (value) => (Number.isNaN(value) ? 'n/a' : value.toFixed(2) + 'x');
    console.log(
      `single executable, ${name.padEnd(14)} ${times(ratio)} the npm launcher's time, ${times(cpuRatio)} its CPU (executable ${figures(seaRun)}; npm ${figures(npmRun)})`,
    );
  }
  return [{ target, met: ratios.every((ratio) => ratio <= 1.0) }];
}
