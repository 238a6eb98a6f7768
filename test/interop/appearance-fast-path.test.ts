/**
 * esign's TrueType reader (the path of text that needs no shaping) against fontkit's, judged by
 * tools we did not write: the same appearance written through each must give pdftotext the same
 * text, pdffonts an embedded font with a Unicode map, and qpdf --check no complaint. Its pixels
 * (pdftoppm and mutool draw) must be those of the same page with the whole font embedded in place
 * of the subset (the subset keeps glyph ids, so the whole font is a drop-in), and those of
 * fontkit's subset where fontkit writes a sound one: its subsets of Noto Sans, whose glyph records
 * have odd lengths, misplace glyphs (FreeType: "invalid outline"), so the default font drew mostly
 * blank appearances before the reader. Accented letters Noto Sans builds from components among them.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PDFDict, PDFDocument, PDFName, PDFRef } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppearanceFont } from '../../src/core/pdf/appearance.js';
import { AppearanceFonts } from '../../src/core/pdf/appearance-fonts.js';
import { bytesSource, prepareSignature, readPdf, spliceContents } from '../../src/core/pdf/index.js';
import { TrueTypeFont } from '../../src/core/pdf/truetype.js';
import { pdfLibPdf, readBytes } from '../helpers/pdf-fixtures.js';

const tools = ['pdftotext', 'pdffonts', 'pdftoppm', 'pdfinfo', 'qpdf', 'mutool'];
const missing = tools.filter((tool) => spawnSync('which', [tool]).status !== 0);
const NOTO = readFileSync(
  new URL('../../node_modules/@expo-google-fonts/noto-sans/400Regular/NotoSans_400Regular.ttf', import.meta.url),
);
/** A hinted font (fpgm, cvt, prep): Debian's fonts-dejavu-core, which .ci/run installs. */
const DEJAVU = '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf';
const RECT = [40, 500, 340, 600] as const;

const TEXTS: Array<[string, string[]]> = [
  ['greek', ['Digitally signed by Ζωή Παπαδοπούλου', 'Date: 2026-01-01 12:00:00 UTC']],
  ['polish-german', ['Genehmigt – Zoë Łukasiewicz', 'Reason: Żółć gęślą jaźń']],
  ['czech-cyrillic', ['Příliš žluťoučký kůň úpěl ďábelské ódy', 'Съешь же ещё этих мягких французских булок']],
  [
    'long, wrapped',
    [
      'Reason: approved by the board of directors of Ærøskøbing Ørsted ÅB at its meeting of the twelfth of March, with thanks',
    ],
  ],
];

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'esign-fast-path-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A signature placeholder (dummy CMS) with a visible appearance of `lines`, written to `name`. */
async function signWith(font: AppearanceFont, lines: string[], name: string): Promise<string> {
  const input = await pdfLibPdf(dir);
  const original = readBytes(input);
  const visible = { page: 1, rect: [...RECT] as [number, number, number, number], lines };
  const update = await prepareSignature(await readPdf(bytesSource(original)), {
    signingTime: new Date('2026-01-01T12:00:00Z'),
    contentsSize: 8192,
    visible,
    assets: { fonts: new AppearanceFonts([font]) },
  });
  const output = join(dir, `${name}.pdf`);
  writeFileSync(output, Buffer.concat([original, spliceContents(update, new Uint8Array(600).fill(0x5a))]));
  return output;
}

function tool(name: string, args: string[]): string {
  const result = spawnSync(name, args, { encoding: 'utf8' });
  expect(result.status, `${name} ${args.join(' ')}: ${result.stderr}`).toBe(0);
  return result.stdout;
}

/** The text pdftotext finds inside the signature's rectangle (at 72 dpi, poppler's y axis from the top). */
function textInRect(path: string): string {
  const height = Number(/Page size:\s+[\d.]+ x ([\d.]+) pts/.exec(tool('pdfinfo', [path]))?.[1]);
  const [x1, y1, x2, y2] = RECT;
  return tool('pdftotext', [
    '-f',
    '1',
    '-l',
    '1',
    '-x',
    String(x1),
    '-y',
    String(height - y2),
    '-W',
    String(x2 - x1),
    '-H',
    String(y2 - y1),
    path,
    '-',
  ]);
}

/** The page as greyscale pixels (a PGM's bytes), by poppler or by MuPDF (which must not call a glyph invalid), at 144 dpi. */
function render(path: string, by: 'pdftoppm' | 'mutool'): Buffer {
  const out = join(dir, `render-${by}`);
  if (by === 'pdftoppm') {
    execFileSync('pdftoppm', ['-f', '1', '-l', '1', '-r', '144', '-gray', path, out]);
    return readFileSync(`${out}-1.pgm`);
  }
  const drawn = spawnSync('mutool', ['draw', '-r', '144', '-c', 'gray', '-o', `${out}.pgm`, path, '1'], {
    encoding: 'utf8',
  });
  expect(drawn.status, drawn.stderr).toBe(0);
  expect(drawn.stderr, path).not.toMatch(/invalid|cannot render/i);
  return readFileSync(`${out}.pgm`);
}

/** The same file with the whole font `bytes` embedded in place of the appearance font's subset (rewritten by pdf-lib). */
async function withWholeFont(path: string, bytes: Uint8Array): Promise<string> {
  const doc = await PDFDocument.load(readFileSync(path), { updateMetadata: false });
  let replaced = 0;
  for (const [, object] of doc.context.enumerateIndirectObjects()) {
    if (!(object instanceof PDFDict) || object.get(PDFName.of('Type')) !== PDFName.of('FontDescriptor')) continue;
    const program = object.get(PDFName.of('FontFile2'));
    if (!(program instanceof PDFRef)) continue;
    doc.context.assign(program, doc.context.flateStream(bytes, { Length1: bytes.length }));
    replaced++;
  }
  expect(replaced).toBe(1);
  const output = path.replace(/\.pdf$/, '.whole-font.pdf');
  writeFileSync(output, await doc.save({ useObjectStreams: false }));
  return output;
}

