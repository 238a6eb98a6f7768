/**
 * What every command file shares: the shape of a command module and the small helpers their
 * options and results use. Commands import from here (and below), never from each other or from
 * program.ts, so each command file depends only downward.
 */
import type { Command } from 'commander';
import { ExitCode, type EsignError } from '../core/errors.js';
import type { Context } from './context.js';

export interface CommandModule {
  defineCommand(program: Command, run: RunInContext): void;
}

/** Runs a command body with a Context built from the global options, and closes it after. */
export type RunInContext = (command: Command, body: (ctx: Context) => Promise<void>) => Promise<void>;

/** commander argParser for options that take a positive number. */
export function positiveNumber(text: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`expected a positive number, got ${JSON.stringify(text)}`);
  return value;
}

/** A batch's exit code: 0 when all succeeded, 10 (partial) when some did, else the first failure's. */
export function batchExitCode(succeeded: number, failures: readonly EsignError[]): number {
  if (failures.length === 0) return ExitCode.ok;
  if (succeeded > 0) return ExitCode.partial;
  return failures[0]?.exitCode ?? ExitCode.internal;
}
