import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  appendRevision,
  buildClassicPdf,
  buildXrefStreamPdf,
  minimalObjects,
} from '../../../../test/helpers/pdf-fixtures.js';
import type { ObjectBody } from '../../../../test/helpers/pdf-fixtures.js';
import { bytesSource } from '../../pdf/byte-source.js';
import { readPdf } from '../../pdf/document.js';
import { PageContentComparison } from './page-content.js';

const PAGE = '/Resources << /Font << /F1 5 0 R >> /XObject << /X 9 0 R >> >> /Contents 4 0 R';
const CONTENT: ObjectBody = { dict: '<< >>', data: 'BT /F1 12 Tf 72 720 Td (signed) Tj ET' };
const FONT = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>';
/** One page drawing object 4 with font 5; its /X refers to object 9, which does not exist (yet). */
const signed = (): Uint8Array => buildClassicPdf([...minimalObjects('', PAGE), CONTENT, FONT]);
const page = (extra = ''): string => `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] ${PAGE} ${extra}>>`;

/** Compares each revision of `versions` with the one before it, as verify does. */
async function changes(...versions: Uint8Array[]): Promise<string[][]> {
  const comparison = new PageContentComparison();
  const docs = await Promise.all(versions.map((bytes) => readPdf(bytesSource(bytes))));
  const out: string[][] = [];
  for (let i = 1; i < docs.length; i++) {
    const redefined = [...docs[i]!.xref.sections[0]!.entries.keys()];
    out.push(
      await comparison.changes({ doc: docs[i - 1]!, revision: i }, { doc: docs[i]!, revision: i + 1 }, redefined),
    );
  }
  return out;
}

describe('page content comparison across an update', () => {
  it('an annotation, a catalog change or a new unreferenced object change nothing; the next update is still checked', async () => {
    const v1 = signed();
    const v2 = appendRevision(
      v1,
      { 3: page('/Annots [7 0 R]'), 7: '<< /Type /Annot /Subtype /Text /Rect [0 0 9 9] >>' },
      8,
    );
    const v3 = appendRevision(v2, { 1: '<< /Type /Catalog /Pages 2 0 R /Lang (nl) >>', 8: '<< /Whatever 1 >>' }, 9);
    const v4 = appendRevision(v3, { 5: '<< /Type /Font /Subtype /Type1 /BaseFont /Courier >>' }, 9);
    expect(await changes(v1, v2, v3, v4)).toEqual([[], [], ['page 1: /Resources changed']]);
  });

  it('a redefined content stream, a page added, a page swapped for a copy with other content', async () => {
    const v1 = signed();
    expect(await changes(v1, appendRevision(v1, { 4: { dict: '<< >>', data: 'BT (forged) Tj ET' } }, 6))).toEqual([
      ['page 1: /Contents changed'],
    ]);
    expect(
      await changes(v1, appendRevision(v1, { 2: '<< /Type /Pages /Kids [3 0 R 6 0 R] /Count 2 >>', 6: page() }, 7)),
    ).toEqual([['page 2 was added']]);
    const copy = appendRevision(
      v1,
      { 2: '<< /Type /Pages /Kids [6 0 R] /Count 1 >>', 6: page().replace('4 0 R', '7 0 R'), 7: CONTENT },
      8,
    );
    expect(await changes(v1, copy)).toEqual([[]]);
    const forged = appendRevision(
      v1,
      {
        2: '<< /Type /Pages /Kids [6 0 R] /Count 1 >>',
        6: page().replace('4 0 R', '7 0 R'),
        7: { dict: '<< >>', data: 'BT (forged) Tj ET' },
      },
      8,
    );
    expect(await changes(v1, forged)).toEqual([['page 1 (object 6, was 3): /Contents changed']]);
  });

  it('defining an object the page referred to without it existing, and an inherited /Resources or /MediaBox change', async () => {
    const v1 = signed();
    expect(
      await changes(
        v1,
        appendRevision(
          v1,
          { 9: { dict: '<< /Type /XObject /Subtype /Form /BBox [0 0 9 9] >>', data: '0 0 9 9 re f' } },
          10,
        ),
      ),
    ).toEqual([['page 1: /Resources changed']]);
    const inherited = buildClassicPdf([
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 /MediaBox [0 0 612 792] >>',
      '<< /Type /Page /Parent 2 0 R /Contents 4 0 R >>',
      CONTENT,
    ]);
    const wider = appendRevision(
      inherited,
      { 2: '<< /Type /Pages /Kids [3 0 R] /Count 1 /MediaBox [0 0 842 1190] >>' },
      5,
    );
    expect(await changes(inherited, wider)).toEqual([['page 1: /MediaBox changed']]);
  });

  it('an object stream redefined under the objects it holds', async () => {
    const v1 = buildXrefStreamPdf();
    const header = '1 0 2 45 3 95 ';
    const body = [
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 10 10] >>',
    ];
    const data = header + body.map((text, i) => text.padEnd([45, 50, 0][i]!, ' ')).join('');
    expect(data.indexOf('<< /Type /Page ')).toBe(header.length + 95);
    const v2 = appendRevision(
      v1,
      { 4: { dict: `<< /Type /ObjStm /N 3 /First ${header.length} /Filter /FlateDecode >>`, data: deflateSync(data) } },
      6,
    );
    expect(await changes(v1, v2)).toEqual([['page 1: /MediaBox changed']]);
  });
});
