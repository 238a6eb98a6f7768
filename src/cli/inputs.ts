import { opendir, readdir, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { EsignError } from '../core/errors.js';
import type { DocumentKind, SignJob } from '../core/sign-workflow.js';
import { formForSigning, formOfKind } from '../io/forms/registry.js';
import type { SignFormat } from './sign-options.js';

const GLOB_CHARS = /[*?[]/;
/** Files esign itself writes; a directory or glob never picks them up as inputs. */
const OWN_OUTPUTS = /(-signed\.pdf|\.p7s|\.p7m|\.asics|\.asice|\.tsr)$/i;

/** A list of inputs that a batch of 100,000 holds compactly: a directory's files as their names. */
export interface InputList extends Iterable<string> {
  readonly length: number;
  at(index: number): string;
}

/** What the inputs are for: `sign` leaves esign's outputs out of directories and patterns, `verify` takes them. */
export type InputPurpose = 'sign' | 'verify';

/**
 * Expands FILE, DIR and GLOB arguments into files, in argument order, without duplicates.
 * A directory contributes its regular files (not hidden, not recursive; to sign, not esign outputs).
 */
export async function expandInputs(args: readonly string[], purpose: InputPurpose = 'sign'): Promise<InputList> {
  const skip = purpose === 'sign' ? OWN_OUTPUTS : undefined;
  // One directory, the usual large batch: its path once and the names, not 100,000 joined paths.
  // One argument cannot name a file twice (a directory lists each name once).
  if (args.length === 1 && (await stat(args[0]!).catch(() => undefined))?.isDirectory()) {
    const dir = args[0]!;
    const names = await fileNames(dir, skip);
    if (names.length === 0) throw noFiles(purpose);
    return listOf(names.length, (index) => join(dir, names[index]!));
  }
  const files: string[] = [];
  const seen = args.length > 1 ? new Set<string>() : undefined;
  const add = (path: string) => {
    if (!seen) return void files.push(path);
    const absolute = resolve(path);
    if (!seen.has(absolute)) {
      seen.add(absolute);
      files.push(path);
    }
  };
  for (const arg of args) {
    const info = await stat(arg).catch(() => undefined);
    if (info?.isDirectory()) {
      for (const name of await fileNames(arg, skip)) add(join(arg, name));
    } else if (info) {
      add(arg);
    } else if (GLOB_CHARS.test(basename(arg))) {
      const matched = await expandGlob(arg, skip);
      if (matched.length === 0)
        throw new EsignError('INPUT_NOT_FOUND', `No files match ${arg}.`, { hint: 'Check the pattern.' });
      matched.forEach(add);
    } else {
      throw new EsignError('INPUT_NOT_FOUND', `${arg} does not exist.`, { hint: 'Check the file name.' });
    }
  }
  if (files.length === 0) throw noFiles(purpose);
  return listOf(files.length, (index) => files[index]!);
}

function noFiles(purpose: InputPurpose): EsignError {
  return new EsignError('INPUT_NOT_FOUND', `No files to ${purpose}.`, { hint: 'Name files, directories or patterns.' });
}

function listOf<T>(
  length: number,
  at: (index: number) => T,
): { length: number; at(index: number): T; [Symbol.iterator](): Iterator<T> } {
  return {
    length,
    at,
    *[Symbol.iterator]() {
      for (let index = 0; index < length; index++) yield at(index);
    },
  };
}

/**
 * The names of a directory's regular files (and links to files), sorted, without hidden files or
 * esign's outputs. The listing is read entry by entry and tells a file from others, so a directory
 * of 100,000 costs neither a stat per file nor 100,000 entry objects held at once; only a link
 * needs a stat of what it leads to.
 */
async function fileNames(dir: string, skip: RegExp | undefined): Promise<string[]> {
  const names: string[] = [];
  const links: string[] = [];
  for await (const entry of await opendir(dir)) {
    if (entry.name.startsWith('.') || skip?.test(entry.name)) continue;
    if (entry.isFile()) names.push(entry.name);
    else if (entry.isSymbolicLink()) links.push(entry.name);
  }
  for (const link of links) if ((await stat(join(dir, link)).catch(() => undefined))?.isFile()) names.push(link);
  return names.sort();
}

async function expandGlob(pattern: string, skip: RegExp | undefined): Promise<string[]> {
  const dir = dirname(pattern);
  const regex = globToRegExp(basename(pattern));
  const names = await readdir(dir).catch(() => [] as string[]);
  const matched: string[] = [];
  for (const name of names.sort()) {
    if (name.startsWith('.') || !regex.test(name) || skip?.test(name)) continue;
    const path = dir === '.' && !pattern.startsWith('./') ? name : join(dir, name);
    if ((await stat(path)).isFile()) matched.push(path);
  }
  return matched;
}

export function globToRegExp(glob: string): RegExp {
  let source = '';
  for (const char of glob) {
    if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else if (char === '[' || char === ']') source += char;
    else source += char.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

/** The kind of job a file is signed as (the form `--format` names, else by its type). */
export function kindOf(path: string, format?: SignFormat): DocumentKind {
  return formForSigning(path, format).kind;
}

/** `contract.pdf` → `contract-signed.pdf`; other files → `NAME.p7s` (or `NAME.p7m`, `NAME.asics`) beside them (or in outputDir). */
export function defaultOutputFor(input: string, outputDir?: string, format?: SignFormat): string {
  return formForSigning(input, format).outputFor(input, outputDir);
}

/** A file to sign whose output and kind are derived when asked. */
class PlannedJob implements SignJob {
  constructor(
    readonly input: string,
    private readonly outputDir: string | undefined,
    private readonly format: SignFormat | undefined,
  ) {}

  get kind(): DocumentKind {
    return kindOf(this.input, this.format);
  }

  get output(): string {
    return defaultOutputFor(this.input, this.outputDir, this.format);
  }
}

/**
 * The files of a batch to sign, each job made when asked for (`at`): a batch of 100,000 holds
 * little more than the names of its files.
 */
export interface JobList extends Iterable<SignJob> {
  readonly length: number;
  at(index: number): SignJob;
  /** The jobs from `start` up to `end` (or the last), made now. */
  slice(start: number, end: number): SignJob[];
  /** The jobs but those at `indexes`. */
  without(indexes: ReadonlySet<number>): JobList;
}

export function planJobs(
  inputs: InputList | readonly string[],
  options: { output?: string; outputDir?: string; format?: SignFormat },
): JobList {
  if (options.output && inputs.length !== 1) {
    throw new EsignError('USAGE', `--output names one file, but there are ${inputs.length} inputs.`, {
      hint: 'Use --output-dir for several inputs.',
    });
  }
  const inputAt = (index: number): string => inputs.at(index)!;
  const jobs = jobList(
    inputs.length,
    options.output
      ? (index) => ({ input: inputAt(index), kind: kindOf(inputAt(index), options.format), output: options.output! })
      : (index) => new PlannedJob(inputAt(index), options.outputDir, options.format),
  );
  for (const job of jobs) {
    if (resolve(job.output) === resolve(job.input) && !formOfKind(job.kind).addsTo(job.input))
      throw new EsignError('USAGE', `The output ${job.output} would replace its input.`, {
        hint: 'esign never modifies inputs; choose another --output.',
      });
  }
  assertDistinctOutputs(jobs);
  return jobs;
}

/**
 * Refuses two inputs with one output. Outputs are first told apart by a 30-bit hash (a set of small
 * integers costs a tenth of a set of paths); only those whose hash repeats are compared as paths.
 */
/** A list of jobs made already (the one job of a form of one output for many inputs). */
export function jobsOf(jobs: readonly SignJob[]): JobList {
  return jobList(jobs.length, (index) => jobs[index]!);
}

function jobList(length: number, at: (index: number) => SignJob): JobList {
  return {
    ...listOf(length, at),
    slice: (start, end) =>
      Array.from({ length: Math.max(0, Math.min(end, length) - start) }, (_, index) => at(start + index)),
    without(indexes) {
      if (indexes.size === 0) return this;
      const kept = Int32Array.from({ length }, (_, index) => index).filter((index) => !indexes.has(index));
      return jobList(kept.length, (index) => at(kept[index]!));
    },
  };
}

function assertDistinctOutputs(jobs: Iterable<SignJob>): void {
  const hashes = new Set<number>();
  const repeated = new Set<number>();
  for (const job of jobs) {
    const hash = pathHash(resolve(job.output));
    if (hashes.has(hash)) repeated.add(hash);
    else hashes.add(hash);
  }
  if (repeated.size === 0) return;
  const outputs = new Set<string>();
  for (const job of jobs) {
    const output = resolve(job.output);
    if (!repeated.has(pathHash(output))) continue;
    if (outputs.has(output))
      throw new EsignError('USAGE', `Two inputs would be written to ${job.output}.`, {
        hint: 'Rename one input or sign them into different --output-dir.',
      });
    outputs.add(output);
  }
}

/** FNV-1a over the UTF-16 code units, kept to 30 bits (a small integer in V8). */
function pathHash(path: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < path.length; index++) hash = Math.imul(hash ^ path.charCodeAt(index), 0x01000193);
  return hash & 0x3fffffff;
}
