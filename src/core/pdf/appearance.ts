/**
 * The appearance of a visible signature: a Form XObject with a thin border, an optional image
 * (beside the text or behind it), and text lines drawn in embedded subsets of TrueType, OpenType
 * or WOFF fonts, each character in the first font of the chain that has it (appearance-fonts.ts)
 * — a Type 0 font per font drawn (Identity-H; CIDFontType2 with /FontFile2 for glyf outlines,
 * CIDFontType0 with /FontFile3 /CIDFontType0C for CFF) with a ToUnicode CMap, so any script the
 * fonts cover renders and extracts. esign's TrueType reader (truetype.ts) maps characters to
 * glyphs and subsets glyf fonts; fontkit shapes the scripts that need it and reads the fonts that
 * reader leaves alone. The text is wrapped and sized to fit the box.
 */
import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import type { Font, GlyphRun } from '@pdf-lib/fontkit';
import type { Bidi } from 'bidi-js';
import { EsignError } from '../errors.js';
import { cjsModule, type AppearanceImage } from './appearance-image.js';
import { ByteWriter, PdfStream, PdfString, asciiBytes, dict, name } from './objects.js';
import type { PdfObject, PdfRef } from './objects.js';
import { fontBytesOf, TrueTypeFont, type FontBytes } from './truetype.js';
import { isTrueTypeWoff2, isWoff, sfntOfWoff } from './woff.js';

/** Scripts whose glyphs depend on their neighbours (joining, reordering, marks): laid out with GSUB/GPOS. */
export const NEEDS_SHAPING =
  /[\u0590-\u08ff\u0900-\u0dff\u0e00-\u0fff\u1000-\u109f\u1780-\u17ff\ufb1d-\ufdff\ufe70-\ufeff\p{M}]/u;

/**
 * Whether `text` needs shaping: as NEEDS_SHAPING says, but without compiling it (its \p{M} takes
 * about a millisecond to build, once per run) for text of the blocks where it matches nothing
 * (appearance.test.ts checks each code unit): Basic Latin to the spacing modifier letters, Greek
 * and Cyrillic up to U+0482, and Latin Extended Additional to the currency signs. Most names,
 * dates and reasons are of these alone.
 */
export function needsShaping(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit > 0x02ff && (unit < 0x0370 || unit > 0x0482) && (unit < 0x1e00 || unit > 0x20cf))
      return NEEDS_SHAPING.test(text);
  }
  return false;
}

const KEPT_SUBSETS = 8;
const KEPT_WIDTHS = 4096;

/** A glyph placed on a line, in font units. */
export interface PlacedGlyph {
  id: number;
  /** The characters it shows, for the ToUnicode CMap. */
  codePoints: readonly number[];
  xAdvance: number;
  xOffset: number;
  yOffset: number;
}

/** How a font is read: by esign's TrueType reader where it can (no shaping needed), else by fontkit. */
export interface AppearanceFontOptions {
  /** Reads every text with fontkit, even where the TrueType reader would do (to compare the two). */
  fontkitOnly?: boolean;
}

/**
 * A font for appearances: parsed once, then used for every document of a run. A TrueType font
 * with glyf outlines (the default font, most .ttf files, their WOFF) is read by esign's reader ({@link TrueTypeFont}):
 * text that needs no shaping maps to glyphs through its cmap, and every subset keeps the original
 * glyph ids. fontkit loads only for what that cannot do: text that needs shaping (GSUB/GPOS), and
 * fonts the reader leaves alone (OpenType with CFF outlines, WOFF2 of CFF); it costs more to
 * load than an invisible signature takes.
 */
export class AppearanceFont {
  private readonly widths = new Map<string, number>();
  private readonly subsets = new Map<string, FontSubset>();
  /** Character → glyph and advance, by the TrueType reader. */
  private readonly glyphs = new Map<number, { id: number; advance: number }>();

  /** The whole file, read only for fontkit. */
  private wholeFile: Uint8Array | undefined;

  /** The Unicode bidirectional algorithm (bidi-js), loaded with fontkit: right-to-left scripts need shaping. */
  private bidi: Bidi | undefined;

  private constructor(
    private readonly source: FontBytes,
    /** How errors name it: the file, or "the default font (Noto Sans)". */
    readonly label: string,
    private readonly truetype: TrueTypeFont | undefined,
    private fontkit: Font | undefined,
  ) {}

