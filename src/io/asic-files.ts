/**
 * Writing ASiC containers for signed documents: each document is streamed into the ZIP (read a
 * second time, after signing, and hashed again: the container holds exactly the bytes that were
 * signed), the whole container goes through a temp file and is renamed into place when complete.
 */
import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import { ASIC_E_MIMETYPE, ASIC_S_MIMETYPE, worthCompressing } from '../core/forms/shared/asic-container-rules.js';
import type { DigestName } from '../core/cms/algorithms.js';
import type { AsicSContents } from '../core/forms/asic-s/signed-already.js';
import type { ByteSource } from '../core/ports.js';
import {
  changedWhileSigning,
  READ_CHUNK_BYTES,
  type AsicSToWrite,
  type DocumentFiles,
  type DocumentSource,
  type OutputFile,
} from '../core/sign-workflow.js';
import { openContainer, writeZip, type EntryToWrite } from './zip-container.js';

/** A file to put in a container, and the digest it had when it was signed. */
export interface SignedFile {
  path: string;
  /** Its name in the container. */
  name: string;
  digest: DigestName;
  digestValue: Uint8Array;
  /** Its size when it was signed (a different size fails the entry, as a changed file). */
  size?: number;
  /** Its bytes from elsewhere than `path` (an entry of the container a signature is added to). */
  chunks?: () => AsyncIterable<Uint8Array>;
  compress?: boolean;
}

interface ContainerToWrite {
  output: string;
  overwrite: boolean;
  mimetype: string;
  documents: readonly SignedFile[];
  /** META-INF entries, written after the documents. */
  metadata: readonly { name: string; bytes: Uint8Array }[];
  mtime: Date;
}

/** An ASiC-S: `mimetype`, the document under its own name, `META-INF/signature.p7s`. */
export async function writeAsicS(
  files: DocumentFiles,
  job: AsicSToWrite,
  registerOutput: (output: OutputFile) => void,
): Promise<{ bytes: number; sha256: string }> {
  const document = { path: job.input, digest: job.digest, digestValue: job.contentDigest };
  return writeOneDocument(files, job, document, { name: 'META-INF/signature.p7s', bytes: job.cms }, registerOutput);
}

/** An ASiC-S with a timestamp instead of a signature: `mimetype`, the document, `META-INF/timestamp.tst`. */
export async function writeTimestampedAsicS(
  files: DocumentFiles,
  job: { input: string; output: string; token: Uint8Array; sha256: Uint8Array; overwrite: boolean; mtime: Date },
): Promise<{ bytes: number; sha256: string }> {
  const document = { path: job.input, digest: 'sha256' as const, digestValue: job.sha256 };
  return writeOneDocument(files, job, document, { name: 'META-INF/timestamp.tst', bytes: job.token }, () => undefined);
}

async function writeOneDocument(
  files: DocumentFiles,
  job: { output: string; overwrite: boolean; mtime: Date },
  document: Omit<SignedFile, 'name'>,
  metadata: { name: string; bytes: Uint8Array },
  registerOutput: (output: OutputFile) => void,
): Promise<{ bytes: number; sha256: string }> {
  return writeContainer(
    files,
    {
      output: job.output,
      overwrite: job.overwrite,
      mimetype: ASIC_S_MIMETYPE,
      documents: [{ ...document, name: basename(document.path) }],
      metadata: [metadata],
      mtime: job.mtime,
    },
    registerOutput,
  );
}

/** An ASiC-E: `mimetype`, the documents under their names, then the manifests and signatures. */
export async function writeAsicE(
  files: DocumentFiles,
  container: Omit<ContainerToWrite, 'mimetype'>,
): Promise<{ bytes: number; sha256: string }> {
  return writeContainer(files, { ...container, mimetype: ASIC_E_MIMETYPE }, () => undefined);
}

async function writeContainer(
  files: DocumentFiles,
  container: ContainerToWrite,
  registerOutput: (output: OutputFile) => void,
): Promise<{ bytes: number; sha256: string }> {
  const output = await files.createOutput(container.output, { overwrite: container.overwrite });
  registerOutput(output);
  const sources: DocumentSource[] = [];
  try {
    const outputHash = createHash('sha256');
    const checks: Array<() => void> = [];
    const entries: EntryToWrite[] = [];
    for (const document of container.documents) {
      const hash = createHash(document.digest);
      entries.push({
        name: document.name,
        size: document.size,
        compress: document.compress ?? worthCompressing(document.name),
        hash,
        chunks:
          document.chunks?.() ??
          (async function* () {
            // Opened when its turn comes: a container of thousands of files holds one handle at a time.
            const source = await files.open(document.path);
            sources.push(source);
            try {
              for (let offset = 0; offset < source.size; offset += READ_CHUNK_BYTES)
                yield await source.read(offset, READ_CHUNK_BYTES);
            } finally {
              await source.close();
            }
          })(),
      });
      checks.push(() => {
        if (!Buffer.from(hash.digest()).equals(document.digestValue)) throw changedWhileSigning(document.path);
      });
    }
    for (const entry of container.metadata) entries.push({ ...entry, compress: false });
    const bytes = await writeZip(output, container.mimetype, entries, container.mtime, (chunk) =>
      outputHash.update(chunk),
    );
    for (const check of checks) check();
    await output.commit([]);
    return { bytes, sha256: outputHash.digest('hex') };
  } catch (error) {
    await output.abort();
    throw error;
  } finally {
    await Promise.all(sources.map((source) => source.close().catch(() => undefined)));
  }
}

/** An ASiC-S output as `--skip-existing` reads it: its documents and `META-INF/signature.p7s`, if there. */
export async function readAsicS(source: ByteSource): Promise<AsicSContents> {
  const container = await openContainer(source);
  const names = container.entries.map((entry) => entry.name);
  try {
    return {
      documents: names.filter((name) => name !== 'mimetype' && !name.startsWith('META-INF/') && !name.endsWith('/')),
      read: (name) => container.read(name),
      signature: names.includes('META-INF/signature.p7s')
        ? await container.readWhole('META-INF/signature.p7s', 1024 * 1024)
        : undefined,
      close: async () => container.close(),
    };
  } catch (error) {
    container.close();
    throw error;
  }
}
