/**
 * Cross-reference reading since entries are decoded only when looked up: classic tables (the
 * standard 20-byte layout checked by one regular expression, any other layout by the tokenizer),
 * cross-reference streams, overlapping subsections and the /Prev chain.
 */
import { describe, expect, it } from 'vitest';
import { appendRevision, buildClassicPdf, minimalObjects, refusal } from '../../../test/helpers/pdf-fixtures.js';
import { bytesSource } from './byte-source.js';
import { readPdf } from './document.js';
import { PdfSyntaxError } from './lexer.js';
import { PdfRef } from './objects.js';
import { XrefEntries, highestObjectNumber } from './xref-entries.js';
import { readSection, readXrefChain } from './xref.js';
import type { XrefEntry } from './xref.js';

const bytes = (text: string): Uint8Array => Uint8Array.from(text, (ch) => ch.charCodeAt(0));
const latin1 = (data: Uint8Array): string => Buffer.from(data).toString('latin1');
const concat = (...parts: Array<string | Uint8Array>): Uint8Array =>
  new Uint8Array(Buffer.concat(parts.map((part) => (typeof part === 'string' ? bytes(part) : part))));

const offset = (at: number, gen = 0): XrefEntry => ({ kind: 'offset', offset: at, gen });
const compressed = (stream: number, index: number): XrefEntry => ({ kind: 'compressed', stream, index });
const FREE: XrefEntry = { kind: 'free' };

/** One table entry in the standard layout: `nnnnnnnnnn ggggg n` and a two-byte end of line. */
function entryLine(entry: XrefEntry, eol = '\r\n'): string {
  if (entry.kind === 'free') return `0000000000 65535 f${eol}`;
  if (entry.kind !== 'offset') throw new Error('a table lists offsets and free entries only');
  return `${String(entry.offset).padStart(10, '0')} ${String(entry.gen).padStart(5, '0')} n${eol}`;
}

/** A subsection: its header and the lines of `entries`, numbered from `first`. */
function subsection(first: number, entries: XrefEntry[], eol = '\r\n'): string {
  return `${first} ${entries.length}\n${entries.map((entry) => entryLine(entry, eol)).join('')}`;
}

/** A classic section at offset 0: `xref`, the subsections as given, and a trailer. */
function table(body: string, trailer = '<< /Size 100 >>'): Uint8Array {
  return bytes(`xref\n${body}trailer\n${trailer}\n`);
}

const readTable = async (body: string) => (await readSection(bytesSource(table(body)), 0)).entries;

/** A cross-reference stream (unfiltered) at offset 0, its rows written as given. */
function xrefStream(dict: string, rows: number[][]): Uint8Array {
  const data = Uint8Array.from(rows.flat());
  return concat(`7 0 obj\n<< /Type /XRef ${dict} /Length ${data.length} >>\nstream\n`, data, '\nendstream\nendobj\n');
}

const readStream = async (dict: string, rows: number[][]) =>
  (await readSection(bytesSource(xrefStream(dict, rows)), 0)).entries;

/** `pdf` with the 20-byte line of object `num` in its (single, `0 N`) table replaced by `line`. */
function withEntryLine(pdf: Uint8Array, num: number, line: string): Uint8Array {
  const text = latin1(pdf);
  const start = /xref\n0 \d+\n/.exec(text);
  if (!start) throw new Error('no table starting at object 0');
  const at = start.index + start[0].length + num * 20;
  expect(line).toHaveLength(20);
  return bytes(text.slice(0, at) + line + text.slice(at + 20));
}

// A document whose object 4 is read by no signing path: only its table entry is ever looked at.
const withUnusedObject = (): Uint8Array => buildClassicPdf([...minimalObjects(), '<< /Unused true >>']);

