/**
 * PDF inputs for tests. Two kinds:
 * - in-memory builders (`buildClassicPdf`, `buildXrefStreamPdf`, `buildHybridPdf`, `appendRevision`,
 *   `pdfLibBytes`) for unit tests: tiny literal PDFs whose structure the test controls exactly;
 * - file generators (`ghostscriptPdf`, `qpdfObjectStreamsPdf`, …) that write into a directory and
 *   return the path, made by real tools, for interop and command tests.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';
import { PDFDocument, PDFName, PDFString, StandardFonts } from 'pdf-lib';
import { bytesSource } from '../../src/core/pdf/byte-source.js';
import { readPdf } from '../../src/core/pdf/document.js';
import { isEsignError } from '../../src/core/errors.js';

/** An object body: PDF source text, or a stream given as its dictionary text (no /Length) and data. */
export type ObjectBody = string | { dict: string; data: Uint8Array | string };

const latin1 = (text: string): Uint8Array => Uint8Array.from(text, (ch) => ch.charCodeAt(0) & 0xff);

function concat(parts: Array<Uint8Array | string>): Uint8Array {
  return new Uint8Array(Buffer.concat(parts.map((part) => (typeof part === 'string' ? latin1(part) : part))));
}

function objectBytes(num: number, body: ObjectBody): Uint8Array {
  if (typeof body === 'string') return latin1(`${num} 0 obj\n${body}\nendobj\n`);
  const data = typeof body.data === 'string' ? latin1(body.data) : body.data;
  const dict = body.dict.replace(/>>\s*$/, ` /Length ${data.length} >>`);
  return concat([`${num} 0 obj\n${dict}\nstream\n`, data, '\nendstream\nendobj\n']);
}

function table(entries: Array<[number, number | 'free']>): string {
  const sorted = [...entries].sort((a, b) => a[0] - b[0]);
  let out = 'xref\n';
  let i = 0;
  while (i < sorted.length) {
    let j = i;
    while (j + 1 < sorted.length && (sorted[j + 1] as [number, unknown])[0] === (sorted[j] as [number, unknown])[0] + 1)
      j++;
    out += `${(sorted[i] as [number, unknown])[0]} ${j - i + 1}\n`;
    for (let k = i; k <= j; k++) {
      const offset = (sorted[k] as [number, number | 'free'])[1];
      out += offset === 'free' ? '0000000000 65535 f\r\n' : `${String(offset).padStart(10, '0')} 00000 n\r\n`;
    }
    i = j + 1;
  }
  return out;
}

