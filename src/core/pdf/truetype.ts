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

/** Where the reader takes a font's bytes from: a file read in place (src/io) or bytes in memory. */
export interface FontBytes {
  readonly size: number;
  /** The `length` bytes at `offset` (fewer only past the end). */
  read(offset: number, length: number): Uint8Array;
}

/** Bytes in memory as a {@link FontBytes}: reads are views, nothing is copied. */
export function fontBytesOf(bytes: Uint8Array): FontBytes {
  return { size: bytes.length, read: (offset, length) => bytes.subarray(offset, offset + length) };
}

/**
 * Tables whose bytes the reader takes (the rest of a font, glyf, GSUB, GPOS and post's glyph names
 * among them, is never read): what maps characters and measures them, what a FontDescriptor
 * states, and the small tables a subset copies. Of post, only its italic angle.
 */
const READ_TABLES = [
  'head',
  'hhea',
  'maxp',
  'hmtx',
  'loca',
  'cmap',
  'OS/2',
  'name',
  'post',
  'cvt ',
  'prep',
  'fpgm',
] as const;
type ReadTable = (typeof READ_TABLES)[number];
const POST_BYTES = 8;
/** Tables (or glyphs) this close together are read in one call: one read of a gap costs less than a second call. */
const READ_GAP = 16 * 1024;

interface Table {
  offset: number;
  length: number;
}

export class TrueTypeFont {
  private constructor(
    private readonly source: FontBytes,
    /** The tables read, each as a view of its own bytes. */
    private readonly views: ReadonlyMap<ReadTable, DataView>,
    private readonly glyf: Table,
    private readonly cmap: { format: 4 | 12; view: DataView },
    readonly unitsPerEm: number,
    readonly numGlyphs: number,
    private readonly longLoca: boolean,
    private readonly numberOfHMetrics: number,
  ) {}

  /**
   * The font in `input`, or undefined when it is not one this reader takes (then fontkit reads it,
   * and refuses what is no font at all with its reason). Of a file, only the table directory and
   * the tables the reader uses are read here; glyphs are read when a subset needs them.
   */
  static read(input: Uint8Array | FontBytes): TrueTypeFont | undefined {
    const source = input instanceof Uint8Array ? fontBytesOf(input) : input;
    if (source.size < 16) return undefined;
    const first = view(source.read(0, 16));
    if (first.byteLength < 16) return undefined;
    // A collection ('ttcf'): its first font, as fontkit takes; table offsets count from the file's start.
    const start = first.getUint32(0) === 0x74746366 ? first.getUint32(12) : 0;
    if (start + 12 > source.size) return undefined;
    const header = start === 0 ? first : view(source.read(start, 12));
    if (header.byteLength < 12) return undefined;
    const version = header.getUint32(0);
    if (version !== 0x00010000 && version !== 0x74727565 /* 'true' */) return undefined;
    const count = header.getUint16(4);
    const directory = source.read(start + 12, count * 16);
    if (directory.length < count * 16) return undefined;
    const entries = view(directory);
    const tables = new Map<string, Table>();
    for (let i = 0; i < count; i++) {
      const at = i * 16;
      const tag = String.fromCharCode(directory[at]!, directory[at + 1]!, directory[at + 2]!, directory[at + 3]!);
      const offset = entries.getUint32(at + 8);
      const length = entries.getUint32(at + 12);
      if (offset + length > source.size) return undefined;
      tables.set(tag, { offset, length });
    }
    const glyf = tables.get('glyf');
    // Glyphs fontkit would draw from elsewhere (bitmaps, colour layers) are its to handle.
    if (!glyf || tables.has('sbix') || tables.has('COLR')) return undefined;
    if (!['head', 'hhea', 'maxp', 'hmtx', 'loca', 'cmap'].every((tag) => tables.has(tag))) return undefined;
    const wanted = READ_TABLES.flatMap((tag) => {
      const table = tables.get(tag);
      return table
        ? [
            {
              key: tag,
              offset: table.offset,
              length: tag === 'post' ? Math.min(table.length, POST_BYTES) : table.length,
            },
          ]
        : [];
    });
    const read = readRanges(source, wanted);
    if (!read) return undefined;
    const views = new Map([...read].map(([tag, bytes]) => [tag, view(bytes)]));
    const head = views.get('head')!;
    const hhea = views.get('hhea')!;
    const maxp = views.get('maxp')!;
    const hmtx = views.get('hmtx')!;
    const loca = views.get('loca')!;
    if (head.byteLength < 54 || hhea.byteLength < 36 || maxp.byteLength < 6 || head.getUint32(12) !== 0x5f0f3cf5)
      return undefined;
    const unitsPerEm = head.getUint16(18);
    const locaFormat = head.getInt16(50);
    const numGlyphs = maxp.getUint16(4);
    const numberOfHMetrics = hhea.getUint16(34);
    if (unitsPerEm === 0 || (locaFormat !== 0 && locaFormat !== 1) || numGlyphs === 0) return undefined;
    if (
      numberOfHMetrics === 0 ||
      numberOfHMetrics > numGlyphs ||
      hmtx.byteLength < numberOfHMetrics * 4 + (numGlyphs - numberOfHMetrics) * 2
    )
      return undefined;
    if (loca.byteLength < (numGlyphs + 1) * (locaFormat === 1 ? 4 : 2)) return undefined;
    const cmap = chooseCmap(views.get('cmap')!);
    if (!cmap) return undefined;
    return new TrueTypeFont(source, views, glyf, cmap, unitsPerEm, numGlyphs, locaFormat === 1, numberOfHMetrics);
  }

