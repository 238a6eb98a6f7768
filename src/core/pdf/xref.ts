/**
 * Cross-reference data: classic tables, cross-reference streams, hybrid files (`/XRefStm`) and the
 * `/Prev` chain across revisions, merged into one index (newest revision wins).
 */
import type { ByteSource } from '../ports.js';
import { parseWindowed } from './byte-source.js';
import { decodeStream } from './filters.js';
import { Keyword, PdfSyntaxError, type Lexer } from './lexer.js';
import { PdfDict, PdfStream, isName } from './objects.js';
import type { PdfObject } from './objects.js';
import { readObjectAt } from './object-reader.js';
import type { XrefEntry } from './xref-entry.js';
import { XrefEntries, type XrefRun } from './xref-entries.js';

export type { XrefEntry };

/** The style of one cross-reference section; an update is written in the style of the newest. */
export type XrefStyle = 'table' | 'stream';

/** One revision's cross-reference section. */
export interface XrefSection {
  offset: number;
  style: XrefStyle;
  trailer: PdfDict;
  entries: ReadonlyMap<number, XrefEntry>;
}

/** All revisions merged: the newest trailer and, per object number, its newest entry. */
export interface XrefIndex {
  style: XrefStyle;
  /** The newest trailer (a classic trailer, or the newest xref stream's dictionary). */
  trailer: PdfDict;
  entries: ReadonlyMap<number, XrefEntry>;
  sections: XrefSection[];
}

/** Reads the section at `startxref` and every section its `/Prev` chain reaches. */
export async function readXrefChain(source: ByteSource, startxref: number): Promise<XrefIndex> {
  const sections: XrefSection[] = [];
  const seen = new Set<number>();
  let next: number | undefined = startxref;
  while (next !== undefined) {
    if (seen.has(next)) throw new PdfSyntaxError(`the /Prev chain loops back to offset ${next}`);
    seen.add(next);
    // The newest section usually runs to the end of the file: one read then holds all of it.
    let section = await readSection(
      source,
      next,
      sections.length === 0 ? newestSectionWindow(source, next) : undefined,
    );
    const stmOffset = section.trailer.get('XRefStm');
    if (section.style === 'table' && typeof stmOffset === 'number') {
      // Hybrid file: the table's in-use entries win over the stream's; its free ones do not.
      const stm = await readSection(source, stmOffset);
      const merged = new Map(section.entries);
      for (const [num, entry] of stm.entries) {
        if (merged.get(num)?.kind !== 'offset') merged.set(num, entry);
      }
      section = { ...section, entries: merged };
    }
    sections.push(section);
    const prev: PdfObject | undefined = section.trailer.get('Prev');
    next = typeof prev === 'number' ? prev : undefined;
  }
  const newest = sections[0] as XrefSection;
  // One revision (most files): its entries are the index, not copied into a Map.
  let entries = newest.entries;
  if (sections.length > 1) {
    const merged = new Map<number, XrefEntry>();
    for (const section of sections)
      for (const [num, entry] of section.entries) if (!merged.has(num)) merged.set(num, entry);
    entries = merged;
  }
  // Some writers leave /Info or /ID out of later trailers; the newest one that has them counts.
  const trailer = newest.trailer.clone();
  for (const key of ['Root', 'Info', 'ID', 'Encrypt']) {
    const older = sections.find((section) => section.trailer.has(key));
    if (!trailer.has(key) && older) trailer.set(key, older.trailer.get(key) ?? null);
  }
  return { style: newest.style, trailer, entries, sections };
}

const MIN_SECTION_WINDOW = 4096;
const MAX_SECTION_WINDOW = 4 * 1024 * 1024;

function newestSectionWindow(source: ByteSource, offset: number): number {
  return Math.min(MAX_SECTION_WINDOW, Math.max(MIN_SECTION_WINDOW, source.size - offset));
}

/**
 * Reads one section, a table (`xref … trailer <<…>>`) or a cross-reference stream. `window` is the
 * first read's size; a longer table grows it (and is parsed again).
 */
export async function readSection(
  source: ByteSource,
  offset: number,
  window = MIN_SECTION_WINDOW,
): Promise<XrefSection> {
  const table = await parseWindowed(
    source,
    offset,
    (lexer) => {
      const save = lexer.pos;
      const first = lexer.nextToken();
      if (!(first instanceof Keyword && first.value === 'xref')) {
        lexer.pos = save;
        return undefined;
      }
      const runs: XrefRun[] = [];
      for (;;) {
        const start = lexer.unsignedDigits();
        if (start === undefined) {
          const token = lexer.nextToken();
          if (token instanceof Keyword && token.value === 'trailer') break;
          throw new PdfSyntaxError(`bad xref subsection at ${lexer.offset}`);
        }
        const count = lexer.unsignedDigits();
        if (count === undefined) throw new PdfSyntaxError(`bad xref subsection at ${lexer.offset}`);
        runs.push(standardRun(lexer, start, count) ?? tokenizedRun(lexer, start, count));
      }
      const trailer = lexer.parseObject();
      if (!(trailer instanceof PdfDict)) throw new PdfSyntaxError('trailer is not a dictionary');
      return { offset, style: 'table' as const, trailer, entries: XrefEntries.of(runs) };
    },
    window,
  );
  if (table) return table;
  const { value } = await readObjectAt(source, offset);
  if (!(value instanceof PdfStream) || !isName(value.dict.get('Type'), 'XRef')) {
    throw new PdfSyntaxError(`no cross-reference table or stream at offset ${offset}`);
  }
  return { offset, style: 'stream', trailer: value.dict, entries: xrefStreamEntries(value) };
}

