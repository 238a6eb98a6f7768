import { existsSync, readFileSync } from 'node:fs';
import { inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  AppearanceFont,
  NEEDS_SHAPING,
  buildAppearance,
  displayRuns,
  fitText,
  loadBidi,
  needsShaping,
} from './appearance.js';
import { AppearanceFonts } from './appearance-fonts.js';
import { fontOfCollection } from '../../../test/helpers/font-kinds.js';
import { PdfRef, PdfStream, serialize } from './objects.js';
import type { PdfObject } from './objects.js';

const NOTO = readFileSync(
  new URL('../../../node_modules/@expo-google-fonts/noto-sans/400Regular/NotoSans_400Regular.ttf', import.meta.url),
);
/** A collection of CFF fonts, from Debian (fonts-noto-cjk, which .ci/run installs). */
const NOTO_SANS_CJK = '/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc';
const font = await AppearanceFont.load(NOTO, 'the default font');
const fonts = new AppearanceFonts([font]);

/** Builds an appearance, collecting the indirect objects it adds. */
async function build(width: number, height: number, lines: string[]): Promise<{ content: string; added: PdfObject[] }> {
  const added: PdfObject[] = [];
  const stream = await buildAppearance(width, height, { lines, fonts }, (value) => {
    added.push(value);
    return new PdfRef(added.length, 0);
  });
  return { content: Buffer.from(stream.data).toString('latin1'), added };
}

const fontSize = (content: string) => Number(/\/F1 ([\d.]+) Tf/.exec(content)?.[1]);