  /** The glyph of a character, 0 when the font has none. */
  glyphId(codePoint: number): number {
    const gid = this.cmap.format === 4 ? format4(this.cmap.view, codePoint) : format12(this.cmap.view, codePoint);
    return gid < this.numGlyphs ? gid : 0;
  }

  /** A glyph's advance width in font units (hmtx: glyphs past its last full metric share that advance). */
  advanceWidth(gid: number): number {
    return this.table('hmtx').getUint16(4 * Math.min(gid, this.numberOfHMetrics - 1));
  }

  private leftSideBearing(gid: number): number {
    const hmtx = this.table('hmtx');
    return gid < this.numberOfHMetrics
      ? hmtx.getInt16(4 * gid + 2)
      : hmtx.getInt16(4 * this.numberOfHMetrics + 2 * (gid - this.numberOfHMetrics));
  }

  /** hhea's ascender and descender, as fontkit's `ascent` and `descent`. */
  get ascent(): number {
    return this.table('hhea').getInt16(4);
  }

  get descent(): number {
    return this.table('hhea').getInt16(6);
  }

  /** OS/2's sCapHeight (version 2 on), else 0: the caller falls back to the ascent, as with fontkit. */
  get capHeight(): number {
    const os2 = this.views.get('OS/2');
    if (!os2 || os2.byteLength < 90 || os2.getUint16(0) < 2) return 0;
    return os2.getInt16(88);
  }

  /** head's xMin, yMin, xMax, yMax. */
  get bbox(): [number, number, number, number] {
    const head = this.table('head');
    return [head.getInt16(36), head.getInt16(38), head.getInt16(40), head.getInt16(42)];
  }

  /** post's italic angle (16.16 fixed point); 0 without one. */
  get italicAngle(): number {
    const post = this.views.get('post');
    return post && post.byteLength >= POST_BYTES ? post.getInt32(4) / 65536 : 0;
  }

  /** The name table's PostScript name (ID 6), as fontkit picks it: the first record's language, its last record. */
  get postscriptName(): string | undefined {
    const name = this.views.get('name');
    if (!name || name.byteLength < 6) return undefined;
    const count = name.getUint16(2);
    const strings = name.getUint16(4);
    let language: string | undefined;
    let found: string | undefined;
    for (let i = 0; i < count && 6 + (i + 1) * 12 <= name.byteLength; i++) {
      const at = 6 + i * 12;
      if (name.getUint16(at + 6) !== 6) continue;
      const platform = name.getUint16(at);
      const languageId = name.getUint16(at + 4);
      const lang =
        (platform === 1 && languageId === 0) || (platform === 3 && languageId === 0x409)
          ? 'en'
          : `${platform}-${languageId}`;
      language ??= lang;
      if (lang !== language) continue;
      const start = strings + name.getUint16(at + 10);
      const length = name.getUint16(at + 8);
      if (start + length > name.byteLength) continue;
      const raw = new Uint8Array(name.buffer, name.byteOffset + start, length);
      found = platform === 0 || platform === 3 ? utf16be(raw) : String.fromCharCode(...raw);
    }
    return found;
  }

