import { describe, expect, it } from 'vitest';
import { Lexer, NeedMoreBytes } from './lexer.js';
import { ByteWriter, PdfDict, PdfName, PdfRef, PdfString, asciiBytes, formatNumber, serialize } from './objects.js';

const parse = (text: string) => new Lexer(asciiBytes(text)).parseObject();
const text = (bytes: Uint8Array) => Buffer.from(bytes).toString('latin1');

describe('lexer', () => {
  it('parses dictionaries, arrays, references, names, strings and numbers', () => {
    const value = parse('<< /Type /Sig /A#20B 1 0 R /Arr [1 -2.5 .5 (a\\(b\\)\\n\\101) <48 49> true null] /N 12 >>');
    expect(value).toBeInstanceOf(PdfDict);
    const d = value as PdfDict;
    expect(d.get('Type')).toBe(PdfName.of('Sig'));
    expect(d.get('A B')).toEqual(new PdfRef(1, 0));
    const arr = d.get('Arr') as unknown[];
    expect(arr.slice(0, 3)).toEqual([1, -2.5, 0.5]);
    expect(text((arr[3] as PdfString).bytes)).toBe('a(b)\nA');
    expect(text((arr[4] as PdfString).bytes)).toBe('HI');
    expect(arr.slice(5)).toEqual([true, null]);
    expect(d.get('N')).toBe(12);
  });

  it('skips comments and keeps nested parentheses in literal strings', () => {
    expect(text((parse('% note\n(a (nested) string)') as PdfString).bytes)).toBe('a (nested) string');
  });

  it('asks for more bytes when an object runs past an incomplete window', () => {
    expect(() => new Lexer(asciiBytes('<< /Type /Pa'), 0, false).parseObject()).toThrow(NeedMoreBytes);
  });
});

describe('serializer', () => {
  it('writes what the lexer reads back', () => {
    const source = '<< /Type /Annot /T (x\\)y) /Kids [3 0 R 4 0 R] /Rect [0 0.5 -1 100] /B <00ff> /Esc /A#20B >>';
    const once = serialize(parse(source));
    expect(serialize(parse(text(once)))).toEqual(once);
    expect(text(once)).toBe(
      '<< /Type /Annot /T (x\\)y) /Kids [3 0 R 4 0 R] /Rect [0 0.5 -1 100] /B <00ff> /Esc /A#20B >>',
    );
  });

  it('formats numbers without exponents and trims reals', () => {
    expect([formatNumber(3), formatNumber(0.1 + 0.2), formatNumber(-0.00001), formatNumber(2 ** 40)]).toEqual([
      '3',
      '0.3',
      '0',
      '1099511627776',
    ]);
  });

  it('writes text strings as ASCII literals, or UTF-16BE with a byte order mark', () => {
    expect(text(serialize(PdfString.text('Plain (text)')))).toBe('(Plain \\(text\\))');
    expect(text(serialize(PdfString.text('Zoë')))).toBe('<feff005a006f00eb>');
    expect(PdfString.text('Zoë €').toText()).toBe('Zoë €');
  });

  it("writes text, bytes and placeholder zeros in order, text as each character's low byte (as asciiBytes)", () => {
    const w = new ByteWriter();
    w.ascii('<< /A ');
    w.bytes(Uint8Array.of(0, 255));
    w.zeroDigits(3);
    w.ascii('é\u0141 >>');
    const out = w.toBytes();
    expect(out).toBeInstanceOf(Uint8Array);
    expect(out.length).toBe(w.length);
    expect([...out]).toEqual([...asciiBytes('<< /A '), 0, 255, 0x30, 0x30, 0x30, ...asciiBytes('é\u0141 >>')]);
    expect(out.at(-4)).toBe(0x41);
  });
});
