/**
 * Font files of every kind a user may give --font, made at test time from fonts the tests already
 * use (nothing large is committed): one font of a collection as a standalone sfnt (a CFF .otf from
 * Noto Sans CJK's collection), and WOFF 1.0 of an sfnt (its tables, each zlib-compressed, behind
 * a WOFF header and directory, as the W3C WOFF 1.0 specification lays them out).
 */
import { deflateSync } from 'node:zlib';
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
