/**
 * The appearance of a visible signature: a Form XObject with a thin border and text lines in
 * standard-14 Helvetica (WinAnsiEncoding), scaled to fit the box. No font is embedded.
 */
import { ByteWriter, PdfStream, dict, name, writeObject, PdfString } from './objects.js';

/** Helvetica advance widths (1/1000 em) for WinAnsi codes 32–255 (Adobe's AFM metrics). */
// prettier-ignore
const HELVETICA_WIDTHS = [
  278,278,355,556,556,889,667,191,333,333,389,584,278,333,278,278,556,556,556,556,556,556,556,556,556,556,278,278,584,584,584,556,
  1015,667,667,722,722,667,611,778,722,278,500,667,556,833,722,778,667,778,722,667,611,722,667,944,667,667,611,278,278,278,469,556,
  333,556,556,500,556,556,278,556,556,222,222,500,222,833,556,556,556,556,333,500,278,556,500,722,500,500,500,334,260,334,584,0,
  556,0,222,556,333,1000,556,556,333,1000,667,333,1000,0,611,0,0,222,222,333,333,350,556,1000,333,1000,500,333,944,0,500,500,
  278,333,556,556,556,556,260,556,333,737,370,556,584,333,737,333,400,584,333,333,333,556,537,278,333,333,365,556,834,834,834,611,
  667,667,667,667,667,667,1000,722,667,667,667,667,278,278,278,278,722,722,778,778,778,778,778,584,778,722,722,722,722,667,667,611,
  556,556,556,556,556,556,889,500,556,556,556,556,278,278,278,278,556,556,556,556,556,556,556,584,611,556,556,556,556,500,556,500,
];

/** Unicode characters that WinAnsiEncoding places in 0x80–0x9F. */
const WIN_ANSI_EXTRAS: Record<number, number> = {
  0x20ac: 0x80, 0x201a: 0x82, 0x0192: 0x83, 0x201e: 0x84, 0x2026: 0x85, 0x2020: 0x86, 0x2021: 0x87, 0x02c6: 0x88,
  0x2030: 0x89, 0x0160: 0x8a, 0x2039: 0x8b, 0x0152: 0x8c, 0x017d: 0x8e, 0x2018: 0x91, 0x2019: 0x92, 0x201c: 0x93,
  0x201d: 0x94, 0x2022: 0x95, 0x2013: 0x96, 0x2014: 0x97, 0x02dc: 0x98, 0x2122: 0x99, 0x0161: 0x9a, 0x203a: 0x9b,
  0x0153: 0x9c, 0x017e: 0x9e, 0x0178: 0x9f,
};

/** Encodes text in WinAnsiEncoding; characters it lacks become '?'. */
export function toWinAnsi(text: string): Uint8Array {
  const out: number[] = [];
  for (const ch of text) {
    const cp = ch.codePointAt(0) ?? 0x3f;
    if ((cp >= 0x20 && cp <= 0x7e) || (cp >= 0xa0 && cp <= 0xff)) out.push(cp);
    else out.push(WIN_ANSI_EXTRAS[cp] ?? 0x3f);
  }
  return Uint8Array.from(out);
}

/** Width of WinAnsi-encoded text at a font size of 1. */
function textWidth(encoded: Uint8Array): number {
  let total = 0;
  for (const code of encoded) total += HELVETICA_WIDTHS[code - 32] ?? 556;
  return total / 1000;
}

const MAX_FONT_SIZE = 12;
const LINE_HEIGHT = 1.2;

/** Builds the `/AP /N` Form XObject for a box of `width` × `height` points showing `lines`. */
export function buildAppearance(width: number, height: number, lines: readonly string[]): PdfStream {
  const pad = Math.min(4, width / 10, height / 10);
  const encoded = lines.map(toWinAnsi);
  let size = lines.length > 0 ? Math.min(MAX_FONT_SIZE, (height - 2 * pad) / (lines.length * LINE_HEIGHT)) : MAX_FONT_SIZE;
  for (const line of encoded) {
    const w = textWidth(line);
    if (w > 0) size = Math.min(size, (width - 2 * pad) / w);
  }
  const ops = new ByteWriter();
  ops.ascii(`q 0.5 w 0.3 0.3 0.3 RG 0.25 0.25 ${fmt(width - 0.5)} ${fmt(height - 0.5)} re S Q\n`);
  if (encoded.length > 0) {
    ops.ascii(`BT /Helv ${fmt(size)} Tf 0 g ${fmt(size * LINE_HEIGHT)} TL ${fmt(pad)} ${fmt(height - pad - size)} Td\n`);
    encoded.forEach((line, i) => {
      if (i > 0) ops.ascii('T* ');
      writeObject(ops, new PdfString(line));
      ops.ascii(' Tj\n');
    });
    ops.ascii('ET\n');
  }
  const font = dict({ Type: name('Font'), Subtype: name('Type1'), BaseFont: name('Helvetica'), Encoding: name('WinAnsiEncoding') });
  return new PdfStream(
    dict({
      Type: name('XObject'),
      Subtype: name('Form'),
      BBox: [0, 0, width, height],
      Resources: dict({ Font: dict({ Helv: font }), ProcSet: [name('PDF'), name('Text')] }),
    }),
    ops.toBytes(),
  );
}

function fmt(value: number): string {
  return String(Math.round(value * 1000) / 1000);
}
