/**
 * DER in both directions, kept small on purpose. Writing: a few TLV builders, so that bytes we
 * embed (certificates, signed attributes, tokens) go out exactly as they came in and SET OF is
 * sorted as X.690 §11.6 demands. Reading: a small BER decoder (views into the input, never
 * copies; no library, so signing loads no ASN.1 framework) and helpers that walk its blocks and
 * throw `Asn1StructureError`, which each public parser turns into its own EsignError code.
 */
// ─── writing ────────────────────────────────────────────────────────────────────────────────

export const Tag = {
  boolean: 0x01,
  integer: 0x02,
  bitString: 0x03,
  octetString: 0x04,
  null: 0x05,
  objectIdentifier: 0x06,
  utf8String: 0x0c,
  printableString: 0x13,
  utcTime: 0x17,
  generalizedTime: 0x18,
  sequence: 0x30,
  set: 0x31,
} as const;

/** The tag and length octets of a TLV whose `length` content octets are written apart (streamed). */
export function tlvHeader(tag: number, length: number): Uint8Array {
  return concatBytes([Uint8Array.of(tag), lengthOctets(length)]);
}

function lengthOctets(length: number): Uint8Array {
  if (length < 0x80) return Uint8Array.of(length);
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
  return Uint8Array.of(0x80 | bytes.length, ...bytes);
}

export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/** One TLV with a single-byte tag (all tags esign writes are below 31), its contents copied once. */
export function tlv(tag: number, ...contents: Uint8Array[]): Uint8Array {
  let length = 0;
  for (const part of contents) length += part.length;
  const header = lengthOctets(length);
  const out = new Uint8Array(1 + header.length + length);
  out[0] = tag;
  out.set(header, 1);
  let offset = 1 + header.length;
  for (const part of contents) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

export function sequence(...items: Uint8Array[]): Uint8Array {
  return tlv(Tag.sequence, ...items);
}

/** SET OF in DER order: elements sorted as octet strings (X.690 §11.6). */
export function setOf(items: readonly Uint8Array[], tag: number = Tag.set): Uint8Array {
  return tlv(tag, ...[...items].sort(compareBytes));
}

/** `[n] EXPLICIT` (context-specific, constructed). */
export function explicit(tagNumber: number, ...items: Uint8Array[]): Uint8Array {
  return tlv(0xa0 | tagNumber, ...items);
}

export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const difference = (a[i] as number) - (b[i] as number);
    if (difference !== 0) return difference;
  }
  return a.length - b.length;
}

/**
 * The DER of an OID, made once per OID: every signature and timestamp request writes the same
 * few. Callers copy what they get (the TLV builders do), never change it.
 */
export function objectIdentifier(dotted: string): Uint8Array {
  let der = encodedOids.get(dotted);
  if (!der) {
    der = encodeObjectIdentifier(dotted);
    if (encodedOids.size < 256) encodedOids.set(dotted, der);
  }
  return der;
}
const encodedOids = new Map<string, Uint8Array>();

function encodeObjectIdentifier(dotted: string): Uint8Array {
  const arcs = dotted.split('.').map((arc) => BigInt(arc));
  const [first, second, ...rest] = arcs;
  if (first === undefined || second === undefined) throw new Error(`bad OID ${dotted}`);
  const body: number[] = [];
  for (const arc of [first * 40n + second, ...rest]) {
    const group: number[] = [Number(arc & 0x7fn)];
    for (let value = arc >> 7n; value > 0n; value >>= 7n) group.unshift(Number(value & 0x7fn) | 0x80);
    body.push(...group);
  }
  return tlv(Tag.objectIdentifier, Uint8Array.from(body));
}

/** A non-negative INTEGER from its big-endian magnitude (leading zeros trimmed, sign byte added). */
export function unsignedInteger(magnitude: Uint8Array): Uint8Array {
  let start = 0;
  while (start < magnitude.length - 1 && magnitude[start] === 0) start++;
  const trimmed = magnitude.length === 0 ? Uint8Array.of(0) : magnitude.subarray(start);
  return (trimmed[0] as number) & 0x80 ? tlv(Tag.integer, Uint8Array.of(0), trimmed) : tlv(Tag.integer, trimmed);
}