  /**
   * Reads a TrueType/OpenType font (the first of a collection); refuses anything else in one line.
   * Of a file ({@link FontBytes}), the TrueType reader reads only what it uses; fontkit reads it all.
   */
  static async load(
    input: Uint8Array | FontBytes,
    label: string,
    options: AppearanceFontOptions = {},
  ): Promise<AppearanceFont> {
    let source = input instanceof Uint8Array ? fontBytesOf(input) : input;
    const read = (from: FontBytes) => (options.fontkitOnly ? undefined : TrueTypeFont.read(from));
    let truetype = read(source);
    // WOFF 1.0 unwrapped, so that the TrueType reader takes a WOFF of glyf outlines as it takes the .ttf
    // (asked only of what the reader left: the default font's path reads nothing more).
    const head = truetype ? undefined : source.read(0, 8);
    if (head && isWoff(head)) {
      source = fontBytesOf(sfntOfWoff(source.read(0, source.size), label));
      truetype = read(source);
    } else if (head && isTrueTypeWoff2(head))
      throw new EsignError(
        'USAGE',
        `${capitalize(label)} is a WOFF2 font of TrueType outlines, which esign cannot embed.`,
        {
          hint: 'Give the .ttf it was made from (or a WOFF of it) with --font FILE.',
        },
      );
    const font = new AppearanceFont(source, label, truetype, undefined);
    if (!truetype) font.fontkit = await loadFontkit(font.bytes, label);
    // fontkit subsets a CFF2 font as if it were TrueType: the program would hold no glyph.
    if (font.fontkit && (font.fontkit as FontkitTables).directory?.tables?.['CFF2'])
      throw new EsignError(
        'USAGE',
        `${capitalize(label)} has CFF2 outlines (a variable font), which esign cannot embed.`,
        {
          hint: 'Give a static instance of the font (.otf or .ttf) with --font FILE.',
        },
      );
    return font;
  }

  /** The font file's bytes, all of them (for fontkit). */
  private get bytes(): Uint8Array {
    return (this.wholeFile ??= this.source.read(0, this.source.size));
  }

  /**
   * Loads fontkit when `text` needs it (a script that needs shaping): called before any approval,
   * so a font fontkit cannot read is refused then.
   */
  async prepare(text: string): Promise<void> {
    if (!needsShaping(text)) return;
    this.fontkit ??= await loadFontkit(this.bytes, this.label);
    this.bidi ??= await loadBidi();
  }

  /** Whether the font has a glyph for `codePoint` (from the cmap, by whichever reader holds the font). */
  hasGlyph(codePoint: number): boolean {
    return this.truetype
      ? this.glyphOf(codePoint, this.truetype).id !== 0
      : this.fontkit!.hasGlyphForCodePoint(codePoint);
  }

  /** The glyphs of one line, shaped by fontkit when its script needs it (after {@link prepare}). */
  place(text: string): PlacedGlyph[] {
    if (needsShaping(text)) {
      if (!this.bidi)
        throw new EsignError('INTERNAL', 'The appearance font was not prepared for text that needs shaping.');
      return displayRuns(text, this.bidi).flatMap(({ text: run, rtl }) => this.shape(run, rtl));
    }
    if (this.truetype) {
      // One glyph per character, as fontkit's glyphsForString gives without variation selectors
      // (marks, which they are, need shaping).
      return Array.from(text, (ch) => {
        const codePoint = ch.codePointAt(0)!;
        const { id, advance } = this.glyphOf(codePoint, this.truetype!);
        return { id, codePoints: [codePoint], xAdvance: advance, xOffset: 0, yOffset: 0 };
      });
    }
    return this.fontkit!.glyphsForString(text).map((glyph) => ({
      id: glyph.id,
      codePoints: glyph.codePoints,
      xAdvance: glyph.advanceWidth,
      xOffset: 0,
      yOffset: 0,
    }));
  }

  /**
   * The glyphs of one run of a single direction, in display order: shaped by fontkit when its
   * script needs it (after {@link prepare}), else one glyph a character, reversed when right-to-left.
   */
  placeRun(text: string, rtl: boolean): PlacedGlyph[] {
    if (needsShaping(text)) return this.shape(text, rtl);
    const glyphs = this.place(text);
    return rtl ? glyphs.reverse() : glyphs;
  }

