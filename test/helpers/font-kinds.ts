/**
 * Font files of every kind a user may give --font, made at test time from fonts the tests already
 * use (nothing large is committed): one font of a collection as a standalone sfnt (a CFF .otf from
 * Noto Sans CJK's collection), WOFF 1.0 of an sfnt (its tables, each zlib-compressed, behind
 * a WOFF header and directory, as the W3C WOFF 1.0 specification lays them out), and WOFF2.
 */
import { brotliCompressSync, constants, deflateSync } from 'node:zlib';
import { writeSfntHeader } from '../../src/core/pdf/truetype.js';

interface TableRecord {
  tag: number;
  checksum: number;
  offset: number;
  length: number;
}

/** The offset of font `index`'s table directory: 0 for a single font, else from the collection's header. */
function directoryStart(font: Uint8Array, index: number): number {
  const view = new DataView(font.buffer, font.byteOffset, font.byteLength);
  if (view.getUint32(0) !== 0x74746366 /* 'ttcf' */) return 0;
  if (index >= view.getUint32(8)) throw new Error(`the collection has no font ${index}`);
  return view.getUint32(12 + 4 * index);
}

function tableRecords(font: Uint8Array, start: number): { flavor: number; tables: TableRecord[] } {
  const view = new DataView(font.buffer, font.byteOffset, font.byteLength);
  const count = view.getUint16(start + 4);
  const tables = Array.from({ length: count }, (_, i) => {
    const at = start + 12 + i * 16;
    return {
      tag: view.getUint32(at),
      checksum: view.getUint32(at + 4),
      offset: view.getUint32(at + 8),
      length: view.getUint32(at + 12),
    };
  });
  return { flavor: view.getUint32(start), tables };
}

const pad4 = (n: number) => (n + 3) & ~3;

/** Font `index` of a collection (.ttc) as a standalone font file (.otf for CFF outlines, .ttf for glyf). */
export function fontOfCollection(collection: Uint8Array, index = 0): Uint8Array {
  const { flavor, tables } = tableRecords(collection, directoryStart(collection, index));
  let size = 12 + tables.length * 16;
  for (const table of tables) size += pad4(table.length);
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  writeSfntHeader(view, flavor, tables.length);
  let offset = 12 + tables.length * 16;
  tables.forEach((table, i) => {
    const at = 12 + i * 16;
    view.setUint32(at, table.tag);
    view.setUint32(at + 4, table.checksum);
    view.setUint32(at + 8, offset);
    view.setUint32(at + 12, table.length);
    out.set(collection.subarray(table.offset, table.offset + table.length), offset);
    offset += pad4(table.length);
  });
  return out;
}

/** A single-font sfnt (.ttf or .otf) as WOFF 1.0: each table zlib-compressed where that makes it smaller. */
export function woffOf(sfnt: Uint8Array): Uint8Array {
  const { flavor, tables } = tableRecords(sfnt, 0);
  const packed = tables.map((table) => {
    const raw = sfnt.subarray(table.offset, table.offset + table.length);
    const compressed = deflateSync(raw);
    return { ...table, data: compressed.length < raw.length ? compressed : raw };
  });
  const headerSize = 44 + tables.length * 20;
  let size = headerSize;
  for (const table of packed) size += pad4(table.data.length);
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  view.setUint32(0, 0x774f4646 /* 'wOFF' */);
  view.setUint32(4, flavor);
  view.setUint32(8, size);
  view.setUint16(12, tables.length);
  view.setUint32(16, 12 + tables.length * 16 + tables.reduce((sum, t) => sum + pad4(t.length), 0));
  view.setUint16(20, 1);
  let offset = headerSize;
  packed.forEach((table, i) => {
    const at = 44 + i * 20;
    view.setUint32(at, table.tag);
    view.setUint32(at + 4, offset);
    view.setUint32(at + 8, table.data.length);
    view.setUint32(at + 12, table.length);
    view.setUint32(at + 16, table.checksum);
    out.set(table.data, offset);
    offset += pad4(table.data.length);
  });
  return out;
}

/** WOFF2's index of the tags it knows (its directory names these by index); any other is written out. */
const WOFF2_KNOWN_TAGS = [
  'cmap',
  'head',
  'hhea',
  'hmtx',
  'maxp',
  'name',
  'OS/2',
  'post',
  'cvt ',
  'fpgm',
  'glyf',
  'loca',
  'prep',
  'CFF ',
  'VORG',
];

/** A UIntBase128 (WOFF2): 7 bits a byte, most significant first, the high bit set on all but the last. */
function base128(value: number): number[] {
  const bytes = [value & 0x7f];
  for (let rest = value >>> 7; rest > 0; rest >>>= 7) bytes.unshift((rest & 0x7f) | 0x80);
  return bytes;
}

/**
 * A single-font sfnt as WOFF2 with every table stored as it is (the null transform: glyf and loca
 * with transform version 3), all of them in one Brotli stream. Real WOFF2 files of glyf outlines
 * transform glyf; esign refuses those whatever the transform, so this suffices to test both kinds.
 */
export function woff2Of(sfnt: Uint8Array): Uint8Array {
  const { flavor, tables } = tableRecords(sfnt, 0);
  const directory: number[] = [];
  for (const table of tables) {
    const tag = String.fromCharCode(
      table.tag >>> 24,
      (table.tag >>> 16) & 0xff,
      (table.tag >>> 8) & 0xff,
      table.tag & 0xff,
    );
    const known = WOFF2_KNOWN_TAGS.indexOf(tag);
    const transform = tag === 'glyf' || tag === 'loca' ? 3 << 6 : 0;
    directory.push(transform | (known < 0 ? 0x3f : known));
    if (known < 0) directory.push(...Array.from(tag, (ch) => ch.charCodeAt(0)));
    directory.push(...base128(table.length));
  }
  const data = brotliCompressSync(Buffer.concat(tables.map((t) => sfnt.subarray(t.offset, t.offset + t.length))), {
    // The fastest quality: the default takes minutes for Noto Sans CJK's 16 MB.
    params: { [constants.BROTLI_PARAM_QUALITY]: 1 },
  });
  const size = 48 + directory.length + data.length;
  const out = new Uint8Array(pad4(size));
  const view = new DataView(out.buffer);
  view.setUint32(0, 0x774f4632 /* 'wOF2' */);
  view.setUint32(4, flavor);
  view.setUint32(8, out.length);
  view.setUint16(12, tables.length);
  view.setUint32(16, 12 + tables.length * 16 + tables.reduce((sum, t) => sum + pad4(t.length), 0));
  view.setUint32(20, data.length);
  view.setUint16(24, 1);
  out.set(directory, 48);
  out.set(data, 48 + directory.length);
  return out;
}