describe('appearance', () => {
  it('tells text that needs shaping as NEEDS_SHAPING does, for every code unit and for astral marks', () => {
    const differ: string[] = [];
    for (let unit = 0; unit <= 0xffff; unit++) {
      const text = `Zoë ${String.fromCharCode(unit)}`;
      if (needsShaping(text) !== NEEDS_SHAPING.test(text)) differ.push(unit.toString(16));
    }
    expect(differ).toEqual([]);
    expect(needsShaping('Ζωή Παπαδοπούλου – Łukasiewicz, Привет 2026-01-01 12:00 €')).toBe(false);
    expect([
      needsShaping('مرحبا'),
      needsShaping('e\u0301'),
      needsShaping('x\u{1d167}'),
      needsShaping('\u{1f600}'),
    ]).toEqual([true, true, true, false]);
  });

  it("orders a line's bidirectional runs for display (UAX #9): right-to-left runs marked for reversal, runs reordered, brackets mirrored", async () => {
    const bidi = await loadBidi();
    expect(displayRuns('Digitally signed by محمد علي', bidi)).toEqual([
      { text: 'Digitally signed by ', rtl: false },
      { text: 'محمد علي', rtl: true },
    ]);
    // A line whose first strong character is Hebrew reads right to left: the Latin word comes first on the page.
    expect(displayRuns('שלום world', bidi)).toEqual([
      { text: 'world', rtl: false },
      { text: 'שלום ', rtl: true },
    ]);
    // Numbers keep their order inside right-to-left text, brackets there are mirrored, and left-to-right text is one run.
    expect(displayRuns('עברית (מאושר) 2026', bidi)).toEqual([
      { text: '2026', rtl: false },
      { text: 'עברית )מאושר( ', rtl: true },
    ]);
    expect(displayRuns('नमस्ते दुनिया', bidi)).toEqual([{ text: 'नमस्ते दुनिया', rtl: false }]);
  });

  it('embeds a Type 0 font subset (CIDFontType2, Identity-H) with a ToUnicode CMap mapping its glyphs back to the text', async () => {
    const { content, added } = await build(250, 70, ['Ζωή Παπαδοπούλου', 'Łukasiewicz – Привет']);
    const dicts = added
      .map((value) => serialize(value instanceof PdfStream ? value.dict : value))
      .map((bytes) => Buffer.from(bytes).toString('latin1'));
    expect(
      dicts.some(
        (d) => /\/Subtype \/Type0/.test(d) && /\/Encoding \/Identity-H/.test(d) && /\/ToUnicode \d+ 0 R/.test(d),
      ),
    ).toBe(true);
    expect(
      dicts.some(
        (d) =>
          /\/Subtype \/CIDFontType2/.test(d) &&
          /\/CIDToGIDMap \/Identity/.test(d) &&
          /\/BaseFont \/[A-Z]{6}\+NotoSans-Regular/.test(d),
      ),
    ).toBe(true);
    expect(dicts.some((d) => /\/FontFile2 \d+ 0 R/.test(d))).toBe(true);
    const streams = added
      .filter((value): value is PdfStream => value instanceof PdfStream)
      .map((s) => inflateSync(s.data));
    const cmap = streams.map((s) => s.toString('latin1')).find((s) => s.includes('beginbfchar'))!;
    // Ζ is U+0396, Ж of Привет is not there but П (U+041F) is; each glyph is mapped once.
    expect(cmap).toMatch(/<[0-9a-f]{4}> <0396>/);
    expect(cmap).toMatch(/<[0-9a-f]{4}> <041f>/);
    // The subset is a small TrueType program, not the whole 600 KB font.
    const program = streams.find((s) => !s.includes('beginbfchar'))!;
    expect([0x00010000, 0x74727565]).toContain(program.readUInt32BE(0));
    expect(program.length).toBeLessThan(40_000);
    expect(content).toMatch(/BT \/F1 [\d.]+ Tf/);
    expect(content).toMatch(/\[<[0-9a-f]{4}>/);
    expect(content).not.toContain('?');
  });

  it.skipIf(!existsSync(NOTO_SANS_CJK))(
    'embeds a font of CFF outlines from a collection (Noto Sans CJK) as CFF: /FontFile3 /CIDFontType0C under a CIDFontType0, with a header FreeType accepts',
    async () => {
      const cjk = await AppearanceFont.load(readFileSync(NOTO_SANS_CJK), 'NotoSansCJK-Regular.ttc');
      const added: PdfObject[] = [];
      await buildAppearance(
        300,
        60,
        { lines: ['Digitally signed by 王小明'], fonts: new AppearanceFonts([cjk]) },
        (value) => {
          added.push(value);
          return new PdfRef(added.length, 0);
        },
      );
      const dicts = added.map((value) => Buffer.from(serialize(value)).toString('latin1'));
      expect(dicts.some((d) => /\/Subtype \/CIDFontType0\b/.test(d) && !/CIDToGIDMap/.test(d))).toBe(true);
      expect(dicts.some((d) => /\/FontFile3 \d+ 0 R/.test(d))).toBe(true);
      expect(dicts.some((d) => /FontFile2|CIDFontType2/.test(d))).toBe(false);
      const program = added.find(
        (value): value is PdfStream =>
          value instanceof PdfStream &&
          /\/Subtype \/CIDFontType0C/.test(Buffer.from(serialize(value)).toString('latin1')),
      )!;
      // A CFF header: major version 1, header size 4, offSize 1 to 4 (fontkit wrote 27).
      const header = inflateSync(program.data).subarray(0, 4);
      expect([header[0], header[2]]).toEqual([1, 4]);
      expect(header[3]).toBeGreaterThanOrEqual(1);
      expect(header[3]).toBeLessThanOrEqual(4);
    },
  );

  it.skipIf(!existsSync(NOTO_SANS_CJK))(
    'refuses a font of CFF2 outlines in one line (fontkit would subset it as TrueType)',
    async () => {
      const otf = fontOfCollection(readFileSync(NOTO_SANS_CJK));
      // The same font with its 'CFF ' table's tag made 'CFF2': what fontkit goes by.
      const at = Buffer.from(otf.buffer, otf.byteOffset, 4096).indexOf('CFF ', 12, 'latin1');
      otf[at + 3] = 0x32;
      await expect(AppearanceFont.load(otf, 'variable.otf')).rejects.toThrow(
        /^Variable\.otf has CFF2 outlines \(a variable font\), which esign cannot embed\.$/,
      );
    },
  );

  it('names a character the font lacks, with --font as the way out; whitespace needs no glyph', () => {
    expect(fonts.uncovered('Zoë 合同\t')).toEqual(['合', '同']);
    expect(() => fonts.assertCovers('Reason: 合同', 'reason')).toThrow(
      /The default font has no glyph for "合" \(U\+5408\) in the reason \(and 1 other character\)/,
    );
    expect(() => fonts.assertCovers('Ζωή Παπαδοπούλου', 'name')).not.toThrow();
  });

  it('refuses a file that is not a font in one line', async () => {
    await expect(AppearanceFont.load(Buffer.from('%PDF-1.7 not a font'), 'notes.pdf')).rejects.toThrow(
      /Notes\.pdf is not a TrueType or OpenType font/,
    );
  });

  it('sizes text to fit the box, never above 12 pt, and wraps long lines rather than overflow', async () => {
    expect(fontSize((await build(400, 100, ['short'])).content)).toBe(12);
    const many = (await build(400, 30, ['1', '2', '3', '4'])).content;
    expect(fontSize(many) * 1.2 * 4).toBeLessThanOrEqual(30);
    const long = 'Reason: approved by the board of directors at its meeting of the twelfth of March';
    const fitted = fitText(font, ['Digitally signed by Zoë Łukasiewicz', long], 150, 80);
    expect(fitted.lines.length).toBeGreaterThan(2);
    expect(fitted.lines.join(' ')).toBe(`Digitally signed by Zoë Łukasiewicz ${long}`);
    for (const line of fitted.lines) expect(font.width(line) * fitted.size).toBeLessThanOrEqual(150);
    expect(fitted.lines.length * fitted.size * 1.2).toBeLessThanOrEqual(80);
    // One unbreakable word in a narrow box is broken between characters, still inside the box.
    const word = fitText(font, ['Donaudampfschifffahrtsgesellschaftskapitän'], 40, 60);
    for (const line of word.lines) expect(font.width(line) * word.size).toBeLessThanOrEqual(40);
    expect(word.lines.join('')).toBe('Donaudampfschifffahrtsgesellschaftskapitän');
  });

  it('keeps PDF delimiters out of the content stream: glyphs are shown by CID', async () => {
    const { content } = await build(200, 50, ['a (b) \\ c']);
    expect(content).not.toMatch(/\(a/);
    expect(content).toMatch(/\] TJ/);
  });
});