  private shape(run: string, rtl: boolean): PlacedGlyph[] {
    if (!this.fontkit)
      throw new EsignError('INTERNAL', 'The appearance font was not prepared for text that needs shaping.');
    const laid = (this.fontkit.layout as LayoutWithDirection).call(
      this.fontkit,
      run,
      undefined,
      undefined,
      undefined,
      rtl ? 'rtl' : 'ltr',
    );
    return laid.glyphs.map((glyph, i) => {
      const p = laid.positions[i]!;
      return {
        id: glyph.id,
        codePoints: glyph.codePoints,
        xAdvance: p.xAdvance,
        xOffset: p.xOffset,
        yOffset: p.yOffset,
      };
    });
  }

  /** The advances of `text`'s glyphs, summed: as {@link place} lays them, without placing them. */
  private advances(text: string): number {
    if (!this.truetype || needsShaping(text)) return this.place(text).reduce((sum, g) => sum + g.xAdvance, 0);
    let sum = 0;
    for (const ch of text) sum += this.glyphOf(ch.codePointAt(0)!, this.truetype).advance;
    return sum;
  }

  private glyphOf(codePoint: number, truetype: TrueTypeFont): { id: number; advance: number } {
    let glyph = this.glyphs.get(codePoint);
    if (!glyph) {
      const id = truetype.glyphId(codePoint);
      glyph = { id, advance: truetype.advanceWidth(id) };
      if (this.glyphs.size >= KEPT_WIDTHS) this.glyphs.clear();
      this.glyphs.set(codePoint, glyph);
    }
    return glyph;
  }

  /** Width of `text` at a font size of 1. */
  width(text: string): number {
    let width = this.widths.get(text);
    if (width === undefined) {
      width = this.advances(text) / this.unitsPerEm;
      // Bounded: a batch's lines change with the time of signing.
      if (this.widths.size >= KEPT_WIDTHS) this.widths.clear();
      this.widths.set(text, width);
    }
    return width;
  }

  get unitsPerEm(): number {
    return this.truetype ? this.truetype.unitsPerEm : this.fontkit!.unitsPerEm;
  }

  /**
   * The subset holding `glyphs` (encoded once per distinct set: a batch shares it). The last few
   * are kept: a batch's text changes with the time of signing.
   */
  async subset(glyphs: readonly PlacedGlyph[]): Promise<FontSubset> {
    const byId = new Map<number, PlacedGlyph>();
    for (const glyph of glyphs) byId.set(glyph.id, glyph);
    const ids = [...byId.keys()].sort((a, b) => a - b);
    const key = ids.join(',');
    let subset = this.subsets.get(key);
    if (!subset) {
      const sorted = ids.map((id) => byId.get(id)!);
      subset = this.truetype
        ? encodeTrueTypeSubset(this.truetype, sorted)
        : await encodeFontkitSubset(this.fontkit!, sorted, italicAngle(this.fontkit!, this.bytes));
      if (this.subsets.size >= KEPT_SUBSETS) this.subsets.delete(this.subsets.keys().next().value!);
      this.subsets.set(key, subset);
    }
    return subset;
  }

  /**
   * Makes ahead the subset of `lines`, compressed, while the run waits on the network (the signing
   * service): drawing the same glyphs later takes it from here. Only text that needs no shaping
   * (shaped glyphs depend on where lines wrap; unshaped ones do not, but for a space at every break).
   */
  async prepareSubset(lines: readonly string[]): Promise<void> {
    if (!this.truetype || needsShaping(lines.join('\n'))) return;
    compress(await this.subset(lines.flatMap((line) => this.place(line))));
  }
}

/** bidi-js: a CommonJS module whose export is its factory, the `default` of the import (its types say otherwise). */
export async function loadBidi(): Promise<Bidi> {
  const factory = ((await import('bidi-js')) as { default: unknown }).default;
  if (typeof factory !== 'function') throw new EsignError('INTERNAL', 'bidi-js did not load as expected.');
  return (factory as () => Bidi)();
}

/** fontkit's layout with its script, language and direction (its types declare the first two parameters only). */
type LayoutWithDirection = (
  text: string,
  features: undefined,
  script: undefined,
  language: undefined,
  direction: 'ltr' | 'rtl',
) => GlyphRun;

/**
 * A line's bidirectional runs (UAX #9 by bidi-js, the line's direction from its first strong
 * character), in the order they are drawn: each run in reading order, for fontkit to shape (it
 * reverses a right-to-left run's glyphs), the runs reordered by rule L2, and the characters of
 * right-to-left runs that have a mirrored form (brackets) mirrored (rule L4).
 */
