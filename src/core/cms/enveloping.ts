/**
 * Reading an enveloping CMS (a `.p7m`: the content inside the SignedData) without holding the
 * content: its headers are read one by one from the file, which gives where the content lies; the
 * rest (certificates, SignerInfos) is small and read whole. The signature is then checked as a
 * detached one over that range of the file.
 *
 * Much signing software (Italy's above all) writes BER: indefinite lengths, and the content as a
 * constructed OCTET STRING of segments. Verification reads those too (`{ ber: true }`), the
 * segments walked through a small window of the file, so memory stays flat whatever the content's
 * size or the segments' number; `envelopedContent` gives the content back byte for byte. Signing
 * (a parallel signature copies the content by its one range) keeps to DER.
 */
import { EsignError } from '../errors.js';
import type { ByteSource } from '../ports.js';
import { Asn1StructureError, Tag, decodePrefix, explicit, objectIdentifier, sequence } from './der.js';
import { OID } from './oids.js';

export interface EnvelopedContent {
  /** DER: where the content's octets start in the file. BER (`segments`): where the constructed OCTET STRING starts. */
  offset: number;
  /** The content's octets (for BER, over all its segments). */
  length: number;
  /** The same SignedData without its eContent: a detached signature of those octets. */
  detached: Uint8Array;
  /** BER: the content is a constructed OCTET STRING ending here; read it with `envelopedContent`. */
  segmentsEnd?: number;
  /** Where the encapContentInfo lies in the file, as encoded (an archive-time-stamp-v2 covers it). */
  encapsulated: { start: number; end: number };
}

/** Certificates, CRLs and SignerInfos of a .p7m esign reads: far more than any chain and tokens need. */
const MAX_SIGNER_PART_BYTES = 16 * 1024 * 1024;
/** Constructed OCTET STRINGs inside one another: writers nest one level, if any. */
const MAX_SEGMENT_DEPTH = 8;
/** How much of the file the header walk holds at a time. */
const WINDOW_BYTES = 64 * 1024;

interface Header {
  tag: number;
  /** Offset of the content octets. */
  start: number;
  /** End of the element; undefined for an indefinite length (BER), found by walking its content. */
  end: number | undefined;
}

/** A view of the file around the bytes asked for, read again only when they lie outside it. */
class Window {
  private base = 0;
  private bytes: Uint8Array = new Uint8Array(0);
  constructor(private readonly source: ByteSource) {}

  async at(offset: number, length: number): Promise<Uint8Array> {
    if (offset < this.base || offset + length > this.base + this.bytes.length) {
      this.bytes = await this.source.read(offset, Math.max(length, WINDOW_BYTES));
      this.base = offset;
    }
    return this.bytes.subarray(offset - this.base, offset - this.base + length);
  }
}

