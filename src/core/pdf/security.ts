/**
 * The standard security handler of ISO 32000 (§7.6): RC4 40/128 (V1/V2, R2/R3), AES-128 (V4, R4,
 * crypt filters) and AES-256 (V5, R5/R6). Opens a document with its user password (empty for most
 * encrypted files: they open without a prompt and carry an owner's permissions), decrypts what
 * the reader loads, and encrypts every string and stream an update writes with the file's own
 * method and key, never a signature's /Contents (§7.6.2) nor the cross-reference stream.
 */
import { createCipheriv, createDecipheriv, createHash } from 'node:crypto';
import { EsignError } from '../errors.js';
import { PdfDict, PdfStream, PdfString, isName } from './objects.js';
import type { PdfObject } from './objects.js';

const PASSWORD_PAD = Uint8Array.from([
  0x28, 0xbf, 0x4e, 0x5e, 0x4e, 0x75, 0x8a, 0x41, 0x64, 0x00, 0x4e, 0x56, 0xff, 0xfa, 0x01, 0x08, 0x2e, 0x2e, 0x00,
  0xb6, 0xd0, 0x68, 0x3e, 0x80, 0x2f, 0x0c, 0xa9, 0xfe, 0x64, 0x53, 0x69, 0x7a,
]);

/** How a user gives a PDF password; the CLI says the same in --help. */
export const PASSWORD_HINT =
  'Give it with --password (asks on the terminal), --password-file FILE or ESIGN_PDF_PASSWORD.';

type Method = 'none' | 'rc4' | 'aes128' | 'aes256';

/** Permission bits (§7.6.4.2, Table 22) that signing needs: either lets a person sign a form. */
const MODIFY_ANNOTATIONS = 1 << 5;
const FILL_IN_FORMS = 1 << 8;

export class StandardSecurityHandler {
  private constructor(
    private readonly fileKey: Uint8Array,
    private readonly revision: number,
    private readonly stringMethod: Method,
    private readonly streamMethod: Method,
    private readonly encryptMetadata: boolean,
    /** The /Encrypt dictionary's own object number: its strings are never encrypted. */
    private readonly encryptDictionaryNumber: number | undefined,
    /** The P entry, as a signed 32-bit integer. */
    readonly permissions: number,
    /** A description for messages and reports, e.g. "AES-128 (R4)". */
    readonly description: string,
    /** Which password opened the file: the owner's lifts the permissions. */
    readonly openedAs: 'user' | 'owner',
  ) {}