export function displayRuns(text: string, bidi: Bidi): { text: string; rtl: boolean }[] {
  const { levels } = bidi.getEmbeddingLevels(text);
  const mirrored = bidi.getMirroredCharactersMap(text, levels);
  const runs: { text: string; level: number }[] = [];
  for (let start = 0; start < text.length;) {
    let end = start + 1;
    while (end < text.length && levels[end] === levels[start]) end++;
    let run = '';
    for (let i = start; i < end; i++) run += mirrored.get(i) ?? text[i];
    runs.push({ text: run, level: levels[start]! });
    start = end;
  }
  const levelsOf = runs.map((run) => run.level);
  const lowestOdd = Math.min(...levelsOf.filter((level) => level % 2 === 1));
  // L2: from the highest level down to the lowest odd one, reverse every sequence of runs at that level or higher.
  for (let level = Math.max(...levelsOf); level >= lowestOdd; level--) {
    for (let start = 0; start < runs.length;) {
      if (runs[start]!.level < level) {
        start++;
        continue;
      }
      let end = start;
      while (end < runs.length && runs[end]!.level >= level) end++;
      runs.splice(start, end - start, ...runs.slice(start, end).reverse());
      start = end;
    }
  }
  return runs.map((run) => ({ text: run.text, rtl: run.level % 2 === 1 }));
}

/** Parses a font with fontkit (the first of a collection); refuses what it cannot read in one line. */
async function loadFontkit(bytes: Uint8Array, label: string): Promise<Font> {
  const { create } = cjsModule(await import('@pdf-lib/fontkit'), 'create');
  let parsed: Font | { fonts?: Font[] };
  try {
    parsed = create(bytes) as Font | { fonts?: Font[] };
  } catch (error) {
    throw notAFont(label, (error as Error).message);
  }
  const font = 'fonts' in parsed && Array.isArray(parsed.fonts) ? parsed.fonts[0] : (parsed as Font);
  if (!font || typeof font.glyphsForString !== 'function' || !(font.unitsPerEm > 0)) throw notAFont(label, 'no glyphs');
  try {
    font.hasGlyphForCodePoint(0x20);
  } catch (error) {
    throw notAFont(label, (error as Error).message);
  }
  return font;
}

/**
 * The post table's italic angle (a 16.16 fixed-point number at byte 4), read from the file: fontkit
 * decodes the whole table to give it, every glyph's name included (30 ms for Noto Sans). WOFF
 * tables are compressed, so there fontkit reads it.
 */
function italicAngle(font: Font, bytes: Uint8Array): number {
  const post = (font as FontkitTables).directory?.tables?.['post'];
  const woff = /^wOF[F2]$/.test(Buffer.from(bytes.subarray(0, 4)).toString('latin1'));
  if (woff || !post) return font.italicAngle;
  if (post.length < 8 || post.offset + 8 > bytes.length) return 0;
  return new DataView(bytes.buffer, bytes.byteOffset + post.offset + 4, 4).getInt32(0) / 65536;
}

/** A font program holding only some glyphs, with what the PDF font dictionaries say about it. */
interface FontSubset {
  /** Original glyph id → CID: the glyph's id in the subset (the same id where the subset keeps ids). */
  cids: Map<number, number>;
  program: Uint8Array;
  cff: boolean;
  baseFont: string;
  /** Advance widths in 1/1000 em, by CID (a CID no glyph shows has none). */
  widths: (number | undefined)[];
  /** The CIDs the program holds, for the CIDSet. */
  present: readonly number[];
  toUnicode: Uint8Array;
  /** The three streams, compressed once: a batch adds the same bytes to every document. */
  compressed?: { program: Uint8Array; toUnicode: Uint8Array; cidSet: Uint8Array };
  descriptor: { ascent: number; descent: number; capHeight: number; italicAngle: number; bbox: number[] };
}

/** What both subsetters state the same way: the tag, the name, the ToUnicode map, the metrics. */
interface FontFacts {
  unitsPerEm: number;
  postscriptName: string | null | undefined;
  ascent: number;
  descent: number;
  capHeight: number;
  italicAngle: number;
  bbox: readonly number[];
}

