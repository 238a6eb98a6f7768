import { describe, expect, it } from 'vitest';
import * as asn1js from 'asn1js';
import {
  bitStringValue,
  booleanValue,
  compareBytes,
  decode,
  decodePrefix,
  definiteEncoding,
  encoded,
  explicitInner,
  generalizedTime,
  integerHex,
  integerValue,
  objectIdentifier,
  octets,
  oid,
  sequenceItems,
  setOf,
  smallInteger,
  stringValue,
  time,
  timeValue,
  unsignedInteger,
} from './der.js';

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

describe('DER writer', () => {
  it('encodes object identifiers as asn1js does, including large arcs', () => {
    for (const dotted of ['1.2.840.113549.1.9.16.2.47', '2.16.840.1.101.3.4.2.1', '0.4.0.2023.1.1', '2.999.3']) {
      const expected = new Uint8Array(new asn1js.ObjectIdentifier({ value: dotted }).toBER());
      expect(hex(objectIdentifier(dotted))).toBe(hex(expected));
      expect(oid(decode(objectIdentifier(dotted), 'oid'), 'oid')).toBe(dotted);
    }
  });

  it('encodes non-negative integers minimally, with a sign byte when the top bit is set', () => {
    expect(hex(smallInteger(0))).toBe('020100');
    expect(hex(smallInteger(1))).toBe('020101');
    expect(hex(smallInteger(128))).toBe('02020080');
    expect(hex(unsignedInteger(Uint8Array.of(0, 0, 0x7f)))).toBe('02017f');
    expect(hex(unsignedInteger(Uint8Array.of(0xff, 1)))).toBe('020300ff01');
    expect(integerHex(decode(unsignedInteger(Uint8Array.of(0xff, 1)), 'int'), 'int')).toBe('ff01');
  });

  it('sorts SET OF elements as octet strings', () => {
    const a = Uint8Array.of(0x04, 0x01, 0x02);
    const b = Uint8Array.of(0x02, 0x01, 0x05);
    const c = Uint8Array.of(0x04, 0x01, 0x01);
    expect(hex(setOf([a, b, c]))).toBe('3109' + '020105' + '040101' + '040102');
    expect(compareBytes(Uint8Array.of(1), Uint8Array.of(1, 0))).toBeLessThan(0);
  });

  it('writes long lengths in the long form', () => {
    const content = new Uint8Array(300);
    const encoded = setOf([content]);
    expect(hex(encoded.subarray(0, 4))).toBe('3182012c');
  });

  it('writes GeneralizedTime in UTC with a trimmed fraction, and CMS Time as UTCTime until 2049', () => {
    const text = (bytes: Uint8Array): string => new TextDecoder().decode(bytes.subarray(2));
    expect(text(generalizedTime(new Date('2025-03-04T05:06:07Z')))).toBe('20250304050607Z');
    expect(text(generalizedTime(new Date('2025-03-04T05:06:07.120Z')))).toBe('20250304050607.12Z');
    expect(time(new Date('2025-03-04T05:06:07.999Z'))[0]).toBe(0x17);
    expect(text(time(new Date('2025-03-04T05:06:07.999Z')))).toBe('250304050607Z');
    expect(time(new Date('2050-01-01T00:00:00Z'))[0]).toBe(0x18);
    expect(timeValue(decode(generalizedTime(new Date('2025-03-04T05:06:07.12Z')), 't'), 't').toISOString()).toBe(
      '2025-03-04T05:06:07.120Z',
    );
  });
});