  /**
   * Opens the handler with `password` (the user password; empty by default). Throws a typed error
   * for a public-key or unknown handler, a malformed dictionary, or a password that does not open it.
   */
  static open(
    encrypt: PdfDict,
    documentId: Uint8Array,
    encryptObject: number | undefined,
    password = '',
  ): StandardSecurityHandler {
    const filter = encrypt.get('Filter');
    if (isName(filter, 'Adobe.PubSec') || isName(encrypt.get('SubFilter'))) {
      throw new EsignError(
        'PDF_ENCRYPTED',
        'The PDF is encrypted for certificate holders (public-key security handler), which esign cannot open.',
        {
          hint: 'Ask the sender for a copy encrypted with a password, or without encryption.',
        },
      );
    }
    if (!isName(filter, 'Standard')) {
      throw new EsignError(
        'PDF_ENCRYPTED',
        `The PDF is encrypted with an unknown security handler (${isName(filter) ? filter.value : 'none named'}).`,
        {
          hint: 'Ask the sender for a copy encrypted with the standard (password) handler, or without encryption.',
        },
      );
    }
    const v = integer(encrypt, 'V', 0);
    const r = integer(encrypt, 'R');
    const p = integer(encrypt, 'P') | 0;
    const o = bytesOf(encrypt, 'O');
    const u = bytesOf(encrypt, 'U');
    const encryptMetadata = encrypt.get('EncryptMetadata') !== false;
    let stringMethod: Method;
    let streamMethod: Method;
    let keyBytes: number;
    if (v === 1 || v === 2) {
      stringMethod = streamMethod = 'rc4';
      keyBytes = v === 1 ? 5 : integer(encrypt, 'Length', 40) / 8;
    } else if (v === 4 || v === 5) {
      stringMethod = cryptFilterMethod(encrypt, 'StrF');
      streamMethod = cryptFilterMethod(encrypt, 'StmF');
      keyBytes = v === 5 ? 32 : 16;
    } else {
      throw malformed(`/V ${v} is not a standard encryption version esign reads (1, 2, 4 or 5)`);
    }
    if (!Number.isInteger(keyBytes) || keyBytes < 5 || keyBytes > 32)
      throw malformed(`the key length ${keyBytes * 8} is not valid`);
    let opened: { fileKey: Uint8Array; as: 'user' | 'owner' } | undefined;
    if (r === 5 || r === 6) {
      if (u.length < 48 || o.length < 48) throw malformed('/O and /U are shorter than 48 bytes');
      opened = openAes256(encrypt, saslPrep(password), o, u, r);
    } else if (r >= 2 && r <= 4) {
      if (u.length < 32 || o.length < 32) throw malformed('/O and /U are shorter than 32 bytes');
      const opensWith = (padded: Uint8Array): Uint8Array | undefined => {
        const key = rc4FileKey(padded, o, p, documentId, keyBytes, r, encryptMetadata);
        return userPasswordOpens(key, u, documentId, r) ? key : undefined;
      };
      const asUser = opensWith(padPassword(password));
      const asOwner = asUser ? undefined : opensWith(userPasswordFromOwner(password, o, keyBytes, r));
      if (asUser) opened = { fileKey: asUser, as: 'user' };
      else if (asOwner) opened = { fileKey: asOwner, as: 'owner' };
    } else {
      throw malformed(`/R ${r} is not a standard security handler revision (2 to 6)`);
    }
    if (!opened) throw passwordNeeded(password);
    const names: Record<Method, string> = {
      none: 'no encryption',
      rc4: `RC4-${keyBytes * 8}`,
      aes128: 'AES-128',
      aes256: 'AES-256',
    };
    return new StandardSecurityHandler(
      opened.fileKey,
      r,
      stringMethod,
      streamMethod,
      encryptMetadata,
      encryptObject,
      p,
      `${names[streamMethod]} (R${r})`,
      opened.as,
    );
  }

  /** Whether the owner's permissions let a person sign: fill in forms (R3+), or change annotations. */
  get allowsSigning(): boolean {
    if (this.openedAs === 'owner') return true;
    return (
      (this.permissions & MODIFY_ANNOTATIONS) !== 0 || (this.revision >= 3 && (this.permissions & FILL_IN_FORMS) !== 0)
    );
  }

  /** Object `num gen` as stored, decrypted. */
  decryptObject(num: number, gen: number, value: PdfObject): PdfObject {
    if (num === this.encryptDictionaryNumber) return value;
    return this.transform(value, num, gen, 'decrypt');
  }

  /** Object `num gen` as an update writes it, encrypted. */
  encryptObject(num: number, gen: number, value: PdfObject): PdfObject {
    return this.transform(value, num, gen, 'encrypt');
  }

  private transform(value: PdfObject, num: number, gen: number, direction: 'encrypt' | 'decrypt'): PdfObject {
    const strings = (bytes: Uint8Array) => this.apply(this.stringMethod, num, gen, bytes, direction);
    const walk = (item: PdfObject, inSignature = false): PdfObject => {
      if (item instanceof PdfString) return new PdfString(strings(item.bytes), item.hex);
      if (Array.isArray(item)) return item.map((element) => walk(element));
      if (item instanceof PdfDict) {
        // A signature's /Contents is never encrypted (§7.6.2): its ByteRange must hash what is written.
        const signature = inSignature || item.has('ByteRange');
        const copy = new PdfDict();
        for (const [key, entry] of item.entries) copy.set(key, signature && key === 'Contents' ? entry : walk(entry));
        return copy;
      }
      if (item instanceof PdfStream) {
        const dict = walk(item.dict) as PdfDict;
        const exempt =
          isName(item.dict.get('Type'), 'XRef') || (!this.encryptMetadata && isName(item.dict.get('Type'), 'Metadata'));
        return new PdfStream(dict, exempt ? item.data : this.apply(this.streamMethod, num, gen, item.data, direction));
      }
      return item;
    };
    return walk(value);
  }

