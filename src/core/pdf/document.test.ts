import { PDFDocument } from 'pdf-lib';
import { describe, expect, it } from 'vitest';
import {
  appendRevision,
  buildClassicPdf,
  buildHybridPdf,
  buildXrefStreamPdf,
  minimalObjects,
  pdfLibBytes,
} from '../../../test/helpers/pdf-fixtures.js';
import type { ByteSource } from '../ports.js';
import { bytesSource } from './byte-source.js';
import { byteSourceFrom, readPdf, readPdfFromHeader } from './document.js';
import { PdfDict, PdfName, PdfRef } from './objects.js';

const latin1 = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));

function countingSource(data: Uint8Array): ByteSource & { bytesRead: number } {
  const inner = bytesSource(data);
  const counter = {
    size: inner.size,
    bytesRead: 0,
    read: async (offset: number, length: number) => {
      const bytes = await inner.read(offset, length);
      counter.bytesRead += bytes.length;
      return bytes;
    },
  };
  return counter;
}

describe('readPdf', () => {
  it('reads a classic table, its catalog and page 1', async () => {
    const doc = await readPdf(bytesSource(buildClassicPdf()));
    expect(doc.xrefStyle).toBe('table');
    expect((await doc.catalog()).ref).toEqual(new PdfRef(1, 0));
    const page = await doc.page(1);
    expect(page.ref.num).toBe(3);
    expect(page.dict.get('Type')).toBe(PdfName.of('Page'));
    expect(doc.nextObjectNumber).toBe(4);
  });

  it('reads an xref stream with a PNG predictor and objects inside an object stream', async () => {
    const doc = await readPdf(bytesSource(buildXrefStreamPdf()));
    expect(doc.xrefStyle).toBe('stream');
    expect((await doc.page(-1)).ref.num).toBe(3);
    expect(doc.nextObjectNumber).toBe(6);
  });

  it('reads a hybrid file: compressed objects found through /XRefStm despite free table entries', async () => {
    const doc = await readPdf(bytesSource(buildHybridPdf()));
    expect(doc.xrefStyle).toBe('table');
    expect((await doc.page(1)).dict.get('MediaBox')).toEqual([0, 0, 612, 792]);
  });

  it('follows /Prev across revisions, the newest version of an object winning', async () => {
    const base = buildClassicPdf([...minimalObjects('/Info 4 0 R '), '<< /Title (one) >>']);
    const rev2 = appendRevision(base, { 3: '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 100 100] >>' }, 5);
    const rev3 = appendRevision(rev2, { 5: '<< /Title (three) >>' }, 6, '/Info 5 0 R');
    const doc = await readPdf(bytesSource(rev3));
    expect(doc.xref.sections).toHaveLength(3);
    expect((await doc.page(1)).dict.get('MediaBox')).toEqual([0, 0, 100, 100]);
    expect(doc.trailer.get('Info')).toEqual(new PdfRef(5, 0));
    expect(await doc.resolveDict(new PdfRef(4))).toBeInstanceOf(PdfDict);
    expect(doc.startxref).toBe(Number(/startxref\s+(\d+)\s+%%EOF\s*$/.exec(Buffer.from(rev3).toString('latin1'))?.[1]));
  });

  it('falls back to "endstream" when a stream\'s /Length is wrong', async () => {
    const good = Buffer.from(buildXrefStreamPdf()).toString('latin1');
    const wrong = good.replace(
      /(\/Type \/ObjStm [^>]*\/Length )(\d+)/,
      (_, head: string, n: string) => `${head}${Number(n) + 40}`,
    );
    expect(wrong).not.toBe(good);
    const doc = await readPdf(bytesSource(latin1(wrong)));
    expect((await doc.page(1)).ref.num).toBe(3);
  });

  it('keeps /Info from an older trailer when the newest leaves it out', async () => {
    const base = buildClassicPdf([...minimalObjects(), '<< /Title (one) >>'], '/Info 4 0 R ');
    const doc = await readPdf(bytesSource(appendRevision(base, { 5: '<< >>' }, 6)));
    expect(doc.trailer.get('Info')).toEqual(new PdfRef(4, 0));
  });

  it.each([false, true])('reads pdf-lib output (object streams: %s)', async (objectStreams) => {
    const bytes = await pdfLibBytes({ pages: 3, objectStreams });
    const doc = await readPdf(bytesSource(bytes));
    expect(doc.xrefStyle).toBe(objectStreams ? 'stream' : 'table');
    const lib = await PDFDocument.load(bytes);
    expect((await doc.page(2)).ref.num).toBe(lib.getPage(1).ref.objectNumber);
    expect((await doc.page(-1)).number).toBe(3);
  });

  it('finds page N of a 2,000-page document reading a small part of it', async () => {
    const bytes = await pdfLibBytes({ pages: 2000, objectStreams: true });
    const lib = await PDFDocument.load(bytes);
    for (const n of [1, 1234, -1]) {
      const source = countingSource(bytes);
      const doc = await readPdf(source);
      const page = await doc.page(n);
      expect(page.ref.num).toBe(lib.getPage(n === -1 ? 1999 : n - 1).ref.objectNumber);
      expect(source.bytesRead).toBeLessThan(bytes.length / 5);
    }
  });

  it('refuses a page that does not exist', async () => {
    const doc = await readPdf(bytesSource(buildClassicPdf()));
    await expect(doc.page(2)).rejects.toMatchObject({ code: 'USAGE' });
  });

  it('refuses a file that is not a PDF', async () => {
    await expect(readPdf(bytesSource(latin1('hello, world\n')))).rejects.toMatchObject({ code: 'PDF_NOT_PDF' });
  });

  it('refuses a cross-reference stream whose compressed data is truncated or corrupt, as qpdf --check does', async () => {
    expect((await readPdf(bytesSource(buildXrefStreamPdf()))).xrefStyle).toBe('stream');
    const damaged: Array<[string, (compressed: Uint8Array) => Uint8Array]> = [
      ['cut to 30%', (compressed) => compressed.subarray(0, Math.floor(compressed.length * 0.3))],
      ['cut to 60%', (compressed) => compressed.subarray(0, Math.floor(compressed.length * 0.6))],
      ['cut to 90%', (compressed) => compressed.subarray(0, Math.floor(compressed.length * 0.9))],
      [
        'garbage in the middle',
        (compressed) => compressed.map((byte, i) => (i > 4 && i < compressed.length - 6 ? byte ^ 0x5a : byte)),
      ],
      ['no zlib header', (compressed) => compressed.subarray(2)],
    ];
    for (const [how, damage] of damaged) {
      await expect(readPdf(bytesSource(buildXrefStreamPdf('', damage))), how).rejects.toMatchObject({
        code: 'PDF_XREF_BROKEN',
        hint: expect.stringContaining('qpdf'),
      });
    }
  });

  it('refuses broken cross-reference data with a repair hint', async () => {
    const good = Buffer.from(buildClassicPdf()).toString('latin1');
    const wrongOffset = good.replace(/startxref\n\d+/, 'startxref\n20');
    await expect(readPdf(bytesSource(latin1(wrongOffset)))).rejects.toMatchObject({
      code: 'PDF_XREF_BROKEN',
      hint: expect.stringContaining('qpdf'),
    });
    const noStartxref = good.replace('startxref', 'startxrex');
    await expect(readPdf(bytesSource(latin1(noStartxref)))).rejects.toMatchObject({ code: 'PDF_XREF_BROKEN' });
    const badEntry = good.replace(/0000000\d\d\d 00000 n/, '00000000zz 00000 n');
    await expect(readPdf(bytesSource(latin1(badEntry)))).rejects.toMatchObject({ code: 'PDF_XREF_BROKEN' });
  });
});

