/**
 * The lexer's fast paths: arrays of references only (`[4 0 R 6 0 R]`) read by one regular
 * expression, `num gen R` read byte by byte, and objects longer than the first 4 KB read sized by
 * their `endobj`. Every other array must parse exactly as through the tokenizer.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuzzParams } from '../../../test/helpers/fuzz.js';
import type { ByteSource } from '../ports.js';
import { bytesSource } from './byte-source.js';
import { Lexer, NeedMoreBytes, PdfSyntaxError } from './lexer.js';
import { PdfDict, PdfName, PdfRef, PdfStream, PdfString } from './objects.js';
import type { PdfObject } from './objects.js';
import { readObjectAt } from './object-reader.js';

const bytes = (text: string): Uint8Array => Uint8Array.from(text, (ch) => ch.charCodeAt(0));
const ref = (num: number, gen = 0): PdfRef => new PdfRef(num, gen);
const name = (value: string): PdfName => PdfName.of(value);

/** Parses one object from `text`, and says where the lexer stopped. */
function parse(text: string, complete = true): { value: PdfObject; pos: number } {
  const lexer = new Lexer(bytes(text), 0, complete);
  const value = lexer.parseObject();
  return { value, pos: lexer.pos };
}

describe('arrays of references only', () => {
  it.each([
    ['single spaces', '[4 0 R 6 0 R]'],
    ['white space after "[" and before "]"', '[ 4 0 R 6 0 R ]'],
    ['NUL', '[4\x000\x00R\x006\x000\x00R]'],
    ['tabs', '[\t4\t0\tR\t6\t0\tR\t]'],
    ['line feeds', '[\n4\n0\nR\n6\n0\nR\n]'],
    ['form feeds', '[\f4\f0\fR\f6\f0\fR\f]'],
    ['carriage returns', '[\r4\r0\rR\r6\r0\rR\r]'],
    ['runs of mixed white space', '[ \r\n\t4 \x00 0\f\fR\r\n 6\t0  R\r\n]'],
  ])('reads [4 0 R 6 0 R] written with %s', (_, text) => {
    expect(parse(text)).toStrictEqual({ value: [ref(4), ref(6)], pos: text.length });
  });

  it('reads generations, leading zeros and numbers of up to 15 digits', () => {
    expect(parse('[12 65535 R 007 000 R 0 0 R 123456789012345 1 R]').value).toStrictEqual([
      ref(12, 65535),
      ref(7),
      ref(0),
      ref(123456789012345, 1),
    ]);
  });

  it('reads a /Kids of 3,000 references and stops right after its "]"', () => {
    const kids = Array.from({ length: 3000 }, (_, i) => ref(10 + 2 * i, i % 2));
    const lexer = new Lexer(bytes(`[${kids.join(' ')}]/Count 3000`));
    expect(lexer.parseObject()).toStrictEqual(kids);
    expect(lexer.parseObject()).toBe(name('Count'));
    expect(lexer.parseObject()).toBe(3000);
  });

  it('reads a reference array inside a dictionary, and the keys after it', () => {
    const value = parse('<< /Kids [3 0 R 4 0 R]/Count 2 /Parent 1 0 R >>').value as PdfDict;
    expect([...value.entries]).toStrictEqual([
      ['Kids', [ref(3), ref(4)]],
      ['Count', 2],
      ['Parent', ref(1)],
    ]);
  });

  it('reads a whole reference array that ends exactly where an incomplete window ends', () => {
    expect(parse('[4 0 R 6 0 R]', false)).toStrictEqual({ value: [ref(4), ref(6)], pos: 13 });
  });
});