  private apply(
    method: Method,
    num: number,
    gen: number,
    data: Uint8Array,
    direction: 'encrypt' | 'decrypt',
  ): Uint8Array {
    if (method === 'none') return data;
    const key = method === 'aes256' ? this.fileKey : objectKey(this.fileKey, num, gen, method === 'aes128');
    if (method === 'rc4') return rc4(key, data);
    const algorithm = method === 'aes256' ? 'aes-256-cbc' : 'aes-128-cbc';
    if (direction === 'decrypt') return aesDecrypt(algorithm, key, data);
    // The IV is derived from the key and the data, so that serializing an update again (as the
    // placeholder does to settle its ByteRange) gives the same bytes and the same lengths.
    const iv = createHash('sha256').update(key).update(data).digest().subarray(0, 16);
    const cipher = createCipheriv(algorithm, key, iv);
    return Uint8Array.from(Buffer.concat([iv, cipher.update(data), cipher.final()]));
  }
}

function integer(dict: PdfDict, key: string, fallback?: number): number {
  const value = dict.get(key) ?? fallback;
  if (typeof value !== 'number' || !Number.isInteger(value)) throw malformed(`/${key} is missing or not an integer`);
  return value;
}

function bytesOf(dict: PdfDict, key: string): Uint8Array {
  const value = dict.get(key);
  if (!(value instanceof PdfString)) throw malformed(`/${key} is missing or not a string`);
  return value.bytes;
}

function cryptFilterMethod(encrypt: PdfDict, key: 'StrF' | 'StmF'): Method {
  const filterName = encrypt.get(key);
  if (filterName === undefined || isName(filterName, 'Identity')) return 'none';
  if (!isName(filterName)) throw malformed(`/${key} is not a name`);
  const filters = encrypt.get('CF');
  const filter = filters instanceof PdfDict ? filters.get(filterName.value) : undefined;
  if (!(filter instanceof PdfDict)) throw malformed(`the crypt filter /${filterName.value} is not defined in /CF`);
  const cfm = filter.get('CFM');
  if (cfm === undefined || isName(cfm, 'None')) return 'none';
  if (isName(cfm, 'V2')) return 'rc4';
  if (isName(cfm, 'AESV2')) return 'aes128';
  if (isName(cfm, 'AESV3')) return 'aes256';
  throw new EsignError(
    'PDF_ENCRYPTED',
    `The PDF uses the crypt filter method ${isName(cfm) ? cfm.value : 'unknown'}, which esign cannot apply.`,
    {
      hint: 'Ask the sender for a copy encrypted with RC4 or AES, or without encryption.',
    },
  );
}

function malformed(what: string): EsignError {
  return new EsignError('PDF_ENCRYPTION_INVALID', `The PDF's encryption dictionary is damaged: ${what}.`, {
    hint: 'Open and save the file again with its producer, or ask the sender for a new copy.',
  });
}

function passwordNeeded(password: string): EsignError {
  return password === ''
    ? new EsignError('PDF_PASSWORD_REQUIRED', 'The PDF needs a password to open.', { hint: PASSWORD_HINT })
    : new EsignError(
        'PDF_PASSWORD_WRONG',
        'The password given opens the PDF neither as its user nor as its owner password.',
        { hint: 'Check the password (ESIGN_PDF_PASSWORD, --password-file or the one typed).' },
      );
}

/** Algorithm 2 (R2–R4): the file key from the padded user password. */
function rc4FileKey(
  padded: Uint8Array,
  o: Uint8Array,
  p: number,
  id: Uint8Array,
  keyBytes: number,
  r: number,
  encryptMetadata: boolean,
): Uint8Array {
  const pBytes = new Uint8Array(4);
  new DataView(pBytes.buffer).setInt32(0, p, true);
  const hash = createHash('md5').update(padded).update(o.subarray(0, 32)).update(pBytes).update(id);
  if (r >= 4 && !encryptMetadata) hash.update(Uint8Array.of(0xff, 0xff, 0xff, 0xff));
  let key = new Uint8Array(hash.digest());
  const length = r === 2 ? 5 : keyBytes;
  if (r >= 3)
    for (let i = 0; i < 50; i++) key = new Uint8Array(createHash('md5').update(key.subarray(0, length)).digest());
  return key.subarray(0, length);
}

