/**
 * A reader and subsetter for TrueType fonts with glyf outlines, for appearance text that needs no
 * shaping: characters to glyphs through the cmap (formats 4 and 12), advance widths from hmtx, the
 * metrics a FontDescriptor states, and a subset that keeps every glyph's id (a CIDFontType2 with
 * CIDToGIDMap /Identity). It reads what fontkit reads for the same font, in the same order of cmap
 * subtables, without fontkit's load (most of a visible signature's cost); of a collection (.ttc),
 * the first font, as fontkit takes. Anything else — WOFF, CFF outlines, another cmap format, a
 * table out of bounds — it leaves to fontkit.
 */

/** The cmap subtables tried, first match wins: fontkit's CmapProcessor order (32-bit Unicode first). */
const CMAP_PREFERENCE: ReadonlyArray<readonly [number, number]> = [
  [3, 10],
  [0, 6],
  [0, 4],
  [3, 1],
  [0, 3],
  [0, 2],
  [0, 1],
  [0, 0],
];

/** The tables a PDF's TrueType font program needs (ISO 32000-1 §9.9), and what fontkit's subsets hold. */
const SUBSET_TABLES = ['head', 'hhea', 'loca', 'maxp', 'cvt ', 'prep', 'glyf', 'hmtx', 'fpgm'] as const;

/** Composite glyph flags (OpenType glyf): what follows each component's glyph index. */
const ARG_1_AND_2_ARE_WORDS = 0x0001;
const WE_HAVE_A_SCALE = 0x0008;
const MORE_COMPONENTS = 0x0020;
const WE_HAVE_AN_X_AND_Y_SCALE = 0x0040;
const WE_HAVE_A_TWO_BY_TWO = 0x0080;

interface Table {
  offset: number;
  length: number;
}

export class TrueTypeFont {
  private constructor(
    private readonly data: DataView,
    private readonly tables: ReadonlyMap<string, Table>,
    private readonly cmap: { format: 4 | 12; offset: number; end: number },
    readonly unitsPerEm: number,
    readonly numGlyphs: number,
    private readonly longLoca: boolean,
    private readonly numberOfHMetrics: number,
  ) {}

  /**
   * The font in `bytes`, or undefined when it is not one this reader takes (then fontkit reads it,
   * and refuses what is no font at all with its reason).
   */
  static read(bytes: Uint8Array): TrueTypeFont | undefined {
    const data = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (bytes.length < 16) return undefined;
    // A collection ('ttcf'): its first font, as fontkit takes; table offsets count from the file's start.
    const start = data.getUint32(0) === 0x74746366 ? data.getUint32(12) : 0;
    if (start + 12 > bytes.length) return undefined;
    const version = data.getUint32(start);
    if (version !== 0x00010000 && version !== 0x74727565 /* 'true' */) return undefined;
    const count = data.getUint16(start + 4);
    if (start + 12 + count * 16 > bytes.length) return undefined;
    const tables = new Map<string, Table>();
    for (let i = 0; i < count; i++) {
      const at = start + 12 + i * 16;
      const tag = String.fromCharCode(bytes[at]!, bytes[at + 1]!, bytes[at + 2]!, bytes[at + 3]!);
      const offset = data.getUint32(at + 8);
      const length = data.getUint32(at + 12);
      if (offset + length > bytes.length) return undefined;
      tables.set(tag, { offset, length });
    }
    const head = tables.get('head');
    const hhea = tables.get('hhea');
    const maxp = tables.get('maxp');
    const hmtx = tables.get('hmtx');
    const loca = tables.get('loca');
    const cmapTable = tables.get('cmap');
    // Glyphs fontkit would draw from elsewhere (bitmaps, colour layers) are its to handle.
    if (!head || !hhea || !maxp || !hmtx || !loca || !tables.has('glyf') || !cmapTable || tables.has('sbix') || tables.has('COLR')) return undefined;
    if (head.length < 54 || hhea.length < 36 || maxp.length < 6 || data.getUint32(head.offset + 12) !== 0x5f0f3cf5) return undefined;
    const unitsPerEm = data.getUint16(head.offset + 18);
    const locaFormat = data.getInt16(head.offset + 50);
    const numGlyphs = data.getUint16(maxp.offset + 4);
    const numberOfHMetrics = data.getUint16(hhea.offset + 34);
    if (unitsPerEm === 0 || (locaFormat !== 0 && locaFormat !== 1) || numGlyphs === 0) return undefined;
    if (numberOfHMetrics === 0 || numberOfHMetrics > numGlyphs || hmtx.length < numberOfHMetrics * 4 + (numGlyphs - numberOfHMetrics) * 2) return undefined;
    if (loca.length < (numGlyphs + 1) * (locaFormat === 1 ? 4 : 2)) return undefined;
    const cmap = chooseCmap(data, cmapTable);
    if (!cmap) return undefined;
    return new TrueTypeFont(data, tables, cmap, unitsPerEm, numGlyphs, locaFormat === 1, numberOfHMetrics);
  }

