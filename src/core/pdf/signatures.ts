/**
 * Reading what verification needs from a PDF, without loading it whole: its revisions (each
 * `%%EOF` boundary reached through the `/Prev` chain), its signature fields and their signature
 * dictionaries, the DSS, the page content objects, and a streaming hash over a `/ByteRange`.
 */
import { createHash } from 'node:crypto';
import { decodePrefix } from '../cms/der.js';
import type { ByteSource } from '../ports.js';
import { indexOf } from './byte-source.js';
import { readPdf } from './document.js';
import type { PdfDocument, PdfOpenOptions } from './document.js';
import { decodeStream } from './filters.js';
import { readObjectAt } from './object-reader.js';
import { PdfName, PdfRef, PdfStream, PdfString, isName } from './objects.js';
import type { PdfObject, PdfDict } from './objects.js';

/** The first `size` bytes of `source`: the document as it was at the end of an earlier revision. */
export function sliceSource(source: ByteSource, size: number): ByteSource {
  const limit = Math.min(size, source.size);
  return { size: limit, read: (offset, length) => source.read(offset, Math.max(0, Math.min(length, limit - offset))) };
}

/** One revision: the original document (1) or an incremental update (2…). */
export interface PdfRevision {
  /** 1-based, oldest first. */
  number: number;
  /** Offset just after its `%%EOF` (and the end-of-line after it, if any). */
  end: number;
  /** Offset just after `%%EOF`, without a following end-of-line. */
  eofEnd: number;
  /** Object numbers this revision defines or frees (the original: all its objects). */
  objects: number[];
  /** The object number of its cross-reference stream, when it has one. */
  xrefStreamObject: number | undefined;
}

/**
 * The document's revisions, oldest first. A cross-reference section starts a revision when its
 * `/Prev` points back (a linearized file's first-page section points forward and is part of the
 * original).
 */
export async function listRevisions(doc: PdfDocument): Promise<PdfRevision[]> {
  const sections = doc.xref.sections;
  const isUpdate = (offset: number, prev: PdfObject | undefined): boolean => typeof prev === 'number' && prev < offset;
  const updates = sections.filter((section) => isUpdate(section.offset, section.trailer.get('Prev')));
  const original = sections.filter((section) => !updates.includes(section));
  const revisions: Array<Omit<PdfRevision, 'number'>> = [];
  if (original.length > 0) {
    const last = Math.max(...original.map((section) => section.offset));
    const objects = new Set<number>();
    for (const section of original) for (const num of section.entries.keys()) objects.add(num);
    revisions.push({ ...(await eofAfter(doc.source, last)), objects: [...objects], xrefStreamObject: undefined });
  }
  for (const section of updates) {
    const xrefStreamObject =
      section.style === 'stream' ? (await readObjectAt(doc.source, section.offset)).num : undefined;
    revisions.push({
      ...(await eofAfter(doc.source, section.offset)),
      objects: [...section.entries.keys()],
      xrefStreamObject,
    });
  }
  revisions.sort((a, b) => a.end - b.end);
  return revisions.map((revision, index) => ({ ...revision, number: index + 1 }));
}

const SCAN = 1 << 16;

/** The end of the revision whose cross-reference section starts at `offset`. */
async function eofAfter(source: ByteSource, offset: number): Promise<{ end: number; eofEnd: number }> {
  let from = offset;
  let sawStartxref = false;
  while (from < source.size) {
    const chunk = await source.read(from, SCAN + 16);
    if (!sawStartxref) {
      const at = indexOf(chunk, 'startxref');
      if (at < 0) {
        from += SCAN;
        continue;
      }
      sawStartxref = true;
      from += at;
      continue;
    }
    const at = indexOf(chunk, '%%EOF');
    if (at < 0) {
      from += SCAN;
      continue;
    }
    const eofEnd = from + at + 5;
    const tail = await source.read(eofEnd, 2);
    let end = eofEnd;
    if (tail[0] === 0x0d) end++;
    if (tail[end - eofEnd] === 0x0a) end++;
    return { end, eofEnd };
  }
  return { end: source.size, eofEnd: source.size };
}