const FREE_ENTRY: XrefEntry = { kind: 'free' };
const ENTRY_BYTES = 20;
// Entries in the standard fixed-width form (ISO 32000-1, 7.5.4), `nnnnnnnnnn ggggg n` and a
// two-byte end of line, as nearly every writer makes them, with a generation up to 65535.
const STANDARD_ENTRIES =
  /(?:\d{10} (?:[0-5]\d{4}|6[0-4]\d{3}|65[0-4]\d{2}|655[0-2]\d|6553[0-5]) [fn](?: \r| \n|\r\n))*/y;
// MuPDF writes the head of the free list (object 0) one above the largest generation. qpdf, poppler
// and Acrobat read it; it is accepted there and nowhere else.
const MUPDF_FREE_LIST_HEAD = /0000000000 65536 f(?: \r| \n|\r\n)/y;
const MUPDF_HEAD_GENERATION = 65536;

/**
 * A subsection whose entries all have the standard form, checked at once by a regular expression
 * (so that a decoded entry is always valid) and decoded one by one when looked up; undefined for
 * any other layout.
 */
function standardRun(lexer: Lexer, first: number, count: number): XrefRun | undefined {
  lexer.skipSpace();
  const start = lexer.pos;
  const end = start + count * ENTRY_BYTES;
  if (end > lexer.bytes.length) return undefined;
  const text = lexer.latin1(start, end);
  MUPDF_FREE_LIST_HEAD.lastIndex = 0;
  const headBytes = first === 0 && MUPDF_FREE_LIST_HEAD.test(text) ? ENTRY_BYTES : 0;
  STANDARD_ENTRIES.lastIndex = headBytes;
  if (STANDARD_ENTRIES.exec(text)?.[0].length !== text.length - headBytes) return undefined;
  lexer.pos = end;
  return {
    first,
    count,
    entry: (k) => {
      const at = k * ENTRY_BYTES;
      if (text.charCodeAt(at + 17) === 0x66) return FREE_ENTRY;
      return { kind: 'offset', offset: Number(text.slice(at, at + 10)), gen: Number(text.slice(at + 11, at + 16)) };
    },
  };
}

/** A subsection in any other layout the tokenizer accepts, decoded at once. */
function tokenizedRun(lexer: Lexer, first: number, count: number): XrefRun {
  const entries: XrefEntry[] = [];
  for (let i = 0; i < count; i++) {
    const field1 = lexer.unsignedDigits();
    const field2 = lexer.unsignedDigits();
    const type = lexer.letter();
    const freeListHead = first + i === 0 && type === 'f' && field1 === 0 && field2 === MUPDF_HEAD_GENERATION;
    if (field1 === undefined || field2 === undefined || (field2 > 65535 && !freeListHead))
      throw new PdfSyntaxError(`bad xref entry at ${lexer.offset}`);
    if (type === 'n') entries.push({ kind: 'offset', offset: field1, gen: field2 });
    else if (type === 'f') entries.push(FREE_ENTRY);
    else throw new PdfSyntaxError(`bad xref entry type at ${lexer.offset}`);
  }
  return { first, count, entry: (k) => entries[k] };
}

function xrefStreamEntries(stream: PdfStream): ReadonlyMap<number, XrefEntry> {
  const widths = stream.dict.get('W');
  const size = stream.dict.get('Size');
  if (
    !Array.isArray(widths) ||
    widths.length < 3 ||
    !widths.every((w) => typeof w === 'number') ||
    typeof size !== 'number'
  ) {
    throw new PdfSyntaxError('cross-reference stream without /W or /Size');
  }
  const [w0, w1, w2] = widths as [number, number, number];
  if (![w0, w1, w2].every((w) => Number.isInteger(w) && w >= 0 && w <= 8) || w0 + w1 + w2 === 0)
    throw new PdfSyntaxError(`bad /W [${w0} ${w1} ${w2}]`);
  const index = stream.dict.get('Index') ?? [0, size];
  if (!Array.isArray(index) || !index.every((n) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0))
    throw new PdfSyntaxError('bad /Index');
  const data = decodeStream(stream, { complete: true });
  const rowLength = w0 + w1 + w2;
  const field = (at: number, width: number, fallback: number): number => {
    if (width === 0) return fallback;
    let value = 0;
    for (let i = 0; i < width; i++) value = value * 256 + (data[at + i] ?? 0);
    return value;
  };
  const runs: XrefRun[] = [];
  let rows = 0;
  for (let i = 0; i + 1 < index.length; i += 2) {
    const first = index[i] as number;
    const count = index[i + 1] as number;
    const firstRow = rows;
    rows += count;
    if (rows * rowLength > data.length) throw new PdfSyntaxError('cross-reference stream is shorter than its /Index');
    runs.push({
      first,
      count,
      entry: (k) => {
        const at = (firstRow + k) * rowLength;
        const type = field(at, w0, 1);
        const f2 = field(at + w0, w1, 0);
        const f3 = field(at + w0 + w1, w2, 0);
        if (type === 1) return { kind: 'offset', offset: f2, gen: f3 };
        if (type === 2) return { kind: 'compressed', stream: f2, index: f3 };
        return type === 0 ? FREE_ENTRY : undefined;
      },
    });
  }
  return XrefEntries.of(runs);
}
