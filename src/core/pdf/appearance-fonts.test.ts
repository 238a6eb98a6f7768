import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AppearanceFont, buildAppearance } from './appearance.js';
import { AppearanceFonts } from './appearance-fonts.js';
import { PdfRef, serialize, type PdfObject } from './objects.js';

const NOTO = readFileSync(
  new URL('../../../node_modules/@expo-google-fonts/noto-sans/400Regular/NotoSans_400Regular.ttf', import.meta.url),
);
/** A CJK font with no Latin (Debian's fonts-droid-fallback, which .ci/run installs). */
const DROID = '/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf';

describe.skipIf(!existsSync(DROID))('appearance fonts: each character from the first font that has it', () => {
  const load = async () => {
    const droid = await AppearanceFont.load(readFileSync(DROID), 'droid.ttf');
    let fallbacks = 0;
    const fonts = new AppearanceFonts([droid], async () => {
      fallbacks++;
      return AppearanceFont.load(NOTO, 'the default font');
    });
    return { fonts, fallbacks: () => fallbacks };
  };

  it('loads the last font only when a character the others lack needs it, once', async () => {
    const { fonts, fallbacks } = await load();
    await fonts.prepare('王小明');
    expect(fallbacks()).toBe(0);
    expect(fonts.fonts).toHaveLength(1);
    await fonts.prepare('Digitally signed by 王小明');
    await fonts.prepare('Date: 2026');
    expect(fallbacks()).toBe(1);
    expect(fonts.fonts.map((font) => font.label)).toEqual(['droid.ttf', 'the default font']);
  });

  it('splits a line into runs by font; spaces stay in the run before them where its font has them', async () => {
    const { fonts } = await load();
    await fonts.prepare('Digitally signed by 王小明 Zoë');
    expect(fonts.runs('Digitally signed by 王小明 Zoë')).toEqual([
      { font: 1, text: 'Digitally signed by ' },
      { font: 0, text: '王小明 ' },
      { font: 1, text: 'Zoë' },
    ]);
    expect(fonts.width('by 王')).toBeCloseTo(fonts.fonts[1]!.width('by ') + fonts.fonts[0]!.width('王'));
  });

  it('draws each run in its own font: two Type 0 fonts, F1 and F2, switched between runs of a line', async () => {
    const { fonts } = await load();
    const added: PdfObject[] = [];
    const stream = await buildAppearance(300, 60, { lines: ['Digitally signed by 王小明'], fonts }, (value) => {
      added.push(value);
      return new PdfRef(added.length, 0);
    });
    const content = Buffer.from(stream.data).toString('latin1');
    expect(content).toMatch(/BT \/F2 [\d.]+ Tf .*\] TJ\s+\/F1 [\d.]+ Tf \[/s);
    const text = added.map((object) => Buffer.from(serialize(object)).toString('latin1')).join('\n');
    expect(text.match(/\/Subtype \/Type0/g)).toHaveLength(2);
    expect(text).toMatch(/\+DroidSansFallback/);
    expect(text).toMatch(/\+NotoSans-Regular/);
  });

  it('refuses a character no font has, naming it and every font tried', async () => {
    const { fonts } = await load();
    await fonts.prepare('Gothic 𐌰');
    expect(fonts.uncovered('Gothic 𐌰 王')).toEqual(['𐌰']);
    expect(() => fonts.assertCovers('Gothic 𐌰', 'name')).toThrow(
      /^Droid\.ttf and the default font have no glyph for "𐌰" \(U\+10330\) in the name\.$/,
    );
  });
});
