/**
 * The one way esign parses XML it did not write (trusted lists, XAdES signatures, ASiC manifests):
 * the rules the trusted-list reader has always kept, shared.
 * - a size limit, checked before anything is decoded;
 * - text in UTF-8 (or UTF-16 with its byte-order mark, or the 8-bit encoding its declaration names);
 * - no DTD, entity or other markup declaration at all (XXE, billion laughs), and no entity reference
 *   other than the five predefined ones and character references, checked before a parser sees it;
 * - well-formed, as @xmldom/xmldom reads it, warnings included.
 * Each refusal is one line naming what was found; the caller turns it into its own error (its
 * code, hint and name), so a trusted list and a signed invoice are refused in their own words.
 */
import { DOMParser } from '@xmldom/xmldom';
import type { XmlDocument } from './types/xml-libs.js';

/** 50 MB: larger XML goes into an ASiC-E, where it is hashed as bytes and streamed. */
export const MAX_XML_DOCUMENT_BYTES = 50 * 1024 * 1024;

/** What a refusal is about: the caller's error code follows from it. */
export type XmlRefusalKind = 'too-large' | 'unsafe' | 'malformed';

/** Makes the caller's error from a refusal (`reason` is one line, without the file's name). */
export type XmlRefusal = (kind: XmlRefusalKind, reason: string) => Error;

export interface SecureParseOptions {
  maxBytes: number;
  refuse: XmlRefusal;
}

/** Decodes, checks and parses `input` (bytes as given, or text already decoded) by the rules above. */
export function parseSecureXml(input: Uint8Array | string, options: SecureParseOptions): XmlDocument {
  const xml = typeof input === 'string' ? input : decodeXml(input, options);
  if (typeof input === 'string' && Buffer.byteLength(input, 'utf8') > options.maxBytes)
    throw options.refuse('too-large', `more than ${options.maxBytes} bytes of XML, above the limit`);
  refuseDeclarations(xml, options.refuse);
  return parseXml(xml, options.refuse);
}

/** The text of XML bytes: UTF-8 unless a byte-order mark or the XML declaration says otherwise. */
export function decodeXml(bytes: Uint8Array, options: SecureParseOptions): string {
  if (bytes.length > options.maxBytes)
    throw options.refuse('too-large', `${bytes.length} bytes, above the limit of ${options.maxBytes}`);
  let encoding = 'utf-8';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) encoding = 'utf-16le';
  else if (bytes[0] === 0xfe && bytes[1] === 0xff) encoding = 'utf-16be';
  else {
    const head = Buffer.from(bytes.subarray(0, 200)).toString('latin1');
    const declared = /^(?:\uFEFF|\xEF\xBB\xBF)?<\?xml[^>]*\bencoding\s*=\s*["']([A-Za-z0-9._-]+)["']/.exec(head)?.[1];
    if (declared) encoding = declared.toLowerCase();
  }
  let decoder: InstanceType<typeof TextDecoder>;
  try {
    decoder = new TextDecoder(encoding, { fatal: true });
  } catch {
    throw options.refuse('malformed', `an encoding esign does not read (${encoding})`);
  }
  try {
    return decoder.decode(bytes).replace(/^\uFEFF/, '');
  } catch {
    throw options.refuse('malformed', `not ${encoding === 'utf-8' ? 'UTF-8' : encoding} text`);
  }
}

/** Any `<!` other than a comment or CDATA is a DTD or a declaration: refused before a parser sees it. */
export function refuseDeclarations(xml: string, refuse: XmlRefusal): void {
  const declaration = /<!(?!--|\[CDATA\[)/.exec(xml);
  if (declaration) {
    const rest = xml.slice(declaration.index);
    const what = /^<!DOCTYPE/i.test(rest)
      ? 'a DOCTYPE'
      : /^<!ENTITY/i.test(rest)
        ? 'an entity declaration'
        : 'a markup declaration';
    throw refuse('unsafe', `${what} (DTDs and entities are refused)`);
  }
  const entity = /&(?!(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)([^;\s<&]{0,40};?)/.exec(xml);
  if (entity) throw refuse('unsafe', `an entity reference &${entity[1]} (DTDs and entities are refused)`);
}

function parseXml(xml: string, refuse: XmlRefusal): XmlDocument {
  const errors: string[] = [];
  const doc = new DOMParser({
    errorHandler: {
      // xmldom only warns of some malformed XML (an unclosed attribute): refused all the same.
      warning: (message: string) => errors.push(message),
      error: (message: string) => errors.push(message),
      fatalError: (message: string) => errors.push(message),
    },
  }).parseFromString(xml, 'text/xml') as unknown as XmlDocument;
  if (errors.length > 0 || !doc?.documentElement) {
    // xmldom's messages start "[xmldom warning]\t": the reader needs what is wrong, not whose word it is.
    const problem = firstLine(errors[0] ?? 'no root element').replace(/^\[xmldom \w+\]\s*/, '');
    throw refuse('malformed', `not well-formed XML: ${problem}`);
  }
  return doc;
}

export function firstLine(text: string): string {
  return text.split('\n')[0]!.slice(0, 300);
}
