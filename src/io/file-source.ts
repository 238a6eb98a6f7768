import type { Stats } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { EsignError } from '../core/errors.js';
import type { ByteSource } from '../core/ports.js';

/**
 * Files up to this size are read whole at open, in one call: a one-page PDF is then parsed, hashed
 * and copied without a dozen more trips through the thread pool (in a batch of thousands, those
 * trips were most of the time).
 */
export const SMALL_FILE_BYTES = 256 * 1024;

/** A ByteSource over an open file: random-access reads, nothing buffered beyond what is asked (small files read whole). */
export class FileByteSource implements ByteSource {
  /** A small file's bytes, read at open. */
  private whole: Buffer | undefined;

  private constructor(
    private readonly handle: FileHandle,
    readonly size: number,
    readonly path: string,
    /** The file as it was when opened, before anything was read: what every later check compares with. */
    readonly openedStat: Stats,
  ) {}

  /** A small file's whole content as read at open (undefined for larger files). */
  get bytes(): Uint8Array | undefined {
    return this.whole;
  }

  static async open(path: string): Promise<FileByteSource> {
    let handle: FileHandle;
    try {
      handle = await open(path, 'r');
    } catch (error) {
      throw inputError(path, error);
    }
    const stat = await handle.stat();
    if (!stat.isFile()) {
      await handle.close();
      throw new EsignError('INPUT_UNREADABLE', `${path} is not a regular file.`, {
        hint: 'Name a file, or a directory to sign all files in it.',
      });
    }
    const source = new FileByteSource(handle, stat.size, path, stat);
    if (stat.size <= SMALL_FILE_BYTES) {
      try {
        source.whole = await source.readFromFile(0, stat.size);
      } catch (error) {
        await handle.close();
        throw inputError(path, error);
      }
    }
    return source;
  }

  async read(offset: number, length: number): Promise<Uint8Array> {
    const wanted = Math.max(0, Math.min(length, this.size - offset));
    if (this.whole) return this.whole.subarray(offset, offset + wanted);
    return this.readFromFile(offset, wanted);
  }

  /** Reads into `target` (as much of it as the file has left at `offset`); the part filled. */
  async readInto(target: Uint8Array, offset: number): Promise<Uint8Array> {
    const wanted = Math.max(0, Math.min(target.length, this.size - offset));
    if (this.whole) return this.whole.subarray(offset, offset + wanted);
    return target.subarray(0, await fill(this.handle, target, offset, wanted));
  }

  private readFromFile(offset: number, wanted: number): Promise<Buffer> {
    return readAt(this.handle, offset, wanted);
  }

  /**
   * Reads [start, end) in chunks of `chunkSize` (1 MiB or more keeps hashing near disk speed), the
   * next chunk read into a second buffer while the caller works on this one. A chunk is valid until
   * the caller asks for the next one.
   */
  async *chunks(start: number, end: number, chunkSize = 4 * 1024 * 1024): AsyncGenerator<Uint8Array> {
    if (this.whole) {
      if (start < end) yield this.whole.subarray(start, end);
      return;
    }
    const size = Math.min(chunkSize, Math.max(end - start, 1));
    let filling = Buffer.allocUnsafe(size);
    let spare = Buffer.allocUnsafe(size);
    const readInto = (buffer: Buffer, offset: number) =>
      this.handle.read(buffer, 0, Math.min(size, end - offset), offset);
    let pending = start < end ? readInto(filling, start) : undefined;
    try {
      for (let offset = start; pending;) {
        const { bytesRead } = await pending;
        pending = undefined;
        if (bytesRead === 0)
          throw new EsignError('INPUT_UNREADABLE', `${this.path} changed size while being read.`, {
            hint: 'Do not modify files while esign signs them.',
          });
        const chunk = filling.subarray(0, bytesRead);
        [filling, spare] = [spare, filling];
        offset += bytesRead;
        if (offset < end) pending = readInto(filling, offset);
        yield chunk;
      }
    } finally {
      // A caller that stops early must not leave a read in flight into a buffer (or a closed handle).
      await pending?.catch(() => undefined);
    }
  }

  /** fstat of the open file: which file this is, whatever its name now points to. */
  fileStat(): Promise<Stats> {
    return this.handle.stat();
  }

  async unchanged(): Promise<boolean> {
    return (
      sameFile(this.openedStat, await this.fileStat()) &&
      sameFile(this.openedStat, await stat(this.path).catch(() => undefined))
    );
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}

/** Reads `wanted` bytes at `offset` of an open file (fewer only at its end). */
export async function readAt(handle: FileHandle, offset: number, wanted: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(wanted);
  const done = await fill(handle, buffer, offset, wanted);
  return done === wanted ? buffer : buffer.subarray(0, done);
}

/** Reads `wanted` bytes at `offset` into the start of `buffer`; the count read (fewer only at the file's end). */
async function fill(handle: FileHandle, buffer: Uint8Array, offset: number, wanted: number): Promise<number> {
  let done = 0;
  while (done < wanted) {
    const { bytesRead } = await handle.read(buffer, done, wanted - done, offset + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return done;
}

export function inputError(path: string, error: unknown): EsignError {
  const code = (error as NodeJS.ErrnoException)?.code;
  if (code === 'ENOENT')
    return new EsignError('INPUT_NOT_FOUND', `${path} does not exist.`, { hint: 'Check the file name.', cause: error });
  return new EsignError('INPUT_UNREADABLE', `Could not read ${path}${code ? ` (${code})` : ''}.`, {
    hint: 'Check the file permissions.',
    cause: error,
  });
}

/**
 * The same file with the same content as far as the inode tells: ctime catches a write whose mtime
 * was set back, unless the link count changed too (a rename over its name or an unlink also changes
 * ctime, not the content).
 */
export function sameFile(a: Stats, b: Stats | undefined): boolean {
  if (b === undefined || a.dev !== b.dev || a.ino !== b.ino || a.size !== b.size || a.mtimeMs !== b.mtimeMs)
    return false;
  return a.ctimeMs === b.ctimeMs || a.nlink !== b.nlink;
}
