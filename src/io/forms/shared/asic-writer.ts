/**
 * Writing ASiC containers for signed documents: each document is streamed into the ZIP (read a
 * second time, after signing, and hashed again: the container holds exactly the bytes that were
 * signed), the whole container goes through a temp file and is renamed into place when complete.
 */
import { createHash } from 'node:crypto';
import { worthCompressing } from '../../../core/forms/shared/asic-container-rules.js';
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