describe('classic table in the standard 20-byte layout', () => {
  const first = [FREE, offset(15), offset(9_999_999_999, 7)];
  const second = [offset(120, 65535), FREE];
  // The subsection for 10–11 comes first in the file: lookups must not depend on file order.
  const body = subsection(10, second) + subsection(0, first);

  it('decodes each entry when it is looked up: offset, generation, free', async () => {
    const entries = await readTable(body);
    expect(entries).toBeInstanceOf(XrefEntries);
    expect(entries.get(0)).toEqual(FREE);
    expect(entries.get(1)).toEqual(offset(15));
    expect(entries.get(2)).toEqual(offset(9_999_999_999, 7));
    expect(entries.get(10)).toEqual(offset(120, 65535));
    expect(entries.get(11)).toEqual(FREE);
  });

  it('answers has, size and absent numbers (between, before and after the subsections)', async () => {
    const entries = await readTable(body);
    expect(entries.size).toBe(5);
    for (const num of [0, 1, 2, 10, 11]) expect(entries.has(num)).toBe(true);
    for (const num of [-1, 0.5, 3, 9, 12, 1000, NaN]) {
      expect(entries.has(num)).toBe(false);
      expect(entries.get(num)).toBeUndefined();
    }
  });

  it('iterates in file order, as a Map filled while reading would', async () => {
    const entries = await readTable(body);
    expect([...entries.keys()]).toEqual([10, 11, 0, 1, 2]);
    expect([...entries]).toEqual([
      [10, offset(120, 65535)],
      [11, FREE],
      [0, FREE],
      [1, offset(15)],
      [2, offset(9_999_999_999, 7)],
    ]);
    expect([...entries.values()]).toEqual([...entries].map(([, entry]) => entry));
    const seen: number[] = [];
    entries.forEach((_, num) => seen.push(num));
    expect(seen).toEqual([10, 11, 0, 1, 2]);
  });

  it('gives the highest listed object number, whichever subsection holds it', async () => {
    expect(highestObjectNumber(await readTable(body))).toBe(11);
    expect(
      highestObjectNumber(await readTable(subsection(0, first) + subsection(40, [FREE]) + subsection(5, [offset(9)]))),
    ).toBe(40);
    expect(highestObjectNumber(await readTable(''))).toBe(-1);
  });

  it('accepts each two-byte end of line: " \\r", " \\n" and "\\r\\n"', async () => {
    for (const eol of [' \r', ' \n', '\r\n']) {
      expect([...(await readTable(subsection(0, first, eol)))]).toEqual(first.map((entry, num) => [num, entry]));
    }
  });

  it('is what readXrefChain indexes for a one-revision file, with the trailer', async () => {
    const index = await readXrefChain(bytesSource(table(body, '<< /Size 12 /Root 1 0 R >>')), 0);
    expect(index.style).toBe('table');
    expect(index.sections).toHaveLength(1);
    expect(index.trailer.get('Size')).toBe(12);
    expect(index.entries.get(2)).toEqual(offset(9_999_999_999, 7));
    expect([...index.entries.keys()]).toEqual([10, 11, 0, 1, 2]);
  });

  it('reads a table longer than the first 4 KB read of an older revision', async () => {
    const many = Array.from({ length: 3000 }, (_, i) => offset(1000 + i * 37, i % 3));
    const entries = await readTable(subsection(0, many));
    expect(entries.size).toBe(3000);
    expect(entries.get(0)).toEqual(offset(1000));
    expect(entries.get(2999)).toEqual(offset(1000 + 2999 * 37, 2999 % 3));
  });
});

describe('classic table in other layouts (read by the tokenizer)', () => {
  const expected = [FREE, offset(9), offset(74, 2), offset(1234)];
  const asPairs = (first: number, entries: XrefEntry[]) => entries.map((entry, k) => [first + k, entry]);

  it('reads entries ending in a single-byte end of line (19 bytes each)', async () => {
    for (const eol of ['\n', '\r']) {
      const body = subsection(0, expected, eol);
      expect(body).toContain('0000000009 00000 n' + eol + '0000000074');
      expect([...(await readTable(body))]).toEqual(asPairs(0, expected));
    }
  });

  it('reads entries with extra or missing spaces and short numbers', async () => {
    const body = '0 4\n0000000000 65535 f  \r\n  0000000009   00000 n\r\n74 2 n\n0000001234 00000 n   \n';
    expect([...(await readTable(body))]).toEqual(asPairs(0, expected));
  });

  it('reads a standard subsection and a non-standard one in the same table', async () => {
    const standard = subsection(0, expected);
    const other = subsection(20, [offset(500), FREE, offset(600, 1)], '\n');
    const entries = await readTable(standard + other);
    expect([...entries]).toEqual([...asPairs(0, expected), ...asPairs(20, [offset(500), FREE, offset(600, 1)])]);
    expect(entries.get(22)).toEqual(offset(600, 1));
    expect(highestObjectNumber(entries)).toBe(22);

    const reversed = await readTable(other + standard);
    expect(reversed.get(3)).toEqual(offset(1234));
    expect(reversed.get(20)).toEqual(offset(500));
  });

  it('refuses a generation above 65535 whatever the layout', async () => {
    await expect(readTable('0 1\n9 70000 n\n')).rejects.toThrow(PdfSyntaxError);
    await expect(readTable('0 1\n0000000009 70000 n\r\n')).rejects.toThrow(PdfSyntaxError);
    await expect(readTable('0 1\n0000000009 65536 n\r\n')).rejects.toThrow(PdfSyntaxError);
  });
});