/** A signature field with a value: a signature or a document timestamp. */
export interface PdfSignatureField {
  /** Fully qualified field name. */
  name: string;
  /** The signature dictionary's object number, when it is an indirect object. */
  objectNumber: number | undefined;
  type: string | undefined;
  subFilter: string | undefined;
  byteRange: number[] | undefined;
  /** The raw `/Contents` bytes (padding included). */
  contents: Uint8Array | undefined;
  /** `/M` as written. */
  signingTime: string | undefined;
  reason: string | undefined;
  location: string | undefined;
  signerName: string | undefined;
  /** The field's own object number (its widget, when merged), when indirect. */
  fieldObjectNumber: number | undefined;
  /** DocMDP permissions when this is a certification signature (a `/Reference` with TransformMethod DocMDP). */
  docMdp: 1 | 2 | 3 | undefined;
}

/** The P of a signature's DocMDP transform (ISO 32000-1 Table 254: 2 when absent; anything else read as 1, the strictest). */
export async function docMdpOf(doc: PdfDocument, sig: PdfDict): Promise<1 | 2 | 3 | undefined> {
  for (const reference of (await doc.resolveArray(sig.get('Reference'))) ?? []) {
    const ref = await doc.resolveDict(reference);
    if (!ref || !isName(ref.get('TransformMethod'), 'DocMDP')) continue;
    const p = await doc.resolve((await doc.resolveDict(ref.get('TransformParams')))?.get('P'));
    return p === undefined ? 2 : p === 2 || p === 3 ? p : 1;
  }
  return undefined;
}

/** Every signed signature field of the AcroForm, in the order of `/Fields` (depth first). */
export async function listSignatureFields(doc: PdfDocument): Promise<PdfSignatureField[]> {
  const { dict: catalog } = await doc.catalog();
  const acroForm = await doc.resolveDict(catalog.get('AcroForm'));
  const found: PdfSignatureField[] = [];
  const seen = new Set<number>();
  const visit = async (
    value: PdfObject,
    parentName: string,
    inheritedType: PdfObject | undefined,
    depth: number,
  ): Promise<void> => {
    if (depth > 32) return;
    if (value instanceof PdfRef) {
      if (seen.has(value.num)) return;
      seen.add(value.num);
    }
    const field = await doc.resolveDict(value);
    if (!field) return;
    const partial = field.get('T');
    const name =
      partial instanceof PdfString ? (parentName ? `${parentName}.${partial.toText()}` : partial.toText()) : parentName;
    const type = field.get('FT') ?? inheritedType;
    const kids = await doc.resolveArray(field.get('Kids'));
    if (kids) for (const kid of kids) await visit(kid, name, type, depth + 1);
    if (!isName(type, 'Sig')) return;
    const v = field.get('V');
    const sig = await doc.resolveDict(v);
    if (!sig) return;
    const byteRange = await doc.resolveArray(sig.get('ByteRange'));
    const contents = await doc.resolve(sig.get('Contents'));
    found.push({
      name,
      objectNumber: v instanceof PdfRef ? v.num : undefined,
      type: nameOf(sig.get('Type')),
      subFilter: nameOf(sig.get('SubFilter')),
      byteRange: byteRange?.every((n) => typeof n === 'number') ? (byteRange as number[]) : undefined,
      contents: contents instanceof PdfString ? contents.bytes : undefined,
      signingTime: textOf(sig.get('M')),
      reason: textOf(sig.get('Reason')),
      location: textOf(sig.get('Location')),
      signerName: textOf(sig.get('Name')),
      fieldObjectNumber: value instanceof PdfRef ? value.num : undefined,
      docMdp: await docMdpOf(doc, sig),
    });
  };
  for (const field of (await doc.resolveArray(acroForm?.get('Fields'))) ?? []) await visit(field, '', undefined, 0);
  return found;
}

function nameOf(value: PdfObject | undefined): string | undefined {
  return value instanceof PdfName ? value.value : undefined;
}

function textOf(value: PdfObject | undefined): string | undefined {
  return value instanceof PdfString ? value.toText() : undefined;
}