describe('arrays the fast path must leave to the tokenizer', () => {
  it('reads numbers mixed with references', () => {
    expect(parse('[1 2 0 R 3]').value).toStrictEqual([1, ref(2), 3]);
    expect(parse('[1 0 R 2]').value).toStrictEqual([ref(1), 2]);
    expect(parse('[0 0 612 792]').value).toStrictEqual([0, 0, 612, 792]);
  });

  it('skips a comment inside, even one holding a "]" or "R"', () => {
    expect(parse('[1 0 R % c\n 2 0 R]').value).toStrictEqual([ref(1), ref(2)]);
    expect(parse('[1 0 R % ] 9 0 R\n 2 0 R]').value).toStrictEqual([ref(1), ref(2)]);
    expect(parse('[1 0 % R\r R]').value).toStrictEqual([ref(1)]);
  });

  it('reads nested arrays, each reference array inside read whole', () => {
    expect(parse('[[1 0 R] 2 0 R [3 0 R [4 0 R]]]').value).toStrictEqual([[ref(1)], ref(2), [ref(3), [ref(4)]]]);
    expect(parse('[1 0 R[2 0 R]]').value).toStrictEqual([ref(1), [ref(2)]]);
  });

  it('reads a reference followed directly by a delimiter', () => {
    const value = parse('[1 0 R/A 2 0 R(s)3 0 R<<>>]').value;
    expect(value).toStrictEqual([ref(1), name('A'), ref(2), new PdfString(bytes('s')), ref(3), new PdfDict()]);
  });

  it('refuses "R" glued to a following digit, as the tokenizer always did', () => {
    expect(() => parse('[1 0 R5 0 R]')).toThrow(new PdfSyntaxError('unexpected R5 at offset 7'));
    expect(() => parse('[1 0 Rx]')).toThrow(new PdfSyntaxError('unexpected Rx at offset 7'));
  });

  it('refuses a stray "R"', () => {
    expect(() => parse('[R]')).toThrow(new PdfSyntaxError('unexpected R at offset 2'));
    expect(() => parse('[1 0 R R]')).toThrow(new PdfSyntaxError('unexpected R at offset 8'));
    expect(() => parse('[1.5 0 R]')).toThrow(new PdfSyntaxError('unexpected R at offset 8'));
  });

  it('reads an object number given as a real with an integer value, as before', () => {
    expect(parse('[1.0 0 R]').value).toStrictEqual([ref(1)]);
  });

  // A generation is any token with a non-negative integer value (`0.0`, `+0`), as before the fast
  // paths: plain digits take the fast one, the rest the tokenizer.
  it('reads a generation written as a real (0.0) or signed (+0) as a reference, as before', () => {
    expect(parse('[1 0.0 R]').value).toStrictEqual([ref(1)]);
    expect(parse('[1 +0 R 2 0 R]').value).toStrictEqual([ref(1), ref(2)]);
    expect(parse('<< /Parent 2 0.0 R >>').value).toMatchObject({ entries: new Map([['Parent', ref(2)]]) });
  });

  it('reads an object number of more than 15 digits through the tokenizer', () => {
    expect(parse('[1234567890123456 0 R 2 0 R]').value).toStrictEqual([ref(1234567890123456), ref(2)]);
    expect(parse('[12345678901234567890]').value).toStrictEqual([Number('12345678901234567890')]);
  });

  it('reads empty arrays', () => {
    expect(parse('[]')).toStrictEqual({ value: [], pos: 2 });
    expect(parse('[ \r\n]')).toStrictEqual({ value: [], pos: 5 });
  });

  it('asks for more bytes when a reference array runs past an incomplete window', () => {
    for (const text of ['[1 0 R 2 0 R', '[1 0 R 2 0 R ', '[1 0 R 2 0', '[1 0 R', '[', '[ 1']) {
      expect(() => parse(text, false), text).toThrow(NeedMoreBytes);
    }
  });

  it('refuses the same unfinished array at the end of the file', () => {
    expect(() => parse('[1 0 R 2 0 R')).toThrow(new PdfSyntaxError('unexpected end of data at offset 12'));
  });

  it('reads a plain integer followed by a name', () => {
    expect(parse('[1/Type]').value).toStrictEqual([1, name('Type')]);
    expect(parse('[1 /Type 2 0 R]').value).toStrictEqual([1, name('Type'), ref(2)]);
    expect([...(parse('<< /Count 3/Type/Pages >>').value as PdfDict).entries]).toStrictEqual([
      ['Count', 3],
      ['Type', name('Pages')],
    ]);
  });
});

describe('references outside arrays', () => {
  it('reads num gen R with any white space or a comment between', () => {
    expect(parse('2\x000\tR')).toStrictEqual({ value: ref(2), pos: 5 });
    expect(parse('2 0 % gen\n R')).toStrictEqual({ value: ref(2), pos: 12 });
  });

  it('leaves a number alone when no "R" follows, consuming nothing after it', () => {
    expect(parse('1 0 obj')).toStrictEqual({ value: 1, pos: 1 });
    expect(parse('1 0 Rx')).toStrictEqual({ value: 1, pos: 1 });
    expect(() => parse('12abc 0 R')).toThrow(new PdfSyntaxError('unexpected 12abc at offset 5'));
  });

  it('asks for more bytes until it sees what follows the "R"', () => {
    expect(() => parse('1 0', false)).toThrow(NeedMoreBytes);
    expect(() => parse('1 0 R', false)).toThrow(NeedMoreBytes);
    expect(parse('1 0 R', true)).toStrictEqual({ value: ref(1), pos: 5 });
  });
});

// Random arrays whose parse is known: each arbitrary gives its PDF text and the value it means.
interface Built {
  text: string;
  value: PdfObject;
}