describe("MuPDF's free-list head: object 0 free with generation 65536", () => {
  const rest = [offset(9), offset(74, 2)];
  const mupdfHead = (eol: string) => `0000000000 65536 f${eol}`;

  it('reads it in the standard layout, with each two-byte end of line, the other entries decoded', async () => {
    for (const eol of [' \r', ' \n', '\r\n']) {
      const entries = await readTable(`0 3\n${mupdfHead(eol)}${rest.map((entry) => entryLine(entry, eol)).join('')}`);
      expect(entries).toBeInstanceOf(XrefEntries);
      expect([...entries]).toEqual([
        [0, FREE],
        [1, offset(9)],
        [2, offset(74, 2)],
      ]);
    }
  });

  it('reads it in other layouts (the tokenizer)', async () => {
    expect([...(await readTable(`0 3\n${mupdfHead('\n')}9 0 n\n74 2 n\n`))]).toEqual([
      [0, FREE],
      [1, offset(9)],
      [2, offset(74, 2)],
    ]);
  });

  it('refuses generation 65536 anywhere else: in use, on another object, with an offset, or one more', async () => {
    const refused = [
      '0 1\n0000000000 65536 n\r\n',
      '0 2\n0000000000 65535 f\r\n0000000000 65536 f\r\n',
      '5 1\n0000000000 65536 f\r\n',
      '0 1\n0000000009 65536 f\r\n',
      '0 1\n0000000000 65537 f\r\n',
      '0 1\n0 65536 n\n',
      '0 2\n0 65535 f\n0 65536 f\n',
    ];
    for (const body of refused) await expect(readTable(body), body).rejects.toThrow(PdfSyntaxError);
  });

  it('opens a document whose table starts with it', async () => {
    const pdf = withEntryLine(withUnusedObject(), 0, '0000000000 65536 f\r\n');
    expect(await refusal(pdf)).toBeUndefined();
    expect(await refusal(withEntryLine(withUnusedObject(), 0, '0000000000 65537 f\r\n'))).toBe('PDF_XREF_BROKEN');
  });
});

describe('subsections listing an object twice', () => {
  it('lets the later listing win, decoded into a Map', async () => {
    const entries = await readTable(subsection(0, [FREE, offset(10), offset(20)]) + subsection(1, [offset(99, 1)]));
    expect(entries).toBeInstanceOf(Map);
    expect(entries.get(1)).toEqual(offset(99, 1));
    expect(entries.get(2)).toEqual(offset(20));
    expect(entries.size).toBe(3);
    expect(highestObjectNumber(entries)).toBe(2);
  });

  it('lets the later listing win when the later subsection starts lower and reaches into the earlier one', async () => {
    const entries = await readTable(
      subsection(5, [offset(50), offset(60)]) + subsection(3, [offset(30), offset(40), offset(55, 3)]),
    );
    expect([3, 4, 5, 6].map((num) => entries.get(num))).toEqual([offset(30), offset(40), offset(55, 3), offset(60)]);
  });

  it('does the same for the /Index pairs of a cross-reference stream', async () => {
    const entries = await readStream('/Size 3 /W [1 1 1] /Index [0 2 1 1]', [
      [1, 10, 0],
      [1, 20, 0],
      [2, 7, 4],
    ]);
    expect(entries).toBeInstanceOf(Map);
    expect(entries.get(0)).toEqual(offset(10));
    expect(entries.get(1)).toEqual(compressed(7, 4));
  });

  it('stays lazy when subsections only touch (0–2 then 3–4)', async () => {
    const entries = await readTable(
      subsection(0, [FREE, offset(1), offset(2)]) + subsection(3, [offset(3), offset(4)]),
    );
    expect(entries).toBeInstanceOf(XrefEntries);
    expect([...entries.keys()]).toEqual([0, 1, 2, 3, 4]);
  });
});