function describeSubset(
  facts: FontFacts,
  glyphs: readonly PlacedGlyph[],
  cids: Map<number, number>,
): Pick<FontSubset, 'baseFont' | 'toUnicode' | 'descriptor'> {
  const unicode: string[] = [];
  for (const glyph of glyphs)
    if (glyph.id !== 0) unicode[cids.get(glyph.id)!] = String.fromCodePoint(...glyph.codePoints);
  const scale = 1000 / facts.unitsPerEm;
  // A subset's name is tagged with six capitals (ISO 32000-1 §9.6.4), here from its glyphs.
  const digest = createHash('sha256')
    .update(glyphs.map((g) => g.id).join(','))
    .digest();
  const tag = Array.from(digest.subarray(0, 6), (byte) => String.fromCharCode(65 + (byte % 26))).join('');
  return {
    baseFont: `${tag}+${(facts.postscriptName ?? 'Font').replace(/[^\x21-\x7e]|[()<>[\]{}/%#]/g, '')}`,
    toUnicode: toUnicodeCMap(unicode),
    descriptor: {
      ascent: Math.round(facts.ascent * scale),
      descent: Math.round(facts.descent * scale),
      capHeight: Math.round((facts.capHeight || facts.ascent) * scale),
      italicAngle: facts.italicAngle,
      bbox: facts.bbox.map((v) => Math.round(v * scale)),
    },
  };
}

/** A subset by esign's TrueType reader: every glyph keeps its id, so CID = glyph id (CIDToGIDMap /Identity). */
function encodeTrueTypeSubset(font: TrueTypeFont, glyphs: readonly PlacedGlyph[]): FontSubset {
  let encoded: ReturnType<TrueTypeFont['subset']>;
  try {
    encoded = font.subset(glyphs.map((g) => g.id));
  } catch (error) {
    throw cannotSubset(error);
  }
  const scale = 1000 / font.unitsPerEm;
  const cids = new Map<number, number>([[0, 0]]);
  const widths: (number | undefined)[] = [Math.round(font.advanceWidth(0) * scale)];
  for (const glyph of glyphs) {
    cids.set(glyph.id, glyph.id);
    widths[glyph.id] = Math.round(font.advanceWidth(glyph.id) * scale);
  }
  const facts = {
    unitsPerEm: font.unitsPerEm,
    postscriptName: font.postscriptName,
    ascent: font.ascent,
    descent: font.descent,
    capHeight: font.capHeight,
    italicAngle: font.italicAngle,
    bbox: font.bbox,
  };
  return {
    cids,
    program: encoded.program,
    cff: false,
    widths,
    present: [...encoded.kept].sort((a, b) => a - b),
    ...describeSubset(facts, glyphs, cids),
  };
}

/** A subset by fontkit: glyphs renumbered from 1 in the order given (CFF fonts, WOFF). */
async function encodeFontkitSubset(
  font: Font,
  glyphs: readonly PlacedGlyph[],
  italicAngle: number,
): Promise<FontSubset> {
  const subset = font.createSubset();
  const cids = new Map<number, number>();
  const scale = 1000 / font.unitsPerEm;
  const widths = [Math.round(font.getGlyph(0).advanceWidth * scale)];
  for (const glyph of glyphs) {
    if (glyph.id === 0) continue;
    const cid = subset.includeGlyph(glyph.id);
    cids.set(glyph.id, cid);
    widths[cid] = Math.round(font.getGlyph(glyph.id).advanceWidth * scale);
  }
  cids.set(0, 0);
  const parts: Uint8Array[] = [];
  await new Promise<void>((resolve, reject) => {
    try {
      subset
        .encodeStream()
        .on('data', (chunk) => void parts.push(chunk))
        .on('end', () => resolve());
    } catch (error) {
      reject(cannotSubset(error));
    }
  });
  const program = Buffer.concat(parts);
  const cff = isCff(font);
  // fontkit writes the CFF header's offSize (byte 3) from a field its parse never sets (27 for Noto Sans CJK):
  // FreeType and poppler refuse a program whose offSize is not 1 to 4. 4 holds any offset.
  if (cff && program.length > 3) program[3] = 4;
  const bbox = font.bbox;
  const facts = {
    unitsPerEm: font.unitsPerEm,
    postscriptName: font.postscriptName,
    ascent: font.ascent,
    descent: font.descent,
    capHeight: font.capHeight,
    italicAngle,
    bbox: [bbox.minX, bbox.minY, bbox.maxX, bbox.maxY],
  };
  return {
    cids,
    program,
    cff,
    widths: Array.from({ length: widths.length }, (_, i) => widths[i] ?? 0),
    present: Array.from({ length: widths.length }, (_, i) => i),
    ...describeSubset(facts, glyphs, cids),
  };
}

/** Whether fontkit's subset of `font` is a bare CFF program (CFF outlines, of an .otf, a collection or a WOFF): FontFile3 then. */
function isCff(font: Font): boolean {
  return Boolean((font as FontkitTables).directory?.tables?.['CFF ']);
}

