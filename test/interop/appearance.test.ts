/**
 * Visible signatures in any script, judged by poppler: pdftotext gives back exactly the text of the
 * appearance, pdffonts shows its font embedded with a Unicode mapping, pdftoppm renders ink inside
 * the signature's rectangle, MuPDF finds every glyph's outline sound, and pdfsig still finds the signature valid.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { encode as encodePng } from '@pdf-lib/upng';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fontOfCollection, woff2Of, woffOf } from '../helpers/font-kinds.js';
import { pdfLibPdf } from '../helpers/pdf-fixtures.js';
import { closeInteropSetup, pdfsig, runTool, startInteropSetup, type InteropSetup } from '../helpers/pdf-judges.js';
import { runCli } from '../helpers/run-cli.js';

const has = (tool: string) => spawnSync('which', [tool]).status === 0;
const missing = ['pdfinfo', 'pdftotext', 'pdffonts', 'pdftoppm', 'pdfsig', 'certutil', 'mutool'].filter(
  (tool) => !has(tool),
);
/** A CJK font with Latin too, from Debian (fonts-wqy-zenhei, installed by .ci/run): a TrueType collection. */
const CJK_FONT = '/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc';
/** A font with Arabic and its GSUB joining forms, from Debian (fonts-dejavu-core, installed by .ci/run). */
const ARABIC_FONT = '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf';
/** CJK collections of CFF (PostScript) outlines, from Debian (fonts-noto-cjk, installed by .ci/run). */
const NOTO_SANS_CJK = '/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc';
const NOTO_SERIF_CJK = '/usr/share/fonts/opentype/noto/NotoSerifCJK-Regular.ttc';
/** A CJK font with no Latin, from Debian (fonts-droid-fallback, installed by .ci/run). */
const DROID_FALLBACK = '/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf';
/** esign's default font, a TrueType font with glyf outlines. */
const NOTO_SANS = new URL(
  '../../node_modules/@expo-google-fonts/noto-sans/400Regular/NotoSans_400Regular.ttf',
  import.meta.url,
);

let setup: InteropSetup;
beforeAll(async () => {
  if (missing.length === 0) setup = await startInteropSetup('esign-interop-appearance-');
});
afterAll(async () => {
  await closeInteropSetup(setup ?? {});
});

const RECT = [40, 500, 340, 600] as const;

async function signVisible(name: string, extra: string[]): Promise<string> {
  const input = await pdfLibPdf(setup.work.dir);
  const output = join(setup.work.dir, `${name}.pdf`);
  const result = await runCli(
    [
      '--auto-approve',
      '--quiet',
      'sign',
      '--force',
      '--level',
      'B-B',
      '--visible',
      '--rect',
      RECT.join(','),
      '-o',
      output,
      ...extra,
      input,
    ],
    { env: setup.sandbox.env },
  );
  expect(result.code, result.stderr).toBe(0);
  return output;
}

/** The crop of the signature's rectangle at 72 dpi: poppler's y axis points down from the top of the page. */
async function crop(path: string, inset = 0): Promise<string[]> {
  const info = await runTool('pdfinfo', [path]);
  const height = Number(/Page size:\s+[\d.]+ x ([\d.]+) pts/.exec(info.stdout)?.[1]);
  const [x1, y1, x2, y2] = RECT;
  const at = (value: number) => String(Math.round(value));
  return [
    '-f',
    '1',
    '-l',
    '1',
    '-r',
    '72',
    '-x',
    at(x1 + inset),
    '-y',
    at(height - y2 + inset),
    '-W',
    at(x2 - x1 - 2 * inset),
    '-H',
    at(y2 - y1 - 2 * inset),
  ];
}

/** The text pdftotext finds inside the signature's rectangle. */
async function textInRect(path: string): Promise<string> {
  const args = [...(await crop(path)), path, '-'];
  const result = await runTool('pdftotext', args);
  expect(result.status, result.stderr).toBe(0);
  return result.stdout;
}

/** Dark pixels pdftoppm renders inside the rectangle (greyscale at 72 dpi). */
async function inkInRect(path: string): Promise<number> {
  const out = join(setup.work.dir, 'render');
  // Inset past the border: the ink counted is the text's and the image's.
  const result = await runTool('pdftoppm', [...(await crop(path, 3)), '-gray', path, out]);
  expect(result.status, result.stderr).toBe(0);
  const pgm = await readFile(`${out}-1.pgm`);
  // P5 header: magic, width, height, maxval, then one byte per pixel.
  const header = /^P5\s+(\d+)\s+(\d+)\s+(\d+)\s/.exec(pgm.subarray(0, 50).toString('latin1'))!;
  const pixels = pgm.subarray(header[0].length);
  return pixels.filter((value) => value < 128).length;
}