/** Algorithms 4 and 5: whether the key computed from the password gives /U. */
function userPasswordOpens(fileKey: Uint8Array, u: Uint8Array, id: Uint8Array, r: number): boolean {
  if (r === 2) return equal(rc4(fileKey, PASSWORD_PAD), u.subarray(0, 32));
  let x = rc4(fileKey, new Uint8Array(createHash('md5').update(PASSWORD_PAD).update(id).digest()));
  for (let i = 1; i <= 19; i++)
    x = rc4(
      fileKey.map((byte) => byte ^ i),
      x,
    );
  return equal(x, u.subarray(0, 16));
}

/**
 * R5/R6 (Algorithm 2.A): checks the password against /U, then /O, and unwraps the file key from
 * /UE or /OE. The owner's hashes take the 48 bytes of /U as well.
 */
function openAes256(
  encrypt: PdfDict,
  pw: Uint8Array,
  o: Uint8Array,
  u: Uint8Array,
  r: number,
): { fileKey: Uint8Array; as: 'user' | 'owner' } | undefined {
  const hash = (salt: Uint8Array, userKey: Uint8Array) =>
    r === 5 ? sha256(pw, salt, userKey) : hardenedHash(pw, salt, userKey);
  const unwrap = (key: string, kek: Uint8Array): Uint8Array => {
    const wrapped = bytesOf(encrypt, key);
    if (wrapped.length < 32) throw malformed(`/${key} is shorter than 32 bytes`);
    const decipher = createDecipheriv('aes-256-cbc', kek, new Uint8Array(16)).setAutoPadding(false);
    return Uint8Array.from(Buffer.concat([decipher.update(wrapped.subarray(0, 32)), decipher.final()]));
  };
  const none = new Uint8Array(0);
  if (equal(hash(u.subarray(32, 40), none), u.subarray(0, 32)))
    return { fileKey: unwrap('UE', hash(u.subarray(40, 48), none)), as: 'user' };
  const userKey = u.subarray(0, 48);
  if (equal(hash(o.subarray(32, 40), userKey), o.subarray(0, 32)))
    return { fileKey: unwrap('OE', hash(o.subarray(40, 48), userKey)), as: 'owner' };
  return undefined;
}

/**
 * SASLprep (RFC 4013) as R5/R6 passwords need it: non-ASCII spaces become a space, characters
 * mapped to nothing go, then NFKC; UTF-8, at most 127 bytes.
 */
export function saslPrep(password: string): Uint8Array {
  let mapped = '';
  for (const char of password) {
    const code = char.codePointAt(0)!;
    if (MAPPED_TO_NOTHING.some(([from, to]) => code >= from && code <= to)) continue;
    mapped += NON_ASCII_SPACES.some(([from, to]) => code >= from && code <= to) ? ' ' : char;
  }
  return Buffer.from(mapped.normalize('NFKC'), 'utf8').subarray(0, 127);
}

/** RFC 3454 tables C.1.2 and B.1, as code point ranges. */
const NON_ASCII_SPACES: Array<[number, number]> = [
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200b],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
];
const MAPPED_TO_NOTHING: Array<[number, number]> = [
  [0xad, 0xad],
  [0x34f, 0x34f],
  [0x1806, 0x1806],
  [0x180b, 0x180d],
  [0x200c, 0x200d],
  [0x2060, 0x2060],
  [0xfe00, 0xfe0f],
  [0xfeff, 0xfeff],
];

