/**
 * A small PDF lexer and object parser over one window of bytes. The window is a slice of the
 * document read through a ByteSource; when an object runs past the window's end the parser throws
 * `NeedMoreBytes` and the caller reads a larger window (see `parseAt` in `document.ts`).
 */
import { PdfDict, PdfName, PdfRef, PdfString } from './objects.js';
import type { PdfObject } from './objects.js';

/** Thrown when the window ends before the object does (and the window is not the file's end). */
export class NeedMoreBytes extends Error {
  constructor() {
    super('object runs past the bytes read');
  }
}
/** One instance, thrown each time: it is always caught, and a new one would record a stack trace (a signature's /Contents runs past every first read). */
const NEED_MORE_BYTES = new NeedMoreBytes();

/** Thrown for bytes that are not PDF syntax. */
export class PdfSyntaxError extends Error {}

/** A keyword token such as `obj`, `R`, `stream`, `xref` or `trailer`. */
export class Keyword {
  constructor(readonly value: string) {}
}

type Token = PdfObject | Keyword | '[' | ']' | '<<' | '>>';

// Byte classes (ISO 32000-1, 7.2.2), looked up per byte: a page tree node or an xref table is
// thousands of tokens, parsed while the code is still cold.
const WHITE = 1;
const DELIMITER = 2;
const BYTE_CLASS = new Uint8Array(256);
for (const byte of [0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20]) BYTE_CLASS[byte] = WHITE;
for (const byte of [0x28, 0x29, 0x3c, 0x3e, 0x5b, 0x5d, 0x7b, 0x7d, 0x2f, 0x25]) BYTE_CLASS[byte] = DELIMITER;

// `num gen R …]`, each R followed by white space or the `]`.
const REFERENCE_ARRAY = /(?:\d{1,15}[\0\t\n\f\r ]+\d{1,15}[\0\t\n\f\r ]+R(?=[\0\t\n\f\r \]])[\0\t\n\f\r ]*)*\]/y;
const WHITE_RUN = /[\0\t\n\f\r ]+/;

/** PDF white space (ISO 32000-1, 7.2.2). */
export function isPdfWhitespace(byte: number): boolean {
  return BYTE_CLASS[byte] === WHITE;
}

function isRegular(byte: number | undefined): byte is number {
  return byte !== undefined && BYTE_CLASS[byte] === 0;
}

function hexValue(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  if (byte >= 0x41 && byte <= 0x46) return byte - 0x37;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x57;
  return -1;
}

/**
 * Reads tokens and objects from `bytes`, whose first byte sits at absolute offset `base`.
 * `complete` says the window reaches the end of the document, so running out is a syntax error
 * rather than a reason to read more.
 */
export class Lexer {
  pos = 0;

  constructor(
    readonly bytes: Uint8Array,
    readonly base = 0,
    readonly complete = true,
  ) {}

  /** Absolute offset of the next unread byte. */
  get offset(): number {
    return this.base + this.pos;
  }

  private byteAt(pos: number): number | undefined {
    if (pos < this.bytes.length) return this.bytes[pos];
    if (!this.complete) throw NEED_MORE_BYTES;
    return undefined;
  }

  private fail(what: string): never {
    throw new PdfSyntaxError(`${what} at offset ${this.offset}`);
  }

  /** Skips whitespace and comments. */
  skipSpace(): void {
    for (;;) {
      const byte = this.byteAt(this.pos);
      if (byte === undefined) return;
      if (BYTE_CLASS[byte] === WHITE) this.pos++;
      else if (byte === 0x25) {
        while (this.byteAt(this.pos) !== undefined && this.bytes[this.pos] !== 0x0a && this.bytes[this.pos] !== 0x0d)
          this.pos++;
      } else return;
    }
  }

  /**
   * A run of decimal digits after whitespace, as a number, or `undefined` when none starts here
   * (nothing consumed but the whitespace). The fast path for classic xref tables, where the general
   * tokenizer costs tens of milliseconds on a few thousand entries.
   */
  unsignedDigits(): number | undefined {
    this.skipSpace();
    let value = 0;
    let digits = 0;
    for (
      let byte = this.byteAt(this.pos);
      byte !== undefined && byte >= 0x30 && byte <= 0x39;
      byte = this.byteAt(this.pos)
    ) {
      if (++digits > 15) this.fail('number too long');
      value = value * 10 + (byte - 0x30);
      this.pos++;
    }
    return digits === 0 ? undefined : value;
  }

  /**
   * The whole word at `pos` when it is plain decimal digits (a count, an object number), consumed;
   * otherwise `undefined` with nothing consumed (`1.5`, `12abc` and long numbers take the general path).
   */
  private unsignedInteger(): number | undefined {
    let at = this.pos;
    let value = 0;
    for (let byte = this.byteAt(at); byte !== undefined && byte >= 0x30 && byte <= 0x39; byte = this.byteAt(at)) {
      value = value * 10 + (byte - 0x30);
      at++;
    }
    if (at === this.pos || at - this.pos > 15 || isRegular(this.byteAt(at))) return undefined;
    this.pos = at;
    return value;
  }