export async function readEnveloping(source: ByteSource, options: { ber?: boolean } = {}): Promise<EnvelopedContent> {
  const window = new Window(source);
  const ber = options.ber === true;
  const header = (at: number, tags: readonly number[], what: string, limit?: number) =>
    readHeader(window, source.size, at, tags, what, ber, limit);
  /** The end of a small element read whole (found by decoding it when its length is indefinite). */
  const endOf = async (h: Header, at: number, max: number, what: string): Promise<number> => {
    if (h.end !== undefined) return h.end;
    const bytes = await source.read(at, Math.min(max, source.size - at));
    try {
      return at + decodePrefix(bytes, what).encoded.length;
    } catch (error) {
      if (error instanceof Asn1StructureError) throw bad(`its ${what} is unreadable or too long`);
      throw error;
    }
  };
  const isEndOfContents = async (at: number) => {
    const bytes = await window.at(at, 2);
    return bytes.length === 2 && bytes[0] === 0 && bytes[1] === 0;
  };
  /** After the last element inside `h`: its end-of-contents octets (indefinite) or its end (definite). */
  const close = async (h: Header, at: number, what: string): Promise<number> => {
    if (h.end === undefined) {
      if (!(await isEndOfContents(at))) throw bad(`its ${what} holds more than it should`);
      return at + 2;
    }
    if (h.end !== at) throw bad('its lengths do not agree');
    return at;
  };

  const contentInfo = await header(0, [Tag.sequence], 'ContentInfo');
  if (contentInfo.end !== undefined && contentInfo.end !== source.size)
    throw bad(`${source.size - contentInfo.end} bytes follow the ContentInfo`);
  const contentType = await header(contentInfo.start, [Tag.objectIdentifier], 'content type');
  const signedDataOid = objectIdentifier(OID.signedData);
  if (!sameBytes(await source.read(contentInfo.start, contentType.end! - contentInfo.start), signedDataOid))
    throw bad('it is not a SignedData');
  const wrapper = await header(contentType.end!, [0xa0], 'SignedData wrapper');
  const signedData = await header(wrapper.start, [Tag.sequence], 'SignedData');
  const version = await header(signedData.start, [Tag.integer], 'SignedData version');
  const digestAlgorithms = await header(version.end!, [Tag.set], 'digest algorithms');
  const digestAlgorithmsEnd = await endOf(digestAlgorithms, version.end!, 4096, 'digest algorithms');
  if (digestAlgorithmsEnd - version.end! > 4096) throw bad('its digest algorithms are not a short list');
  const encapStart = digestAlgorithmsEnd;
  const encap = await header(encapStart, [Tag.sequence], 'encapsulated content');
  const eContentType = await header(encap.start, [Tag.objectIdentifier], 'eContentType');
  if (eContentType.end === encap.end || (encap.end === undefined && (await isEndOfContents(eContentType.end!))))
    throw new EsignError('CMS_BAD_STRUCTURE', 'It is a detached signature: the content is not inside it.', {
      hint: 'Verify it against its content: esign verify CONTENT --signature FILE.p7m',
    });
  const eContent = await header(eContentType.end!, [0xa0], 'eContent');
  const octets = await header(eContent.start, [Tag.octetString, 0x24], 'content');
  let offset = octets.start;
  let length: number;
  let octetsEnd: number;
  let segmentsEnd: number | undefined;
  if (octets.tag === Tag.octetString) {
    octetsEnd = octets.end!;
    length = octetsEnd - octets.start;
  } else {
    if (!ber)
      throw bad('its content is a constructed OCTET STRING (BER)', 'Write it again with definite lengths (DER).');
    offset = eContent.start;
    const walked = { end: 0, length: 0 };
    for await (const segment of segmentsOf(window, source.size, eContent.start, walked)) void segment;
    octetsEnd = segmentsEnd = walked.end;
    length = walked.length;
  }
  const encapEnd = await close(encap, await close(eContent, octetsEnd, 'eContent'), 'encapsulated content');

  // The certificates, CRLs and SignerInfos, read whole, then the SignedData's, the wrapper's and the ContentInfo's ends.
  const restEnd = signedData.end ?? Math.min(source.size, encapEnd + MAX_SIGNER_PART_BYTES + 6);
  if (restEnd < encapEnd) throw bad('its lengths do not agree');
  if (
    signedData.end === undefined
      ? source.size - encapEnd > MAX_SIGNER_PART_BYTES + 6
      : restEnd - encapEnd > MAX_SIGNER_PART_BYTES
  )
    throw bad('its certificates and signatures are larger than 16 MiB');
  const restBytes = await source.read(encapEnd, restEnd - encapEnd);
  let rest = 0;
  try {
    while (
      rest < restBytes.length &&
      !(signedData.end === undefined && restBytes[rest] === 0 && restBytes[rest + 1] === 0)
    )
      rest += decodePrefix(restBytes.subarray(rest), 'SignedData').encoded.length;
  } catch (error) {
    if (error instanceof Asn1StructureError)
      throw bad(`its certificates or SignerInfos are unreadable (${error.message})`);
    throw error;
  }
  let at = await close(signedData, encapEnd + rest, 'SignedData');
  at = await close(wrapper, at, 'SignedData wrapper');
  at = await close(contentInfo, at, 'ContentInfo');
  if (at !== source.size) throw bad(`${source.size - at} bytes follow the ContentInfo`);
  const detached = sequence(
    signedDataOid,
    explicit(
      0,
      sequence(
        await source.read(signedData.start, digestAlgorithmsEnd - signedData.start),
        sequence(await source.read(encap.start, eContentType.end! - encap.start)),
        restBytes.subarray(0, rest),
      ),
    ),
  );
  return {
    offset,
    length,
    detached,
    ...(segmentsEnd === undefined ? {} : { segmentsEnd }),
    encapsulated: { start: encapStart, end: encapEnd },
  };
}