export function smallInteger(value: number): Uint8Array {
  const bytes: number[] = [];
  for (let rest = value; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
  return unsignedInteger(Uint8Array.from(bytes));
}

export function octetString(bytes: Uint8Array): Uint8Array {
  return tlv(Tag.octetString, bytes);
}

export function boolean(value: boolean): Uint8Array {
  return tlv(Tag.boolean, Uint8Array.of(value ? 0xff : 0x00));
}

export const derNull: Uint8Array = Uint8Array.of(Tag.null, 0);

export function utf8String(text: string): Uint8Array {
  return tlv(Tag.utf8String, new TextEncoder().encode(text));
}

export function bitString(bytes: Uint8Array, unusedBits = 0): Uint8Array {
  return tlv(Tag.bitString, Uint8Array.of(unusedBits), bytes);
}

const pad = (value: number, width = 2): string => String(value).padStart(width, '0');

function utcDigits(date: Date): string {
  return `${pad(date.getUTCMonth() + 1)}${pad(date.getUTCDate())}${pad(date.getUTCHours())}${pad(date.getUTCMinutes())}${pad(date.getUTCSeconds())}`;
}

/** GeneralizedTime in DER form: UTC, `Z`, fraction only when non-zero and without trailing zeros. */
export function generalizedTime(date: Date): Uint8Array {
  const millis = date.getUTCMilliseconds();
  const fraction = millis === 0 ? '' : `.${pad(millis, 3).replace(/0+$/, '')}`;
  return tlv(
    Tag.generalizedTime,
    new TextEncoder().encode(`${pad(date.getUTCFullYear(), 4)}${utcDigits(date)}${fraction}Z`),
  );
}

/** X.509/CMS Time: UTCTime for 1950–2049, GeneralizedTime otherwise (RFC 5652 §11.3); whole seconds. */
export function time(date: Date): Uint8Array {
  const seconds = new Date(Math.floor(date.getTime() / 1000) * 1000);
  const year = seconds.getUTCFullYear();
  if (year < 1950 || year > 2049) return generalizedTime(seconds);
  return tlv(Tag.utcTime, new TextEncoder().encode(`${pad(year % 100)}${utcDigits(seconds)}Z`));
}

/** Re-tags the outer TLV of `der` (same length octets), e.g. `[0] IMPLICIT SET` ↔ `SET`. */
export function retag(der: Uint8Array, tag: number): Uint8Array {
  const out = Uint8Array.from(der);
  out[0] = tag;
  return out;
}

// ─── reading ────────────────────────────────────────────────────────────────────────────────

export class Asn1StructureError extends Error {
  override name = 'Asn1StructureError';
}

const TagClass = { universal: 1, application: 2, context: 3, private: 4 } as const;

/** One decoded element: views into the input, never copies. */
export interface Block {
  tagClass: number;
  tagNumber: number;
  constructed: boolean;
  /** The whole TLV as encoded. */
  encoded: Uint8Array;
  /** Content octets (for an indefinite length: without the end-of-contents marker). */
  content: Uint8Array;
  /** Elements of a constructed block; empty for a primitive one. */
  items: Block[];
}

// Deep enough for any certificate, CMS or TSP structure; stops hostile nesting before the stack does.
const MAX_DEPTH = 64;

/** Decodes exactly one DER/BER element filling `bytes`, or throws Asn1StructureError. */
export function decode(bytes: Uint8Array, what: string): Block {
  if (bytes.length === 0) throw new Asn1StructureError(`${what}: empty`);
  let block: Block;
  try {
    block = readElement(bytes, 0, bytes.length);
  } catch (error) {
    if (error instanceof DecodeError) throw new Asn1StructureError(`${what}: not ASN.1 (${error.message})`);
    throw error;
  }
  if (block.encoded.length !== bytes.length)
    throw new Asn1StructureError(`${what}: ${bytes.length - block.encoded.length} trailing bytes`);
  return block;
}

/**
 * Decodes the one DER/BER element at the start of `bytes` and ignores what follows (the zero
 * padding of a PDF's `/Contents`); an indefinite length ends at its end-of-contents octets.
 */
export function decodePrefix(bytes: Uint8Array, what: string): Block {
  if (bytes.length === 0) throw new Asn1StructureError(`${what}: empty`);
  try {
    return readElement(bytes, 0, bytes.length);
  } catch (error) {
    if (error instanceof DecodeError) throw new Asn1StructureError(`${what}: not ASN.1 (${error.message})`);
    throw error;
  }
}

/**
 * The DER form of a decoded element as far as lengths go: indefinite lengths (BER, as NSS writes)
 * become definite ones; an element with none is returned as encoded. Signed attributes are
 * signed in DER, whatever encoding carried them.
 */
export function definiteEncoding(block: Block): Uint8Array {
  if (!hasIndefiniteLength(block)) return block.encoded;
  const content = concatBytes(block.items.map(definiteEncoding));
  return concatBytes([
    block.encoded.subarray(0, identifierLength(block.encoded)),
    lengthOctets(content.length),
    content,
  ]);
}

function hasIndefiniteLength(block: Block): boolean {
  return (
    block.constructed &&
    (block.encoded[identifierLength(block.encoded)] === 0x80 || block.items.some(hasIndefiniteLength))
  );
}

/** Octets of the identifier (tag) at the start of an encoding: one, or more for tag numbers ≥ 31. */
function identifierLength(encoding: Uint8Array): number {
  if (((encoding[0] as number) & 0x1f) !== 0x1f) return 1;
  let at = 1;
  while (((encoding[at] as number) & 0x80) !== 0) at++;
  return at + 1;
}

class DecodeError extends Error {}

/** Where an element's parts lie in its input. */
interface Extent {
  tagClass: number;
  tagNumber: number;
  constructed: boolean;
  contentStart: number;
  /** End of the content octets (before an indefinite length's end-of-contents octets). */
  contentEnd: number;
  /** End of the whole element. */
  end: number;
}

/**
 * The element at `start`, read no further than `limit`, every element inside it checked down to
 * the last (so malformed input fails here, as a whole), but only its own Block made: the blocks
 * inside are made when `items` is first read. A timestamp token is read for a few fields, and the
 * certificates it carries (most of its elements) are only ever taken whole.
 */
function readElement(bytes: Uint8Array, start: number, limit: number): Block {
  check(bytes, start, limit, 0);
  return new DecodedBlock(bytes, start, extentOf(bytes, start));
}

/** Reads the element at `start` and everything inside it, making nothing; returns its end or throws DecodeError. */
function check(bytes: Uint8Array, start: number, limit: number, depth: number): number {
  if (depth > MAX_DEPTH) throw new DecodeError('nested too deeply');
  let at = start;
  if (at >= limit) throw truncated();
  const first = bytes[at++] as number;
  const constructed = (first & 0x20) !== 0;
  if ((first & 0x1f) === 0x1f) {
    for (let count = 0; ; count++) {
      if (at >= limit) throw truncated();
      const next = bytes[at++] as number;
      if (count > 3) throw new DecodeError('tag number too large');
      if ((next & 0x80) === 0) break;
    }
  }
  if (at >= limit) throw truncated();
  const lengthByte = bytes[at++] as number;
  if (lengthByte === 0x80) {
    if (!constructed) throw new DecodeError('indefinite length on a primitive element');
    while (!(at + 1 < limit && bytes[at] === 0 && bytes[at + 1] === 0)) at = check(bytes, at, limit, depth + 1);
    return at + 2;
  }
  let length = lengthByte;
  if (lengthByte > 0x80) {
    const count = lengthByte & 0x7f;
    if (count > 6) throw new DecodeError('length too large');
    if (at + count > limit) throw truncated();
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + (bytes[at++] as number);
  }
  const end = at + length;
  if (end > limit) throw new DecodeError(`length ${length} runs past the end`);
  if (constructed) for (let offset = at; offset < end;) offset = check(bytes, offset, end, depth + 1);
  return end;
}

function truncated(): DecodeError {
  return new DecodeError('truncated');
}

/** A Block over checked input: its views and its items made on first use. */
class DecodedBlock implements Block {
  readonly tagClass: number;
  readonly tagNumber: number;
  readonly constructed: boolean;
  private encodedView: Uint8Array | undefined;
  private contentView: Uint8Array | undefined;
  private itemList: Block[] | undefined;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly start: number,
    private readonly extent: Extent,
  ) {
    this.tagClass = extent.tagClass;
    this.tagNumber = extent.tagNumber;
    this.constructed = extent.constructed;
  }

  get encoded(): Uint8Array {
    return (this.encodedView ??= this.bytes.subarray(this.start, this.extent.end));
  }

  get content(): Uint8Array {
    return (this.contentView ??= this.bytes.subarray(this.extent.contentStart, this.extent.contentEnd));
  }

  get items(): Block[] {
    if (this.itemList) return this.itemList;
    const items: Block[] = [];
    const { contentStart, contentEnd } = this.extent;
    // Checked when the outermost element was read: here each item's extent is only found again.
    if (this.constructed) {
      for (let offset = contentStart; offset < contentEnd;) {
        const extent = extentOf(this.bytes, offset);
        items.push(new DecodedBlock(this.bytes, offset, extent));
        offset = extent.end;
      }
    }
    return (this.itemList = items);
  }
}

