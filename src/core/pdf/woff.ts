/**
 * WOFF 1.0 (W3C, 2012) unwrapped into the sfnt it carries: each table inflated (zlib) where it was
 * compressed, laid out behind a table directory as in a .ttf or .otf. esign's TrueType reader then
 * reads a WOFF of glyf outlines as it reads the .ttf (fontkit's own TrueType subsets misplace the
 * glyphs of fonts such as Noto Sans); a WOFF of CFF outlines goes to fontkit as its .otf would.
 */
import { inflateSync } from 'node:zlib';
import { EsignError } from '../errors.js';
import { writeSfntHeader } from './truetype.js';

const WOFF_SIGNATURE = 0x774f4646; // 'wOFF'
const WOFF2_SIGNATURE = 0x774f4632; // 'wOF2'
const OTTO = 0x4f54544f; // 'OTTO': CFF outlines
const HEADER = 44;
const ENTRY = 20;
/** What the tables of one font may inflate to, in all: ten times the largest CJK fonts; past it, a bomb. */
const MAX_SFNT_BYTES = 256 * 1024 * 1024;

/** Whether `head` (the first 4 bytes or more of a file) begins a WOFF 1.0 file. */
export function isWoff(head: Uint8Array): boolean {
  return head.length >= 4 && new DataView(head.buffer, head.byteOffset, 4).getUint32(0) === WOFF_SIGNATURE;
}

/**
 * Whether `head` (the first 8 bytes or more) begins a WOFF2 file of glyf outlines (its flavor not
 * 'OTTO'). fontkit reads those, but its subsets of them hold misplaced glyph records (MuPDF:
 * "invalid outline"), and WOFF2's transformed glyf is not the reader's to rebuild: they are refused.
 * A WOFF2 of CFF outlines goes to fontkit, whose CFF subsets are sound.
 */
export function isTrueTypeWoff2(head: Uint8Array): boolean {
  if (head.length < 8) return false;
  const view = new DataView(head.buffer, head.byteOffset, 8);
  return view.getUint32(0) === WOFF2_SIGNATURE && view.getUint32(4) !== OTTO;
}

/** The sfnt inside a WOFF 1.0 file; refuses, naming `label`, one whose tables lie outside it or do not inflate. */
export function sfntOfWoff(woff: Uint8Array, label: string): Uint8Array {
  const bad = (why: string) =>
    new EsignError('USAGE', `${label} is not a readable WOFF font (${why}).`, {
      hint: 'Give the .ttf or .otf it was made from with --font FILE.',
    });
  if (woff.length < HEADER) throw bad('too short');
  const view = new DataView(woff.buffer, woff.byteOffset, woff.byteLength);
  const count = view.getUint16(12);
  if (count === 0 || HEADER + count * ENTRY > woff.length) throw bad('its table directory is cut short');
  let inflated = 0;
  const tables = Array.from({ length: count }, (_, i) => {
    const at = HEADER + i * ENTRY;
    const offset = view.getUint32(at + 4);
    const compLength = view.getUint32(at + 8);
    const origLength = view.getUint32(at + 12);
    if (offset + compLength > woff.length) throw bad('a table lies outside the file');
    inflated += origLength;
    if (inflated > MAX_SFNT_BYTES) throw bad(`its tables would inflate past ${MAX_SFNT_BYTES / 1024 / 1024} MiB`);
    const stored = woff.subarray(offset, offset + compLength);
    let data: Uint8Array;
    try {
      data = compLength < origLength ? inflateSync(stored, { maxOutputLength: origLength }) : stored;
    } catch (error) {
      throw bad((error as Error).message);
    }
    if (data.length !== origLength) throw bad('a table inflates to another length than stated');
    return { tag: view.getUint32(at), checksum: view.getUint32(at + 16), data };
  });
  let size = 12 + count * 16;
  for (const table of tables) size += (table.data.length + 3) & ~3;
  const out = new Uint8Array(size);
  const sfnt = new DataView(out.buffer);
  writeSfntHeader(sfnt, view.getUint32(4), count);
  let offset = 12 + count * 16;
  tables.forEach((table, i) => {
    const record = 12 + i * 16;
    sfnt.setUint32(record, table.tag);
    sfnt.setUint32(record + 4, table.checksum);
    sfnt.setUint32(record + 8, offset);
    sfnt.setUint32(record + 12, table.data.length);
    out.set(table.data, offset);
    offset += (table.data.length + 3) & ~3;
  });
  return out;
}