/** MuPDF draws the page without calling a glyph of the embedded font invalid (as it does for a subset with misplaced glyph records). */
async function expectSoundGlyphs(path: string): Promise<void> {
  const drawn = await runTool('mutool', ['draw', '-r', '72', '-o', join(setup.work.dir, 'mutool.png'), path, '1']);
  expect(drawn.status, drawn.stderr).toBe(0);
  expect(drawn.stderr).not.toMatch(/invalid|cannot render/i);
}

/**
 * Every font of the appearance loads without a word from pdffonts and MuPDF: each is embedded, a
 * subset with a Unicode map, in the form its outlines call for (`type`: CID TrueType for glyf
 * outlines, CID Type 0C for CFF). MuPDF's draw of the page warns of nothing.
 */
async function expectFontsLoad(path: string, type: string): Promise<void> {
  const fonts = await runTool('pdffonts', [path]);
  expect(fonts.status, fonts.stderr).toBe(0);
  expect(fonts.stderr, fonts.stderr).toBe('');
  // Columns: name, type, encoding, emb, sub, uni, object, id; the appearance's fonts are the Identity-H ones.
  const ours = fonts.stdout
    .split('\n')
    .slice(2)
    .filter((row) => /Identity-H/.test(row));
  expect(ours.length, fonts.stdout).toBeGreaterThan(0);
  for (const row of ours)
    expect(row, fonts.stdout).toMatch(new RegExp(`${type}\\s+Identity-H\\s+yes\\s+yes\\s+yes\\s`));
  const drawn = await runTool('mutool', ['draw', '-r', '72', '-o', join(setup.work.dir, 'mutool.png'), path, '1']);
  expect(drawn.status, drawn.stderr).toBe(0);
  // Its warnings and errors; Debian's MuPDF is built without colour management and says so on every run.
  const warnings = drawn.stderr
    .split('\n')
    .filter((line) => /^(warning|error)/.test(line) && !/ICC support is not available/.test(line));
  expect(warnings, drawn.stderr).toEqual([]);
}

const words = (text: string) => text.replace(/\s+/g, ' ').trim();