/** Algorithm 7 (R2–R4): the padded user password that the owner password unlocks from /O. */
function userPasswordFromOwner(owner: string, o: Uint8Array, keyBytes: number, r: number): Uint8Array {
  let digest = new Uint8Array(createHash('md5').update(padPassword(owner)).digest());
  if (r >= 3) for (let i = 0; i < 50; i++) digest = new Uint8Array(createHash('md5').update(digest).digest());
  const key = digest.subarray(0, r === 2 ? 5 : keyBytes);
  if (r === 2) return rc4(key, o.subarray(0, 32));
  let x = o.subarray(0, 32);
  for (let i = 19; i >= 0; i--)
    x = rc4(
      key.map((byte) => byte ^ i),
      x,
    );
  return x;
}

/** Algorithm 2.B (R6): SHA-256/384/512 rounds over AES-128 encryptions, at least 64 of them. */
function hardenedHash(password: Uint8Array, salt: Uint8Array, userKey: Uint8Array): Uint8Array {
  let k: Uint8Array = sha256(password, salt, userKey);
  for (let round = 0; ; round++) {
    const unit = Buffer.concat([password, k, userKey]);
    const k1 = Buffer.concat(Array.from({ length: 64 }, () => unit));
    const cipher = createCipheriv('aes-128-cbc', k.subarray(0, 16), k.subarray(16, 32)).setAutoPadding(false);
    const e = Buffer.concat([cipher.update(k1), cipher.final()]);
    let sum = 0;
    for (let i = 0; i < 16; i++) sum += e[i]!;
    const next = ['sha256', 'sha384', 'sha512'][sum % 3]!;
    k = new Uint8Array(createHash(next).update(e).digest());
    if (round + 1 >= 64 && e[e.length - 1]! <= round + 1 - 32) break;
  }
  return k.subarray(0, 32);
}

function sha256(...parts: Uint8Array[]): Uint8Array {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return new Uint8Array(hash.digest());
}

function padPassword(password: string): Uint8Array {
  const bytes = Buffer.from(password, 'latin1').subarray(0, 32);
  const out = new Uint8Array(32);
  out.set(bytes);
  out.set(PASSWORD_PAD.subarray(0, 32 - bytes.length), bytes.length);
  return out;
}

/** Algorithm 1: the key of object `num gen`. */
function objectKey(fileKey: Uint8Array, num: number, gen: number, aes: boolean): Uint8Array {
  const hash = createHash('md5')
    .update(fileKey)
    .update(Uint8Array.of(num & 0xff, (num >> 8) & 0xff, (num >> 16) & 0xff, gen & 0xff, (gen >> 8) & 0xff));
  if (aes) hash.update(Uint8Array.of(0x73, 0x41, 0x6c, 0x54)); // "sAlT"
  return new Uint8Array(hash.digest()).subarray(0, Math.min(fileKey.length + 5, 16));
}

/** AES-CBC with the IV in the first 16 bytes and PKCS#5 padding; damaged data is returned as it is. */
function aesDecrypt(algorithm: string, key: Uint8Array, data: Uint8Array): Uint8Array {
  if (data.length < 32 || data.length % 16 !== 0) return data.length === 16 ? new Uint8Array(0) : data;
  try {
    const decipher = createDecipheriv(algorithm, key, data.subarray(0, 16));
    return Uint8Array.from(Buffer.concat([decipher.update(data.subarray(16)), decipher.final()]));
  } catch {
    return data;
  }
}

/** RC4 (not in OpenSSL 3's default provider, so written out; symmetric). */
export function rc4(key: Uint8Array, data: Uint8Array): Uint8Array {
  const s = new Uint8Array(256);
  for (let i = 0; i < 256; i++) s[i] = i;
  for (let i = 0, j = 0; i < 256; i++) {
    j = (j + s[i]! + key[i % key.length]!) & 0xff;
    [s[i], s[j]] = [s[j]!, s[i]!];
  }
  const out = new Uint8Array(data.length);
  for (let n = 0, i = 0, j = 0; n < data.length; n++) {
    i = (i + 1) & 0xff;
    j = (j + s[i]!) & 0xff;
    [s[i], s[j]] = [s[j]!, s[i]!];
    out[n] = data[n]! ^ s[(s[i]! + s[j]!) & 0xff]!;
  }
  return out;
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}