  /** The glyph of a character, 0 when the font has none. */
  glyphId(codePoint: number): number {
    const gid = this.cmap.format === 4 ? this.format4(codePoint) : this.format12(codePoint);
    return gid < this.numGlyphs ? gid : 0;
  }

  /** A glyph's advance width in font units (hmtx: glyphs past its last full metric share that advance). */
  advanceWidth(gid: number): number {
    const hmtx = this.table('hmtx').offset;
    return this.data.getUint16(hmtx + 4 * Math.min(gid, this.numberOfHMetrics - 1));
  }

  private leftSideBearing(gid: number): number {
    const hmtx = this.table('hmtx').offset;
    return gid < this.numberOfHMetrics ? this.data.getInt16(hmtx + 4 * gid + 2) : this.data.getInt16(hmtx + 4 * this.numberOfHMetrics + 2 * (gid - this.numberOfHMetrics));
  }

  /** hhea's ascender and descender, as fontkit's `ascent` and `descent`. */
  get ascent(): number {
    return this.data.getInt16(this.table('hhea').offset + 4);
  }

  get descent(): number {
    return this.data.getInt16(this.table('hhea').offset + 6);
  }

  /** OS/2's sCapHeight (version 2 on), else 0: the caller falls back to the ascent, as with fontkit. */
  get capHeight(): number {
    const os2 = this.tables.get('OS/2');
    if (!os2 || os2.length < 90 || this.data.getUint16(os2.offset) < 2) return 0;
    return this.data.getInt16(os2.offset + 88);
  }

  /** head's xMin, yMin, xMax, yMax. */
  get bbox(): [number, number, number, number] {
    const at = this.table('head').offset + 36;
    return [this.data.getInt16(at), this.data.getInt16(at + 2), this.data.getInt16(at + 4), this.data.getInt16(at + 6)];
  }

  /** post's italic angle (16.16 fixed point); 0 without one. */
  get italicAngle(): number {
    const post = this.tables.get('post');
    return post && post.length >= 8 ? this.data.getInt32(post.offset + 4) / 65536 : 0;
  }

  /** The name table's PostScript name (ID 6), as fontkit picks it: the first record's language, its last record. */
  get postscriptName(): string | undefined {
    const name = this.tables.get('name');
    if (!name || name.length < 6) return undefined;
    const count = this.data.getUint16(name.offset + 2);
    const strings = name.offset + this.data.getUint16(name.offset + 4);
    let language: string | undefined;
    let found: string | undefined;
    for (let i = 0; i < count && name.offset + 6 + (i + 1) * 12 <= name.offset + name.length; i++) {
      const at = name.offset + 6 + i * 12;
      if (this.data.getUint16(at + 6) !== 6) continue;
      const platform = this.data.getUint16(at);
      const languageId = this.data.getUint16(at + 4);
      const lang = (platform === 1 && languageId === 0) || (platform === 3 && languageId === 0x409) ? 'en' : `${platform}-${languageId}`;
      language ??= lang;
      if (lang !== language) continue;
      const start = strings + this.data.getUint16(at + 10);
      const length = this.data.getUint16(at + 8);
      if (start + length > this.data.byteLength) continue;
      const raw = new Uint8Array(this.data.buffer, this.data.byteOffset + start, length);
      found = platform === 0 || platform === 3 ? utf16be(raw) : String.fromCharCode(...raw);
    }
    return found;
  }