describe('DER reader', () => {
  it('rejects trailing bytes and empty input', () => {
    expect(() => decode(Uint8Array.of(0x02, 0x01, 0x00, 0x00), 'x')).toThrow(/trailing/);
    expect(() => decode(new Uint8Array(0), 'x')).toThrow(/empty/);
    expect(() => decode(Uint8Array.of(0x30, 0x05, 0x02), 'x')).toThrow(/not ASN.1/);
  });

  const bytes = (hexText: string): Uint8Array => Uint8Array.from(Buffer.from(hexText.replace(/\s/g, ''), 'hex'));
  const textTime = (tag: number, text: string): string =>
    timeValue(decode(Uint8Array.of(tag, text.length, ...Buffer.from(text, 'latin1')), 't'), 't').toISOString();

  it('reads BER indefinite lengths and constructed OCTET STRINGs, with views of the exact encoding', () => {
    const der = bytes('30 80  24 80 04 02 0102 04 01 03 0000  a1 03 010100  0000');
    const [string, context] = sequenceItems(decode(der, 'x'), 'x');
    expect(hex(octets(string, 'x'))).toBe('010203');
    expect(booleanValue(explicitInner(context, 1, 'x'), 'x')).toBe(false);
    expect(hex(encoded(string!))).toBe('2480040201020401030000');
    expect(() => decode(bytes('04 80 0000'), 'x')).toThrow(/indefinite length on a primitive/);
    expect(() => decode(bytes('30 80 0201 00'), 'x')).toThrow(/not ASN.1/);
  });

  it('reads multi-byte tags, negative integers and BIT STRINGs as asn1js does', () => {
    expect(decode(bytes('9f 81 00 00'), 'x')).toMatchObject({ tagClass: 3, tagNumber: 128, constructed: false });
    for (const value of [0n, 127n, 128n, -1n, -129n, 2n ** 70n, -(2n ** 70n)]) {
      expect(integerValue(decode(new Uint8Array(asn1js.Integer.fromBigInt(value).toBER()), 'i'), 'i')).toBe(value);
    }
    expect(bitStringValue(decode(bytes('03 03 06 ffc0'), 'b'), 'b')).toEqual({ bytes: bytes('ffc0'), unusedBits: 6 });
    expect(() => bitStringValue(decode(bytes('03 02 08 ff'), 'b'), 'b')).toThrow(/malformed/);
    expect(oid(decode(bytes('06 03 813403'), 'o'), 'o')).toBe('2.100.3');
    expect(() => oid(decode(bytes('06 02 2a 86'), 'o'), 'o')).toThrow(/malformed/);
    expect(() => oid(decode(bytes('06 03 2a 80 01'), 'o'), 'o')).toThrow(/malformed/);
    const uuidArc = 'e8f0c1a2b3c4d5e6f708192a3b4c5d6e';
    expect(oid(decode(objectIdentifier(`2.25.${BigInt(`0x${uuidArc}`)}`), 'o'), 'o')).toBe(
      `2.25.${BigInt(`0x${uuidArc}`)}`,
    );
    expect(() => oid(decode(Uint8Array.of(0x06, 0x7f, ...new Array<number>(126).fill(0xff), 0x01), 'o'), 'o')).toThrow(
      /arc too long/,
    );
  });

  it('reads UTCTime (1950–2049), GeneralizedTime with fractions and offsets, and refuses impossible dates', () => {
    expect(textTime(0x17, '491231235959Z')).toBe('2049-12-31T23:59:59.000Z');
    expect(textTime(0x17, '500101000000Z')).toBe('1950-01-01T00:00:00.000Z');
    expect(textTime(0x17, '2503040506Z')).toBe('2025-03-04T05:06:00.000Z');
    expect(textTime(0x18, '20250304050607.5Z')).toBe('2025-03-04T05:06:07.500Z');
    expect(textTime(0x18, '20250304050607.0579Z')).toBe('2025-03-04T05:06:07.057Z');
    expect(textTime(0x18, '20250304050607+0130')).toBe('2025-03-04T03:36:07.000Z');
    expect(textTime(0x17, '250304050607-0200')).toBe('2025-03-04T07:06:07.000Z');
    expect(textTime(0x18, '00500101000000Z')).toBe('0050-01-01T00:00:00.000Z');
    expect(textTime(0x18, '20240229120000Z')).toBe('2024-02-29T12:00:00.000Z');
    for (const [tag, text] of [
      [0x18, '20250230050607Z'],
      [0x18, '20250229050607Z'],
      [0x18, '20250304250607Z'],
      [0x17, '25030405060Z'],
      [0x18, 'yesterday'],
      [0x18, '20250304050607+9999'],
      [0x18, '2024010112.5Z'],
    ] as const) {
      expect(() => textTime(tag, text)).toThrow(/expected a time/);
    }
  });

  it('reads the string types, and refuses malformed UTF-8', () => {
    expect(stringValue(decode(bytes('0c 03 e282ac'), 's'), 's')).toBe('€');
    expect(stringValue(decode(bytes('1e 04 00 41 20ac'), 's'), 's')).toBe('A€');
    expect(stringValue(decode(bytes('1c 04 0001f600'), 's'), 's')).toBe('😀');
    expect(stringValue(decode(bytes('13 02 4142'), 's'), 's')).toBe('AB');
    expect(stringValue(decode(bytes('0c 04 efbbbf41'), 's'), 's')).toBe('\uFEFFA');
    expect(() => stringValue(decode(bytes('0c 01 ff'), 's'), 's')).toThrow(/malformed string/);
    expect(() => stringValue(decode(bytes('02 01 00'), 's'), 's')).toThrow(/expected a string/);
  });

  it('stops hostile nesting and oversized lengths with an Asn1StructureError, not a stack overflow', () => {
    const deep = new Uint8Array(2000).map((_, index) => (index % 2 === 0 ? 0x30 : 0x80));
    expect(() => decode(deep, 'x')).toThrow(/nested too deeply/);
    expect(() => decode(bytes('04 88 ffffffffffffffff'), 'x')).toThrow(/length too large/);
    expect(() => decode(bytes('04 84 7fffffff 00'), 'x')).toThrow(/runs past the end/);
  });
});

