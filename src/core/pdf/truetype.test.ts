import { existsSync, readFileSync } from 'node:fs';
import * as fontkit from '@pdf-lib/fontkit';
import type { Font } from '@pdf-lib/fontkit';
import { describe, expect, it } from 'vitest';
import { TrueTypeFont } from './truetype.js';

const NOTO = readFileSync(
  new URL('../../../node_modules/@expo-google-fonts/noto-sans/400Regular/NotoSans_400Regular.ttf', import.meta.url),
);
/** Hinted (fpgm, cvt, prep) and with Arabic: Debian's fonts-dejavu-core, which .ci/run installs. */
const DEJAVU = '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf';
const CJK_COLLECTION = '/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc';

const create = (bytes: Uint8Array) => fontkit.create(Buffer.from(bytes)) as Font;

/** Table tag → [offset, length] of an sfnt file. */
function tables(bytes: Uint8Array): Map<string, [number, number]> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Map<string, [number, number]>();
  for (let i = 0; i < view.getUint16(4); i++) {
    const at = 12 + i * 16;
    out.set(Buffer.from(bytes.subarray(at, at + 4)).toString('latin1'), [
      view.getUint32(at + 8),
      view.getUint32(at + 12),
    ]);
  }
  return out;
}

const fonts: Array<[string, Uint8Array]> = [['Noto Sans', NOTO]];
if (existsSync(DEJAVU)) fonts.push(['DejaVu Sans', readFileSync(DEJAVU)]);

