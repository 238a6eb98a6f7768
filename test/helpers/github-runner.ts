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
  const files = {
    output: join(dir, 'GITHUB_OUTPUT'),
    path: join(dir, 'GITHUB_PATH'),
    summary: join(dir, 'GITHUB_STEP_SUMMARY'),
    temp: join(dir, 'runner-temp'),
  };
  await mkdir(files.temp, { recursive: true });
  await Promise.all([writeFile(files.output, ''), writeFile(files.path, ''), writeFile(files.summary, '')]);
  return files;
}

/**
 * Runs one `run:` step as a runner runs a bash step (`bash --noprofile --norc -eo pipefail`), in
 * `cwd`, with the directories earlier steps added to GITHUB_PATH first on PATH and a fresh
 * GITHUB_OUTPUT; `env` is the step's environment (workflow, job and step `env:`).
 */
export async function runStep(
  script: string,
  files: RunnerFiles,
  cwd: string,
  env: Record<string, string>,
  timeoutMs = 120_000,
): Promise<SpawnSyncReturns<string>> {
  await writeFile(files.output, '');
  const addedPath = (await readFile(files.path, 'utf8')).split('\n').filter(Boolean).reverse();
  const scriptFile = join(dirname(files.output), `step-${Math.random().toString(16).slice(2)}.sh`);
  await writeFile(scriptFile, script);
  return spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', scriptFile], {
    cwd,
    encoding: 'utf8',
    timeout: timeoutMs,
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
  return Object.fromEntries(
    (await readFile(files.output, 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split('=', 2) as [string, string]),
  );
}

export interface WorkflowStep {
  name?: string;
  id?: string;
  uses?: string;
  run?: string;
  if?: string;
  env?: Record<string, string>;
  with?: Record<string, string>;
}
export interface WorkflowJob {
  needs?: string;
  if?: string;
  environment?: string;
  steps: WorkflowStep[];
  outputs?: Record<string, string>;
}
export interface Workflow {
  env: Record<string, string>;
  jobs: Record<string, WorkflowJob>;
}
/** `${{ scope.key }}` values by scope (`vars`, `secrets`, `inputs`, `steps.ID.outputs`, …). */
export type WorkflowContext = Record<string, Record<string, string>>;

/** GitHub's `${{ … }}` expressions, for the few forms the workflows in docs/ci/ use. */
export function expand(text: string, context: WorkflowContext): string {
  return text.replace(
    /\$\{\{\s*([\w-]+)\.([\w-]+)(?:\.([\w-]+)\.([\w-]+))?\s*\}\}/g,
    (_, scope: string, key: string, sub?: string, leaf?: string) =>
      sub ? (context[`${scope}.${key}.${sub}`]?.[leaf!] ?? '') : (context[scope]?.[key] ?? ''),
  );
}

/** `if:` conditions of the form `a.b.c.d == 'x'`. */
export function condition(text: string | undefined, context: WorkflowContext): boolean {
  if (!text) return true;
  const match = /^(.+?)\s*==\s*'([^']*)'$/.exec(text.trim());
  if (!match) throw new Error(`unsupported if: ${text}`);
  return expand(`\${{ ${match[1]} }}`, context) === match[2];
}

export interface JobRun {
  workspace: string;
  outputs: Record<string, string>;
  summary: string;
  log: string;
}

/**
 * Runs one job of `workflow` as a runner would, in a fresh workspace under `dir`: `run:` steps in
 * bash in order (their `if:`, `env:` and outputs honoured), `uses:` steps by `standIn`, and the
 * `gh` steps that need GitHub skipped. Throws with the job's log when a step fails.
 */
export async function runJob(
  workflow: Workflow,
  name: string,
  context: WorkflowContext,
  dir: string,
  standIn: (step: WorkflowStep, workspace: string) => Promise<void>,
  stepTimeoutMs?: number,
): Promise<JobRun> {
  const job = workflow.jobs[name]!;
  const workspace = join(dir, `run-${Math.random().toString(16).slice(2)}`, name);
  await mkdir(workspace, { recursive: true });
  const files = await runnerFiles(join(workspace, '..'));
  const jobContext = { ...context, github: { workspace, run_id: '1', ref_name: 'v1.2.3' } };
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(workflow.env)) env[key] = expand(String(value), jobContext);
  const outputsByStep: Record<string, Record<string, string>> = {};
  const withStepOutputs = (): WorkflowContext => {
    const stepContext: WorkflowContext = { ...jobContext };
    for (const [id, outputs] of Object.entries(outputsByStep)) stepContext[`steps.${id}.outputs`] = outputs;
    return stepContext;
  };
  let log = '';
  for (const step of job.steps) {
    const stepContext = withStepOutputs();
    if (!condition(step.if?.replace(/^\$\{\{\s*|\s*\}\}$/g, ''), stepContext)) continue;
    if (step.uses) {
      await standIn(step, workspace);
      continue;
    }
    if (!step.run || /^gh /.test(step.run.trim())) continue;
    const stepEnv: Record<string, string> = { ...env };
    for (const [key, value] of Object.entries(step.env ?? {})) stepEnv[key] = expand(String(value), stepContext);
    const result = await runStep(step.run, files, workspace, stepEnv, stepTimeoutMs);
    log += `--- ${step.name ?? step.run.split('\n')[0]}\n${result.stdout}${result.stderr}`;
    if (result.status !== 0) throw new Error(`step "${step.name}" of job ${name} failed (${result.status}):\n${log}`);
    if (step.id) outputsByStep[step.id] = await stepOutputs(files);
  }
  const outputs: Record<string, string> = {};
  const outputContext = withStepOutputs();
  for (const [key, value] of Object.entries(job.outputs ?? {})) outputs[key] = expand(value, outputContext);
  return { workspace, outputs, summary: await readFile(files.summary, 'utf8'), log };
}