  /**
   * A font program holding the glyphs `gids`, glyph 0 and the components of composite glyphs, each
   * at its original id; every other glyph is empty. Tables as fontkit's TrueType subsets have them,
   * written straight into the program. Returns the program and the ids it holds.
   */
  subset(gids: Iterable<number>): { program: Uint8Array; kept: Set<number> } {
    const glyphs = this.glyphsWithComponents(gids);
    const kept = new Set(glyphs.keys());
    const numGlyphs = Math.max(...kept) + 1;
    // Each glyph starts on a 4-byte boundary: short loca offsets count 2-byte words.
    let glyfLength = 0;
    for (const bytes of glyphs.values()) glyfLength += (bytes.length + 3) & ~3;
    const longLoca = glyfLength > 0x1fffe;
    const lengths: Record<(typeof SUBSET_TABLES)[number], number | undefined> = {
      head: this.table('head').byteLength,
      hhea: this.table('hhea').byteLength,
      loca: (numGlyphs + 1) * (longLoca ? 4 : 2),
      maxp: this.table('maxp').byteLength,
      'cvt ': this.views.get('cvt ')?.byteLength,
      prep: this.views.get('prep')?.byteLength,
      glyf: glyfLength,
      hmtx: numGlyphs * 4,
      fpgm: this.views.get('fpgm')?.byteLength,
    };
    const { out, at } = layOut(
      SUBSET_TABLES.flatMap((tag) => (lengths[tag] === undefined ? [] : [[tag, lengths[tag]] as const])),
    );
    const program = new DataView(out.buffer);
    for (const tag of ['head', 'hhea', 'maxp', 'cvt ', 'prep', 'fpgm'] as const) {
      const table = this.views.get(tag);
      if (table) out.set(bytesOf(table), at.get(tag)!);
    }
    program.setUint32(at.get('head')! + 8, 0);
    program.setInt16(at.get('head')! + 50, longLoca ? 1 : 0);
    program.setUint16(at.get('hhea')! + 34, numGlyphs);
    program.setUint16(at.get('maxp')! + 4, numGlyphs);
    const loca = at.get('loca')!;
    const glyf = at.get('glyf')!;
    const hmtx = at.get('hmtx')!;
    let offset = 0;
    for (let gid = 0; gid < numGlyphs; gid++) {
      if (longLoca) program.setUint32(loca + gid * 4, offset);
      else program.setUint16(loca + gid * 2, offset / 2);
      const bytes = glyphs.get(gid);
      if (!bytes) continue;
      out.set(bytes, glyf + offset);
      offset += (bytes.length + 3) & ~3;
      program.setUint16(hmtx + gid * 4, this.advanceWidth(gid));
      program.setInt16(hmtx + gid * 4 + 2, this.leftSideBearing(gid));
    }
    if (longLoca) program.setUint32(loca + numGlyphs * 4, offset);
    else program.setUint16(loca + numGlyphs * 2, offset / 2);
    finishFont(out);
    return { program: out, kept };
  }

  /** The glyph records of `gids`, glyph 0 and every component of a composite among them, by id. */
  private glyphsWithComponents(gids: Iterable<number>): Map<number, Uint8Array> {
    const glyphs = new Map<number, Uint8Array>();
    let pending = [0, ...gids];
    while (pending.length > 0) {
      const wanted = new Map<number, Table>();
      for (const gid of pending) {
        if (glyphs.has(gid) || wanted.has(gid)) continue;
        if (!(gid >= 0 && gid < this.numGlyphs)) throw new Error(`glyph ${gid} is not in the font`);
        const [start, end] = this.glyphRange(gid);
        wanted.set(gid, { offset: this.glyf.offset + start, length: end - start });
      }
      const read = readRanges(
        this.source,
        [...wanted].map(([gid, range]) => ({ key: gid, ...range })),
        READ_GAP,
      );
      if (!read) throw new Error('the font file changed while it was read');
      pending = [];
      for (const [gid, bytes] of read) {
        glyphs.set(gid, bytes);
        pending.push(...components(gid, bytes));
      }
    }
    return glyphs;
  }

  /** A glyph's bytes in glyf, from loca. */
  private glyphRange(gid: number): [number, number] {
    const loca = this.table('loca');
    const [start, end] = this.longLoca
      ? [loca.getUint32(gid * 4), loca.getUint32(gid * 4 + 4)]
      : [loca.getUint16(gid * 2) * 2, loca.getUint16(gid * 2 + 2) * 2];
    if (end < start || end > this.glyf.length) throw new Error(`glyph ${gid} lies outside the glyf table`);
    return [start, end];
  }