const whiteRun = (minLength: number): fc.Arbitrary<string> =>
  fc
    .array(fc.constantFrom('\0', '\t', '\n', '\f', '\r', ' '), { minLength, maxLength: 3 })
    .map((chars) => chars.join(''));
const commentRun: fc.Arbitrary<string> = fc
  .tuple(
    whiteRun(0),
    fc.string({ unit: fc.constantFrom('a', ' ', ']', '[', 'R', '0', '7', '%', '(', '/'), maxLength: 8 }),
    fc.constantFrom('\n', '\r'),
    whiteRun(0),
  )
  .map(([before, body, eol, after]) => `${before}%${body}${eol}${after}`);

const refItem: fc.Arbitrary<Built> = fc
  .tuple(
    fc.oneof(fc.nat(99), fc.nat(), fc.constant(999_999_999_999_999)),
    fc.oneof(fc.constant(0), fc.nat(65535)),
    whiteRun(1),
    whiteRun(1),
  )
  .map(([num, gen, a, b]) => ({ text: `${num}${a}${gen}${b}R`, value: ref(num, gen) }));
const integerItem: fc.Arbitrary<Built> = fc
  .integer({ min: -1_000_000, max: 1_000_000_000_000 })
  .map((n) => ({ text: String(n), value: n }));
const realItem: fc.Arbitrary<Built> = fc
  .tuple(fc.constantFrom('', '-', '+'), fc.stringMatching(/^\d{0,5}$/), fc.stringMatching(/^\d{0,4}$/))
  .filter(([, whole, fraction]) => whole.length + fraction.length > 0)
  .map(([sign, whole, fraction]) => {
    const text = `${sign}${whole}.${fraction}`;
    return { text, value: Number(text) };
  });
const nameItem: fc.Arbitrary<Built> = fc
  .stringMatching(/^[A-Za-z0-9_.-]{0,10}$/)
  .map((value) => ({ text: `/${value}`, value: name(value) }));

/** `[`, the items with the separators between them, `]`; a space where two items would run together. */
function arrayOf(items: Built[], separators: string[], open: string, close: string): Built {
  let text = `[${open}`;
  items.forEach((item, i) => {
    if (i > 0) {
      const separator = separators[i - 1] ?? ' ';
      const delimited =
        item.text.startsWith('/') || item.text.startsWith('[') || (items[i - 1] as Built).text.endsWith(']');
      text += separator === '' && !delimited ? ' ' : separator;
    }
    text += item.text;
  });
  return { text: `${text}${close}]`, value: items.map((item) => item.value) };
}

/** Arrays of references only, as a page tree's /Kids: what the fast path takes. */
const referenceArray: fc.Arbitrary<Built> = fc
  .tuple(fc.array(refItem, { maxLength: 8 }), fc.array(whiteRun(1), { maxLength: 8 }), whiteRun(0), whiteRun(0))
  .map(([items, separators, open, close]) => arrayOf(items, separators, open, close));

/** Arrays of anything, nested `depth` deep, with comments and no white space around delimiters. */
function mixedArray(depth: number): fc.Arbitrary<Built> {
  const item =
    depth === 0
      ? fc.oneof(refItem, integerItem, realItem, nameItem)
      : fc.oneof(refItem, integerItem, realItem, nameItem, referenceArray, mixedArray(depth - 1));
  const separator = fc.oneof({ weight: 4, arbitrary: whiteRun(0) }, { weight: 1, arbitrary: commentRun });
  return fc
    .tuple(fc.array(item, { maxLength: 8 }), fc.array(separator, { maxLength: 8 }), separator, separator)
    .map(([items, separators, open, close]) => arrayOf(items, separators, open, close));
}

const anyArray: fc.Arbitrary<Built> = fc.oneof(referenceArray, mixedArray(2));

describe('random arrays of references, integers, reals and names', () => {
  it('parse to the value they were built from, the lexer stopping right after the "]"', () => {
    fc.assert(
      fc.property(anyArray, ({ text, value }) => {
        const lexer = new Lexer(bytes(`${text} /After`));
        expect(lexer.parseObject()).toStrictEqual(value);
        expect(lexer.pos).toBe(text.length);
        expect(lexer.parseObject()).toBe(name('After'));
      }),
      fuzzParams(500),
    );
  });

  it('ask for more bytes from every incomplete window that cuts them short, and parse whole in one that does not', () => {
    fc.assert(
      fc.property(anyArray, ({ text, value }) => {
        for (let cut = 0; cut < text.length; cut++) {
          expect(
            () => new Lexer(bytes(text.slice(0, cut)), 0, false).parseObject(),
            JSON.stringify(text.slice(0, cut)),
          ).toThrow(NeedMoreBytes);
        }
        expect(new Lexer(bytes(text), 0, false).parseObject()).toStrictEqual(value);
      }),
      fuzzParams(200),
    );
  });
});