/** How many pixels of two same-sized renderings differ by more than a grey level or two, and how many are ink. */
function compare(a: Buffer, b: Buffer): { differing: number; ink: number } {
  expect(a.length).toBe(b.length);
  let differing = 0;
  let ink = 0;
  for (let i = 0; i < a.length; i++) {
    if (Math.abs(a[i]! - b[i]!) > 2) differing++;
    if (a[i]! < 128) ink++;
  }
  return { differing, ink };
}

/** [name, bytes, whether fontkit's subsets of it render] */
const fonts: Array<[string, Uint8Array, boolean]> = [['Noto Sans', NOTO, false]];
if (existsSync(DEJAVU)) fonts.push(['DejaVu Sans', readFileSync(DEJAVU), true]);

describe.skipIf(missing.length > 0)(
  "the TrueType reader's appearances match fontkit's, by poppler, MuPDF and qpdf",
  () => {
    for (const [fontName, bytes, fontkitSubsetsSoundly] of fonts) {
      for (const [label, lines] of TEXTS) {
        it(`${fontName}, ${label}: the text extracted and the font as with fontkit, the pixels of the whole font, qpdf --check clean`, async () => {
          const fast = await AppearanceFont.load(bytes, fontName);
          const viaFontkit = await AppearanceFont.load(bytes, fontName, { fontkitOnly: true });
          const [ours, theirs] = [
            await signWith(fast, lines, `${fontName}-${label}-fast`),
            await signWith(viaFontkit, lines, `${fontName}-${label}-fontkit`),
          ];

          const text = textInRect(ours);
          expect(text).toBe(textInRect(theirs));
          expect(text.replace(/\s+/g, ' ').trim()).toBe(lines.join(' '));

          for (const path of [ours, theirs]) {
            const row = tool('pdffonts', [path])
              .split('\n')
              .find((line) => /CID TrueType/.test(line));
            // Columns: name, type, encoding, emb, sub, uni.
            expect(row, path).toMatch(/^[A-Z]{6}\+\S+\s+CID TrueType\s+Identity-H\s+yes\s+yes\s+yes\s/);
            const check = spawnSync('qpdf', ['--check', path], { encoding: 'utf8' });
            expect(check.stdout, check.stderr).toContain('No syntax or stream encoding errors found');
            expect(check.status).toBe(0);
          }
          // The same glyphs, so the same subset tag and name.
          const fontRow = (path: string) =>
            tool('pdffonts', [path])
              .split('\n')
              .find((line) => /CID TrueType/.test(line))!
              .split(/\s+/)[0];
          expect(fontRow(ours)).toBe(fontRow(theirs));

          const whole = await withWholeFont(ours, bytes);
          for (const by of ['pdftoppm', 'mutool'] as const) {
            const pixels = render(ours, by);
            const { differing, ink } = compare(pixels, render(whole, by));
            expect(ink, by).toBeGreaterThan(500);
            expect(differing, `${by}: against the whole font`).toBe(0);
            if (fontkitSubsetsSoundly)
              expect(compare(pixels, render(theirs, by)).differing, `${by}: against fontkit's subset`).toBe(0);
          }
        });
      }
    }

    it('Noto Sans: a letter drawn from components (base and accent glyphs) renders, through the TrueType reader alone', async () => {
      const font = TrueTypeFont.read(NOTO)!;
      // Which of these letters Noto Sans builds from components is the font's business: at least one is.
      const composites = [...'ŁőűėąçÅØ'].filter((ch) => isComposite(NOTO, font.glyphId(ch.codePointAt(0)!)));
      expect(composites.length).toBeGreaterThan(0);
      const word = `Zo${composites.join('')}k`;
      const only = await signWith(await AppearanceFont.load(NOTO, 'Noto Sans'), [word], 'composites');
      const blank = await signWith(await AppearanceFont.load(NOTO, 'Noto Sans'), [' '], 'blank');
      expect(textInRect(only).trim()).toBe(word);
      const whole = await withWholeFont(only, NOTO);
      for (const by of ['pdftoppm', 'mutool'] as const) {
        expect(compare(render(only, by), render(blank, by)).differing, by).toBeGreaterThan(50 * composites.length);
        expect(compare(render(only, by), render(whole, by)).differing, by).toBe(0);
      }
    });
  },
);

/** Whether glyph `gid` of a TrueType font is a composite (a negative contour count in glyf). */
function isComposite(bytes: Uint8Array, gid: number): boolean {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const table = (tag: string) => {
    for (let i = 0; i < view.getUint16(4); i++)
      if (Buffer.from(bytes.subarray(12 + i * 16, 16 + i * 16)).toString('latin1') === tag)
        return view.getUint32(12 + i * 16 + 8);
    throw new Error(`no ${tag}`);
  };
  const long = view.getInt16(table('head') + 50) === 1;
  const loca = table('loca');
  const start = long ? view.getUint32(loca + gid * 4) : view.getUint16(loca + gid * 2) * 2;
  const end = long ? view.getUint32(loca + gid * 4 + 4) : view.getUint16(loca + gid * 2 + 2) * 2;
  return end > start && view.getInt16(table('glyf') + start) < 0;
}