/**
 * The content of an enveloping CMS, in order and byte for byte: its one range (DER), or each
 * segment of its constructed OCTET STRING (BER), read in chunks of at most `chunkBytes`.
 */
export async function* envelopedContent(
  source: ByteSource,
  enveloped: EnvelopedContent,
  chunkBytes: number,
): AsyncGenerator<Uint8Array> {
  const ranges =
    enveloped.segmentsEnd === undefined
      ? [{ offset: enveloped.offset, length: enveloped.length }]
      : segmentsOf(new Window(source), source.size, enveloped.offset, { end: 0, length: 0 });
  for await (const { offset, length } of ranges)
    for (let at = 0; at < length; at += chunkBytes)
      yield await source.read(offset + at, Math.min(chunkBytes, length - at));
}

/**
 * The primitive segments of the constructed OCTET STRING at `start`, nested ones walked through, in
 * order; `walked` gets its end and the content's length. Only headers are read.
 */
async function* segmentsOf(
  window: Window,
  size: number,
  start: number,
  walked: { end: number; length: number },
): AsyncGenerator<{ offset: number; length: number }> {
  const top = await readHeader(window, size, start, [0x24], 'content', true);
  const open: Array<number | undefined> = [top.end];
  let at = top.start;
  while (open.length > 0) {
    const end = open[open.length - 1];
    if (end === undefined) {
      const marker = await window.at(at, 2);
      if (marker.length === 2 && marker[0] === 0 && marker[1] === 0) {
        at += 2;
        open.pop();
        continue;
      }
    } else if (at === end) {
      open.pop();
      continue;
    }
    const segment = await readHeader(window, size, at, [Tag.octetString, 0x24], 'content segment', true, end);
    if (segment.tag === Tag.octetString) {
      const length = segment.end! - segment.start;
      walked.length += length;
      if (length > 0) yield { offset: segment.start, length };
      at = segment.end!;
    } else {
      if (open.length >= MAX_SEGMENT_DEPTH) throw bad('its content segments are nested too deeply');
      open.push(segment.end);
      at = segment.start;
    }
  }
  walked.end = at;
}

async function readHeader(
  window: Window,
  size: number,
  at: number,
  tags: readonly number[],
  what: string,
  ber: boolean,
  /** The end of the element it lies in, when that is definite. */
  limit = size,
): Promise<Header> {
  const bytes = await window.at(at, 10);
  const tag = bytes[0];
  if (tag === undefined || at >= limit || !tags.includes(tag)) throw bad(`${what} is missing`);
  const first = bytes[1];
  if (first === undefined) throw bad(`it ends inside the ${what}`);
  if (first === 0x80) {
    if (!ber) throw bad(`the ${what} has an indefinite length (BER)`, 'Write it again with definite lengths (DER).');
    if ((tag & 0x20) === 0) throw bad(`the ${what} has an indefinite length but is not constructed`);
    return { tag, start: at + 2, end: undefined };
  }
  let length = first;
  let headerLength = 2;
  if (first > 0x80) {
    const count = first & 0x7f;
    if (count > 7) throw bad(`the ${what} is too long`);
    length = 0;
    for (let index = 0; index < count; index++) {
      const byte = bytes[2 + index];
      if (byte === undefined) throw bad(`it ends inside the ${what}`);
      length = length * 256 + byte;
    }
    headerLength += count;
  }
  const end = at + headerLength + length;
  if (end > size) throw bad(`it ends inside the ${what} (truncated)`);
  if (end > limit) throw bad('its lengths do not agree');
  return { tag, start: at + headerLength, end };
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, index) => byte === b[index]);
}

function bad(
  reason: string,
  hint = 'The .p7m is damaged or is not a CMS SignedData with its content inside.',
): EsignError {
  return new EsignError('CMS_BAD_STRUCTURE', `Not a readable enveloping CMS (.p7m): ${reason}.`, { hint });
}
