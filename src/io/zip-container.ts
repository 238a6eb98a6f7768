/**
 * ZIP containers (ASiC) through yauzl and yazl, loaded only when a container is read or written:
 * a PDF sign and --help never load them. Reading goes through a ByteSource (a file, or bytes in a
 * test), entries streamed; every entry is checked (container-rules.ts) before any is read.
 * Writing streams each entry into an OutputFile (its temp file), nothing held whole.
 */
import { Readable } from 'node:stream';
import type { Entry, ZipFile } from 'yauzl';
import type * as Yazl from 'yazl';
import {
  checkEntries,
  invalid,
  type ContainerEntry,
  type ContainerLimits,
} from '../core/forms/shared/asic-container-rules.js';
import { EsignError } from '../core/errors.js';
import type { ByteSource } from '../core/ports.js';
import { READ_CHUNK_BYTES, type HashSink, type OutputFile } from '../core/documents.js';

export interface OpenContainer {
  readonly entries: readonly ContainerEntry[];
  /** The entry's uncompressed bytes, chunk by chunk (sizes and CRC checked by yauzl as it goes). */
  read(name: string): AsyncIterable<Uint8Array>;
  /** A small entry whole (a signature, a manifest); refused above `maxBytes`. */
  readWhole(name: string, maxBytes?: number): Promise<Uint8Array>;
  /** An entry's local header: where it starts, its compression method and its extra field's length. */
  localHeader(name: string): Promise<{ offset: number; compressionMethod: number; extraFieldLength: number }>;
  close(): void;
}

/** Opens a ZIP from a ByteSource and checks every entry's metadata; one line for any refusal. */
export async function openContainer(source: ByteSource, limits?: ContainerLimits): Promise<OpenContainer> {
  const yauzl = await import('yauzl');
  class SourceReader extends yauzl.RandomAccessReader {
    override _readStreamForRange(start: number, end: number): Readable {
      return Readable.from(
        (async function* () {
          for (let offset = start; offset < end; offset += READ_CHUNK_BYTES) {
            const chunk = await source.read(offset, Math.min(READ_CHUNK_BYTES, end - offset));
            if (chunk.length === 0) throw invalid('it is truncated');
            yield Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
          }
        })(),
      );
    }
  }
  let zip: ZipFile;
  try {
    zip = await yauzl.fromRandomAccessReaderPromise(new SourceReader(), source.size, {
      lazyEntries: true,
      autoClose: false,
      strictFileNames: true,
      validateEntrySizes: true,
    });
  } catch (error) {
    throw zipError(error);
  }
  try {
    const found = await allEntries(zip);
    const entries = found.map((entry) => ({
      name: entry.fileName,
      compressedSize: entry.compressedSize,
      uncompressedSize: entry.uncompressedSize,
      compressionMethod: entry.compressionMethod,
      encrypted: entry.isEncrypted(),
    }));
    checkEntries(entries, limits);
    const byName = new Map(found.map((entry) => [entry.fileName, entry]));
    const open = async (name: string): Promise<Readable> => {
      const entry = byName.get(name);
      if (!entry) throw invalid(`it has no entry ${name}`);
      return zip.openReadStreamPromise(entry).catch((error: unknown) => {
        throw zipError(error);
      });
    };
    const read = async function* (name: string): AsyncIterable<Uint8Array> {
      try {
        for await (const chunk of await open(name)) yield chunk as Uint8Array;
      } catch (error) {
        throw zipError(error);
      }
    };
    return {
      entries,
      read,
      async readWhole(name, maxBytes = 16 * 1024 * 1024) {
        const entry = byName.get(name);
        if (entry && entry.uncompressedSize > maxBytes)
          throw invalid(`its entry ${name} is larger than ${maxBytes} bytes`);
        const chunks: Uint8Array[] = [];
        for await (const chunk of read(name)) chunks.push(chunk);
        return Buffer.concat(chunks);
      },
      async localHeader(name) {
        const entry = byName.get(name);
        if (!entry) throw invalid(`it has no entry ${name}`);
        const offset = entry.relativeOffsetOfLocalHeader;
        const header = await source.read(offset, 30);
        const view = new DataView(header.buffer, header.byteOffset, header.byteLength);
        if (header.length < 30 || view.getUint32(0, true) !== 0x04034b50)
          throw invalid(`the local header of ${name} is damaged`);
        return { offset, compressionMethod: view.getUint16(8, true), extraFieldLength: view.getUint16(28, true) };
      },
      close: () => zip.close(),
    };
  } catch (error) {
    zip.close();
    throw error;
  }
}