describe.skipIf(missing.length > 0)('visible signatures in any script, judged by poppler', () => {
  const cases: Array<[string, string, string[]]> = [
    ['greek', 'Ζωή Παπαδοπούλου', []],
    ['polish-german', 'Genehmigt – Zoë Łukasiewicz', []],
    ['czech-cyrillic', 'Příliš žluťoučký kůň – Съешь же ещё', []],
  ];
  if (existsSync(CJK_FONT)) cases.push(['cjk', '合同 Genehmigt – 张伟', ['--font', CJK_FONT]]);

  for (const [label, text, extra] of cases) {
    it(`${label}: pdftotext gives back the name and reason, pdffonts shows the font embedded with a Unicode map, pdftoppm finds ink, pdfsig: valid`, async () => {
      const output = await signVisible(label, ['--name', text, '--reason', text, ...extra]);
      const extracted = words(await textInRect(output));
      expect(extracted).toContain(`Digitally signed by ${text}`);
      expect(extracted).toContain(`Reason: ${text}`);
      expect(extracted).not.toContain('?');

      const fonts = await runTool('pdffonts', [output]);
      const rows = fonts.stdout.split('\n').slice(2).filter(Boolean);
      expect(rows.length, fonts.stdout).toBeGreaterThan(0);
      const ours = rows.filter((row) => /CID TrueType/.test(row));
      expect(ours.length, fonts.stdout).toBeGreaterThan(0);
      // Columns: name, type, encoding, emb, sub, uni, object, id.
      for (const row of ours) expect(row, fonts.stdout).toMatch(/Identity-H\s+yes\s+yes\s+yes\s/);

      expect(await inkInRect(output)).toBeGreaterThan(50);
      await expectSoundGlyphs(output);
      const judged = await pdfsig(output, setup.nssDir);
      expect(judged.signatures.at(-1), judged.raw).toMatchObject({ valid: true, totalDocument: true });
    });
  }

  // Arabic goes through fontkit's shaping (joining forms from GSUB), whose data esign's build unpacks on first use;
  // right-to-left runs are drawn in display order (bidi-js), which pdftotext turns back into reading order.
  it.skipIf(!existsSync(ARABIC_FONT))(
    'arabic and hebrew (shaped, reordered, DejaVu Sans): pdftotext reads them back in reading order, the font is embedded with a Unicode map, pdftoppm finds ink',
    async () => {
      const name = 'محمد علي';
      const output = await signVisible('arabic', ['--name', name, '--reason', 'אושר', '--font', ARABIC_FONT]);
      // pdftotext marks the right-to-left text it reorders with embedding controls (U+202A–U+202E).
      const extracted = words((await textInRect(output)).replace(/[\u202a-\u202e]/g, ''));
      expect(extracted).toContain(`Digitally signed by ${name}`);
      expect(extracted).toContain('Reason: אושר');
      expect(extracted).not.toContain('?');
      const fonts = await runTool('pdffonts', [output]);
      expect(fonts.stdout).toMatch(/DejaVuSans\s+CID TrueType\s+Identity-H\s+yes\s+yes\s+yes\s/);
      expect(await inkInRect(output)).toBeGreaterThan(50);
      await expectSoundGlyphs(output);
    },
  );

  it('--image: a PNG with transparency behind the text renders (pdftoppm finds its dark pixels), the text still extracts, pdfsig: valid', async () => {
    // 40 × 20, dark and opaque on the left half, transparent on the right.
    const rgba = new Uint8Array(40 * 20 * 4);
    for (let i = 0; i < 40 * 20; i++) rgba.set(i % 40 < 20 ? [20, 20, 20, 255] : [0, 0, 0, 0], i * 4);
    const logo = join(setup.work.dir, 'logo.png');
    await writeFile(logo, new Uint8Array(encodePng([rgba.buffer], 40, 20, 0)));
    const output = await signVisible('image', [
      '--image',
      logo,
      '--image-position',
      'background',
      '--appearance-text',
      'Approved by {name}\\nfor {reason}',
      '--name',
      'Zoë',
      '--reason',
      'the board',
    ]);
    expect(words(await textInRect(output))).toBe('Approved by Zoë for the board');
    // Half the box (the opaque half of the image, scaled to its height) is dark.
    expect(await inkInRect(output)).toBeGreaterThan(2000);
    const judged = await pdfsig(output, setup.nssDir);
    expect(judged.signatures.at(-1), judged.raw).toMatchObject({ valid: true, totalDocument: true });
  });
});

/**
 * Every kind of font a user may give --font, each judged alike: pdffonts and MuPDF load each of
 * its fonts without a warning, pdftotext gives the name back, pdftoppm finds the text's ink in the
 * rectangle. The collections and WOFF files are made from fonts the other tests use (test/helpers/font-kinds.ts).
 */