/** The extent of an element already checked by `check`: its header read, its content skipped (found through, for an indefinite length). */
function extentOf(bytes: Uint8Array, start: number): Extent {
  let at = start;
  const first = bytes[at++] as number;
  const tagClass = (first >> 6) + 1;
  const constructed = (first & 0x20) !== 0;
  let tagNumber = first & 0x1f;
  if (tagNumber === 0x1f) {
    tagNumber = 0;
    for (;;) {
      const next = bytes[at++] as number;
      tagNumber = tagNumber * 128 + (next & 0x7f);
      if ((next & 0x80) === 0) break;
    }
  }
  const lengthByte = bytes[at++] as number;
  if (lengthByte === 0x80) {
    const contentStart = at;
    while (!(bytes[at] === 0 && bytes[at + 1] === 0)) at = extentOf(bytes, at).end;
    return { tagClass, tagNumber, constructed, contentStart, contentEnd: at, end: at + 2 };
  }
  let length = lengthByte;
  if (lengthByte > 0x80) {
    length = 0;
    for (let i = 0, count = lengthByte & 0x7f; i < count; i++) length = length * 256 + (bytes[at++] as number);
  }
  return { tagClass, tagNumber, constructed, contentStart: at, contentEnd: at + length, end: at + length };
}

/** The exact encoded bytes of a decoded block (a view into the input). */
export function encoded(block: Block): Uint8Array {
  return block.encoded;
}