  /**
   * A font program holding the glyphs `gids`, glyph 0 and the components of composite glyphs, each
   * at its original id; every other glyph is empty. Tables as fontkit's TrueType subsets have them.
   * Returns the program and the ids it holds.
   */
  subset(gids: Iterable<number>): { program: Uint8Array; kept: Set<number> } {
    const kept = new Set<number>();
    const pending = [0, ...gids];
    while (pending.length > 0) {
      const gid = pending.pop()!;
      if (kept.has(gid)) continue;
      if (!(gid >= 0 && gid < this.numGlyphs)) throw new Error(`glyph ${gid} is not in the font`);
      kept.add(gid);
      pending.push(...this.components(gid));
    }
    const numGlyphs = Math.max(...kept) + 1;
    const glyf = this.table('glyf');
    const pieces: Uint8Array[] = [];
    const offsets: number[] = [];
    let offset = 0;
    for (let gid = 0; gid < numGlyphs; gid++) {
      offsets.push(offset);
      if (!kept.has(gid)) continue;
      const [start, end] = this.glyphRange(gid);
      // Each glyph starts on a 4-byte boundary: short loca offsets count 2-byte words.
      const padded = (end - start + 3) & ~3;
      const piece = new Uint8Array(padded);
      piece.set(new Uint8Array(this.data.buffer, this.data.byteOffset + glyf.offset + start, end - start));
      pieces.push(piece);
      offset += padded;
    }
    offsets.push(offset);
    const longLoca = offset > 0x1fffe;
    const loca = new DataView(new ArrayBuffer(offsets.length * (longLoca ? 4 : 2)));
    offsets.forEach((value, i) => (longLoca ? loca.setUint32(i * 4, value) : loca.setUint16(i * 2, value / 2)));
    const hmtx = new DataView(new ArrayBuffer(numGlyphs * 4));
    for (const gid of kept) {
      hmtx.setUint16(gid * 4, this.advanceWidth(gid));
      hmtx.setInt16(gid * 4 + 2, this.leftSideBearing(gid));
    }
    const head = this.copy('head');
    const headView = new DataView(head.buffer);
    headView.setUint32(8, 0);
    headView.setInt16(50, longLoca ? 1 : 0);
    const hhea = this.copy('hhea');
    new DataView(hhea.buffer).setUint16(34, numGlyphs);
    const maxp = this.copy('maxp');
    new DataView(maxp.buffer).setUint16(4, numGlyphs);
    const contents: Record<(typeof SUBSET_TABLES)[number], Uint8Array | undefined> = {
      head,
      hhea,
      loca: new Uint8Array(loca.buffer),
      maxp,
      'cvt ': this.tables.has('cvt ') ? this.copy('cvt ') : undefined,
      prep: this.tables.has('prep') ? this.copy('prep') : undefined,
      glyf: concat(pieces, offset),
      hmtx: new Uint8Array(hmtx.buffer),
      fpgm: this.tables.has('fpgm') ? this.copy('fpgm') : undefined,
    };
    const program = writeFont(SUBSET_TABLES.flatMap((tag) => (contents[tag] ? [[tag, contents[tag]] as const] : [])));
    return { program, kept };
  }

  /** The glyph ids a composite glyph is built of (none for a simple or empty glyph). */
  private components(gid: number): number[] {
    const [start, end] = this.glyphRange(gid);
    if (end - start < 10) return [];
    const base = this.table('glyf').offset + start;
    if (this.data.getInt16(base) >= 0) return [];
    const ids: number[] = [];
    let at = base + 10;
    for (;;) {
      if (at + 4 > base + (end - start)) throw new Error(`composite glyph ${gid} is truncated`);
      const flags = this.data.getUint16(at);
      ids.push(this.data.getUint16(at + 2));
      at += 4 + (flags & ARG_1_AND_2_ARE_WORDS ? 4 : 2);
      at += flags & WE_HAVE_A_SCALE ? 2 : flags & WE_HAVE_AN_X_AND_Y_SCALE ? 4 : flags & WE_HAVE_A_TWO_BY_TWO ? 8 : 0;
      if (!(flags & MORE_COMPONENTS)) return ids;
    }
  }

  /** A glyph's bytes in glyf, from loca. */
  private glyphRange(gid: number): [number, number] {
    const loca = this.table('loca').offset;
    const [start, end] = this.longLoca ? [this.data.getUint32(loca + gid * 4), this.data.getUint32(loca + gid * 4 + 4)] : [this.data.getUint16(loca + gid * 2) * 2, this.data.getUint16(loca + gid * 2 + 2) * 2];
    if (end < start || end > this.table('glyf').length) throw new Error(`glyph ${gid} lies outside the glyf table`);
    return [start, end];
  }

  private format4(codePoint: number): number {
    const { offset, end } = this.cmap;
    const segX2 = this.data.getUint16(offset + 6);
    const ends = offset + 14;
    const starts = ends + segX2 + 2;
    const deltas = starts + segX2;
    const rangeOffsets = deltas + segX2;
    let min = 0;
    let max = segX2 / 2 - 1;
    while (min <= max) {
      const mid = (min + max) >> 1;
      const start = this.data.getUint16(starts + mid * 2);
      if (codePoint < start) max = mid - 1;
      else if (codePoint > this.data.getUint16(ends + mid * 2)) min = mid + 1;
      else {
        const delta = this.data.getUint16(deltas + mid * 2);
        const rangeOffset = this.data.getUint16(rangeOffsets + mid * 2);
        if (rangeOffset === 0) return (codePoint + delta) & 0xffff;
        const at = rangeOffsets + mid * 2 + rangeOffset + (codePoint - start) * 2;
        const gid = at + 2 <= end ? this.data.getUint16(at) : 0;
        return gid === 0 ? 0 : (gid + delta) & 0xffff;
      }
    }
    return 0;
  }

