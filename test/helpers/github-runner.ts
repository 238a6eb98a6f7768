import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** The files a GitHub runner gives a job's steps, and its temp dir. */
export interface RunnerFiles {
  output: string;
  path: string;
  summary: string;
  temp: string;
}

/** A job's runner files, fresh, in `dir`. */
export async function runnerFiles(dir: string): Promise<RunnerFiles> {
  const files = { output: join(dir, 'GITHUB_OUTPUT'), path: join(dir, 'GITHUB_PATH'), summary: join(dir, 'GITHUB_STEP_SUMMARY'), temp: join(dir, 'runner-temp') };
  await mkdir(files.temp, { recursive: true });
  await Promise.all([writeFile(files.output, ''), writeFile(files.path, ''), writeFile(files.summary, '')]);
  return files;
}

/**
 * Runs one `run:` step as a runner runs a bash step (`bash --noprofile --norc -eo pipefail`), in
 * `cwd`, with the directories earlier steps added to GITHUB_PATH first on PATH and a fresh
 * GITHUB_OUTPUT; `env` is the step's environment (workflow, job and step `env:`).
 */
export async function runStep(script: string, files: RunnerFiles, cwd: string, env: Record<string, string>): Promise<SpawnSyncReturns<string>> {
  await writeFile(files.output, '');
  const addedPath = (await readFile(files.path, 'utf8')).split('\n').filter(Boolean).reverse();
  const scriptFile = join(dirname(files.output), `step-${Math.random().toString(16).slice(2)}.sh`);
  await writeFile(scriptFile, script);
  return spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', scriptFile], {
    cwd,
    encoding: 'utf8',
    timeout: 120_000,
    env: {
      PATH: [...addedPath, process.env['PATH']].join(':'),
      HOME: process.env['HOME'] ?? cwd,
      NO_COLOR: '1',
      CI: 'true',
      GITHUB_ACTIONS: 'true',
      RUNNER_OS: 'Linux',
      RUNNER_ARCH: 'X64',
      RUNNER_TEMP: files.temp,
      GITHUB_WORKSPACE: cwd,
      GITHUB_OUTPUT: files.output,
      GITHUB_PATH: files.path,
      GITHUB_STEP_SUMMARY: files.summary,
      ...env,
    },
  });
}

/** The `name=value` lines the last step wrote to GITHUB_OUTPUT. */
export async function stepOutputs(files: RunnerFiles): Promise<Record<string, string>> {
  return Object.fromEntries((await readFile(files.output, 'utf8')).split('\n').filter(Boolean).map((line) => line.split('=', 2) as [string, string]));
}
