/**
 * The files of an ASiC-E to sign: the inputs walked into container names, the container's name, a
 * container given to add a signature to (its documents and META-INF entries), each file hashed.
 */
import { createHash } from 'node:crypto';
import { opendir, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { ASIC_E_MIMETYPE, checkMimetype, unsafeName } from '../../../core/forms/shared/asic-container-rules.js';
import type { DigestName } from '../../../core/cms/algorithms.js';
import { EsignError, naming } from '../../../core/errors.js';
import { hashSource } from '../../../core/documents.js';
import { fileSystemDocuments } from '../../document-files.js';
import { FileByteSource } from '../../file-source.js';
import { openContainer } from '../../zip-container.js';
import type { SignedFile } from '../shared/asic-writer.js';

/** Where `-o` and `--output-dir` put the container. */
export interface OutputOptions {
  output?: string;
  outputDir?: string;
}

export /** The container a signature is added to: its documents and META-INF entries, read from the open ZIP. */
interface ExistingContainer {
  documents: { name: string; compress: boolean }[];
  metadata: { name: string; bytes: Uint8Array }[];
  read(name: string): AsyncIterable<Uint8Array>;
  /** The number of the new signature: one more than the highest there. */
  number: number;
  close(): Promise<void>;
}

/**
 * Opens a container to add a signature to: its layout checked as verify checks it. The earlier
 * manifests and signatures are carried over byte for byte, so their signatures stay valid.
 */
export async function openExisting(path: string): Promise<ExistingContainer> {
  const source = await FileByteSource.open(path);
  try {
    checkMimetype(await source.read(0, 30 + 8 + 64), ASIC_E_MIMETYPE);
    const container = await openContainer(source);
    const metadata: ExistingContainer['metadata'] = [];
    const documents: ExistingContainer['documents'] = [];
    let highest = 0;
    for (const entry of container.entries) {
      if (entry.name === 'mimetype' || entry.name.endsWith('/')) continue;
      if (!entry.name.startsWith('META-INF/')) {
        documents.push({ name: entry.name, compress: entry.compressionMethod !== 0 });
        continue;
      }
      metadata.push({ name: entry.name, bytes: await container.readWhole(entry.name) });
      const number = /^META-INF\/signature(\d+)\.p7s$/i.exec(entry.name)?.[1];
      if (number) highest = Math.max(highest, Number(number));
    }
    return {
      documents,
      metadata,
      read: (name) => container.read(name),
      number: highest + 1,
      close: async () => {
        container.close();
        await source.close();
      },
    };
  } catch (error) {
    await source.close();
    throw naming(path, error);
  }
}

export async function hashedFile(file: { path: string; name: string }, digest: DigestName): Promise<SignedFile> {
  const source = await fileSystemDocuments.open(file.path);
  try {
    const hash = createHash(digest);
    await hashSource(source, hash);
    return { ...file, digest, digestValue: new Uint8Array(hash.digest()), size: source.size };
  } finally {
    await source.close();
  }
}

/** `--output-dir DIR` places the container: `-o NAME` inside it; without `-o`, a container signed again keeps its name there. */
export function placed(name: string, outputDir: string | undefined): string {
  if (!outputDir) return name;
  if (isAbsolute(name))
    throw new EsignError('USAGE', `--output ${name} is a full path, and --output-dir would put it elsewhere.`, {
      hint: 'Give -o a name inside --output-dir, or leave out --output-dir.',
    });
  return join(outputDir, name);
}

export function addedOutputFor(container: string, options: OutputOptions): string {
  if (options.output) return placed(options.output, options.outputDir);
  return options.outputDir ? join(options.outputDir, basename(container)) : container;
}

export function outputFor(args: string[], options: OutputOptions): string {
  if (options.output) return placed(options.output, options.outputDir);
  if (args.length === 1) return join(options.outputDir ?? dirname(args[0]!), `${basename(resolve(args[0]!))}.asice`);
  throw new EsignError('USAGE', 'An ASiC-E of several inputs needs a name.', {
    hint: 'Add -o bundle.asice.',
  });
}

/**
 * The files of the container, in argument order: a file under its own name, a directory's files
 * (recursively, hidden ones left out) under names relative to the directory's parent. Two files
 * of one name, or the output itself, are refused.
 */
export async function containerFiles(args: string[], output: string): Promise<{ path: string; name: string }[]> {
  const files: { path: string; name: string }[] = [];
  const walk = async (dir: string, base: string): Promise<void> => {
    const entries = [];
    for await (const entry of await opendir(dir)) entries.push(entry);
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path, base);
      else if (entry.isFile() || (entry.isSymbolicLink() && (await stat(path).catch(() => undefined))?.isFile()))
        files.push({ path, name: relative(base, path).split('\\').join('/') });
    }
  };
  for (const arg of args) {
    const info = await stat(arg).catch(() => undefined);
    if (!info) throw new EsignError('INPUT_NOT_FOUND', `${arg} does not exist.`, { hint: 'Check the file name.' });
    if (info.isDirectory()) await walk(arg, dirname(resolve(arg)));
    else files.push({ path: arg, name: basename(arg) });
  }
  if (files.length === 0)
    throw new EsignError('INPUT_NOT_FOUND', 'No files to put in the container.', {
      hint: 'Name files or directories.',
    });
  const names = new Map<string, string>();
  for (const file of files) {
    if (resolve(file.path) === resolve(output))
      throw new EsignError('USAGE', `The output ${output} would be inside itself.`, {
        hint: 'Write the container outside the directories it holds.',
      });
    const reason = unsafeName(file.name) ?? (file.name.startsWith('META-INF/') ? 'the reserved META-INF/' : undefined);
    if (reason) throw new EsignError('USAGE', `${file.path} cannot go in a container: its name has ${reason}.`);
    const key = file.name.toLowerCase();
    const other = names.get(key);
    if (other !== undefined)
      throw new EsignError('USAGE', `${other} and ${file.path} would both be ${file.name} in the container.`, {
        hint: 'Rename one, or put them in different directories.',
      });
    names.set(key, file.path);
  }
  return files;
}