/** Parses a PDF date `D:YYYYMMDDHHmmSSOHH'mm'`; undefined when it is not one. */
export function parsePdfDate(text: string): Date | undefined {
  const match = /^(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(?:([Zz+-])(\d{2})?'?(\d{2})?'?)?/.exec(
    text.trim(),
  );
  if (!match) return undefined;
  const [, y, mo = '01', d = '01', h = '00', mi = '00', s = '00', sign, oh = '00', om = '00'] = match;
  const utc = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  const offset = sign === '+' || sign === '-' ? (sign === '+' ? 1 : -1) * (Number(oh) * 60 + Number(om)) * 60_000 : 0;
  const date = new Date(utc - offset);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** The DSS of a document: decoded items, and the object numbers that make it up. */
export interface PdfDss {
  certs: Uint8Array[];
  ocsps: Uint8Array[];
  crls: Uint8Array[];
  /** The DSS dictionary's own object number (undefined when direct in the catalog). */
  objectNumber: number | undefined;
  /** Every object the DSS refers to (streams, VRI dictionaries). */
  objects: Set<number>;
}

/** The catalog's `/DSS` (certificates, OCSP responses, CRLs, including those only in `/VRI`), or undefined. */
export async function readDss(doc: PdfDocument): Promise<PdfDss | undefined> {
  const { dict: catalog } = await doc.catalog();
  const value = catalog.get('DSS');
  const dss = await doc.resolveDict(value);
  if (!dss) return undefined;
  const result: PdfDss = {
    certs: [],
    ocsps: [],
    crls: [],
    objectNumber: value instanceof PdfRef ? value.num : undefined,
    objects: new Set(),
  };
  const seen = new Set<number>();
  const collect = async (holder: PdfDict, key: string, into: Uint8Array[]): Promise<void> => {
    const holderValue = holder.get(key);
    if (holderValue instanceof PdfRef) result.objects.add(holderValue.num);
    for (const item of (await doc.resolveArray(holderValue)) ?? []) {
      if (!(item instanceof PdfRef) || seen.has(item.num)) continue;
      seen.add(item.num);
      result.objects.add(item.num);
      const stream = await doc.getObject(item);
      if (stream instanceof PdfStream) into.push(decodeStream(stream));
    }
  };
  const fill = async (holder: PdfDict, keys: [string, string, string]): Promise<void> => {
    await collect(holder, keys[0], result.certs);
    await collect(holder, keys[1], result.ocsps);
    await collect(holder, keys[2], result.crls);
  };
  await fill(dss, ['Certs', 'OCSPs', 'CRLs']);
  const vriValue = dss.get('VRI');
  if (vriValue instanceof PdfRef) result.objects.add(vriValue.num);
  const vri = await doc.resolveDict(vriValue);
  for (const [, entry] of vri?.entries ?? []) {
    if (entry instanceof PdfRef) result.objects.add(entry.num);
    const dict = await doc.resolveDict(entry);
    if (dict) await fill(dict, ['Cert', 'OCSP', 'CRL']);
  }
  return result;
}

/** Opens the document as it was at the end of `revisionEnd` bytes. */
export function readRevision(
  source: ByteSource,
  revisionEnd: number,
  options: PdfOpenOptions = {},
): Promise<PdfDocument> {
  return readPdf(sliceSource(source, revisionEnd), options);
}

/** Streams the ranges of a `/ByteRange` through a hash, reading `chunkSize` bytes at a time. */
export async function hashByteRange(
  source: ByteSource,
  byteRange: readonly number[],
  algorithm = 'sha256',
  chunkSize = 4 * 1024 * 1024,
): Promise<Uint8Array> {
  const hash = createHash(algorithm);
  await readByteRange(source, byteRange, (chunk) => hash.update(chunk), chunkSize);
  return new Uint8Array(hash.digest());
}

/** Streams the bytes a ByteRange covers to `consume`, in order, in `chunkSize` reads. */
export async function readByteRange(
  source: ByteSource,
  byteRange: readonly number[],
  consume: (chunk: Uint8Array) => void,
  chunkSize = 4 * 1024 * 1024,
): Promise<void> {
  for (let i = 0; i + 1 < byteRange.length; i += 2) {
    const start = byteRange[i] as number;
    const end = start + (byteRange[i + 1] as number);
    for (let at = start; at < end; at += chunkSize) {
      const chunk = await source.read(at, Math.min(chunkSize, end - at));
      if (chunk.length === 0) break;
      consume(chunk);
    }
  }
}

/** The DER prefix of `bytes` (a `/Contents` value is zero-padded after its CMS). */
export function trimDer(bytes: Uint8Array): Uint8Array {
  const first = bytes[1];
  if (bytes[0] === undefined || first === undefined) return bytes;
  let length: number;
  let header = 2;
  if (first < 0x80) length = first;
  else {
    const count = first & 0x7f;
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + (bytes[2 + i] ?? 0);
    header += count;
  }
  return bytes.subarray(0, Math.min(bytes.length, header + length));
}

/** The CMS at the start of a `/Contents` value, without its zero padding (BER, as NSS writes it: up to its end-of-contents octets). */
export function cmsPrefix(contents: Uint8Array): Uint8Array {
  try {
    return decodePrefix(contents, 'signature').encoded;
  } catch {
    return trimDer(contents); // the CMS parser says what is wrong with it
  }
}
