import { chmod, copyFile, mkdir, open, stat, type FileHandle } from 'node:fs/promises';
import { EsignError } from '../core/errors.js';
import {
  changedWhileSigning,
  READ_CHUNK_BYTES,
  type DocumentFiles,
  type DocumentSource,
  type HashSink,
  type OutputFile,
} from '../core/documents.js';
import { dirname, resolve } from 'node:path';
import { assertAbsent, outputError, SharedTempDir, TempPath, writeBytesAtomically } from './atomic-write.js';
import type { ByteSource } from '../core/ports.js';
import { FileByteSource, inputError, readAt, sameFile, SMALL_FILE_BYTES } from './file-source.js';

/** DocumentFiles over the file system: inputs opened read-only, outputs through temp files. */
export const fileSystemDocuments: DocumentFiles = {
  open: (path) => FileByteSource.open(path) as Promise<DocumentSource>,
  createOutput: (path, { overwrite }) => TempOutput.create(path, overwrite),
};

/**
 * DocumentFiles for a batch: the temp outputs of each output directory share one hidden directory,
 * removed by `finish` (which the batch calls once every output is committed or aborted).
 */
export function batchDocuments(): DocumentFiles & { finish(): Promise<void> } {
  const shared = new Map<string, SharedTempDir>();
  const dirFor = (target: string): SharedTempDir => {
    const dir = resolve(dirname(target));
    let temp = shared.get(dir);
    if (!temp) {
      temp = SharedTempDir.create(target);
      shared.set(dir, temp);
    }
    return temp;
  };
  return {
    open: fileSystemDocuments.open,
    createOutput: (path, { overwrite }) => TempOutput.create(path, overwrite, dirFor(path)),
    finish: async () => {
      await Promise.all([...shared.values()].map((temp) => temp.remove()));
      shared.clear();
    },
  };
}

/**
 * Writes `chunks` to a new file at `path` (never over an existing one) through a temp file, renamed
 * into place only once all is written and `stillTrue` passes (it throws to abandon the output).
 */
export async function writeChunksAtomically(
  path: string,
  chunks: AsyncIterable<Uint8Array>,
  stillTrue: () => Promise<void>,
): Promise<void> {
  const output = await fileSystemDocuments.createOutput(path, { overwrite: false });
  try {
    for await (const chunk of chunks) await output.write(chunk);
    await stillTrue();
    await output.commit([]);
  } catch (error) {
    await output.abort();
    throw error;
  }
}

/** Throws when the file `source` reads has changed since it was opened. */
export async function assertUnchanged(source: DocumentSource): Promise<void> {
  if (!(await source.unchanged()))
    throw new EsignError('INPUT_UNREADABLE', `${source.path} changed while esign was reading it.`, {
      hint: 'Let whatever writes to it finish, then run esign again.',
    });
}

export async function writeDetachedSignature(path: string, bytes: Uint8Array, overwrite: boolean): Promise<void> {
  await writeBytesAtomically(path, bytes, { overwrite });
}

class TempOutput implements OutputFile {
  private handle: FileHandle | undefined;
  private finished = false;
  private earlySync: Promise<void> | undefined;

  private constructor(
    private readonly target: string,
    private readonly tempPath: TempPath,
    private readonly overwrite: boolean,
  ) {}

  static async create(target: string, overwrite: boolean, shared?: SharedTempDir): Promise<TempOutput> {
    if (!overwrite) await assertAbsent(target);
    const { temp, handle } = await TempPath.open(target, 0o644, shared);
    const output = new TempOutput(target, temp, overwrite);
    output.handle = handle;
    return output;
  }

  /**
   * Two things at once, on two cores: the kernel copies the input into the temp file by name
   * (copy_file_range/sendfile, as `cp` does: half the memory copies of a read-and-write loop), while
   * the open handle is read for the hash. The bytes hashed are the bytes copied because the file
   * cannot have changed meanwhile: the name leads to the opened file before and after the copy, and
   * its size, mtime and ctime (which no one can set back) are what they were when it was opened to
   * be parsed.
   * When the name leads elsewhere (an editor's atomic save, say), the copy goes through the handle.
   */
  async copyFrom(source: DocumentSource, hash: HashSink): Promise<void> {
    if (source instanceof FileByteSource && source.bytes && source.bytes.length === source.size) {
      // A small file, read whole when it was opened: what was read is what the file held if the inode says it is unchanged since.
      if (!sameFile(source.openedStat, await source.fileStat())) throw changedWhileSigning(source.path);
      hash.update(source.bytes);
      return this.write(source.bytes);
    }
    await this.suspend();
    if (!(source instanceof FileByteSource)) return this.copyThroughHandle(source, hash);
    const opened = source.openedStat;
    if (!sameFile(opened, await source.fileStat())) throw changedWhileSigning(source.path);
    const nameLeadsToOpened = async (): Promise<boolean> =>
      sameFile(opened, await stat(source.path).catch(() => undefined));
    if (!(await nameLeadsToOpened())) return this.copyThroughHandle(source, hash);
    // The copy starts its flush to disk as soon as the kernel has made it, while the hash still runs
    // and then while the signature is made; commit then only waits for what is left.
    const copying = this.kernelCopy(source).then((copied) => {
      if (copied) this.startEarlySync();
      return copied;
    });
    try {
      for await (const chunk of source.chunks(0, source.size)) hash.update(chunk);
    } catch (error) {
      await copying.catch(() => undefined);
      throw error instanceof EsignError ? error : inputError(source.path, error);
    }
    if (!(await copying) || !(await nameLeadsToOpened())) {
      // The kernel's copy is not of the file hashed: written again through the handle, and flushed after that.
      await this.earlySync?.catch(() => undefined);
      this.earlySync = undefined;
      await this.copyThroughHandle(source);
      this.startEarlySync();
    }
    if (!sameFile(opened, await source.fileStat())) throw changedWhileSigning(source.path);
  }