describe('damaged tables are refused when the file is opened, not when an entry is looked up', () => {
  it('opens the document used below (its object 4 is in the table and read by nothing)', async () => {
    expect(await refusal(withUnusedObject())).toBeUndefined();
    expect(latin1(withUnusedObject())).toMatch(/xref\n0 5\n/);
  });

  it('refuses a generation of 70000 in a standard-width entry with PDF_XREF_BROKEN', async () => {
    const pdf = withUnusedObject();
    const line = latin1(pdf).match(/\d{10} 00000 n\r\n/g)?.[3] as string;
    expect(await refusal(withEntryLine(pdf, 4, line.replace(' 00000 ', ' 70000 ')))).toBe('PDF_XREF_BROKEN');
  });

  it('refuses a letter in place of any digit of an entry with PDF_XREF_BROKEN', async () => {
    const pdf = withUnusedObject();
    const line = latin1(pdf).match(/\d{10} 00000 n\r\n/g)?.[3] as string;
    const digitPositions = [...Array(10).keys(), ...[11, 12, 13, 14, 15]];
    for (const at of digitPositions) {
      for (const letter of ['x', 'f', 'n']) {
        const damaged = line.slice(0, at) + letter + line.slice(at + 1);
        expect({ damaged, code: await refusal(withEntryLine(pdf, 4, damaged)) }).toEqual({
          damaged,
          code: 'PDF_XREF_BROKEN',
        });
      }
    }
  });

  it('refuses an entry type other than n or f with PDF_XREF_BROKEN', async () => {
    const pdf = withUnusedObject();
    const line = latin1(pdf).match(/\d{10} 00000 n\r\n/g)?.[3] as string;
    expect(await refusal(withEntryLine(pdf, 4, line.replace(' n\r\n', ' x\r\n')))).toBe('PDF_XREF_BROKEN');
  });
});

describe('cross-reference streams', () => {
  it('decodes offsets, compressed and free entries from their rows, across /Index pairs', async () => {
    const entries = await readStream('/Size 13 /W [1 3 2] /Index [0 3 10 3]', [
      [0, 0, 0, 0, 255, 255],
      [1, 0x01, 0x02, 0x03, 0, 0],
      [2, 0, 0, 9, 0, 4],
      [1, 0, 0, 17, 0x01, 0x00],
      [0, 0, 0, 0, 0, 0],
      [2, 0, 1, 0, 0x01, 0x02],
    ]);
    expect(entries).toBeInstanceOf(XrefEntries);
    expect([...entries]).toEqual([
      [0, FREE],
      [1, offset(0x010203)],
      [2, compressed(9, 4)],
      [10, offset(17, 256)],
      [11, FREE],
      [12, compressed(256, 0x0102)],
    ]);
    expect(entries.get(12)).toEqual(compressed(256, 0x0102));
    expect(entries.has(5)).toBe(false);
    expect(highestObjectNumber(entries)).toBe(12);
  });

  it('defaults /Index to [0 /Size]', async () => {
    const entries = await readStream('/Size 2 /W [1 1 1]', [
      [1, 30, 0],
      [2, 5, 1],
    ]);
    expect([...entries]).toEqual([
      [0, offset(30)],
      [1, compressed(5, 1)],
    ]);
  });

  it('takes the type as 1 (an offset) when its width is 0', async () => {
    const entries = await readStream('/Size 2 /W [0 2 1]', [
      [0, 10, 0],
      [1, 0, 2],
    ]);
    expect([...entries]).toEqual([
      [0, offset(10)],
      [1, offset(256, 2)],
    ]);
  });

  it('leaves out a row of unknown type: absent from get, has, size, iteration and the highest number', async () => {
    const entries = await readStream('/Size 4 /W [1 1 1]', [
      [1, 10, 0],
      [3, 7, 3],
      [0, 0, 0],
      [9, 1, 1],
    ]);
    expect(entries.get(1)).toBeUndefined();
    expect(entries.has(1)).toBe(false);
    expect(entries.size).toBe(2);
    expect([...entries.keys()]).toEqual([0, 2]);
    expect(highestObjectNumber(entries)).toBe(2);
  });

  it.each([
    ['a negative width', '[1 -1 1]'],
    ['a non-integer width', '[1 1.5 1]'],
    ['all widths zero', '[0 0 0]'],
    ['a width beyond 8 bytes', '[1 9 1]'],
  ])('refuses /W with %s', async (_, widths) => {
    await expect(readStream(`/Size 1 /W ${widths}`, [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]])).rejects.toThrow(/bad \/W/);
  });

  it.each([
    ['a negative count', '[0 -1 5 2]'],
    ['a fractional count', '[0 1.5 5 1]'],
    ['a negative first number', '[-1 2]'],
  ])('refuses /Index with %s (it would shift the rows of every later pair)', async (_, index) => {
    const rows = [
      [1, 10, 0],
      [2, 7, 3],
    ];
    await expect(readStream(`/Size 7 /W [1 1 1] /Index ${index}`, rows)).rejects.toThrow(/bad \/Index/);
  });

  it('refuses /W with fewer than three widths', async () => {
    await expect(readStream('/Size 1 /W [1 2]', [[1, 0, 9]])).rejects.toThrow(PdfSyntaxError);
  });

  it('refuses a stream shorter than its /Index, even by one byte, when it is read', async () => {
    const rows = [
      [1, 10, 0],
      [1, 20, 0],
    ];
    await expect(readStream('/Size 3 /W [1 1 1]', rows)).rejects.toThrow(/shorter than its \/Index/);
    await expect(readStream('/Size 2 /W [1 1 1] /Index [0 1 5 2]', rows)).rejects.toThrow(/shorter than its \/Index/);
    await expect(
      readStream('/Size 2 /W [1 1 1]', [
        [1, 10, 0],
        [1, 20],
      ]),
    ).rejects.toThrow(/shorter than its \/Index/);
    expect((await readStream('/Size 2 /W [1 1 1]', rows)).size).toBe(2);
  });
});