describe('readObjectAt on objects longer than the first 4 KB read', () => {
  const kids = Array.from({ length: 3000 }, (_, i) => ref(1000 + i));

  /** `objects` laid out one after the other, with the offset of each. */
  function layout(objects: string[]): { source: ByteSource; offsets: number[] } {
    const offsets: number[] = [];
    let text = '%PDF-1.7\n';
    for (const object of objects) {
      offsets.push(text.length);
      text += object;
    }
    return { source: bytesSource(bytes(text)), offsets };
  }

  const pageTreeNode = (extra = ''): string =>
    `2 0 obj\n<< /Type /Pages ${extra}/Kids [${kids.join(' ')}] /Count 3000 >>\nendobj\n`;
  const pages = Array.from(
    { length: 50 },
    (_, i) => `${1000 + i} 0 obj\n<< /Type /Page /Parent 2 0 R /Contents [${i} 0 R] >>\nendobj\n`,
  );

  it('reads a /Kids of 3,000 references whole when more objects follow it', async () => {
    expect(pageTreeNode().length).toBeGreaterThan(4096 * 4);
    const { source, offsets } = layout([pageTreeNode(), ...pages]);
    const object = await readObjectAt(source, offsets[0] as number);
    expect(object.num).toBe(2);
    const dict = object.value as PdfDict;
    expect(dict.get('Kids')).toStrictEqual(kids);
    expect(dict.get('Count')).toBe(3000);

    const next = await readObjectAt(source, offsets[1] as number);
    expect(next.num).toBe(1000);
    expect((next.value as PdfDict).get('Contents')).toStrictEqual([ref(0)]);
  });

  it('reads it whole when "endobj" and "stream" also appear early inside it (the first size proposed is too short)', async () => {
    const { source, offsets } = layout([pageTreeNode('/Note (upstream endobj) '), ...pages]);
    const dict = (await readObjectAt(source, offsets[0] as number)).value as PdfDict;
    expect(dict.get('Kids')).toStrictEqual(kids);
  });

  it('reads an object longer than the 256 KB searched for its end', async () => {
    const many = Array.from({ length: 40_000 }, (_, i) => ref(100_000 + i));
    const { source, offsets } = layout([`9 0 obj\n[${many.join(' ')}]\nendobj\n`, ...pages]);
    expect((await readObjectAt(source, offsets[0] as number)).value).toStrictEqual(many);
  });

  // The data holds "endstream": only a read by /Length gets all of it.
  const data = 'binary endstream inside\n';
  const padding = `/Padding (${'x'.repeat(6000)})`;

  it.each([
    ['a long string', padding],
    ['a long string and "stream" inside a name before the keyword', `/Subtype /Upstream ${padding}`],
    ['a reference array of 3,000 entries', `/Kids [${kids.join(' ')}]`],
  ])('reads a stream whose dictionary holds %s by its /Length', async (_, entries) => {
    const stream = `5 0 obj\n<< ${entries} /Length ${data.length} >>\nstream\n${data}\nendstream\nendobj\n`;
    const { source, offsets } = layout([stream, ...pages]);
    const object = await readObjectAt(source, offsets[0] as number);
    expect(object.value).toBeInstanceOf(PdfStream);
    expect(Buffer.from((object.value as PdfStream).data).toString('latin1')).toBe(data);
  });

  it('reads a stream with a long dictionary whose "endstream" is the last thing in the file', async () => {
    const { source, offsets } = layout([
      `5 0 obj\n<< ${padding} /Length ${data.length} >>\nstream\n${data}\nendstream`,
    ]);
    const object = await readObjectAt(source, offsets[0] as number);
    expect(Buffer.from((object.value as PdfStream).data).toString('latin1')).toBe(data);
  });

  it('reads a stream with a long dictionary by an indirect /Length', async () => {
    const stream = `5 0 obj\n<< ${padding} /Length 6 0 R >>\nstream\n${data}\nendstream\nendobj\n`;
    const { source, offsets } = layout([stream, `6 0 obj\n${data.length}\nendobj\n`]);
    const resolved: PdfRef[] = [];
    const object = await readObjectAt(source, offsets[0] as number, async (length) => {
      resolved.push(length);
      return (await readObjectAt(source, offsets[1] as number)).value;
    });
    expect(resolved).toStrictEqual([ref(6)]);
    expect(Buffer.from((object.value as PdfStream).data).toString('latin1')).toBe(data);
  });
});