/** fontkit's table directory, which its types leave out. */
type FontkitTables = { directory?: { tables?: Record<string, { offset: number; length: number } | undefined> } };

function cannotSubset(error: unknown): EsignError {
  return new EsignError('USAGE', `The font could not be subset (${(error as Error).message}).`, {
    hint: 'Give another font with --font FILE.',
  });
}

/** A ToUnicode CMap: each CID (2 bytes, Identity-H) to the UTF-16BE of the characters its glyph shows. */
function toUnicodeCMap(unicode: readonly (string | undefined)[]): Uint8Array {
  const entries: string[] = [];
  unicode.forEach((text, cid) => {
    if (!text) return;
    let hex = '';
    for (let i = 0; i < text.length; i++) hex += text.charCodeAt(i).toString(16).padStart(4, '0');
    entries.push(`<${cid.toString(16).padStart(4, '0')}> <${hex}>`);
  });
  const blocks: string[] = [];
  for (let i = 0; i < entries.length; i += 100) {
    const block = entries.slice(i, i + 100);
    blocks.push(`${block.length} beginbfchar\n${block.join('\n')}\nendbfchar`);
  }
  return Buffer.from(
    '/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n' +
      '/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n' +
      `1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n${blocks.join('\n')}\n` +
      'endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n',
    'latin1',
  );
}

/** Adds the Type 0 font of `subset` (and the objects it refers to) and returns its reference. */
function addFont(subset: FontSubset, add: (value: PdfObject) => PdfRef): PdfRef {
  const compressed = compress(subset);
  const flate = (data: Uint8Array, extra: Record<string, PdfObject> = {}): PdfStream =>
    new PdfStream(dict({ Filter: name('FlateDecode'), ...extra }), data);
  const program = add(
    flate(compressed.program, subset.cff ? { Subtype: name('CIDFontType0C') } : { Length1: subset.program.length }),
  );
  const d = subset.descriptor;
  const descriptor = add(
    dict({
      Type: name('FontDescriptor'),
      FontName: name(subset.baseFont),
      Flags: 4,
      FontBBox: d.bbox,
      ItalicAngle: d.italicAngle,
      Ascent: d.ascent,
      Descent: d.descent,
      CapHeight: d.capHeight,
      StemV: 80,
      // PDF/A-1 (ISO 19005-1 §6.3.5) wants every CID of a subset listed; later parts accept a complete one.
      CIDSet: add(flate(compressed.cidSet)),
      [subset.cff ? 'FontFile3' : 'FontFile2']: program,
    }),
  );
  const descendant = add(
    dict({
      Type: name('Font'),
      Subtype: name(subset.cff ? 'CIDFontType0' : 'CIDFontType2'),
      BaseFont: name(subset.baseFont),
      CIDSystemInfo: dict({ Registry: asciiString('Adobe'), Ordering: asciiString('Identity'), Supplement: 0 }),
      FontDescriptor: descriptor,
      W: widthRuns(subset.widths),
      CIDToGIDMap: subset.cff ? undefined : name('Identity'),
    }),
  );
  return add(
    dict({
      Type: name('Font'),
      Subtype: name('Type0'),
      BaseFont: name(subset.baseFont),
      Encoding: name('Identity-H'),
      DescendantFonts: [descendant],
      ToUnicode: add(flate(compressed.toUnicode)),
    }),
  );
}

/** The subset's three streams, compressed once: a batch adds the same bytes to every document. */
function compress(subset: FontSubset): NonNullable<FontSubset['compressed']> {
  return (subset.compressed ??= {
    program: deflateSync(subset.program),
    toUnicode: deflateSync(subset.toUnicode),
    cidSet: deflateSync(cidSet(subset.present)),
  });
}

/** A CIDSet stream's bits: the CIDs `present`, the most significant bit first. */
function cidSet(present: readonly number[]): Uint8Array {
  const bits = new Uint8Array(Math.ceil((Math.max(...present) + 1) / 8));
  for (const cid of present) bits[cid >> 3]! |= 0x80 >> (cid & 7);
  return bits;
}

/** The /W array: each run of consecutive CIDs with a width as `first [w1 w2 …]`. */
function widthRuns(widths: readonly (number | undefined)[]): PdfObject[] {
  const out: PdfObject[] = [];
  let run: number[] | undefined;
  for (let cid = 0; cid < widths.length; cid++) {
    const width = widths[cid];
    if (width === undefined) {
      run = undefined;
      continue;
    }
    if (!run) {
      run = [];
      out.push(cid, run);
    }
    run.push(width);
  }
  return out;
}

