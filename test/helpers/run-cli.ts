import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkJsonOutput } from './json-schemas.js';
import { recordCliOutput, recordSchemaCheck } from './secret-ledger.js';

/**
 * The esign under test: the single executable named by the environment variable ESIGN_BIN
 * (`ESIGN_BIN=dist/sea/esign npx vitest run --project integration`), else bin/esign.cjs, run by
 * the Node running the tests.
 */
export const ESIGN_BIN = process.env['ESIGN_BIN']
  ? resolve(process.env['ESIGN_BIN'])
  : fileURLToPath(new URL('../../bin/esign.cjs', import.meta.url));
/** Whether the tests run the single executable (ESIGN_BIN) rather than the npm package. */
export const TESTING_EXECUTABLE = Boolean(process.env['ESIGN_BIN']);

/** The program and arguments that run esign with `args`. */
export function esignCommand(args: string[]): [string, string[]] {
  return TESTING_EXECUTABLE ? [ESIGN_BIN, args] : [process.execPath, [ESIGN_BIN, ...args]];
}

/** A shell command line that runs esign with `args`, each argument quoted. */
export function esignShellLine(args: string[]): string {
  const [file, rest] = esignCommand(args);
  return [file, ...rest].map((arg) => `'${arg.replaceAll("'", "'\\''")}'`).join(' ');
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (one value), or each line as JSON when there are several. */
  json<T = unknown>(): T;
  jsonLines<T = unknown>(): T[];
}

export interface RunCliOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  input?: string;
  timeoutMs?: number;
}

/** Runs the built CLI (`npm run build` first) as a child process, as a user's shell would. */
export function runCli(args: string[], options: RunCliOptions = {}): Promise<CliResult> {
  return spawnCli(args, options).result;
}

export interface SpawnedCli {
  child: ChildProcessWithoutNullStreams;
  /** Everything written to stderr so far. */
  stderr(): string;
  /** Resolves once stderr matches `pattern` (rejects after `timeoutMs`). */
  waitForStderr(pattern: RegExp, timeoutMs?: number): Promise<void>;
  result: Promise<CliResult>;
}

/** Like `runCli`, but returns at once with the child, so a test can signal it mid-run. */
export function spawnCli(args: string[], options: RunCliOptions = {}): SpawnedCli {
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1', CI: 'true', ...options.env };
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key];
  const child = spawn(...esignCommand(args), {
    cwd: options.cwd,
    env: env as NodeJS.ProcessEnv,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const waiters = new Set<() => void>();
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    for (const check of waiters) check();
  });
  child.stdin.end(options.input ?? '');
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
  const result = new Promise<CliResult>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      recordCliOutput(args, stdout, stderr);
      for (const check of waiters) check();
      let schema;
      try {
        schema = checkJsonOutput(args, stdout);
      } catch (error) {
        reject(error as Error);
        return;
      }
      if (schema) recordSchemaCheck(schema);
      if (schema && schema.problems.length > 0) {
        reject(
          new Error(
            `esign ${args.join(' ')}: --json output does not match docs/schemas/${schema.command}.schema.json:\n${schema.problems.join('\n')}`,
          ),
        );
        return;
      }
      resolve({
        code,
        signal,
        stdout,
        stderr,
        json: <T>() => JSON.parse(stdout) as T,
        jsonLines: <T>() =>
          stdout
            .split('\n')
            .filter((line) => line.trim())
            .map((line) => JSON.parse(line) as T),
      });
    });
  });
  return {
    child,
    stderr: () => stderr,
    result,
    waitForStderr(pattern, timeoutMs = 30_000) {
      return new Promise<void>((resolve, reject) => {
        const limit = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`stderr did not match ${String(pattern)} within ${timeoutMs} ms; stderr: ${stderr}`));
        }, timeoutMs);
        const check = () => {
          if (pattern.test(stderr)) {
            clearTimeout(limit);
            waiters.delete(check);
            resolve();
          } else if (child.exitCode !== null || child.signalCode !== null) {
            clearTimeout(limit);
            waiters.delete(check);
            reject(new Error(`the CLI ended before stderr matched ${String(pattern)}; stderr: ${stderr}`));
          }
        };
        waiters.add(check);
        check();
      });
    },
  };
}
