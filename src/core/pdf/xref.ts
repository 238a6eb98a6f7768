/**
 * Cross-reference data: classic tables, cross-reference streams, hybrid files (`/XRefStm`) and the
 * `/Prev` chain across revisions, merged into one index (newest revision wins).
 */
import type { ByteSource } from '../ports.js';
import { parseWindowed } from './byte-source.js';
import { decodeStream } from './filters.js';
import { Keyword, PdfSyntaxError } from './lexer.js';
import { PdfDict, PdfStream, isName } from './objects.js';
import type { PdfObject } from './objects.js';
import { readObjectAt } from './object-reader.js';

/** Where an object lives: at a byte offset, inside an object stream, or nowhere (free). */
export type XrefEntry =
  | { kind: 'free' }
  | { kind: 'offset'; offset: number; gen: number }
  | { kind: 'compressed'; stream: number; index: number };

/** The style of one cross-reference section; an update is written in the style of the newest. */
export type XrefStyle = 'table' | 'stream';

/** One revision's cross-reference section. */
export interface XrefSection {
  offset: number;
  style: XrefStyle;
  trailer: PdfDict;
  entries: Map<number, XrefEntry>;
}

/** All revisions merged: the newest trailer and, per object number, its newest entry. */
export interface XrefIndex {
  style: XrefStyle;
  /** The newest trailer (a classic trailer, or the newest xref stream's dictionary). */
  trailer: PdfDict;
  entries: Map<number, XrefEntry>;
  sections: XrefSection[];
}

/** Reads the section at `startxref` and every section its `/Prev` chain reaches. */
export async function readXrefChain(source: ByteSource, startxref: number): Promise<XrefIndex> {
  const sections: XrefSection[] = [];
  const entries = new Map<number, XrefEntry>();
  const seen = new Set<number>();
  let next: number | undefined = startxref;
  while (next !== undefined) {
    if (seen.has(next)) throw new PdfSyntaxError(`the /Prev chain loops back to offset ${next}`);
    seen.add(next);
    const section = await readSection(source, next);
    const stmOffset = section.trailer.get('XRefStm');
    if (section.style === 'table' && typeof stmOffset === 'number') {
      // Hybrid file: the table's in-use entries win over the stream's; its free ones do not.
      const stm = await readSection(source, stmOffset);
      for (const [num, entry] of stm.entries) {
        if (section.entries.get(num)?.kind !== 'offset') section.entries.set(num, entry);
      }
    }
    for (const [num, entry] of section.entries) if (!entries.has(num)) entries.set(num, entry);
    sections.push(section);
    const prev: PdfObject | undefined = section.trailer.get('Prev');
    next = typeof prev === 'number' ? prev : undefined;
  }
  const newest = sections[0] as XrefSection;
  // Some writers leave /Info or /ID out of later trailers; the newest one that has them counts.
  const trailer = newest.trailer.clone();
  for (const key of ['Root', 'Info', 'ID']) {
    const older = sections.find((section) => section.trailer.has(key));
    if (!trailer.has(key) && older) trailer.set(key, older.trailer.get(key) ?? null);
  }
  return { style: newest.style, trailer, entries, sections };
}

/** Reads one section, a table (`xref … trailer <<…>>`) or a cross-reference stream. */
export async function readSection(source: ByteSource, offset: number): Promise<XrefSection> {
  const table = await parseWindowed(source, offset, (lexer) => {
    const save = lexer.pos;
    const first = lexer.nextToken();
    if (!(first instanceof Keyword && first.value === 'xref')) {
      lexer.pos = save;
      return undefined;
    }
    const entries = new Map<number, XrefEntry>();
    for (;;) {
      const start = lexer.unsignedDigits();
      if (start === undefined) {
        const token = lexer.nextToken();
        if (token instanceof Keyword && token.value === 'trailer') break;
        throw new PdfSyntaxError(`bad xref subsection at ${lexer.offset}`);
      }
      const count = lexer.unsignedDigits();
      if (count === undefined) throw new PdfSyntaxError(`bad xref subsection at ${lexer.offset}`);
      for (let i = 0; i < count; i++) {
        const field1 = lexer.unsignedDigits();
        const field2 = lexer.unsignedDigits();
        const type = lexer.letter();
        if (field1 === undefined || field2 === undefined || field2 > 65535) throw new PdfSyntaxError(`bad xref entry at ${lexer.offset}`);
        const num = start + i;
        if (type === 'n') entries.set(num, { kind: 'offset', offset: field1, gen: field2 });
        else if (type === 'f') entries.set(num, { kind: 'free' });
        else throw new PdfSyntaxError(`bad xref entry type at ${lexer.offset}`);
      }
    }
    const trailer = lexer.parseObject();
    if (!(trailer instanceof PdfDict)) throw new PdfSyntaxError('trailer is not a dictionary');
    return { offset, style: 'table' as const, trailer, entries };
  });
  if (table) return table;
  const { value } = await readObjectAt(source, offset);
  if (!(value instanceof PdfStream) || !isName(value.dict.get('Type'), 'XRef')) {
    throw new PdfSyntaxError(`no cross-reference table or stream at offset ${offset}`);
  }
  return { offset, style: 'stream', trailer: value.dict, entries: xrefStreamEntries(value) };
}

function xrefStreamEntries(stream: PdfStream): Map<number, XrefEntry> {
  const widths = stream.dict.get('W');
  const size = stream.dict.get('Size');
  if (!Array.isArray(widths) || widths.length < 3 || !widths.every((w) => typeof w === 'number') || typeof size !== 'number') {
    throw new PdfSyntaxError('cross-reference stream without /W or /Size');
  }
  const [w0, w1, w2] = widths as [number, number, number];
  const index = stream.dict.get('Index') ?? [0, size];
  if (!Array.isArray(index) || !index.every((n) => typeof n === 'number')) throw new PdfSyntaxError('bad /Index');
  const data = decodeStream(stream);
  const rowLength = w0 + w1 + w2;
  const entries = new Map<number, XrefEntry>();
  let at = 0;
  const field = (width: number, fallback: number): number => {
    if (width === 0) return fallback;
    let value = 0;
    for (let i = 0; i < width; i++) value = value * 256 + (data[at++] ?? 0);
    return value;
  };
  for (let i = 0; i + 1 < index.length; i += 2) {
    const first = index[i] as number;
    const count = index[i + 1] as number;
    for (let n = 0; n < count; n++) {
      if (at + rowLength > data.length) throw new PdfSyntaxError('cross-reference stream is shorter than its /Index');
      const type = field(w0, 1);
      const f2 = field(w1, 0);
      const f3 = field(w2, 0);
      if (type === 1) entries.set(first + n, { kind: 'offset', offset: f2, gen: f3 });
      else if (type === 2) entries.set(first + n, { kind: 'compressed', stream: f2, index: f3 });
      else if (type === 0) entries.set(first + n, { kind: 'free' });
    }
  }
  return entries;
}