const MAX_FONT_SIZE = 12;
const MIN_WRAPPED_FONT_SIZE = 4;
const LINE_HEIGHT = 1.2;

/** What measures text for wrapping and fitting: a width at a font size of 1. */
interface TextWidth {
  width(text: string): number;
}

/**
 * The chain of fonts a text is drawn in, each character in the first that has it: what this file
 * asks of appearance-fonts.ts's `AppearanceFonts` (which itself builds on `AppearanceFont` here).
 */
export interface FontChain extends TextWidth {
  prepare(text: string): Promise<void>;
  place(line: string): { font: number; glyphs: PlacedGlyph[] }[];
  readonly fonts: readonly AppearanceFont[];
}

/** What an appearance shows: the lines of text, in `fonts` (each character in the first that has it), and an optional image. */
export interface AppearanceContent {
  lines: readonly string[];
  fonts: FontChain;
  image?: { image: AppearanceImage; position: 'left' | 'background' };
}

/** Lines wrapped at spaces (a word too long for a line is broken between characters) to `maxWidth` at size 1. */
export function wrapLines(font: TextWidth, lines: readonly string[], maxWidth: number): string[] {
  const out: string[] = [];
  for (const line of lines) {
    let current = '';
    for (const word of line.split(/ +/)) {
      const candidate = current ? `${current} ${word}` : word;
      if (font.width(candidate) <= maxWidth || !current) {
        current = candidate;
        if (font.width(current) > maxWidth) {
          const pieces = breakWord(font, current, maxWidth);
          out.push(...pieces.slice(0, -1));
          current = pieces.at(-1)!;
        }
        continue;
      }
      out.push(current);
      current = word;
      if (font.width(current) > maxWidth) {
        const pieces = breakWord(font, current, maxWidth);
        out.push(...pieces.slice(0, -1));
        current = pieces.at(-1)!;
      }
    }
    out.push(current);
  }
  return out;
}

function breakWord(font: TextWidth, word: string, maxWidth: number): string[] {
  const pieces: string[] = [];
  let current = '';
  for (const ch of word) {
    if (current && font.width(current + ch) > maxWidth && !/\p{M}/u.test(ch)) {
      pieces.push(current);
      current = ch;
    } else current += ch;
  }
  pieces.push(current);
  return pieces;
}

/**
 * The font size and lines that fit a `width` × `height` box: the largest size (up to 12 pt) at
 * which the wrapped lines fit; below 4 pt lines are no longer wrapped but shrunk to fit.
 */
export function fitText(
  font: TextWidth,
  lines: readonly string[],
  width: number,
  height: number,
): { size: number; lines: string[] } {
  if (lines.length === 0 || width <= 0 || height <= 0) return { size: MAX_FONT_SIZE, lines: [] };
  for (let size = MAX_FONT_SIZE; size >= MIN_WRAPPED_FONT_SIZE; size -= 0.5) {
    const wrapped = wrapLines(font, lines, width / size);
    if (wrapped.length * size * LINE_HEIGHT <= height && wrapped.every((line) => font.width(line) * size <= width))
      return { size, lines: wrapped };
  }
  const wrapped = wrapLines(font, lines, width / MIN_WRAPPED_FONT_SIZE);
  let size = height / (wrapped.length * LINE_HEIGHT);
  for (const line of wrapped) {
    const w = font.width(line);
    if (w > 0) size = Math.min(size, width / w);
  }
  return { size, lines: wrapped };
}

/**
 * Builds the `/AP /N` Form XObject for a box of `width` × `height` points. `add` makes an
 * indirect object of the update (the font's streams, the image) and returns its reference.
 */