describe('BER with indefinite lengths (NSS, openssl cms -stream)', () => {
  // SEQUENCE(indef) { INTEGER 5, [0](indef) { OCTET STRING 'ab' } } followed by /Contents zero padding.
  const ber = Uint8Array.from([
    0x30, 0x80, 0x02, 0x01, 0x05, 0xa0, 0x80, 0x04, 0x02, 0x61, 0x62, 0x00, 0x00, 0x00, 0x00,
  ]);
  const padded = Uint8Array.from([...ber, 0, 0, 0, 0, 0, 0]);

  it('decodePrefix reads one element up to its end-of-contents octets and ignores the padding after it', () => {
    const block = decodePrefix(padded, 'cms');
    expect(block.encoded).toHaveLength(ber.length);
    const [integer, tagged] = sequenceItems(block, 'cms');
    expect(integerValue(integer, 'n')).toBe(5n);
    expect(Buffer.from(octets(explicitInner(tagged, 0, 'x'), 'x')).toString()).toBe('ab');
    expect(() => decode(padded, 'cms')).toThrow(/trailing bytes/);
  });

  it('definiteEncoding gives the DER lengths (what a signature over signed attributes covers)', () => {
    const der = definiteEncoding(decodePrefix(padded, 'cms'));
    expect(hex(der)).toBe('3009020105a00404026162');
    const definite = decode(der, 'der');
    expect(definiteEncoding(definite)).toBe(definite.encoded); // nothing to change: the same bytes
  });

  it('an indefinite length that never ends, or on a primitive element, is refused', () => {
    expect(() => decodePrefix(Uint8Array.from([0x30, 0x80, 0x02, 0x01, 0x05]), 'cms')).toThrow(
      /not ASN.1 \(truncated\)/,
    );
    expect(() => decodePrefix(Uint8Array.from([0x04, 0x80, 0x00, 0x00]), 'cms')).toThrow(/primitive/);
  });
});