describe('bytes before the %PDF- header', () => {
  const prefix = latin1('HTTP/1.1 200 OK\r\nContent-Type: application/pdf\r\n\r\n');
  const withPrefix = (pdf: Uint8Array) => Uint8Array.from([...prefix, ...pdf]);

  it('reads offsets from the header, as poppler and qpdf do: the document is the bytes from there on', async () => {
    for (const pdf of [buildClassicPdf(), buildXrefStreamPdf(), buildHybridPdf()]) {
      const { source, pdf: doc } = await readPdfFromHeader(bytesSource(withPrefix(pdf)), byteSourceFrom);
      expect(source.size).toBe(pdf.length);
      expect(await source.read(0, 5)).toEqual(latin1('%PDF-'));
      expect((await doc.catalog()).dict.get('Type')).toBe(PdfName.of('Catalog'));
    }
  });

  it('reads a file whose writer counted offsets from the first byte anyway as it is', async () => {
    const pdf = buildClassicPdf();
    // The same length before the first object: every offset stays right from the file's first byte.
    const absolute = Uint8Array.from([...latin1('XX%PDF-1\n'), ...pdf.subarray('%PDF-1.7\n'.length)]);
    const input = bytesSource(absolute);
    const { source, pdf: doc } = await readPdfFromHeader(input, byteSourceFrom);
    expect(source).toBe(input);
    expect((await doc.catalog()).dict.get('Type')).toBe(PdfName.of('Catalog'));
  });

  it('a file with neither reading is refused as damaged, one with no header in its first KiB as not a PDF', async () => {
    const damaged = Uint8Array.from([...prefix, ...latin1('%PDF-1.7\n1 0 obj\n<<>>\nendobj\nstartxref\n999\n%%EOF\n')]);
    await expect(readPdfFromHeader(bytesSource(damaged), byteSourceFrom)).rejects.toMatchObject({
      code: 'PDF_XREF_BROKEN',
    });
    const late = Uint8Array.from([...new Uint8Array(1100).fill(0x20), ...buildClassicPdf()]);
    await expect(readPdfFromHeader(bytesSource(late), byteSourceFrom)).rejects.toMatchObject({ code: 'PDF_NOT_PDF' });
  });
});