describe('TrueType reader, against fontkit on the same font', () => {
  for (const [label, bytes] of fonts) {
    it(`${label}: every character of planes 0 to 2 maps to fontkit's glyph, with fontkit's advance width`, () => {
      const ours = TrueTypeFont.read(bytes)!;
      const theirs = create(bytes);
      expect(ours).toBeDefined();
      let mapped = 0;
      for (let codePoint = 0; codePoint < 0x30000; codePoint++) {
        if (codePoint >= 0xd800 && codePoint <= 0xdfff) continue;
        const id = ours.glyphId(codePoint);
        const expected = theirs.hasGlyphForCodePoint(codePoint) ? theirs.glyphForCodePoint(codePoint).id : 0;
        if (id !== expected)
          expect(`U+${codePoint.toString(16)} → ${id}`).toBe(`U+${codePoint.toString(16)} → ${expected}`);
        if (id !== 0) mapped++;
      }
      expect(mapped).toBeGreaterThan(2000);
      for (let id = 0; id < theirs.numGlyphs; id++)
        if (ours.advanceWidth(id) !== theirs.getGlyph(id).advanceWidth)
          expect([id, ours.advanceWidth(id)]).toEqual([id, theirs.getGlyph(id).advanceWidth]);
    });

    it(`${label}: the FontDescriptor's facts are fontkit's`, () => {
      const ours = TrueTypeFont.read(bytes)!;
      const theirs = create(bytes);
      expect({
        upm: ours.unitsPerEm,
        ascent: ours.ascent,
        descent: ours.descent,
        capHeight: ours.capHeight || ours.ascent,
        bbox: ours.bbox,
        italic: ours.italicAngle,
        name: ours.postscriptName,
      }).toEqual({
        upm: theirs.unitsPerEm,
        ascent: theirs.ascent,
        descent: theirs.descent,
        capHeight: theirs.capHeight || theirs.ascent,
        bbox: [theirs.bbox.minX, theirs.bbox.minY, theirs.bbox.maxX, theirs.bbox.maxY],
        italic: theirs.italicAngle,
        name: theirs.postscriptName,
      });
    });

    it(`${label}: a subset keeps each glyph at its id, outline for outline, with the components of composite glyphs, and nothing else`, () => {
      const ours = TrueTypeFont.read(bytes)!;
      const original = create(bytes);
      const text = 'Zoë Łukasiewicz Ζωή Παπαδοπούλου Příliš žluťoučký kůň Съешь ещё';
      const ids = [...text].map((ch) => ours.glyphId(ch.codePointAt(0)!));
      const { program, kept } = ours.subset(ids);
      const subset = create(program);
      expect(subset.numGlyphs).toBe(Math.max(...kept) + 1);
      for (const id of new Set([0, ...ids])) {
        expect(kept.has(id)).toBe(true);
        expect(subset.getGlyph(id).path.toSVG(), `glyph ${id}`).toBe(original.getGlyph(id).path.toSVG());
        expect(subset.getGlyph(id).advanceWidth).toBe(original.getGlyph(id).advanceWidth);
      }
      for (let id = 0; id < subset.numGlyphs; id++)
        if (!kept.has(id)) expect(subset.getGlyph(id).path.toSVG(), `glyph ${id}`).toBe('');
      // The program holds only the tables a PDF's TrueType font needs (ISO 32000-1 §9.9), checksums right.
      const t = tables(program);
      expect(
        [...t.keys()].every((tag) =>
          ['head', 'hhea', 'loca', 'maxp', 'cvt ', 'prep', 'glyf', 'hmtx', 'fpgm'].includes(tag),
        ),
      ).toBe(true);
      for (const tag of ['cvt ', 'prep', 'fpgm']) expect(t.has(tag)).toBe(tables(bytes).has(tag));
      let sum = 0;
      for (let i = 0; i < program.length; i += 4)
        sum = (sum + new DataView(program.buffer, program.byteOffset).getUint32(i)) >>> 0;
      expect(sum).toBe(0xb1b0afba);
      expect(program.length).toBeLessThan(60_000);
    });
  }

  it('Noto Sans draws accented letters from components: a subset of them holds their base letter and accent too', () => {
    const font = TrueTypeFont.read(NOTO)!;
    const original = create(NOTO);
    const composite = [...'ëŁřůžščőΐ']
      .map((ch) => font.glyphId(ch.codePointAt(0)!))
      .find(
        (id) =>
          (original.getGlyph(id) as unknown as { _decode(): { numberOfContours: number } })._decode().numberOfContours <
          0,
      )!;
    expect(composite).toBeDefined();
    const components = (original.getGlyph(composite) as unknown as { _decode(): { components: { glyphID: number }[] } })
      ._decode()
      .components.map((c) => c.glyphID);
    expect(components.length).toBeGreaterThan(1);
    const { program, kept } = font.subset([composite]);
    for (const id of components) expect(kept.has(id)).toBe(true);
    expect(create(program).getGlyph(composite).path.toSVG()).toBe(original.getGlyph(composite).path.toSVG());
  });

  it('reads the italic angle from post, as fontkit does', () => {
    const slanted = Buffer.from(NOTO);
    const [post] = tables(slanted).get('post')!;
    slanted.writeInt32BE(-12.5 * 65536, post + 4);
    expect(TrueTypeFont.read(slanted)!.italicAngle).toBe(-12.5);
    expect(create(slanted).italicAngle).toBe(-12.5);
  });

  it.skipIf(!existsSync(CJK_COLLECTION))(
    'a collection (.ttc): its first font, as fontkit reads it, glyph for glyph over Latin, CJK and Hangul',
    () => {
      const bytes = readFileSync(CJK_COLLECTION);
      const ours = TrueTypeFont.read(bytes)!;
      const theirs = (fontkit.create(bytes) as unknown as { fonts: Font[] }).fonts[0]!;
      expect(ours).toBeDefined();
      expect({ upm: ours.unitsPerEm, name: ours.postscriptName, ascent: ours.ascent }).toEqual({
        upm: theirs.unitsPerEm,
        name: theirs.postscriptName,
        ascent: theirs.ascent,
      });
      for (const [from, to] of [
        [0x20, 0x250],
        [0x4e00, 0x5200],
        [0xac00, 0xad00],
      ] as const) {
        for (let codePoint = from; codePoint < to; codePoint++) {
          const expected = theirs.hasGlyphForCodePoint(codePoint) ? theirs.glyphForCodePoint(codePoint).id : 0;
          const id = ours.glyphId(codePoint);
          if (id !== expected)
            expect(`U+${codePoint.toString(16)} → ${id}`).toBe(`U+${codePoint.toString(16)} → ${expected}`);
          if (id !== 0 && ours.advanceWidth(id) !== theirs.getGlyph(id).advanceWidth)
            expect([id, ours.advanceWidth(id)]).toEqual([id, theirs.getGlyph(id).advanceWidth]);
        }
      }
    },
  );

  it('leaves to fontkit what it does not read: not a font, a cut-off collection, WOFF, CFF outlines, a table out of bounds', () => {
    expect(TrueTypeFont.read(Buffer.from('%PDF-1.7 not a font'))).toBeUndefined();
    expect(TrueTypeFont.read(new Uint8Array(0))).toBeUndefined();
    if (existsSync(CJK_COLLECTION))
      expect(TrueTypeFont.read(readFileSync(CJK_COLLECTION).subarray(0, 4096))).toBeUndefined();
    const woff = Buffer.from(NOTO);
    woff.write('wOFF', 0, 'latin1');
    expect(TrueTypeFont.read(woff)).toBeUndefined();
    const otto = Buffer.from(NOTO);
    otto.write('OTTO', 0, 'latin1');
    expect(TrueTypeFont.read(otto)).toBeUndefined();
    expect(TrueTypeFont.read(NOTO.subarray(0, NOTO.length - 1000))).toBeUndefined();
  });
});
