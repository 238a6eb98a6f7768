import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { EsignError } from '../core/errors.js';
import type { DocumentKind, SignJob } from '../core/sign-workflow.js';

const GLOB_CHARS = /[*?[]/;
/** Files esign itself writes; a directory or glob never picks them up as inputs. */
const OWN_OUTPUTS = /(-signed\.pdf|\.p7s|\.tsr)$/i;

/**
 * Expands FILE, DIR and GLOB arguments into files, in argument order, without duplicates.
 * A directory contributes its regular files (not hidden, not esign outputs, not recursive).
 */
export async function expandInputs(args: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  const seen = new Set<string>();
  const add = (path: string) => {
    const absolute = resolve(path);
    if (!seen.has(absolute)) {
      seen.add(absolute);
      files.push(path);
    }
  };
  for (const arg of args) {
    const info = await stat(arg).catch(() => undefined);
    if (info?.isDirectory()) {
      for (const name of (await readdir(arg)).sort()) {
        if (name.startsWith('.') || OWN_OUTPUTS.test(name)) continue;
        const path = join(arg, name);
        if ((await stat(path)).isFile()) add(path);
      }
    } else if (info) {
      add(arg);
    } else if (GLOB_CHARS.test(basename(arg))) {
      const matched = await expandGlob(arg);
      if (matched.length === 0) throw new EsignError('INPUT_NOT_FOUND', `No files match ${arg}.`, { hint: 'Check the pattern.' });
      matched.forEach(add);
    } else {
      throw new EsignError('INPUT_NOT_FOUND', `${arg} does not exist.`, { hint: 'Check the file name.' });
    }
  }
  if (files.length === 0) throw new EsignError('INPUT_NOT_FOUND', 'No files to sign.', { hint: 'Name files, directories or patterns.' });
  return files;
}

async function expandGlob(pattern: string): Promise<string[]> {
  const dir = dirname(pattern);
  const regex = globToRegExp(basename(pattern));
  const names = await readdir(dir).catch(() => [] as string[]);
  const matched: string[] = [];
  for (const name of names.sort()) {
    if (name.startsWith('.') || !regex.test(name) || OWN_OUTPUTS.test(name)) continue;
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

export function kindOf(path: string): DocumentKind {
  return extname(path).toLowerCase() === '.pdf' ? 'pdf' : 'cades';
}

/** `contract.pdf` → `contract-signed.pdf`; other files → `NAME.p7s` beside them (or in outputDir). */
export function defaultOutputFor(input: string, outputDir?: string): string {
  const dir = outputDir ?? dirname(input);
  const name = basename(input);
  if (kindOf(input) === 'pdf') return join(dir, `${name.slice(0, -extname(name).length)}-signed${extname(name)}`);
  return join(dir, `${name}.p7s`);
}

export function planJobs(inputs: readonly string[], options: { output?: string; outputDir?: string }): SignJob[] {
  if (options.output && inputs.length !== 1) {
    throw new EsignError('USAGE', `--output names one file, but there are ${inputs.length} inputs.`, { hint: 'Use --output-dir for several inputs.' });
  }
  const jobs = inputs.map((input) => ({ input, kind: kindOf(input), output: options.output ?? defaultOutputFor(input, options.outputDir) }));
  const outputs = new Set<string>();
  for (const job of jobs) {
    const output = resolve(job.output);
    if (output === resolve(job.input)) throw new EsignError('USAGE', `The output ${job.output} would replace its input.`, { hint: 'esign never modifies inputs; choose another --output.' });
    if (outputs.has(output)) throw new EsignError('USAGE', `Two inputs would be written to ${job.output}.`, { hint: 'Rename one input or sign them into different --output-dir.' });
    outputs.add(output);
  }
  return jobs;
}
