/**
 * The minimal PDF object model: just enough to read the few objects a signature touches and to
 * serialize the ones an incremental update adds. Names are `PdfName`, strings are bytes
 * (`PdfString`), arrays are JS arrays, numbers are JS numbers (so offsets beyond 2^32 are fine).
 */

/** Any PDF object we can read or write. `null` is the PDF null object. */
export type PdfObject =
  null | boolean | number | PdfName | PdfString | PdfRef | PdfObject[] | PdfDict | PdfStream | PdfHexPlaceholder;

/** A PDF name (`/Type`), stored decoded (without the slash, `#xx` resolved). */
export class PdfName {
  private static readonly interned = new Map<string, PdfName>();
  private constructor(readonly value: string) {}

  /** The one instance for this name, so names compare with `===`. */
  static of(value: string): PdfName {
    let name = PdfName.interned.get(value);
    if (name === undefined) {
      name = new PdfName(value);
      PdfName.interned.set(value, name);
    }
    return name;
  }
}

/** A PDF string: raw bytes, and whether it was (or should be) written in hex form. */
export class PdfString {
  constructor(
    readonly bytes: Uint8Array,
    readonly hex = false,
  ) {}

  /**
   * A PDF text string: literal ASCII when every character is printable ASCII, otherwise UTF-16BE
   * with a byte order mark (written as hex).
   */
  static text(value: string): PdfString {
    if (/^[\x20-\x7e]*$/.test(value)) return new PdfString(asciiBytes(value));
    const bytes = [0xfe, 0xff];
    for (let i = 0; i < value.length; i++) {
      const unit = value.charCodeAt(i);
      bytes.push(unit >> 8, unit & 0xff);
    }
    return new PdfString(Uint8Array.from(bytes), true);
  }

  /** Decodes a text string (UTF-16BE with BOM, UTF-8 with BOM, or PDFDocEncoding as Latin-1). */
  toText(): string {
    const b = this.bytes;
    if (b[0] === 0xfe && b[1] === 0xff) {
      let out = '';
      for (let i = 2; i + 1 < b.length; i += 2) out += String.fromCharCode(((b[i] ?? 0) << 8) | (b[i + 1] ?? 0));
      return out;
    }
    if (b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) return new TextDecoder().decode(b.subarray(3));
    return String.fromCharCode(...b);
  }
}

/** An indirect reference `num gen R`. */
export class PdfRef {
  constructor(
    readonly num: number,
    readonly gen = 0,
  ) {}

  toString(): string {
    return `${this.num} ${this.gen} R`;
  }
}

/** A dictionary, keeping insertion order so that serialized output is predictable. */
export class PdfDict {
  readonly entries: Map<string, PdfObject>;

  constructor(entries?: Iterable<[string, PdfObject]>) {
    this.entries = new Map(entries);
  }

  get(key: string): PdfObject | undefined {
    return this.entries.get(key);
  }

  set(key: string, value: PdfObject): this {
    this.entries.set(key, value);
    return this;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** A shallow copy, for rewriting an object without touching the parsed original. */
  clone(): PdfDict {
    return new PdfDict(this.entries);
  }
}

/** A stream: its dictionary and its raw (still encoded) data. `/Length` is written from `data`. */
export class PdfStream {
  constructor(
    readonly dict: PdfDict,
    readonly data: Uint8Array,
  ) {}
}

/**
 * The room reserved for a signature: serialized as `<` + `2 × byteLength` zeros + `>`. The
 * serializer reports where it wrote it, which is how the ByteRange is computed.
 */
export class PdfHexPlaceholder {
  constructor(readonly byteLength: number) {}
}

/** Shorthand for building dictionaries: `dict({ Type: name('Sig') })`. */
export function dict(entries: Record<string, PdfObject | undefined>): PdfDict {
  const d = new PdfDict();
  for (const [key, value] of Object.entries(entries)) if (value !== undefined) d.set(key, value);
  return d;
}

/** Shorthand for `PdfName.of`. */
export function name(value: string): PdfName {
  return PdfName.of(value);
}

export function isName(value: PdfObject | undefined, expected?: string): value is PdfName {
  return value instanceof PdfName && (expected === undefined || value.value === expected);
}

export function asciiBytes(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  writeAscii(out, 0, text);
  return out;
}

function writeAscii(out: Uint8Array, at: number, text: string): void {
  for (let i = 0; i < text.length; i++) out[at + i] = text.charCodeAt(i) & 0xff;
}

/**
 * Collects output in chunks and remembers where placeholders landed. Text stays text and a
 * placeholder's zeros stay a count until toBytes: a signature's update is written once, not as
 * hundreds of small arrays (a batch of thousands makes that garbage for every file).
 */
export class ByteWriter {
  private readonly chunks: (Uint8Array | string | ZeroDigits)[] = [];
  private written = 0;
  /** Offsets (from the writer's start) of each placeholder's `<`. */
  readonly placeholders = new Map<PdfHexPlaceholder, number>();