export async function buildAppearance(
  width: number,
  height: number,
  content: AppearanceContent,
  add: (value: PdfObject) => PdfRef,
): Promise<PdfStream> {
  const pad = Math.min(4, width / 10, height / 10);
  const ops = new ByteWriter();
  ops.ascii(`q 0.5 w 0.3 0.3 0.3 RG 0.25 0.25 ${fmt(width - 0.5)} ${fmt(height - 0.5)} re S Q\n`);
  const resources = dict({ ProcSet: [name('PDF'), name('Text'), name('ImageB'), name('ImageC')] });
  let textLeft = pad;
  if (content.image) {
    const { image, position } = content.image;
    const box =
      position === 'background'
        ? { x: pad, y: pad, w: width - 2 * pad, h: height - 2 * pad }
        : { x: pad, y: pad, w: Math.min((width - 2 * pad) * 0.4, height - 2 * pad), h: height - 2 * pad };
    const scale = Math.min(box.w / image.width, box.h / image.height);
    const w = image.width * scale;
    const h = image.height * scale;
    const x = position === 'background' ? box.x + (box.w - w) / 2 : box.x;
    ops.ascii(`q ${fmt(w)} 0 0 ${fmt(h)} ${fmt(x)} ${fmt(box.y + (box.h - h) / 2)} cm /Im1 Do Q\n`);
    resources.set('XObject', dict({ Im1: image.addTo(add) }));
    if (position === 'left') textLeft = pad + box.w + pad;
  }
  const { fonts } = content;
  await fonts.prepare(content.lines.join('\n'));
  const { size, lines } = fitText(fonts, content.lines, width - textLeft - pad, height - 2 * pad);
  if (lines.length > 0) {
    const placed = lines.map((line) => fonts.place(line));
    // One subset a font, F1 the first font of the chain, F2 the second, … (only those drawn).
    const glyphsByFont = new Map<number, PlacedGlyph[]>();
    for (const run of placed.flat()) {
      const glyphs = glyphsByFont.get(run.font);
      if (glyphs) glyphs.push(...run.glyphs);
      else glyphsByFont.set(run.font, [...run.glyphs]);
    }
    const subsets = new Map<number, FontSubset>();
    const fontResources = dict({});
    for (const [font, glyphs] of glyphsByFont) {
      const subset = await fonts.fonts[font]!.subset(glyphs);
      subsets.set(font, subset);
      fontResources.set(`F${font + 1}`, addFont(subset, add));
    }
    resources.set('Font', fontResources);
    let current = placed[0]![0]!.font;
    ops.ascii(
      `BT /F${current + 1} ${fmt(size)} Tf 0 g ${fmt(size * LINE_HEIGHT)} TL ${fmt(textLeft)} ${fmt(height - pad - size)} Td\n`,
    );
    placed.forEach((runs, i) => {
      if (i > 0) ops.ascii('T* ');
      for (const run of runs) {
        if (run.font !== current) ops.ascii(`/F${run.font + 1} ${fmt(size)} Tf `);
        current = run.font;
        ops.ascii(showGlyphs(run.glyphs, subsets.get(run.font)!, 1000 / fonts.fonts[run.font]!.unitsPerEm, size));
      }
    });
    ops.ascii('ET\n');
  }
  return new PdfStream(
    dict({ Type: name('XObject'), Subtype: name('Form'), BBox: [0, 0, width, height], Resources: resources }),
    ops.toBytes(),
  );
}

/** `[<cid> adjust <cid> …] TJ` for one line; a glyph raised or lowered by shaping is shown with Ts. */
function showGlyphs(glyphs: readonly PlacedGlyph[], subset: FontSubset, k: number, size: number): string {
  let out = '';
  let array: string[] = [];
  const flush = (): void => {
    if (array.length > 0) out += `[${array.join(' ')}] TJ `;
    array = [];
  };
  for (const { id, xAdvance, xOffset, yOffset } of glyphs) {
    const cid = subset.cids.get(id) ?? 0;
    const shown = subset.widths[cid] ?? 0;
    if (xOffset !== 0) array.push(fmt(-xOffset * k));
    if (yOffset !== 0) {
      flush();
      out += `${fmt((yOffset * k * size) / 1000)} Ts [<${hex4(cid)}>] TJ 0 Ts `;
    } else array.push(`<${hex4(cid)}>`);
    const rest = (xAdvance - xOffset) * k - shown;
    if (Math.abs(rest) > 0.01) array.push(fmt(-rest));
  }
  flush();
  return `${out}\n`;
}

function hex4(value: number): string {
  return value.toString(16).padStart(4, '0');
}

function asciiString(text: string): PdfString {
  return new PdfString(asciiBytes(text));
}

function notAFont(label: string, reason: string): EsignError {
  return new EsignError('USAGE', `${capitalize(label)} is not a TrueType or OpenType font (${reason}).`, {
    hint: 'Give a .ttf, .otf, .ttc or .woff file with --font FILE.',
  });
}

export function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function fmt(value: number): string {
  return String(Math.round(value * 1000) / 1000);
}