  /** Bytes [start, end) of the window as a string of one character per byte, for a regular expression to check. */
  latin1(start: number, end: number): string {
    return Buffer.from(this.bytes.buffer, this.bytes.byteOffset, this.bytes.length).toString('latin1', start, end);
  }

  /** A one-letter keyword after whitespace (such as an xref entry's `n` or `f`), or `undefined`. */
  letter(): string | undefined {
    this.skipSpace();
    const byte = this.byteAt(this.pos);
    if (!isRegular(byte) || isRegular(this.byteAt(this.pos + 1))) return undefined;
    this.pos++;
    return String.fromCharCode(byte);
  }

  /** Skips the end-of-line after the `stream` keyword (CRLF or LF; a lone CR is tolerated). */
  skipStreamEol(): void {
    if (this.byteAt(this.pos) === 0x0d) this.pos++;
    if (this.byteAt(this.pos) === 0x0a) this.pos++;
  }

  /** The next token, or `undefined` at the end of a complete window. */
  nextToken(): Token | undefined {
    this.skipSpace();
    const byte = this.byteAt(this.pos);
    if (byte === undefined) return undefined;
    switch (byte) {
      case 0x5b:
        this.pos++;
        return '[';
      case 0x5d:
        this.pos++;
        return ']';
      case 0x3c:
        if (this.byteAt(this.pos + 1) === 0x3c) {
          this.pos += 2;
          return '<<';
        }
        return this.hexString();
      case 0x3e:
        if (this.byteAt(this.pos + 1) === 0x3e) {
          this.pos += 2;
          return '>>';
        }
        return this.fail('unexpected ">"');
      case 0x28:
        return this.literalString();
      case 0x2f:
        return this.name();
      case 0x29:
      case 0x7b:
      case 0x7d:
        return this.fail(`unexpected "${String.fromCharCode(byte)}"`);
    }
    if (byte >= 0x30 && byte <= 0x39) {
      const integer = this.unsignedInteger();
      if (integer !== undefined) return integer;
    }
    const start = this.pos;
    while (isRegular(this.byteAt(this.pos))) this.pos++;
    const word = String.fromCharCode(...this.bytes.subarray(start, this.pos));
    if (/^[+-]?(\d+\.?\d*|\.\d+)$/.test(word)) return Number(word);
    if (word === 'true') return true;
    if (word === 'false') return false;
    if (word === 'null') return null;
    return new Keyword(word);
  }

  private name(): PdfName {
    this.pos++;
    let out = '';
    while (isRegular(this.byteAt(this.pos))) {
      const byte = this.bytes[this.pos] as number;
      if (byte === 0x23) {
        const hi = hexValue(this.byteAt(this.pos + 1) ?? 0);
        const lo = hexValue(this.byteAt(this.pos + 2) ?? 0);
        if (hi >= 0 && lo >= 0) {
          out += String.fromCharCode(hi * 16 + lo);
          this.pos += 3;
          continue;
        }
      }
      out += String.fromCharCode(byte);
      this.pos++;
    }
    return PdfName.of(out);
  }

  private hexString(): PdfString {
    // Found first, so that a signature's /Contents (tens of KB) is decoded once into its own array.
    const end = this.bytes.indexOf(0x3e, this.pos + 1);
    if (end < 0) {
      if (!this.complete) throw NEED_MORE_BYTES;
      this.pos = this.bytes.length;
      this.fail('unterminated hex string');
    }
    const digits = this.bytes.subarray(this.pos + 1, end);
    if ((digits.length & 1) === 0) {
      // The usual case, a run of hex digits and nothing else, is decoded natively: Node's decoder
      // stops at the first pair that is not hex, so a whole decode is a plain run.
      const decoded = Buffer.from(
        Buffer.from(digits.buffer, digits.byteOffset, digits.length).toString('latin1'),
        'hex',
      );
      if (decoded.length * 2 === digits.length) {
        this.pos = end + 1;
        return new PdfString(new Uint8Array(decoded), true);
      }
    }
    const out = new Uint8Array((end - this.pos) >> 1);
    let length = 0;
    let pending = -1;
    for (this.pos++; this.pos < end; this.pos++) {
      const byte = this.bytes[this.pos] as number;
      const value = hexValue(byte);
      if (value < 0) {
        if (BYTE_CLASS[byte] === WHITE) continue;
        this.fail('bad hex digit');
      }
      if (pending < 0) pending = value;
      else {
        out[length++] = pending * 16 + value;
        pending = -1;
      }
    }
    this.pos = end + 1;
    if (pending >= 0) out[length++] = pending * 16;
    return new PdfString(out.subarray(0, length), true);
  }