  get length(): number {
    return this.written;
  }

  bytes(data: Uint8Array): void {
    this.chunks.push(data);
    this.written += data.length;
  }

  /** Text of single-byte characters (latin1), as asciiBytes encodes it. */
  ascii(text: string): void {
    this.chunks.push(text);
    this.written += text.length;
  }

  /** `count` ASCII zeros: a placeholder's room. */
  zeroDigits(count: number): void {
    this.chunks.push({ zeros: count });
    this.written += count;
  }

  toBytes(): Uint8Array {
    // Text is written by Buffer's latin1 encoder (each character's low byte, as writeAscii): a
    // loop over characters in JS runs cold, once per update, at some 30 ns a character.
    const buffer = Buffer.alloc(this.written);
    const out = new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.length);
    let at = 0;
    for (const chunk of this.chunks) {
      if (typeof chunk === 'string') {
        buffer.write(chunk, at, 'latin1');
        at += chunk.length;
      } else if (chunk instanceof Uint8Array) {
        out.set(chunk, at);
        at += chunk.length;
      } else {
        out.fill(0x30, at, at + chunk.zeros);
        at += chunk.zeros;
      }
    }
    return out;
  }
}

interface ZeroDigits {
  zeros: number;
}

/** Formats a number the way PDF wants it: integers plainly, reals without exponent. */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) throw new RangeError(`not a PDF number: ${value}`);
  if (Number.isInteger(value)) return value === 0 ? '0' : String(value);
  const fixed = value.toFixed(4).replace(/0+$/, '').replace(/\.$/, '');
  return fixed === '-0' ? '0' : fixed;
}

const REGULAR_NAME_CHAR = /^[!-~]$/;
const DELIMITERS = '()<>[]{}/%#';

/** A name as written, remembered: an update writes the same few names (/Type, /Filter, /Length…) for every file of a batch. */
function formatName(value: string): string {
  let out = formattedNames.get(value);
  if (out === undefined) {
    out = '/';
    for (const byte of asciiBytes(value)) {
      const ch = String.fromCharCode(byte);
      out += REGULAR_NAME_CHAR.test(ch) && !DELIMITERS.includes(ch) ? ch : `#${byte.toString(16).padStart(2, '0')}`;
    }
    if (formattedNames.size >= FORMATTED_NAMES) formattedNames.clear();
    formattedNames.set(value, out);
  }
  return out;
}
const formattedNames = new Map<string, string>();
const FORMATTED_NAMES = 1_024;

function writeString(w: ByteWriter, s: PdfString): void {
  if (s.hex) {
    w.ascii(`<${Buffer.from(s.bytes).toString('hex')}>`);
    return;
  }
  let out = '(';
  for (const byte of s.bytes) {
    if (byte === 0x28 || byte === 0x29 || byte === 0x5c) out += `\\${String.fromCharCode(byte)}`;
    else if (byte >= 0x20 && byte <= 0x7e) out += String.fromCharCode(byte);
    else out += `\\${byte.toString(8).padStart(3, '0')}`;
  }
  w.ascii(`${out})`);
}

/** Serializes one object (not the `n g obj` wrapper) into `w`. */
export function writeObject(w: ByteWriter, value: PdfObject): void {
  if (value === null) w.ascii('null');
  else if (typeof value === 'boolean') w.ascii(value ? 'true' : 'false');
  else if (typeof value === 'number') w.ascii(formatNumber(value));
  else if (value instanceof PdfName) w.ascii(formatName(value.value));
  else if (value instanceof PdfString) writeString(w, value);
  else if (value instanceof PdfRef) w.ascii(value.toString());
  else if (Array.isArray(value)) {
    // Numbers (a /W array's widths, a rectangle) in one piece: a call per number made the writer hot enough for V8 to optimize it.
    if (value.every((item) => typeof item === 'number')) {
      w.ascii(`[${value.map(formatNumber).join(' ')}]`);
      return;
    }
    w.ascii('[');
    value.forEach((item, i) => {
      if (i > 0) w.ascii(' ');
      writeObject(w, item);
    });
    w.ascii(']');
  } else if (value instanceof PdfDict) {
    w.ascii('<<');
    for (const [key, item] of value.entries) {
      w.ascii(` ${formatName(key)} `);
      writeObject(w, item);
    }
    w.ascii(' >>');
  } else if (value instanceof PdfStream) {
    writeObject(w, value.dict.clone().set('Length', value.data.length));
    w.ascii('\nstream\n');
    w.bytes(value.data);
    w.ascii('\nendstream');
  } else {
    w.placeholders.set(value, w.length);
    w.ascii('<');
    w.zeroDigits(value.byteLength * 2);
    w.ascii('>');
  }
}

/** Serializes one object to bytes (convenient in tests and for small snippets). */
export function serialize(value: PdfObject): Uint8Array {
  const w = new ByteWriter();
  writeObject(w, value);
  return w.toBytes();
}
