/**
 * Writing ASiC containers for signed documents: each document is streamed into the ZIP (read a
 * second time, after signing, and hashed again: the container holds exactly the bytes that were
 * signed), the whole container goes through a temp file and is renamed into place when complete.
 */
import { createHash } from 'node:crypto';
import { SAMPLE_BYTES, worthDeflating } from '../../../core/forms/shared/compressible.js';
import type { DigestName } from '../../../core/cms/algorithms.js';
import {
  changedWhileSigning,
  READ_CHUNK_BYTES,
  type DocumentFiles,
  type DocumentSource,
  type OutputFile,
} from '../../../core/documents.js';
import { writeZip, type EntryToWrite } from '../../zip-container.js';

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

export interface ContainerToWrite {
  output: string;
  overwrite: boolean;
  mimetype: string;
  documents: readonly SignedFile[];
  /** META-INF entries, written after the documents. */
  metadata: readonly { name: string; bytes: Uint8Array }[];
  mtime: Date;
}

export async function writeContainer(
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
      /** The document's bytes from `source`, the first chunk read already. */
      const rest = async function* (source: DocumentSource, first: Uint8Array): AsyncIterable<Uint8Array> {
        try {
          if (source.size > 0) yield first;
          for (let offset = READ_CHUNK_BYTES; offset < source.size; offset += READ_CHUNK_BYTES)
            yield await source.read(offset, READ_CHUNK_BYTES);
        } finally {
          await source.close();
        }
      };
      // Opened when its turn comes: a container of thousands of files holds one handle at a time.
      const open = async (): Promise<{ source: DocumentSource; first: Uint8Array }> => {
        const source = await files.open(document.path);
        sources.push(source);
        return { source, first: await source.read(0, READ_CHUNK_BYTES) };
      };
      const known = document.compress;
      entries.push(
        document.chunks
          ? { name: document.name, size: document.size, compress: known ?? true, hash, chunks: document.chunks() }
          : known !== undefined
            ? {
                name: document.name,
                size: document.size,
                compress: known,
                hash,
                chunks: (async function* () {
                  const { source, first } = await open();
                  yield* rest(source, first);
                })(),
              }
            : {
                name: document.name,
                size: document.size,
                hash,
                // Deflated or stored as its first bytes say (`worthDeflating`), not as its name does.
                async open() {
                  const { source, first } = await open();
                  return { compress: worthDeflating(first.subarray(0, SAMPLE_BYTES)), chunks: rest(source, first) };
                },
              },
      );
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