async function allEntries(zip: ZipFile): Promise<Entry[]> {
  return new Promise((resolve, reject) => {
    const entries: Entry[] = [];
    zip.on('entry', (entry: Entry) => {
      entries.push(entry);
      zip.readEntry();
    });
    zip.on('end', () => resolve(entries));
    zip.on('error', (error: unknown) => reject(zipError(error)));
    zip.readEntry();
  });
}

/** yauzl's errors (a truncated or damaged ZIP, a bad name, a size that lies) as one line. */
function zipError(error: unknown): EsignError {
  if (error instanceof EsignError) return error;
  const message = (error as Error)?.message ?? String(error);
  // yauzl's strict names refuse a backslash before container-rules sees the name.
  const backslashed = /^invalid characters in fileName: (.*)$/.exec(message);
  if (backslashed) return invalid(`the entry name ${JSON.stringify(backslashed[1])} has a backslash`);
  return invalid(message.replace(/\.$/, ''));
}

/**
 * yazl, with Node's native CRC-32 in place of the JavaScript one it requires (buffer-crc32): that
 * took 1.8 s of putting a 300 MB stored file into a container here, zlib.crc32 (Node 20.15+; esign
 * needs 20.19+) 0.2 s, with the same values. Its module is put in Node's module cache under
 * buffer-crc32's path before yazl first loads; where that path cannot be found (a single executable,
 * whose yazl bundle gets the same stand-in from scripts/build-sea.mjs) yazl keeps its own.
 */
async function loadYazl(): Promise<typeof Yazl> {
  const { createRequire, Module } = await import('node:module');
  const { crc32 } = await import('node:zlib');
  try {
    const here = createRequire(import.meta.url);
    const path = createRequire(here.resolve('yazl')).resolve('buffer-crc32');
    if (!here.cache[path]) {
      const native = new Module(path);
      native.exports = { unsigned: (data: Uint8Array, previous?: number) => crc32(data, previous ?? 0) };
      native.loaded = true;
      here.cache[path] = native;
    }
  } catch {
    // yazl's own CRC-32: slower, the same values.
  }
  return import('yazl');
}

/** One entry of a container to write: small bytes, or a source streamed in (and hashed as it goes). */
export type EntryToWrite =
  | { name: string; bytes: Uint8Array; compress: boolean }
  | { name: string; chunks: AsyncIterable<Uint8Array>; size?: number; compress: boolean; hash?: HashSink };

/** A ZIP being written into an OutputFile, entry by entry (between a prepare and a complete, say). */
export interface ZipWriting {
  /**
   * Adds an entry after those added before; resolves once its bytes have all been taken (and fed to
   * its `hash`), so that the next file is opened only then. Rejects when writing has failed.
   */
  add(entry: EntryToWrite): Promise<void>;
  /** Resolves once every entry added so far is in the output. */
  flushed(): Promise<void>;
  /** Writes the central directory; resolves with the bytes written in all. */
  end(): Promise<number>;
}

/** What startZip reads of yazl's state: where its output is, and whether each entry is written. */
interface YazlProgress {
  outputStreamCursor: number;
  entries: { state: number }[];
}
/** yazl's Entry.FILE_DATA_DONE. */
const FILE_DATA_DONE = 3;

