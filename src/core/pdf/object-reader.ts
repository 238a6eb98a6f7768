/**
 * Reads one indirect object (`num gen obj … endobj`) at a known offset, including a stream's data
 * when the object is a stream. Only the object's own bytes are read.
 */
import type { ByteSource } from '../ports.js';
import { indexOf, parseWindowed } from './byte-source.js';
import { Keyword, PdfSyntaxError } from './lexer.js';
import { PdfDict, PdfRef, PdfStream } from './objects.js';
import type { PdfObject } from './objects.js';

export interface IndirectObject {
  num: number;
  gen: number;
  value: PdfObject;
}

/** Resolves an indirect `/Length` (it may live anywhere in the file). */
export type LengthResolver = (ref: PdfRef) => Promise<PdfObject>;

// A first read covers most objects in one pass.
const FIRST_WINDOW = 4096;
// How far a longer object (a page tree node with thousands of kids) is searched for its end.
const EXTENT_SEARCH = 256 * 1024;

/** Parses the indirect object at `offset`; a stream's data is read by its `/Length`. */
export async function readObjectAt(
  source: ByteSource,
  offset: number,
  resolveLength?: LengthResolver,
): Promise<IndirectObject> {
  // A longer object is read again up to its `endobj` (or `stream`), found by a byte search, so
  // that it parses in one more pass.
  const grow = async (): Promise<number | undefined> => {
    const bytes = await source.read(offset, EXTENT_SEARCH);
    const ends = [indexOf(bytes, 'endobj'), indexOf(bytes, 'stream')].filter((at) => at >= 0);
    return ends.length > 0 ? Math.min(...ends) + 16 : undefined;
  };
  const parsed = await parseWindowed(
    source,
    offset,
    (lexer) => {
      const { num, gen } = lexer.objectHeader();
      const value = lexer.parseObject();
      let dataStart: number | undefined;
      if (value instanceof PdfDict) {
        const save = lexer.pos;
        const next = lexer.nextToken();
        if (next instanceof Keyword && next.value === 'stream') {
          lexer.skipStreamEol();
          dataStart = lexer.offset;
        } else lexer.pos = save;
      }
      return { num, gen, value, dataStart };
    },
    FIRST_WINDOW,
    grow,
  );
  if (parsed.dataStart === undefined || !(parsed.value instanceof PdfDict)) return parsed;
  let length: PdfObject | undefined = parsed.value.get('Length');
  if (length instanceof PdfRef && resolveLength) length = await resolveLength(length);
  const declared = typeof length === 'number' && length >= 0 ? length : undefined;
  if (declared !== undefined) {
    const data = await source.read(parsed.dataStart, declared + ENDSTREAM_SLACK);
    if (indexOf(data, 'endstream', declared) >= 0 || data.length === declared) {
      return { num: parsed.num, gen: parsed.gen, value: new PdfStream(parsed.value, data.subarray(0, declared)) };
    }
  }
  // A missing or wrong /Length is a common defect: fall back to the `endstream` keyword.
  const end = await findForward(source, parsed.dataStart, 'endstream');
  if (end < 0) throw new PdfSyntaxError(`stream ${parsed.num} has no usable /Length and no "endstream"`);
  const data = await source.read(parsed.dataStart, end - parsed.dataStart);
  return { num: parsed.num, gen: parsed.gen, value: new PdfStream(parsed.value, trimEol(data)) };
}

const ENDSTREAM_SLACK = 32;
const SCAN_CHUNK = 1 << 16;
const SCAN_LIMIT = 1 << 26;

/** Absolute offset of the next `keyword` at or after `from`, searching at most 64 MiB; -1 if none. */
async function findForward(source: ByteSource, from: number, keyword: string): Promise<number> {
  for (let at = from; at < source.size && at - from < SCAN_LIMIT; at += SCAN_CHUNK) {
    const chunk = await source.read(at, SCAN_CHUNK + keyword.length);
    const found = indexOf(chunk, keyword);
    if (found >= 0) return at + found;
  }
  return -1;
}

function trimEol(data: Uint8Array): Uint8Array {
  let end = data.length;
  if (data[end - 1] === 0x0a) end--;
  if (data[end - 1] === 0x0d) end--;
  return data.subarray(0, end);
}