  private startEarlySync(): void {
    this.earlySync = this.syncCopy();
    // Handled here so that a failure waits for commit (which reports it) instead of crashing the run.
    this.earlySync.catch(() => undefined);
  }

  /** copyFile onto the temp file, keeping the temp file's mode (copyFile copies the input's). */
  private async kernelCopy(source: DocumentSource): Promise<boolean> {
    try {
      const { mode } = await stat(this.tempPath.file);
      await copyFile(source.path, this.tempPath.file);
      await chmod(this.tempPath.file, mode & 0o777).catch((error: NodeJS.ErrnoException) => {
        // Some network file systems refuse chmod; the mode is then what the share gives.
        if (error.code !== 'EPERM' && error.code !== 'ENOTSUP') throw error;
      });
      return true;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR') return false; // the name, not the file we hold
      throw outputError(this.target, error);
    }
  }

  /** The read-and-write loop through the open handle: every chunk into the temp file (and the hash, if given). */
  private async copyThroughHandle(source: DocumentSource, hash?: HashSink): Promise<void> {
    this.handle = await open(this.tempPath.file, 'w').catch((error: unknown) => {
      throw outputError(this.target, error);
    });
    let pendingWrite: Promise<void> = Promise.resolve();
    for (let offset = 0; offset < source.size; offset += READ_CHUNK_BYTES) {
      const chunk = await source.read(offset, READ_CHUNK_BYTES).catch((error: unknown) => {
        throw inputError(source.path, error);
      });
      hash?.update(chunk);
      await pendingWrite;
      pendingWrite = this.write(chunk);
    }
    await pendingWrite;
  }

  /** fsync of the copied original on its own handle; commit then only waits for what is left. */
  private async syncCopy(): Promise<void> {
    // Writable: Windows refuses to flush through a read-only handle.
    const handle = await open(this.tempPath.file, 'r+');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }

  async write(bytes: Uint8Array | readonly Uint8Array[]): Promise<void> {
    const pieces = bytes instanceof Uint8Array ? [bytes] : bytes;
    this.handle ??= await open(this.tempPath.file, 'a');
    try {
      let done = pieces.length > 1 ? (await this.handle.writev(pieces as Uint8Array[])).bytesWritten : 0;
      // A write can be short (a disk filling up takes what fits, then fails the next one): write the rest until it is all there.
      for (const piece of pieces) {
        const skip = Math.min(done, piece.length);
        done -= skip;
        for (let written = skip; written < piece.length;) {
          const { bytesWritten } = await this.handle.write(piece, written, piece.length - written);
          if (bytesWritten === 0) throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
          written += bytesWritten;
        }
      }
    } catch (error) {
      throw outputError(this.target, error);
    }
  }

  /**
   * The first `size` bytes written (the original), read back through the handle that commit then
   * appends with: a long-term extension reads the document from the output it completes, not from
   * the input opened again. A small one is read whole, in one call.
   */
  async written(size: number): Promise<ByteSource> {
    await this.suspend();
    const handle = await open(this.tempPath.file, 'a+').catch((error: unknown) => {
      throw outputError(this.target, error);
    });
    this.handle = handle;
    const read = async (offset: number, length: number): Promise<Uint8Array> =>
      readAt(handle, offset, Math.max(0, Math.min(length, size - offset)));
    if (size > SMALL_FILE_BYTES) return { size, read };
    const whole = await read(0, size);
    if (whole.length !== size)
      throw outputError(this.target, new Error(`the temp output holds ${whole.length} bytes, not ${size}`));
    return { size, read: async (offset, length) => whole.subarray(offset, Math.min(offset + length, size)) };
  }

  async suspend(): Promise<void> {
    await this.handle?.close();
    this.handle = undefined;
  }

  async commit(tail: Uint8Array | readonly Uint8Array[]): Promise<void> {
    try {
      await this.earlySync;
      await this.write(tail);
      await this.handle?.sync();
      await this.suspend();
      if (!this.overwrite) await assertAbsent(this.target);
      await this.tempPath.moveTo(this.target);
      this.finished = true;
    } catch (error) {
      await this.abort();
      throw error instanceof EsignError ? error : outputError(this.target, error);
    }
  }

  async abort(): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    await this.earlySync?.catch(() => undefined);
    await this.handle?.close().catch(() => undefined);
    this.handle = undefined;
    await this.tempPath.discard();
  }
}

/** `--output-dir` is created when missing, as `mkdir -p` would. */
export async function createOutputDir(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true });
  } catch (error) {
    throw new EsignError(
      'OUTPUT_WRITE_FAILED',
      `Could not create the output directory ${dir} (${(error as NodeJS.ErrnoException).code ?? 'error'}).`,
      { hint: 'Check the path and its permissions.', cause: error },
    );
  }
}