  private table(tag: ReadTable): DataView {
    return this.views.get(tag)!;
  }
}

/**
 * The bytes of each range, read in as few calls as the gaps between them allow (ranges closer
 * than `gap` share one), keyed as given; undefined when the source ends before one of them.
 */
function readRanges<K>(
  source: FontBytes,
  ranges: ReadonlyArray<{ key: K; offset: number; length: number }>,
  gap = READ_GAP,
): Map<K, Uint8Array> | undefined {
  const sorted = [...ranges].sort((a, b) => a.offset - b.offset);
  const out = new Map<K, Uint8Array>();
  let first = 0;
  while (first < sorted.length) {
    const from = sorted[first]!.offset;
    let to = from;
    let last = first;
    for (; last < sorted.length && sorted[last]!.offset <= to + gap; last++)
      to = Math.max(to, sorted[last]!.offset + sorted[last]!.length);
    const bytes = source.read(from, to - from);
    if (bytes.length < to - from) return undefined;
    for (const { key, offset, length } of sorted.slice(first, last))
      out.set(key, bytes.subarray(offset - from, offset - from + length));
    first = last;
  }
  return out;
}

/** The glyph ids a composite glyph record is built of (none for a simple or empty glyph). */
function components(gid: number, bytes: Uint8Array): number[] {
  if (bytes.length < 10) return [];
  const glyph = view(bytes);
  if (glyph.getInt16(0) >= 0) return [];
  const ids: number[] = [];
  let at = 10;
  for (;;) {
    if (at + 4 > bytes.length) throw new Error(`composite glyph ${gid} is truncated`);
    const flags = glyph.getUint16(at);
    ids.push(glyph.getUint16(at + 2));
    at += 4 + (flags & ARG_1_AND_2_ARE_WORDS ? 4 : 2);
    at += flags & WE_HAVE_A_SCALE ? 2 : flags & WE_HAVE_AN_X_AND_Y_SCALE ? 4 : flags & WE_HAVE_A_TWO_BY_TWO ? 8 : 0;
    if (!(flags & MORE_COMPONENTS)) return ids;
  }
}

function format4(cmap: DataView, codePoint: number): number {
  const segX2 = cmap.getUint16(6);
  const ends = 14;
  const starts = ends + segX2 + 2;
  const deltas = starts + segX2;
  const rangeOffsets = deltas + segX2;
  let min = 0;
  let max = segX2 / 2 - 1;
  while (min <= max) {
    const mid = (min + max) >> 1;
    const start = cmap.getUint16(starts + mid * 2);
    if (codePoint < start) max = mid - 1;
    else if (codePoint > cmap.getUint16(ends + mid * 2)) min = mid + 1;
    else {
      const delta = cmap.getUint16(deltas + mid * 2);
      const rangeOffset = cmap.getUint16(rangeOffsets + mid * 2);
      if (rangeOffset === 0) return (codePoint + delta) & 0xffff;
      const at = rangeOffsets + mid * 2 + rangeOffset + (codePoint - start) * 2;
      const gid = at + 2 <= cmap.byteLength ? cmap.getUint16(at) : 0;
      return gid === 0 ? 0 : (gid + delta) & 0xffff;
    }
  }
  return 0;
}

function format12(cmap: DataView, codePoint: number): number {
  let min = 0;
  let max = cmap.getUint32(12) - 1;
  while (min <= max) {
    const mid = (min + max) >> 1;
    const group = 16 + mid * 12;
    const start = cmap.getUint32(group);
    if (codePoint < start) max = mid - 1;
    else if (codePoint > cmap.getUint32(group + 4)) min = mid + 1;
    else return cmap.getUint32(group + 8) + (codePoint - start);
  }
  return 0;
}