export function isContext(block: Block | undefined, tagNumber: number): boolean {
  return block !== undefined && block.tagClass === TagClass.context && block.tagNumber === tagNumber;
}

export function isUniversal(block: Block | undefined, tagNumber: number): boolean {
  return block !== undefined && block.tagClass === TagClass.universal && block.tagNumber === tagNumber;
}

/** Children of a constructed block (SEQUENCE, SET, or a constructed context tag). */
export function children(block: Block | undefined, what: string): Block[] {
  if (block === undefined) throw new Asn1StructureError(`${what}: missing`);
  if (!block.constructed) throw new Asn1StructureError(`${what}: expected a constructed element`);
  return block.items;
}

export function sequenceItems(block: Block | undefined, what: string): Block[] {
  if (!isUniversal(block, 16)) throw new Asn1StructureError(`${what}: expected a SEQUENCE`);
  return children(block, what);
}

export function setItems(block: Block | undefined, what: string): Block[] {
  if (!isUniversal(block, 17)) throw new Asn1StructureError(`${what}: expected a SET`);
  return children(block, what);
}

/** The single element inside `[n] EXPLICIT`. */
export function explicitInner(block: Block | undefined, tagNumber: number, what: string): Block {
  if (!isContext(block, tagNumber)) throw new Asn1StructureError(`${what}: expected [${tagNumber}]`);
  const [inner, extra] = children(block, what);
  if (inner === undefined || extra !== undefined)
    throw new Asn1StructureError(`${what}: expected one element in [${tagNumber}]`);
  return inner;
}

/** Content of a primitive universal element with the given tag. */
function primitive(block: Block | undefined, tagNumber: number, expected: string, what: string): Uint8Array {
  if (!isUniversal(block, tagNumber) || block === undefined || block.constructed)
    throw new Asn1StructureError(`${what}: expected ${expected}`);
  return block.content;
}

const MAX_ARC_BYTES = 20;