describe.skipIf(missing.length > 0)('visible signatures in every font kind, judged by poppler and MuPDF', () => {
  const LATIN = 'Zoë Łukasiewicz';
  const CJK = '王小明';
  type Kind = { label: string; font: () => string | undefined; name: string; type: string };
  /** A font file made in the work dir from `make`, or undefined when its source font is not installed. */
  const made = (file: string, source: string | URL, make: (bytes: Uint8Array) => Uint8Array) => () => {
    if (!existsSync(source)) return undefined;
    const path = join(setup.work.dir, file);
    if (!existsSync(path)) writeFileSync(path, make(readFileSync(source)));
    return path;
  };
  const installed = (path: string) => () => (existsSync(path) ? path : undefined);
  const kinds: Kind[] = [
    { label: 'TrueType .ttf (DejaVu Sans)', font: installed(ARABIC_FONT), name: LATIN, type: 'CID TrueType' },
    {
      label: 'TrueType collection .ttc (WenQuanYi Zen Hei)',
      font: installed(CJK_FONT),
      name: CJK,
      type: 'CID TrueType',
    },
    { label: 'CFF collection .ttc (Noto Sans CJK)', font: installed(NOTO_SANS_CJK), name: CJK, type: 'CID Type 0C' },
    { label: 'CFF collection .ttc (Noto Serif CJK)', font: installed(NOTO_SERIF_CJK), name: CJK, type: 'CID Type 0C' },
    {
      label: 'CFF .otf (Noto Sans CJK JP, out of its collection)',
      font: made('noto-sans-cjk-jp.otf', NOTO_SANS_CJK, (bytes) => fontOfCollection(bytes)),
      name: CJK,
      type: 'CID Type 0C',
    },
    {
      label: 'WOFF of TrueType (Noto Sans)',
      font: made('noto-sans.woff', NOTO_SANS, woffOf),
      name: LATIN,
      type: 'CID TrueType',
    },
    {
      label: 'WOFF2 of CFF (Noto Sans CJK JP)',
      font: made('noto-sans-cjk-jp.woff2', NOTO_SANS_CJK, (bytes) => woff2Of(fontOfCollection(bytes))),
      name: CJK,
      type: 'CID Type 0C',
    },
    {
      label: 'WOFF of CFF (Noto Sans CJK JP)',
      font: made('noto-sans-cjk-jp.woff', NOTO_SANS_CJK, (bytes) => woffOf(fontOfCollection(bytes))),
      name: CJK,
      type: 'CID Type 0C',
    },
  ];

  for (const { label, font, name, type } of kinds) {
    it(`${label}: pdffonts and MuPDF load its font (${type}) without a warning, pdftotext gives the name back, pdftoppm finds ink`, async (context) => {
      const file = font();
      if (!file) return context.skip();
      const slug = label.replace(/\W+/g, '-').toLowerCase();
      const output = await signVisible(slug, ['--name', name, '--reason', name, '--font', file]);
      await expectFontsLoad(output, type);
      const extracted = words(await textInRect(output));
      expect(extracted).toContain(`Digitally signed by ${name}`);
      expect(extracted).toContain(`Reason: ${name}`);
      expect(await inkInRect(output)).toBeGreaterThan(50);
    });
  }

  it.skipIf(!existsSync(DROID_FALLBACK))(
    "--font with a CJK font that has no Latin: the Latin from esign's font, the CJK from it; both load, the names come back, ink",
    async () => {
      const output = await signVisible('droid', [
        '--name',
        CJK,
        '--reason',
        `Genehmigt ${CJK}`,
        '--font',
        DROID_FALLBACK,
      ]);
      await expectFontsLoad(output, 'CID TrueType');
      const fonts = (await runTool('pdffonts', [output])).stdout;
      expect(fonts).toMatch(/\+DroidSansFallback/);
      expect(fonts).toMatch(/\+NotoSans-Regular/);
      const extracted = words(await textInRect(output));
      expect(extracted).toContain(`Digitally signed by ${CJK}`);
      expect(extracted).toContain(`Reason: Genehmigt ${CJK}`);
      expect(await inkInRect(output)).toBeGreaterThan(50);
    },
  );

  it.skipIf(!existsSync(DROID_FALLBACK) || !existsSync(ARABIC_FONT))(
    'several --font: Arabic (shaped, right to left) from DejaVu Sans and CJK from Droid in one line read back in reading order',
    async () => {
      const name = `محمد ${CJK}`;
      const output = await signVisible('arabic-cjk', ['--name', name, '--font', ARABIC_FONT, '--font', DROID_FALLBACK]);
      await expectFontsLoad(output, 'CID TrueType');
      // pdftotext moves the spaces beside right-to-left text about (with one font too): the order is what is judged.
      const extracted = (await textInRect(output)).replace(/[\u202a-\u202e\s]/g, '');
      expect(extracted).toContain(`Digitallysignedby${name.replace(/\s/g, '')}`);
      expect(await inkInRect(output)).toBeGreaterThan(50);
    },
  );

  it.skipIf(!existsSync(DROID_FALLBACK))(
    'a character no font has is refused before any approval: exit 2, one line naming it and every font tried',
    async () => {
      const input = await pdfLibPdf(setup.work.dir);
      const result = await runCli(
        [
          '--auto-approve',
          '--quiet',
          'sign',
          '--level',
          'B-B',
          '--visible',
          '--name',
          'Gothic 𐌰',
          '--font',
          DROID_FALLBACK,
          input,
        ],
        { env: setup.sandbox.env },
      );
      expect(result.code, result.stderr).toBe(2);
      const lines = result.stderr
        .trim()
        .split('\n')
        .filter((line) => !/sandbox profile/.test(line));
      expect(lines[0]).toMatch(
        /DroidSansFallbackFull\.ttf and the default font \(Noto Sans\) have no glyph for "𐌰" \(U\+10330\) in the appearance text\./,
      );
      expect(result.stderr).toContain('--font may be given more than once');
      expect(result.stderr).not.toMatch(/at .+\.(c?js|ts):\d+/);
    },
  );
});