/** The cmap subtable fontkit would use, when it is format 4 or 12 and lies inside the table: a view of just that subtable. */
function chooseCmap(cmap: DataView): { format: 4 | 12; view: DataView } | undefined {
  if (cmap.byteLength < 4) return undefined;
  const count = cmap.getUint16(2);
  if (4 + count * 8 > cmap.byteLength) return undefined;
  const subtable = (offset: number, end: number): DataView =>
    new DataView(cmap.buffer, cmap.byteOffset + offset, end - offset);
  for (const [platform, encoding] of CMAP_PREFERENCE) {
    for (let i = 0; i < count; i++) {
      const at = 4 + i * 8;
      if (cmap.getUint16(at) !== platform || cmap.getUint16(at + 2) !== encoding) continue;
      const offset = cmap.getUint32(at + 4);
      const tableEnd = cmap.byteLength;
      if (offset + 4 > tableEnd) return undefined;
      const format = cmap.getUint16(offset);
      if (format === 4) {
        const end = offset + cmap.getUint16(offset + 2);
        const segX2 = offset + 14 <= tableEnd ? cmap.getUint16(offset + 6) : 0;
        if (segX2 === 0 || segX2 % 2 !== 0 || end > tableEnd || offset + 16 + segX2 * 4 > end) return undefined;
        return { format, view: subtable(offset, end) };
      }
      if (format === 12) {
        if (offset + 16 > tableEnd) return undefined;
        const end = offset + cmap.getUint32(offset + 4);
        if (end > tableEnd || offset + 16 + cmap.getUint32(offset + 12) * 12 > end) return undefined;
        return { format, view: subtable(offset, end) };
      }
      return undefined;
    }
  }
  return undefined;
}

/**
 * An sfnt file's bytes for tables of these lengths, in this order, each on a 4-byte boundary (zeros
 * after), with its directory (records sorted by tag) written but for the checksums; and where each
 * table starts. The tables are written into it, then {@link finishFont} sums them.
 */
function layOut(tables: ReadonlyArray<readonly [string, number]>): { out: Uint8Array; at: Map<string, number> } {
  const count = tables.length;
  let size = 12 + count * 16;
  const at = new Map<string, number>();
  for (const [tag, length] of tables) {
    at.set(tag, size);
    size += (length + 3) & ~3;
  }
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  writeSfntHeader(view, 0x00010000, count);
  [...tables]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .forEach(([tag, length], i) => {
      const record = 12 + i * 16;
      for (let k = 0; k < 4; k++) out[record + k] = tag.charCodeAt(k);
      view.setUint32(record + 8, at.get(tag)!);
      view.setUint32(record + 12, length);
    });
  return { out, at };
}

/** An sfnt's first 12 bytes: its flavor (0x00010000 for glyf outlines, 'OTTO' for CFF), the table count and the search fields. */
export function writeSfntHeader(view: DataView, flavor: number, count: number): void {
  const power = 2 ** Math.floor(Math.log2(count));
  view.setUint32(0, flavor);
  view.setUint16(4, count);
  view.setUint16(6, power * 16);
  view.setUint16(8, Math.log2(power));
  view.setUint16(10, count * 16 - power * 16);
}

/**
 * Each table's checksum in its directory record, and head's checkSumAdjustment making the whole
 * file's checksum 0xB1B0AFBA (head's own checksum taken with the adjustment at 0, as the spec says).
 */
function finishFont(out: Uint8Array): void {
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  const count = view.getUint16(4);
  let total = 0;
  let head = 0;
  for (let i = 0; i < count; i++) {
    const record = 12 + i * 16;
    const offset = view.getUint32(record + 8);
    const sum = checksum(view, offset, view.getUint32(record + 12));
    view.setUint32(record + 4, sum);
    total = (total + sum) >>> 0;
    if (view.getUint32(record) === 0x68656164 /* 'head' */) head = offset;
  }
  total = (total + checksum(view, 0, 12 + count * 16)) >>> 0;
  view.setUint32(head + 8, (0xb1b0afba - total) >>> 0);
}

/** The sum of the big-endian 32-bit words of `length` bytes from `offset` (4-aligned, zeros after), modulo 2³². */
function checksum(view: DataView, offset: number, length: number): number {
  let sum = 0;
  const end = offset + length;
  let at = offset;
  // Two words a turn: a loop of one word a turn is hot enough for V8 to optimize, which costs more than it saves.
  for (; at + 8 <= end; at += 8) sum = (sum + view.getUint32(at) + view.getUint32(at + 4)) % 0x100000000;
  for (; at < end; at += 4) sum = (sum + view.getUint32(at)) % 0x100000000;
  return sum;
}

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function bytesOf(table: DataView): Uint8Array {
  return new Uint8Array(table.buffer, table.byteOffset, table.byteLength);
}

function utf16be(bytes: Uint8Array): string {
  let text = '';
  for (let i = 0; i + 1 < bytes.length; i += 2) text += String.fromCharCode((bytes[i]! << 8) | bytes[i + 1]!);
  return text;
}