/** A one-page document's objects 1–3 (catalog, pages, page); add more after them. */
export function minimalObjects(extraCatalog = '', extraPage = ''): ObjectBody[] {
  return [
    `<< /Type /Catalog /Pages 2 0 R ${extraCatalog}>>`,
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] ${extraPage}>>`,
  ];
}

/** Objects 1..n with a classic xref table; `trailerExtra` is added inside the trailer dictionary. */
export function buildClassicPdf(objects: ObjectBody[] = minimalObjects(), trailerExtra = ''): Uint8Array {
  const parts: Uint8Array[] = [latin1('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n')];
  const offsets: Array<[number, number | 'free']> = [[0, 'free']];
  let at = parts[0]!.length;
  objects.forEach((body, i) => {
    const bytes = objectBytes(i + 1, body);
    offsets.push([i + 1, at]);
    parts.push(bytes);
    at += bytes.length;
  });
  const trailer = `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R ${trailerExtra}>>\nstartxref\n${at}\n%%EOF\n`;
  return concat([...parts, table(offsets), trailer]);
}

/** Appends a hand-written revision (classic table) that replaces or adds `objects`. */
export function appendRevision(
  pdf: Uint8Array,
  objects: Record<number, ObjectBody>,
  size: number,
  trailerExtra = '',
): Uint8Array {
  const text = Buffer.from(pdf).toString('latin1');
  const prev = Number(/startxref\s+(\d+)\s+%%EOF\s*$/.exec(text)?.[1]);
  const parts: Uint8Array[] = [pdf];
  const offsets: Array<[number, number]> = [];
  let at = pdf.length;
  for (const [num, body] of Object.entries(objects)) {
    const bytes = objectBytes(Number(num), body);
    offsets.push([Number(num), at]);
    parts.push(bytes);
    at += bytes.length;
  }
  const trailer = `trailer\n<< /Size ${size} /Root 1 0 R /Prev ${prev} ${trailerExtra}>>\nstartxref\n${at}\n%%EOF\n`;
  return concat([...parts, table(offsets), trailer]);
}

function pngUpRows(rows: number[][]): Uint8Array {
  const out: number[] = [];
  rows.forEach((row, r) => {
    out.push(2);
    row.forEach((byte, i) => out.push((byte - (r > 0 ? (rows[r - 1]![i] ?? 0) : 0)) & 0xff));
  });
  return Uint8Array.from(out);
}

function objectStream(objects: Array<[number, string]>): ObjectBody {
  let header = '';
  let body = '';
  for (const [num, text] of objects) {
    header += `${num} ${body.length} `;
    body += `${text}\n`;
  }
  return {
    dict: `<< /Type /ObjStm /N ${objects.length} /First ${header.length} /Filter /FlateDecode >>`,
    data: deflateSync(latin1(header + body)),
  };
}

/**
 * A one-page document whose catalog, pages and page objects (1–3) live in an object stream
 * (object 4), indexed by a Flate cross-reference stream with PNG predictor 12 (object 5).
 */
export function buildXrefStreamPdf(
  extraCatalog = '',
  damage: (compressed: Uint8Array) => Uint8Array = (compressed) => compressed,
): Uint8Array {
  const [catalog, pages, page] = minimalObjects(extraCatalog) as [string, string, string];
  const head = '%PDF-1.7\n';
  const objstm = objectBytes(
    4,
    objectStream([
      [1, catalog],
      [2, pages],
      [3, page],
    ]),
  );
  const xrefOffset = head.length + objstm.length;
  const row = (type: number, f2: number, f3: number): number[] => [
    type,
    (f2 >> 24) & 255,
    (f2 >> 16) & 255,
    (f2 >> 8) & 255,
    f2 & 255,
    f3,
  ];
  const rows = [
    row(0, 0, 255),
    row(2, 4, 0),
    row(2, 4, 1),
    row(2, 4, 2),
    row(1, head.length, 0),
    row(1, xrefOffset, 0),
  ];
  const xref = objectBytes(5, {
    dict: '<< /Type /XRef /Size 6 /W [1 4 1] /Root 1 0 R /Filter /FlateDecode /DecodeParms << /Predictor 12 /Columns 6 >> >>',
    data: damage(deflateSync(pngUpRows(rows))),
  });
  return concat([head, objstm, xref, `startxref\n${xrefOffset}\n%%EOF\n`]);
}

/**
 * A hybrid file: a classic table (listing the compressed objects as free) whose trailer points
 * with /XRefStm to a cross-reference stream that finds objects 2–3 in object stream 4.
 */
export function buildHybridPdf(): Uint8Array {
  const [catalog, pages, page] = minimalObjects() as [string, string, string];
  const head = '%PDF-1.5\n';
  const obj1 = objectBytes(1, catalog);
  const obj4 = objectBytes(
    4,
    objectStream([
      [2, pages],
      [3, page],
    ]),
  );
  const off1 = head.length;
  const off4 = off1 + obj1.length;
  const off5 = off4 + obj4.length;
  const rows = [
    [2, 4, 0],
    [2, 4, 1],
  ];
  const obj5 = objectBytes(5, {
    dict: '<< /Type /XRef /Size 6 /W [1 2 1] /Index [2 2] >>',
    data: Uint8Array.from(rows.flatMap(([t, a, b]) => [t!, 0, a!, b!])),
  });
  const tableOffset = off5 + obj5.length;
  const xref = table([
    [0, 'free'],
    [1, off1],
    [2, 'free'],
    [3, 'free'],
    [4, off4],
    [5, off5],
  ]);
  return concat([
    head,
    obj1,
    obj4,
    obj5,
    xref,
    `trailer\n<< /Size 6 /Root 1 0 R /XRefStm ${off5} >>\nstartxref\n${tableOffset}\n%%EOF\n`,
  ]);
}

/** A pdf-lib document with `pages` pages of text, saved with or without object streams. */
export async function pdfLibBytes(
  options: { pages?: number; objectStreams?: boolean; title?: string } = {},
): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  if (options.title) doc.setTitle(options.title);
  for (let i = 1; i <= (options.pages ?? 1); i++) {
    doc.addPage([595, 842]).drawText(`Page ${i}`, { x: 50, y: 780, size: 14, font });
  }
  return doc.save({ useObjectStreams: options.objectStreams ?? false });
}

/** A one-page pdf-lib document (classic xref) whose page draws a Form XObject (an embedded page with text). */
export async function formXObjectPdfBytes(): Promise<Uint8Array> {
  const source = await PDFDocument.create();
  const font = await source.embedFont(StandardFonts.Helvetica);
  source.addPage([200, 100]).drawText('In a Form XObject', { x: 10, y: 40, size: 14, font });
  const doc = await PDFDocument.create();
  const [form] = await doc.embedPdf(source);
  doc.addPage([595, 842]).drawPage(form!, { x: 50, y: 600 });
  return doc.save({ useObjectStreams: false });
}

/** A pdf-lib document (classic xref) with an empty, visible signature field named `fieldName`. */
export async function emptySignatureFieldBytes(fieldName = 'Approval'): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([595, 842]);
  const widget = doc.context.register(
    doc.context.obj({
      Type: 'Annot',
      Subtype: 'Widget',
      FT: 'Sig',
      T: PDFString.of(fieldName),
      Rect: [50, 50, 250, 110],
      F: 4,
      P: page.ref,
    }),
  );
  page.node.set(PDFName.of('Annots'), doc.context.obj([widget]));
  doc.catalog.set(PDFName.of('AcroForm'), doc.context.obj({ Fields: [widget] }));
  return doc.save({ useObjectStreams: false });
}

function write(dir: string, file: string, bytes: Uint8Array): string {
  const path = join(dir, file);
  writeFileSync(path, bytes);
  return path;
}

/** A two-page document from pdf-lib (`objectStreams` selects an xref stream + object streams). */
export async function pdfLibPdf(
  dir: string,
  options: { pages?: number; objectStreams?: boolean } = {},
): Promise<string> {
  return write(
    dir,
    `pdf-lib-${options.objectStreams ? 'objstm' : 'classic'}-${options.pages ?? 2}.pdf`,
    await pdfLibBytes({ pages: 2, ...options }),
  );
}

/** A document written by Ghostscript's pdfwrite from a small PostScript program. */
export async function ghostscriptPdf(dir: string): Promise<string> {
  const ps = write(
    dir,
    'gs-input.ps',
    latin1('/Helvetica findfont 18 scalefont setfont 72 720 moveto (Made by Ghostscript) show showpage\n'),
  );
  const out = join(dir, 'ghostscript.pdf');
  execFileSync('gs', ['-q', '-dBATCH', '-dNOPAUSE', '-dSAFER', '-sDEVICE=pdfwrite', `-sOutputFile=${out}`, ps]);
  return out;
}

/**
 * The sample contract rewritten by MuPDF: `mutool clean` writes the head of the free list as
 * `0000000000 65536 f` (one above the largest generation); `mutool convert` renders it anew.
 */
export async function mupdfPdf(dir: string, how: 'clean' | 'convert'): Promise<string> {
  const sample = fileURLToPath(new URL('../../samples/contract.pdf', import.meta.url));
  const out = join(dir, `mupdf-${how}.pdf`);
  execFileSync('mutool', how === 'clean' ? ['clean', sample, out] : ['convert', '-o', out, sample], {
    stdio: 'ignore',
  });
  return out;
}

/** A pdf-lib document rewritten by qpdf with object streams (an xref stream file). */
export async function qpdfObjectStreamsPdf(dir: string): Promise<string> {
  const input = await pdfLibPdf(dir, { pages: 3 });
  const out = join(dir, 'qpdf-objstm.pdf');
  execFileSync('qpdf', ['--object-streams=generate', input, out]);
  return out;
}

/** A linearized document (qpdf --linearize), optionally with object streams (xref streams). */
export async function linearizedPdf(dir: string, options: { objectStreams?: boolean } = {}): Promise<string> {
  const input = await pdfLibPdf(dir, { pages: 3 });
  const out = join(dir, options.objectStreams ? 'linearized-objstm.pdf' : 'linearized.pdf');
  execFileSync('qpdf', ['--linearize', ...(options.objectStreams ? ['--object-streams=generate'] : []), input, out]);
  return out;
}

/** A document with three revisions: pdf-lib's original plus two hand-written updates with /Prev. */
export async function multiRevisionPdf(dir: string): Promise<string> {
  const original = await pdfLibBytes({ pages: 2 });
  const text = Buffer.from(original).toString('latin1');
  const size = Number(/\/Size (\d+)/.exec(text.slice(text.lastIndexOf('trailer')))?.[1]);
  const root = /\/Root (\d+ \d+ R)/.exec(text.slice(text.lastIndexOf('trailer')))?.[1] ?? '1 0 R';
  const withRoot = (pdf: Uint8Array): Uint8Array =>
    latin1(
      Buffer.from(pdf)
        .toString('latin1')
        .replace(/\/Root 1 0 R \/Prev/g, `/Root ${root} /Prev`),
    );
  let pdf = withRoot(appendRevision(original, { [size]: '<< /Title (Revision 2) >>' }, size + 1, `/Info ${size} 0 R`));
  pdf = withRoot(appendRevision(pdf, { [size + 1]: '<< /Title (Revision 3) >>' }, size + 2, `/Info ${size + 1} 0 R`));
  return write(dir, 'multi-revision.pdf', pdf);
}

/** A document with an empty signature field named `Approval`. */
export async function emptySignatureFieldPdf(dir: string): Promise<string> {
  return write(dir, 'empty-field.pdf', await emptySignatureFieldBytes());
}

/** Reads a file as bytes (for tests that generated a fixture on disk). */
export function readBytes(path: string): Uint8Array {
  return new Uint8Array(readFileSync(path));
}

/** The error code readPdf refuses `pdf` with, or undefined when it opens. */
export async function refusal(pdf: Uint8Array): Promise<string | undefined> {
  try {
    await readPdf(bytesSource(pdf));
    return undefined;
  } catch (error) {
    if (!isEsignError(error)) throw error;
    return error.code;
  }
}