describe('the /Prev chain', () => {
  it('merges two hand-made sections, the newest entry of each object winning, free ones included', async () => {
    const older = table(subsection(0, [FREE, offset(100), offset(200), offset(300)]), '<< /Size 4 /Root 1 0 R >>');
    const newer = bytes(
      `xref\n${subsection(1, [FREE])}${subsection(3, [offset(400, 1), offset(500)])}trailer\n<< /Size 5 /Prev 0 >>\n`,
    );
    const source = bytesSource(concat(older, newer));
    const index = await readXrefChain(source, older.length);
    expect(index.sections.map((section) => section.offset)).toEqual([older.length, 0]);
    expect([0, 1, 2, 3, 4].map((num) => index.entries.get(num))).toEqual([
      FREE,
      FREE,
      offset(200),
      offset(400, 1),
      offset(500),
    ]);
    expect(index.entries.size).toBe(5);
    expect(highestObjectNumber(index.entries)).toBe(4);
    expect(index.trailer.get('Size')).toBe(5);
    // The newest trailer has no /Root: the older one's is kept.
    expect(index.trailer.get('Root')).toEqual(new PdfRef(1, 0));
  });

  it('indexes a real update by its new offsets and the old ones for objects it leaves alone', async () => {
    const base = buildClassicPdf([...minimalObjects(), '<< /Title (one) >>']);
    const updated = appendRevision(
      base,
      { 3: '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 10 10] >>', 5: '<< /New true >>' },
      6,
    );
    const text = latin1(updated);
    const startxref = Number(/startxref\s+(\d+)\s+%%EOF\s*$/.exec(text)?.[1]);
    const index = await readXrefChain(bytesSource(updated), startxref);
    expect(index.sections).toHaveLength(2);
    expect(index.entries.get(1)).toEqual(offset(text.indexOf('1 0 obj')));
    expect(index.entries.get(3)).toEqual(offset(text.lastIndexOf('3 0 obj')));
    expect(text.lastIndexOf('3 0 obj')).not.toBe(text.indexOf('3 0 obj'));
    expect(index.entries.get(4)).toEqual(offset(text.indexOf('4 0 obj')));
    expect(index.entries.get(5)).toEqual(offset(text.indexOf('5 0 obj')));
    expect(highestObjectNumber(index.entries)).toBe(5);

    const doc = await readPdf(bytesSource(updated));
    expect((await doc.page(1)).dict.get('MediaBox')).toEqual([0, 0, 10, 10]);
    expect(doc.nextObjectNumber).toBe(6);
  });
});
