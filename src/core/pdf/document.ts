/**
 * `readPdf`: opens a document through a ByteSource by reading its header, its tail and its
 * cross-reference data, then reads objects lazily, one at a time, as they are asked for.
 */
import { EsignError } from '../errors.js';
import type { ByteSource } from '../ports.js';
import { indexOf, lastIndexOf } from './byte-source.js';
import { decodeStream } from './filters.js';
import { Lexer } from './lexer.js';
import { PdfDict, PdfRef, PdfStream, PdfString, isName } from './objects.js';
import { StandardSecurityHandler } from './security.js';
import type { PdfObject } from './objects.js';
import { readObjectAt } from './object-reader.js';
import { readXrefChain } from './xref.js';
import { highestObjectNumber } from './xref-entries.js';
import type { XrefEntry, XrefIndex, XrefStyle } from './xref.js';

const REPAIR_HINT = 'Repair it first, e.g. `qpdf input.pdf repaired.pdf`, and sign the repaired file.';

/** A page found in the page tree. */
export interface PdfPage {
  ref: PdfRef;
  dict: PdfDict;
  /** 1-based page number. */
  number: number;
}

interface ObjectStream {
  data: Uint8Array;
  first: number;
  offsets: number[];
}

/** An opened PDF: its newest trailer, its merged cross-reference index and a lazy object reader. */
export class PdfDocument {
  private readonly cache = new Map<number, Promise<PdfObject>>();
  private readonly objectStreams = new Map<number, Promise<ObjectStream>>();

  constructor(
    readonly source: ByteSource,
    /** Offset of the newest cross-reference section: the `/Prev` of the next update. */
    readonly startxref: number,
    readonly xref: XrefIndex,
    /** Whether the file ends in an end-of-line (if not, an update starts with one). */
    readonly endsWithEol: boolean,
  ) {}

  /** The standard security handler of an encrypted document: loads decrypt, updates encrypt. */
  security: StandardSecurityHandler | undefined;

  /** Opens the /Encrypt dictionary with `password` (the empty user password by default). */
  async openSecurity(password = ''): Promise<void> {
    const reference = this.trailer.get('Encrypt');
    const encrypt = reference instanceof PdfRef ? await this.getObject(reference).catch(() => undefined) : reference;
    if (!(encrypt instanceof PdfDict))
      throw new EsignError(
        'PDF_ENCRYPTION_INVALID',
        "The PDF's encryption dictionary is damaged: /Encrypt is not a dictionary.",
        { hint: 'Ask the sender for a new copy.' },
      );
    const id = this.trailer.get('ID');
    const first = Array.isArray(id) && id[0] instanceof PdfString ? id[0].bytes : new Uint8Array(0);
    // Loaded (and cached) before the handler exists, the dictionary is never decrypted.
    this.security = StandardSecurityHandler.open(
      encrypt,
      first,
      reference instanceof PdfRef ? reference.num : undefined,
      password,
    );
  }

  /** Refuses an update the owner's permissions forbid (signing fills in a form field); reading is always allowed. */
  assertUpdatable(): void {
    if (this.security && !this.security.allowsSigning) {
      throw new EsignError(
        'PDF_PERMISSION_DENIED',
        "The PDF's owner permits neither filling in forms nor changing annotations, which signing needs.",
        {
          hint: 'Give the owner password with --password or ESIGN_PDF_PASSWORD if you have it, or ask the owner for a copy that permits signing.',
        },
      );
    }
  }

  /** The file's length in bytes; an update is appended at this offset. */
  get size(): number {
    return this.source.size;
  }

  get trailer(): PdfDict {
    return this.xref.trailer;
  }

  /** The cross-reference style an update must use. */
  get xrefStyle(): XrefStyle {
    return this.xref.style;
  }

  /** The first object number an update may allocate. */
  get nextObjectNumber(): number {
    const size = this.trailer.get('Size');
    return Math.max(typeof size === 'number' ? size : 1, highestObjectNumber(this.xref.entries) + 1);
  }

  /** The generation to use when rewriting object `num`. */
  generationOf(num: number): number {
    const entry = this.xref.entries.get(num);
    return entry?.kind === 'offset' ? entry.gen : 0;
  }

  /** The object `ref` points to (`null` for free or missing objects, as the PDF spec says). */
  getObject(ref: PdfRef): Promise<PdfObject> {
    let pending = this.cache.get(ref.num);
    if (pending === undefined) {
      pending = this.load(ref.num, this.xref.entries.get(ref.num)).catch((error: unknown) => {
        throw broken(`object ${ref.num} could not be read`, error);
      });
      this.cache.set(ref.num, pending);
    }
    return pending;
  }

  /** Follows a reference; any other value is returned as it is. */
  async resolve(value: PdfObject | undefined): Promise<PdfObject | undefined> {
    return value instanceof PdfRef ? this.getObject(value) : value;
  }

