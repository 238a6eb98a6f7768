import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { woff2Of, woffOf } from '../../../test/helpers/font-kinds.js';
import { AppearanceFont } from './appearance.js';
import { TrueTypeFont } from './truetype.js';
import { isTrueTypeWoff2, isWoff, sfntOfWoff } from './woff.js';

const NOTO = readFileSync(
  new URL('../../../node_modules/@expo-google-fonts/noto-sans/400Regular/NotoSans_400Regular.ttf', import.meta.url),
);

describe('WOFF and WOFF2', () => {
  const woff = woffOf(NOTO);

  it('unwraps into an sfnt the TrueType reader reads as it reads the .ttf: the same glyphs, advances and metrics', () => {
    expect(isWoff(woff)).toBe(true);
    expect(isWoff(NOTO)).toBe(false);
    expect(woff.length).toBeLessThan(NOTO.length);
    const fromWoff = TrueTypeFont.read(sfntOfWoff(woff, 'noto.woff'))!;
    const fromTtf = TrueTypeFont.read(NOTO)!;
    expect(fromWoff).toBeDefined();
    for (const ch of 'Zoë Łukasiewicz Ζωή') {
      const gid = fromTtf.glyphId(ch.codePointAt(0)!);
      expect(gid).not.toBe(0);
      expect(fromWoff.glyphId(ch.codePointAt(0)!)).toBe(gid);
      expect(fromWoff.advanceWidth(gid)).toBe(fromTtf.advanceWidth(gid));
    }
    expect(fromWoff.postscriptName).toBe('NotoSans-Regular');
    expect(fromWoff.bbox).toEqual(fromTtf.bbox);
  });

  it('gives a WOFF of glyf outlines to the reader, whose subsets keep glyph ids (the same program as from the .ttf)', async () => {
    const viaWoff = await AppearanceFont.load(woff, 'noto.woff');
    const viaTtf = await AppearanceFont.load(NOTO, 'noto.ttf');
    const glyphs = viaTtf.place('Zoë');
    expect(viaWoff.place('Zoë')).toEqual(glyphs);
    expect((await viaWoff.subset(glyphs)).program).toEqual((await viaTtf.subset(glyphs)).program);
  });

  it('refuses, in one line naming the file, a WOFF cut short or whose table does not inflate', () => {
    expect(() => sfntOfWoff(woff.subarray(0, 100), 'cut.woff')).toThrow(
      /^cut\.woff is not a readable WOFF font \(.+\)\.$/,
    );
    const broken = woff.slice();
    const firstTable = new DataView(broken.buffer).getUint32(44 + 4);
    broken.fill(0xff, firstTable, firstTable + 16);
    expect(() => sfntOfWoff(broken, 'broken.woff')).toThrow(/^broken\.woff is not a readable WOFF font/);
  });

  it('refuses a WOFF2 of TrueType outlines in one line, naming the file and the way out (fontkit would draw its glyphs misplaced)', async () => {
    await expect(AppearanceFont.load(woff2Of(NOTO), 'noto.woff2')).rejects.toThrow(
      /^Noto\.woff2 is a WOFF2 font of TrueType outlines, which esign cannot embed\.$/,
    );
    expect(isTrueTypeWoff2(woff2Of(NOTO))).toBe(true);
    expect(isTrueTypeWoff2(woff)).toBe(false);
  });
});