/** What the caller of startZip sees of the bytes written. */
export interface ZipOutputHooks {
  /** Every byte of the output, in order, before it is written (the caller hashes the output there). */
  onChunk(chunk: Uint8Array): void;
  /** Each chunk once it is written: nothing here holds it any more. */
  written?(chunk: Uint8Array): void;
}

/**
 * Starts a ZIP in `output` (appended): `mimetype` first, stored, with no extra field (no entry
 * gets one: DOS times only), then the entries as they are added. Zip64 comes where a size or offset
 * needs it.
 */
export async function startZip(
  output: OutputFile,
  mimetype: string,
  mtime: Date,
  { onChunk, written }: ZipOutputHooks,
): Promise<ZipWriting> {
  const yazl = await loadYazl();
  const zip = new yazl.ZipFile();
  const progress = zip as unknown as YazlProgress;
  const stream = zip.outputStream as Readable;
  // A stream whose length is not the size given (a file that changed meanwhile) fails the ZIP, not the process.
  zip.on('error', (error: Error) => stream.destroy(error));
  const common = { mtime, forceDosTimestamp: true, mode: 0o100644 };
  zip.addBuffer(Buffer.from(mimetype, 'ascii'), 'mimetype', { ...common, compress: false });
  let bytes = 0;
  let caughtUp: (() => void) | undefined;
  const isCaughtUp = () =>
    progress.entries.every((entry) => entry.state === FILE_DATA_DONE) && bytes === progress.outputStreamCursor;
  const pumping = (async () => {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      onChunk(chunk);
      bytes += chunk.length;
      await output.write(chunk);
      written?.(chunk);
      if (caughtUp && isCaughtUp()) caughtUp();
    }
    return bytes;
  })();
  pumping.catch(() => undefined);
  /** `done`, unless writing fails first. */
  const unlessFailed = (done: Promise<void>) =>
    Promise.race([
      done,
      pumping.then(() => {
        throw new Error('the ZIP ended before all its entries were written');
      }),
    ]);
  return {
    async add(entry) {
      if ('bytes' in entry) {
        zip.addBuffer(Buffer.from(entry.bytes), entry.name, { ...common, compress: entry.compress });
        return;
      }
      const { chunks, hash } = entry;
      let taken!: () => void;
      const done = new Promise<void>((resolve) => (taken = resolve));
      const source = Readable.from(
        (async function* () {
          try {
            for await (const chunk of chunks) {
              hash?.update(chunk);
              yield chunk;
            }
            taken();
          } catch (error) {
            // A read that fails ends the ZIP's output with its error (a Readable's own error would go unheard).
            stream.destroy(error as Error);
          }
        })(),
        // One chunk read ahead, not sixteen (64 MB of a large file): peak memory stays flat in the file's size.
        { highWaterMark: 1 },
      );
      zip.addReadStreamLazy(
        entry.name,
        { ...common, compress: entry.compress, ...(entry.size === undefined ? {} : { size: entry.size }) },
        (callback) => callback(null, source),
      );
      await unlessFailed(done);
    },
    async flushed() {
      // yazl writes the entry's data descriptor once its data has passed; an entry is in once that is written too.
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (isCaughtUp()) return;
      await unlessFailed(new Promise<void>((resolve) => (caughtUp = resolve)));
      caughtUp = undefined;
    },
    async end() {
      zip.end();
      return pumping;
    },
  };
}

/**
 * Writes a whole ZIP into `output` (appended), as startZip starts it, with `entries` in order.
 * Returns the bytes written, which the caller hashes through `onChunk`.
 */
export async function writeZip(
  output: OutputFile,
  mimetype: string,
  entries: readonly EntryToWrite[],
  mtime: Date,
  onChunk: (chunk: Uint8Array) => void,
): Promise<number> {
  const zip = await startZip(output, mimetype, mtime, { onChunk });
  for (const entry of entries) await zip.add(entry);
  return zip.end();
}
