/**
 * Writing ASiC containers for signed documents, each document read once: streamed into the ZIP in
 * the temp output and hashed with the signature's digest in the same pass (the CRC-32 too, by the
 * ZIP writer), so the container holds exactly the bytes that were hashed. An ASiC-E starts its
 * container at prepare (`startContainer`: the documents) and finishes it at complete (`finish`: its
 * META-INF entries and the central directory); the whole container goes through a temp file and
 * is renamed into place when complete.
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
  type SignOptions,
} from '../../../core/documents.js';
import { ChunkPool } from '../../chunk-pool.js';
import { startZip, type ZipWriting } from '../../zip-container.js';

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

/** A file to put in a container, not hashed yet: from `path`, or from `chunks` (an entry of a container signed again). */
export type FileToWrite = Omit<SignedFile, 'digest' | 'digestValue' | 'size'>;

/** Where a container goes and what it starts with. */
export interface ContainerOutput {
  output: string;
  overwrite: boolean;
  mimetype: string;
  mtime: Date;
}

export interface ContainerToWrite extends ContainerOutput {
  documents: readonly SignedFile[];
  /** META-INF entries, written after the documents. */
  metadata: readonly { name: string; bytes: Uint8Array }[];
}

/** A container whose documents are in its temp output: what `finish` appends completes it. */
export interface ContainerWriting {
  /** The temp output (the pipeline aborts it when the job fails). */
  readonly output: OutputFile;
  /** The documents as written, each with its digest (those left out are not here). */
  readonly documents: readonly SignedFile[];
  /** Appends the META-INF entries and the central directory, and commits the output (one fsync). */
  finish(metadata: readonly { name: string; bytes: Uint8Array }[]): Promise<{ bytes: number; sha256: string }>;
  /** Removes the temp output. */
  abort(): Promise<void>;
}

/**
 * The bytes of `source` from its first chunk (read already) on, closing it at the end; read into
 * the pool's buffers where the source can (the ZIP writer gives each back once it is written).
 */
async function* restOf(source: DocumentSource, first: Uint8Array, pool: ChunkPool): AsyncIterable<Uint8Array> {
  try {
    if (source.size > 0) yield first;
    for (let offset = READ_CHUNK_BYTES; offset < source.size; offset += READ_CHUNK_BYTES)
      yield source.readInto
        ? await pool.read((target) => source.readInto!(target, offset))
        : await source.read(offset, READ_CHUNK_BYTES);
  } finally {
    await source.close();
  }
}

/**
 * Opens a file to put in, with its first chunk: deflated or stored as those first bytes say
 * (`worthDeflating`), not as its name does, unless `compress` says already.
 */
async function opened(
  files: DocumentFiles,
  path: string,
  compress: boolean | undefined,
): Promise<{ source: DocumentSource; first: Uint8Array; compress: boolean }> {
  const source = await files.open(path);
  try {
    const first = await source.read(0, READ_CHUNK_BYTES);
    return { source, first, compress: compress ?? worthDeflating(first.subarray(0, SAMPLE_BYTES)) };
  } catch (error) {
    await source.close();
    throw error;
  }
}

/**
 * Starts a container in a temp output: `mimetype`, then each document streamed in and hashed with
 * `digest` as it is written (one read of each). A file that cannot be opened is handed to
 * `leaveOut` and left out (without it, the start fails); a file that fails once its entry has begun
 * fails the container. A file is opened only when its turn comes: a container of thousands of files
 * holds one handle at a time.
 */
export async function startContainer(
  files: DocumentFiles,
  container: ContainerOutput,
  documents: readonly FileToWrite[],
  digest: DigestName,
  leaveOut?: SignOptions['leaveOut'],
): Promise<ContainerWriting> {
  const output = await files.createOutput(container.output, { overwrite: container.overwrite });
  try {
    const outputHash = createHash('sha256');
    const pool = new ChunkPool();
    const zip = await startZip(output, container.mimetype, container.mtime, {
      onChunk: (chunk) => outputHash.update(chunk),
      written: (chunk) => pool.written(chunk),
    });
    const written: SignedFile[] = [];
    for (const document of documents) {
      const hash = createHash(digest);
      if (document.chunks) {
        await zip.add({ name: document.name, compress: document.compress ?? true, hash, chunks: document.chunks() });
        written.push({ ...document, digest, digestValue: new Uint8Array(hash.digest()) });
        continue;
      }
      let file: Awaited<ReturnType<typeof opened>>;
      try {
        file = await opened(files, document.path, document.compress);
      } catch (error) {
        if (!leaveOut) throw error;
        leaveOut(document.path, error);
        continue;
      }
      const { size } = file.source;
      await zip.add({
        name: document.name,
        size,
        compress: file.compress,
        hash,
        chunks: restOf(file.source, file.first, pool),
      });
      written.push({ ...document, digest, digestValue: new Uint8Array(hash.digest()), size });
    }
    await zip.flushed();
    // A batch may hold many outputs between prepare and complete: the handle is let go meanwhile.
    await output.suspend();
    return {
      output,
      documents: written,
      finish: (metadata) => finished(output, zip, metadata, outputHash),
      abort: () => output.abort(),
    };
  } catch (error) {
    await output.abort();
    throw error;
  }
}

/** Appends the META-INF entries and the central directory, and commits. */
async function finished(
  output: OutputFile,
  zip: ZipWriting,
  metadata: readonly { name: string; bytes: Uint8Array }[],
  outputHash: ReturnType<typeof createHash>,
): Promise<{ bytes: number; sha256: string }> {
  try {
    for (const entry of metadata) await zip.add({ ...entry, compress: false });
    const bytes = await zip.end();
    await output.commit([]);
    return { bytes, sha256: outputHash.digest('hex') };
  } catch (error) {
    await output.abort();
    throw error;
  }
}

/**
 * Writes a whole container at once (ASiC-S): its documents, read again and hashed again, must give
 * the digests they were signed with (the container holds exactly the bytes that were signed).
 */
export async function writeContainer(
  files: DocumentFiles,
  container: ContainerToWrite,
  registerOutput: (output: OutputFile) => void,
): Promise<{ bytes: number; sha256: string }> {
  // A container is signed by one credential: its documents share one digest.
  const digest = container.documents[0]?.digest ?? 'sha256';
  const documents = container.documents.map(({ path, name, chunks, compress }) => ({ path, name, chunks, compress }));
  const writing = await startContainer(files, container, documents, digest);
  registerOutput(writing.output);
  try {
    for (const [index, document] of container.documents.entries()) {
      const again = writing.documents[index]!;
      if (again.size !== undefined && document.size !== undefined && again.size !== document.size)
        throw changedWhileSigning(document.path);
      if (!Buffer.from(again.digestValue).equals(document.digestValue)) throw changedWhileSigning(document.path);
    }
  } catch (error) {
    await writing.abort();
    throw error;
  }
  return writing.finish(container.metadata);
}
