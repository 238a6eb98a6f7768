/**
 * ByteSource helpers: an in-memory source (tests, small inputs), byte searching, and
 * `parseWindowed`, which parses at an offset from a small read and retries with a larger one only
 * when the object turns out to be longer — so a document is never read whole.
 */
import type { ByteSource } from '../ports.js';
import { NeedMoreBytes, Lexer } from './lexer.js';
import { asciiBytes } from './objects.js';

/** A ByteSource over bytes already in memory. */
export function bytesSource(data: Uint8Array): ByteSource {
  return {
    size: data.length,
    read: (offset, length) => Promise.resolve(data.subarray(offset, Math.min(data.length, offset + length))),
  };
}

/** The last index of `needle` (ASCII) in `haystack`, or -1. */
export function lastIndexOf(haystack: Uint8Array, needle: string, before = haystack.length): number {
  const n = asciiBytes(needle);
  outer: for (let i = Math.min(before, haystack.length) - n.length; i >= 0; i--) {
    for (let j = 0; j < n.length; j++) if (haystack[i + j] !== n[j]) continue outer;
    return i;
  }
  return -1;
}

/** The first index of `needle` (ASCII) in `haystack` at or after `from`, or -1. */
export function indexOf(haystack: Uint8Array, needle: string, from = 0): number {
  const n = asciiBytes(needle);
  // The engine's own search finds each candidate first byte: a stream's data is scanned natively.
  for (let i = haystack.indexOf(n[0] as number, from); i >= 0 && i <= haystack.length - n.length; i = haystack.indexOf(n[0] as number, i + 1)) {
    let j = 1;
    while (j < n.length && haystack[i + j] === n[j]) j++;
    if (j === n.length) return i;
  }
  return -1;
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
  for (let length = initial; ; ) {
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