  private format12(codePoint: number): number {
    const { offset } = this.cmap;
    let min = 0;
    let max = this.data.getUint32(offset + 12) - 1;
    while (min <= max) {
      const mid = (min + max) >> 1;
      const group = offset + 16 + mid * 12;
      const start = this.data.getUint32(group);
      if (codePoint < start) max = mid - 1;
      else if (codePoint > this.data.getUint32(group + 4)) min = mid + 1;
      else return this.data.getUint32(group + 8) + (codePoint - start);
    }
    return 0;
  }

  private table(tag: string): Table {
    return this.tables.get(tag)!;
  }

  private copy(tag: string): Uint8Array {
    const { offset, length } = this.table(tag);
    return new Uint8Array(this.data.buffer.slice(this.data.byteOffset + offset, this.data.byteOffset + offset + length));
  }
}

/** The cmap subtable fontkit would use, when it is format 4 or 12 and lies inside the table. */
function chooseCmap(data: DataView, cmap: Table): { format: 4 | 12; offset: number; end: number } | undefined {
  if (cmap.length < 4) return undefined;
  const count = data.getUint16(cmap.offset + 2);
  if (4 + count * 8 > cmap.length) return undefined;
  for (const [platform, encoding] of CMAP_PREFERENCE) {
    for (let i = 0; i < count; i++) {
      const at = cmap.offset + 4 + i * 8;
      if (data.getUint16(at) !== platform || data.getUint16(at + 2) !== encoding) continue;
      const offset = cmap.offset + data.getUint32(at + 4);
      const tableEnd = cmap.offset + cmap.length;
      if (offset + 4 > tableEnd) return undefined;
      const format = data.getUint16(offset);
      if (format === 4) {
        const end = offset + data.getUint16(offset + 2);
        const segX2 = offset + 14 <= tableEnd ? data.getUint16(offset + 6) : 0;
        if (segX2 === 0 || segX2 % 2 !== 0 || end > tableEnd || offset + 16 + segX2 * 4 > end) return undefined;
        return { format, offset, end };
      }
      if (format === 12) {
        if (offset + 16 > tableEnd) return undefined;
        const end = offset + data.getUint32(offset + 4);
        if (end > tableEnd || offset + 16 + data.getUint32(offset + 12) * 12 > end) return undefined;
        return { format, offset, end };
      }
      return undefined;
    }
  }
  return undefined;
}

/**
 * An sfnt file of `tables` (a head among them), the records sorted by tag, each with its table's
 * checksum, and head's checkSumAdjustment making the whole file's checksum 0xB1B0AFBA.
 */
function writeFont(tables: ReadonlyArray<readonly [string, Uint8Array]>): Uint8Array {
  const count = tables.length;
  const power = 2 ** Math.floor(Math.log2(count));
  let size = 12 + count * 16;
  const placed = tables.map(([tag, bytes]) => {
    const offset = size;
    size += (bytes.length + 3) & ~3;
    return { tag, bytes, offset };
  });
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  view.setUint32(0, 0x00010000);
  view.setUint16(4, count);
  view.setUint16(6, power * 16);
  view.setUint16(8, Math.log2(power));
  view.setUint16(10, count * 16 - power * 16);
  // The file's checksum is its directory's plus its tables' (each table padded to 4 bytes).
  let total = 0;
  let headOffset = 0;
  [...placed]
    .sort((a, b) => (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0))
    .forEach(({ tag, bytes, offset }, i) => {
      const at = 12 + i * 16;
      for (let k = 0; k < 4; k++) out[at + k] = tag.charCodeAt(k);
      out.set(bytes, offset);
      const sum = checksum(out, offset, bytes.length);
      total = (total + sum) >>> 0;
      view.setUint32(at + 4, sum);
      view.setUint32(at + 8, offset);
      view.setUint32(at + 12, bytes.length);
      if (tag === 'head') headOffset = offset;
    });
  total = (total + checksum(out, 0, 12 + count * 16)) >>> 0;
  view.setUint32(headOffset + 8, (0xb1b0afba - total) >>> 0);
  return out;
}

/** The sum of the big-endian 32-bit words of `length` bytes from `offset` (4-aligned, zeros after), modulo 2³². */
function checksum(bytes: Uint8Array, offset: number, length: number): number {
  let sum = 0;
  for (let i = offset; i < offset + length; i += 4) sum = (sum + ((bytes[i]! << 24) | (bytes[i + 1]! << 16) | ((bytes[i + 2] ?? 0) << 8) | (bytes[i + 3] ?? 0))) >>> 0;
  return sum;
}

function concat(pieces: readonly Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length);
  let at = 0;
  for (const piece of pieces) {
    out.set(piece, at);
    at += piece.length;
  }
  return out;
}

function utf16be(bytes: Uint8Array): string {
  let text = '';
  for (let i = 0; i + 1 < bytes.length; i += 2) text += String.fromCharCode((bytes[i]! << 8) | bytes[i + 1]!);
  return text;
}