export function oid(block: Block | undefined, what: string): string {
  const content = primitive(block, Tag.objectIdentifier, 'an OBJECT IDENTIFIER', what);
  // The same few OIDs come in every token, response and certificate: each is read once (well-formed ones only are kept).
  const key =
    content.length <= 32
      ? Buffer.from(content.buffer, content.byteOffset, content.length).toString('latin1')
      : undefined;
  const known = key === undefined ? undefined : readOids.get(key);
  if (known !== undefined) return known;
  const dotted = readObjectIdentifier(content, what);
  if (key !== undefined && readOids.size < 1024) readOids.set(key, dotted);
  return dotted;
}
const readOids = new Map<string, string>();

function readObjectIdentifier(content: Uint8Array, what: string): string {
  if (content.length === 0 || ((content[content.length - 1] as number) & 0x80) !== 0)
    throw new Asn1StructureError(`${what}: malformed OBJECT IDENTIFIER`);
  const arcs: bigint[] = [];
  let value = 0n;
  let arcBytes = 0;
  for (const byte of content) {
    // Minimal encoding, and arcs of at most 140 bits (UUID arcs need 128): long ones cost quadratic time.
    if (arcBytes === 0 && byte === 0x80) throw new Asn1StructureError(`${what}: malformed OBJECT IDENTIFIER`);
    if (++arcBytes > MAX_ARC_BYTES) throw new Asn1StructureError(`${what}: OBJECT IDENTIFIER arc too long`);
    value = (value << 7n) | BigInt(byte & 0x7f);
    if ((byte & 0x80) === 0) {
      arcs.push(value);
      value = 0n;
      arcBytes = 0;
    }
  }
  const head = arcs[0] as bigint;
  const first = head < 40n ? 0n : head < 80n ? 1n : 2n;
  return [first, head - first * 40n, ...arcs.slice(1)].join('.');
}

/** INTEGER content octets (two's complement, as encoded). */
export function integerBytes(block: Block | undefined, what: string): Uint8Array {
  const content = primitive(block, Tag.integer, 'an INTEGER', what);
  if (content.length === 0) throw new Asn1StructureError(`${what}: empty INTEGER`);
  return content;
}

export function integerValue(block: Block | undefined, what: string): bigint {
  const content = integerBytes(block, what);
  const unsigned = BigInt(`0x${Buffer.from(content).toString('hex')}`);
  return ((content[0] as number) & 0x80) === 0 ? unsigned : unsigned - (1n << BigInt(content.length * 8));
}

/** INTEGER as lower-case hex of its magnitude, without leading zero bytes (`00` for zero). */
export function integerHex(block: Block | undefined, what: string): string {
  return magnitudeHex(integerBytes(block, what));
}

/** Lower-case hex of a big-endian magnitude without leading zero bytes, so equal numbers compare equal. */
export function magnitudeHex(bytes: Uint8Array): string {
  const hex = Buffer.from(bytes)
    .toString('hex')
    .replace(/^(00)+/, '');
  return hex === '' ? '00' : hex;
}

/** OCTET STRING content (also of a BER constructed one), or of `[n] IMPLICIT OCTET STRING`. */
export function octets(block: Block | undefined, what: string): Uint8Array {
  if (block === undefined) throw new Asn1StructureError(`${what}: missing`);
  const isOctetString = isUniversal(block, Tag.octetString);
  if (!isOctetString && block.tagClass !== TagClass.context)
    throw new Asn1StructureError(`${what}: expected an OCTET STRING`);
  if (block.constructed) {
    if (!isOctetString) throw new Asn1StructureError(`${what}: expected an OCTET STRING`);
    return concatBytes(block.items.map((part) => octets(part, what)));
  }
  return block.content;
}

export function booleanValue(block: Block | undefined, what: string): boolean {
  const content = primitive(block, Tag.boolean, 'a BOOLEAN', what);
  if (content.length !== 1) throw new Asn1StructureError(`${what}: malformed BOOLEAN`);
  return content[0] !== 0;
}

