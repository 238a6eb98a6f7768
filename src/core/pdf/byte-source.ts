/**
 * ByteSource helpers: an in-memory source (tests, small inputs), byte searching, and
 * `parseWindowed`, which parses at an offset from a small read and retries with a larger one only
 * when the object turns out to be longer — so a document is never read whole.
 */
import type { ByteSource } from '../ports.js';
import { NeedMoreBytes, Lexer } from './lexer.js';

/** A ByteSource over bytes already in memory. */
export function bytesSource(data: Uint8Array): ByteSource {
  return {
    size: data.length,
    read: (offset, length) => Promise.resolve(data.subarray(offset, Math.min(data.length, offset + length))),
  };
}

/** The last index of `needle` (ASCII) in `haystack`, or -1. */
export function lastIndexOf(haystack: Uint8Array, needle: string, before = haystack.length): number {
  const start = Math.min(before, haystack.length) - needle.length;
  return start < 0 ? -1 : bufferOf(haystack).lastIndexOf(needle, start, 'latin1');
}

/**
 * The first index of `needle` (ASCII) in `haystack` at or after `from`, or -1. Searched natively:
 * a signature's /Contents is tens of KB of hex digits, where a keyword's first letter (the `e` of
 * `endobj`) comes every few bytes.
 */
export function indexOf(haystack: Uint8Array, needle: string, from = 0): number {
  return bufferOf(haystack).indexOf(needle, from, 'latin1');
}

function bufferOf(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
}

/**
 * Runs `parse` on a lexer over the bytes at `offset`, reading `initial` bytes first and, each time
 * the parser asks for more, the length `grow` proposes (at least twice as much; four times without
 * `grow`), up to the end of the source.
 */
export async function parseWindowed<T>(
  source: ByteSource,
  offset: number,
  parse: (lexer: Lexer) => T,
  initial = 4096,
  grow?: (length: number) => Promise<number | undefined>,
): Promise<T> {
  for (let length = initial; ;) {
    const available = Math.max(0, source.size - offset);
    const bytes = await source.read(offset, Math.min(length, available));
    const complete = length >= available;
    try {
      return parse(new Lexer(bytes, offset, complete));
    } catch (error) {
      if (!(error instanceof NeedMoreBytes) || complete) throw error;
    }
    const proposed = grow ? await grow(length) : undefined;
    length = proposed === undefined ? length * 4 : Math.max(length * 2, proposed);
  }
}