  /** Resolves `value` and returns it when it is a dictionary. */
  async resolveDict(value: PdfObject | undefined): Promise<PdfDict | undefined> {
    const resolved = await this.resolve(value);
    if (resolved instanceof PdfStream) return resolved.dict;
    return resolved instanceof PdfDict ? resolved : undefined;
  }

  /** Resolves `value` and returns it when it is an array. */
  async resolveArray(value: PdfObject | undefined): Promise<PdfObject[] | undefined> {
    const resolved = await this.resolve(value);
    return Array.isArray(resolved) ? resolved : undefined;
  }

  /** The document catalog (`/Root`). */
  async catalog(): Promise<{ ref: PdfRef; dict: PdfDict }> {
    const ref = this.trailer.get('Root');
    const dict = ref instanceof PdfRef ? await this.resolveDict(ref) : undefined;
    if (!(ref instanceof PdfRef) || !dict) throw broken('the trailer has no usable /Root catalog');
    return { ref, dict };
  }

  /**
   * Finds page `pageNumber` (1-based; -1 is the last page) by descending the page tree with
   * `/Count`, reading only the nodes on the way down.
   */
  async page(pageNumber: number): Promise<PdfPage> {
    const { dict: catalog } = await this.catalog();
    let node = await this.resolveDict(catalog.get('Pages'));
    const total = node?.get('Count');
    if (!node || typeof total !== 'number') throw broken('the catalog has no usable /Pages tree');
    if (!Number.isInteger(pageNumber) || pageNumber === 0 || pageNumber < -1 || pageNumber > total) {
      throw new EsignError('USAGE', `Page ${pageNumber} does not exist: the document has ${total} page(s).`, {
        hint: `Choose a page from 1 to ${total}, or -1 for the last page.`,
      });
    }
    const wanted = pageNumber === -1 ? total : pageNumber;
    let index = wanted - 1;
    for (let depth = 0; depth < 64; depth++) {
      const kids = (await this.resolveArray(node.get('Kids'))) ?? [];
      // Fast path: when a node counts exactly as many pages as it has kids, the kids are pages.
      const direct = node.get('Count') === kids.length ? kids[index] : undefined;
      if (direct instanceof PdfRef) {
        const dict = await this.resolveDict(direct);
        if (dict && !isPagesNode(dict)) return { ref: direct, dict, number: wanted };
      }
      let descended = false;
      for (const kid of kids) {
        const dict = await this.resolveDict(kid);
        if (!dict || !(kid instanceof PdfRef)) continue;
        if (isPagesNode(dict)) {
          const count = dict.get('Count');
          if (typeof count !== 'number') continue;
          if (index < count) {
            node = dict;
            descended = true;
            break;
          }
          index -= count;
        } else if (index === 0) {
          return { ref: kid, dict, number: wanted };
        } else index--;
      }
      if (!descended) break;
    }
    throw broken(`page ${wanted} is not where the page tree's /Count says it is`);
  }

  private async load(num: number, entry: XrefEntry | undefined): Promise<PdfObject> {
    if (entry === undefined || entry.kind === 'free') return null;
    if (entry.kind === 'offset') {
      const object = await readObjectAt(this.source, entry.offset, (ref) => this.getObject(ref));
      if (object.num !== num) throw new Error(`found object ${object.num} where the xref says ${num} is`);
      // Objects inside an object stream are not encrypted one by one: the stream was.
      return this.security ? this.security.decryptObject(num, object.gen, object.value) : object.value;
    }
    const stream = await this.objectStream(entry.stream);
    const offset = stream.offsets[entry.index];
    if (offset === undefined) throw new Error(`object stream ${entry.stream} has no entry ${entry.index}`);
    const lexer = new Lexer(stream.data);
    lexer.pos = stream.first + offset;
    return lexer.parseObject();
  }

  private objectStream(num: number): Promise<ObjectStream> {
    let pending = this.objectStreams.get(num);
    if (pending === undefined) {
      pending = this.getObject(new PdfRef(num)).then((value) => {
        if (!(value instanceof PdfStream) || !isName(value.dict.get('Type'), 'ObjStm'))
          throw new Error(`object ${num} is not an object stream`);
        const n = value.dict.get('N');
        const first = value.dict.get('First');
        if (typeof n !== 'number' || typeof first !== 'number')
          throw new Error(`object stream ${num} lacks /N or /First`);
        const data = decodeStream(value);
        const lexer = new Lexer(data.subarray(0, first));
        const offsets: number[] = [];
        for (let i = 0; i < n; i++) {
          lexer.parseObject();
          const offset = lexer.parseObject();
          if (typeof offset !== 'number') throw new Error(`object stream ${num} has a bad header`);
          offsets.push(offset);
        }
        return { data, first, offsets };
      });
      this.objectStreams.set(num, pending);
    }
    return pending;
  }
}