/** BIT STRING as its bytes and count of unused bits in the last byte. */
export function bitStringValue(block: Block | undefined, what: string): { bytes: Uint8Array; unusedBits: number } {
  const content = primitive(block, Tag.bitString, 'a BIT STRING', what);
  const unusedBits = content[0];
  if (unusedBits === undefined || unusedBits > 7 || (content.length === 1 && unusedBits !== 0))
    throw new Asn1StructureError(`${what}: malformed BIT STRING`);
  return { bytes: content.subarray(1), unusedBits };
}

const UTC_TIME = /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})?(Z|[+-]\d{4})$/;
const GENERALIZED_TIME = /^(\d{4})(\d{2})(\d{2})(\d{2})(?:(\d{2})(?:(\d{2})(?:[.,](\d{1,9}))?)?)?(Z|[+-]\d{4})?$/;

/** UTCTime (years 1950–2049) or GeneralizedTime as a Date; a GeneralizedTime without zone is read as UTC. */
export function timeValue(block: Block | undefined, what: string): Date {
  const isUtc = isUniversal(block, Tag.utcTime);
  if (block === undefined || block.constructed || !(isUtc || isUniversal(block, Tag.generalizedTime)))
    throw new Asn1StructureError(`${what}: expected a time`);
  const text = Buffer.from(block.content).toString('latin1');
  const match = (isUtc ? UTC_TIME : GENERALIZED_TIME).exec(text);
  if (!match) throw new Asn1StructureError(`${what}: expected a time`);
  const [, y, mo, d, h, mi = '00', sec = '00', fraction = '', zone = 'Z'] = isUtc
    ? [match[0], ...match.slice(1, 6), match[6], '', match[7]]
    : match;
  const year = isUtc ? (Number(y) < 50 ? 2000 : 1900) + Number(y) : Number(y);
  const millis = Number(`${fraction}000`.slice(0, 3));
  const check = new Date(Date.UTC(2000, Number(mo) - 1, Number(d), Number(h), Number(mi), Number(sec), millis));
  check.setUTCFullYear(year, Number(mo) - 1, Number(d)); // Date.UTC would read years 0–99 as 1900–1999
  let epoch = check.getTime();
  const zoneHours = Number(zone.slice(1, 3));
  const zoneMinutes = Number(zone.slice(3, 5));
  if (
    Number.isNaN(epoch) ||
    check.getUTCMonth() !== Number(mo) - 1 ||
    check.getUTCDate() !== Number(d) ||
    Number(h) > 23 ||
    Number(mi) > 59 ||
    Number(sec) > 59 ||
    (zone !== 'Z' && (zoneHours > 23 || zoneMinutes > 59))
  ) {
    throw new Asn1StructureError(`${what}: expected a time`);
  }
  if (zone !== 'Z') epoch -= (zone.startsWith('-') ? -1 : 1) * (zoneHours * 60 + zoneMinutes) * 60_000;
  return new Date(epoch);
}

const STRING_DECODERS: Record<number, (content: Uint8Array) => string> = {
  12: (content) => new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(content), // UTF8String
  18: (content) => Buffer.from(content).toString('latin1'), // NumericString
  19: (content) => Buffer.from(content).toString('latin1'), // PrintableString
  20: (content) => Buffer.from(content).toString('latin1'), // TeletexString (read as Latin-1)
  22: (content) => Buffer.from(content).toString('latin1'), // IA5String
  26: (content) => Buffer.from(content).toString('latin1'), // VisibleString
  28: (content) => utf32be(content), // UniversalString
  30: (content) => new TextDecoder('utf-16be', { fatal: true }).decode(content), // BMPString
};

function utf32be(content: Uint8Array): string {
  if (content.length % 4 !== 0) throw new Asn1StructureError('malformed UniversalString');
  const view = new DataView(content.buffer, content.byteOffset, content.byteLength);
  let text = '';
  for (let i = 0; i < content.length; i += 4) text += String.fromCodePoint(view.getUint32(i));
  return text;
}

/** Any of the ASN.1 string types as text. */
export function stringValue(block: Block | undefined, what: string): string {
  const decodeText =
    block !== undefined && block.tagClass === TagClass.universal && !block.constructed
      ? STRING_DECODERS[block.tagNumber]
      : undefined;
  if (block === undefined || decodeText === undefined) throw new Asn1StructureError(`${what}: expected a string`);
  try {
    return decodeText(block.content);
  } catch {
    throw new Asn1StructureError(`${what}: malformed string`);
  }
}