  private literalString(): PdfString {
    this.pos++;
    const out: number[] = [];
    let depth = 1;
    for (;;) {
      const byte = this.byteAt(this.pos++);
      if (byte === undefined) this.fail('unterminated string');
      if (byte === 0x28) depth++;
      else if (byte === 0x29 && --depth === 0) break;
      if (byte !== 0x5c) {
        out.push(byte);
        continue;
      }
      const next = this.byteAt(this.pos++);
      if (next === undefined) this.fail('unterminated string');
      const simple: Record<number, number> = { 0x6e: 0x0a, 0x72: 0x0d, 0x74: 0x09, 0x62: 0x08, 0x66: 0x0c };
      if (simple[next] !== undefined) out.push(simple[next]);
      else if (next >= 0x30 && next <= 0x37) {
        let value = next - 0x30;
        for (let i = 0; i < 2; i++) {
          const digit = this.byteAt(this.pos);
          if (digit === undefined || digit < 0x30 || digit > 0x37) break;
          value = value * 8 + digit - 0x30;
          this.pos++;
        }
        out.push(value & 0xff);
      } else if (next === 0x0d) {
        if (this.byteAt(this.pos) === 0x0a) this.pos++;
      } else if (next !== 0x0a) out.push(next);
    }
    return new PdfString(Uint8Array.from(out));
  }

  /** Reads the next token and checks that it is the keyword `word`. */
  expectKeyword(word: string): void {
    const token = this.nextToken();
    if (!(token instanceof Keyword) || token.value !== word) this.fail(`expected "${word}"`);
  }

  /** Parses one object, folding `num gen R` into a PdfRef. */
  parseObject(): PdfObject {
    const token = this.nextToken();
    return this.objectFrom(token);
  }

  private objectFrom(token: Token | undefined): PdfObject {
    if (token === undefined) return this.fail('unexpected end of data');
    if (token === '[') {
      const references = this.referenceArray();
      if (references) return references;
      const items: PdfObject[] = [];
      for (;;) {
        const next = this.nextToken();
        if (next === ']') return items;
        items.push(this.objectFrom(next));
      }
    }
    if (token === '<<') {
      const d = new PdfDict();
      for (;;) {
        const key = this.nextToken();
        if (key === '>>') return d;
        if (!(key instanceof PdfName)) this.fail('dictionary key is not a name');
        d.set(key.value, this.parseObject());
      }
    }
    if (token === ']' || token === '>>' || token instanceof Keyword) {
      return this.fail(`unexpected ${token instanceof Keyword ? token.value : token}`);
    }
    if (typeof token === 'number' && Number.isInteger(token) && token >= 0) return this.maybeRef(token);
    return token;
  }

  /**
   * After `[`: an array of references only (a page tree node's /Kids, /Annots, /Fields), consumed
   * with its `]`, read by one regular expression and a split instead of a tokenizer call per number;
   * a /Kids of thousands of pages otherwise makes the parser hot enough for the JIT to spend more
   * time than the parse. Undefined, with nothing consumed, for any other array.
   */
  private referenceArray(): PdfRef[] | undefined {
    let start = this.pos;
    while (start < this.bytes.length && BYTE_CLASS[this.bytes[start] as number] === WHITE) start++;
    const first = this.bytes[start];
    if (first === undefined || first < 0x30 || first > 0x39) return undefined;
    const close = this.bytes.indexOf(0x5d, start);
    // Past the end of a partial window: read more now rather than tokenize the part read so far.
    if (close < 0) {
      if (!this.complete) throw NEED_MORE_BYTES;
      return undefined;
    }
    const text = this.latin1(start, close + 1);
    REFERENCE_ARRAY.lastIndex = 0;
    if (REFERENCE_ARRAY.exec(text)?.[0].length !== text.length) return undefined;
    const words = text.slice(0, -1).split(WHITE_RUN);
    if (words.at(-1) === '') words.pop();
    const references: PdfRef[] = [];
    for (let i = 0; i + 2 < words.length; i += 3) references.push(new PdfRef(Number(words[i]), Number(words[i + 1])));
    this.pos = close + 1;
    return references;
  }

  /** `num gen R` as a PdfRef, read byte by byte (no tokens allocated); otherwise `num`, nothing consumed. */
  private maybeRef(num: number): PdfObject {
    const save = this.pos;
    this.skipSpace();
    let gen = this.unsignedInteger();
    if (gen === undefined) {
      // Rarer spellings of a generation (`0.0`, `+0`), accepted as any non-negative integer value.
      const token = this.nextToken();
      gen = typeof token === 'number' && Number.isInteger(token) && token >= 0 ? token : undefined;
    }
    if (gen !== undefined) {
      this.skipSpace();
      if (this.byteAt(this.pos) === 0x52 && !isRegular(this.byteAt(this.pos + 1))) {
        this.pos++;
        return new PdfRef(num, gen);
      }
    }
    this.pos = save;
    return num;
  }

  /** Parses `num gen obj` and returns the two numbers. */
  objectHeader(): { num: number; gen: number } {
    const num = this.nextToken();
    const gen = this.nextToken();
    if (typeof num !== 'number' || typeof gen !== 'number') this.fail('expected "num gen obj"');
    this.expectKeyword('obj');
    return { num, gen };
  }
}