/** An intermediate node of the page tree (some writers leave out its /Type). */
export function isPagesNode(dict: PdfDict): boolean {
  return isName(dict.get('Type'), 'Pages') || (!isName(dict.get('Type'), 'Page') && dict.has('Kids'));
}

function broken(what: string, cause?: unknown): EsignError {
  if (cause instanceof EsignError) return cause;
  return new EsignError('PDF_XREF_BROKEN', `The PDF's structure is damaged: ${what}.`, { hint: REPAIR_HINT, cause });
}

/** Where `%PDF-` starts: 0, or after leading bytes in the first KiB (a server's header, junk), as readers accept. */
export async function headerOffset(source: ByteSource): Promise<number> {
  const at = indexOf(await source.read(0, Math.min(1024, source.size)), '%PDF-');
  if (at < 0) throw notPdf();
  return at;
}

function notPdf(): EsignError {
  return new EsignError('PDF_NOT_PDF', 'The file is not a PDF: it has no "%PDF-" header.', {
    hint: 'Check the file name; to sign a file that is not a PDF, esign writes a detached .p7s signature instead.',
  });
}

/**
 * Reads a PDF whose `%PDF-` may stand after some leading bytes (a server's response header, junk).
 * Readers (poppler, qpdf, Acrobat) count its offsets from the header, so then the document is the
 * bytes from the header on (`from` makes that view): they are what is read, hashed and, when
 * signing, copied into the output, which then starts with `%PDF-`, where every reader agrees on
 * every offset. A file whose offsets count from its first byte anyway is read as it is.
 */
export async function readPdfFromHeader<S extends ByteSource>(
  source: S,
  from: (source: S, start: number) => S,
  options: PdfOpenOptions = {},
): Promise<{ source: S; pdf: PdfDocument }> {
  const at = await headerOffset(source);
  if (at === 0) return { source, pdf: await readPdf(source, options) };
  const document = from(source, at);
  try {
    return { source: document, pdf: await readPdf(document, options) };
  } catch (error) {
    if (error instanceof EsignError && /^PDF_(PASSWORD|PERMISSION|ENCRYPT)/.test(error.code)) throw error;
    try {
      return { source, pdf: await readPdf(source, options) };
    } catch {
      throw error;
    }
  }
}

/** The view of a ByteSource from byte `start` on. */
export function byteSourceFrom(source: ByteSource, start: number): ByteSource {
  return { size: source.size - start, read: (offset, length) => source.read(start + offset, length) };
}

export interface PdfOpenOptions {
  /** The user or owner password of an encrypted file; most open with the empty user password. */
  password?: string;
}

/**
 * Opens a PDF: checks the header, finds the last `startxref`, reads the cross-reference chain and
 * opens the security handler of an encrypted file. Reads the first KiB, the tail and the
 * cross-reference data only.
 */
export async function readPdf(source: ByteSource, options: PdfOpenOptions = {}): Promise<PdfDocument> {
  await headerOffset(source);
  const startxref = await findStartxref(source);
  let xref: XrefIndex;
  try {
    xref = await readXrefChain(source, startxref);
  } catch (error) {
    throw broken(
      `its cross-reference data does not parse (${error instanceof Error ? error.message : String(error)})`,
      error,
    );
  }
  const size = xref.trailer.get('Size');
  if (size !== undefined && !(typeof size === 'number' && Number.isSafeInteger(size) && size >= 0)) {
    throw broken(`its trailer /Size is not an object count`);
  }
  const last = await source.read(source.size - 1, 1);
  const doc = new PdfDocument(source, startxref, xref, last[0] === 0x0a || last[0] === 0x0d);
  if (xref.trailer.has('Encrypt')) await doc.openSecurity(options.password);
  await doc.catalog();
  return doc;
}

async function findStartxref(source: ByteSource): Promise<number> {
  for (const window of [2048, 65536]) {
    const start = Math.max(0, source.size - window);
    const tail = await source.read(start, source.size - start);
    const at = lastIndexOf(tail, 'startxref');
    if (at < 0) {
      if (start === 0) break;
      continue;
    }
    const lexer = new Lexer(tail, start);
    lexer.pos = at + 'startxref'.length;
    let offset: unknown;
    try {
      offset = lexer.nextToken();
    } catch {
      offset = undefined; // damage after the keyword (e.g. "startxref <zz"): reported below
    }
    if (typeof offset === 'number' && Number.isInteger(offset) && offset >= 0 && offset < source.size) return offset;
    throw broken('the "startxref" offset at its end is missing or out of range');
  }
  throw broken('it has no "startxref" at its end');
}
