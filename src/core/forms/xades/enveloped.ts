/**
 * Enveloped XAdES (`--format xades`): the `ds:Signature` becomes the last child of the document's
 * root element, and every other byte of the file stays as it was (its encoding, its declaration,
 * its line ends). The signature is ASCII, so it goes in as bytes, whatever ASCII-compatible
 * encoding (UTF-8, ISO-8859-1, windows-1252…) the document declares.
 */
import { EsignError } from '../../errors.js';
import { MAX_XML_DOCUMENT_BYTES } from '../../xml/secure-parse.js';

/** Larger XML goes in an `.asice`, where it is hashed as bytes and streamed. */
export const MAX_ENVELOPED_BYTES = MAX_XML_DOCUMENT_BYTES;

const notXml = (path: string, why: string) =>
  new EsignError('USAGE', `${path} is not an XML document (${why}), so it cannot get an enveloped XAdES signature.`, {
    hint: 'Sign other files with --format asice (XAdES in a container) or --format asics.',
  });

/** The encoding a document declares (UTF-8 when it declares none), as TextDecoder names it. */
export function declaredEncoding(bytes: Uint8Array, path: string): string {
  if (
    bytes[0] === 0xfe ||
    bytes[0] === 0xff ||
    (bytes[0] === 0 && bytes[1] === 0x3c) ||
    (bytes[0] === 0x3c && bytes[1] === 0)
  )
    throw notXml(path, 'UTF-16 or UTF-32, which esign does not sign enveloped');
  const head = Buffer.from(bytes.subarray(0, 200)).toString('latin1');
  const declaration = /^(?:\xef\xbb\xbf)?<\?xml\s[^?]*?encoding\s*=\s*["']([A-Za-z0-9._-]+)["']/.exec(head);
  const name = (declaration?.[1] ?? 'utf-8').toLowerCase();
  if (/^(utf-?16|utf-?32|ucs-?2|ucs-?4)/.test(name)) throw notXml(path, `declared ${name}, not ASCII-compatible`);
  try {
    new TextDecoder(name);
  } catch {
    throw notXml(path, `an encoding esign does not know: ${name}`);
  }
  return name;
}

/** A document of `size` bytes past the limit, refused before anything of it is read. */
export function tooLargeToEnvelope(size: number, path: string): EsignError {
  return new EsignError(
    'XML_TOO_LARGE',
    `${path} is ${size} bytes, above the ${MAX_ENVELOPED_BYTES}-byte limit of an enveloped XML signature.`,
    { hint: 'Sign it in a container instead: --format asice.' },
  );
}

/** The document's text, decoded as it declares (a UTF-8 document that is not valid UTF-8 is refused). */
export function decodeDocument(bytes: Uint8Array, path: string): string {
  if (bytes.length > MAX_ENVELOPED_BYTES) throw tooLargeToEnvelope(bytes.length, path);
  const encoding = declaredEncoding(bytes, path);
  let text: string;
  try {
    text = new TextDecoder(encoding, { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw notXml(path, `not valid ${encoding}`);
  }
  if (!/^\s*</.test(text)) throw notXml(path, 'it does not start with markup');
  return text;
}

/**
 * Where the signature goes: the byte offset of the root element's end tag (`</root>`), found from
 * the end of the file past the whitespace, comments and processing instructions after it. A root
 * written as one empty tag (`<root/>`) is refused: giving it a child would change its bytes.
 */
export function signatureOffset(bytes: Uint8Array, rootName: string, path: string): number {
  // A view of the bytes, not a copy (Buffer.from(Uint8Array) copies, slowly: 0.4 s for 20 MB).
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  let end = text.length;
  for (;;) {
    const trimmed = text.slice(0, end).trimEnd();
    end = trimmed.length;
    if (trimmed.endsWith('-->')) {
      const start = trimmed.lastIndexOf('<!--');
      if (start < 0) break;
      end = start;
    } else if (trimmed.endsWith('?>')) {
      const start = trimmed.lastIndexOf('<?');
      if (start < 0) break;
      end = start;
    } else break;
  }
  const closing = new RegExp(`</${rootName.replace(/[.]/g, '\\.')}\\s*>$`).exec(text.slice(0, end));
  if (!closing)
    throw new EsignError('INPUT_UNREADABLE', `${path}: its root element <${rootName}> has no end tag esign can find.`, {
      hint: 'Write the root as <root>…</root> (an empty <root/> cannot take a signature without changing it).',
    });
  return closing.index;
}

/** The root element's name, read cheaply: the first start tag after the prolog's declaration, comments and instructions. */
export function rootNameOf(text: string): string {
  const match = /<(?![?!])([^\s/>]+)/.exec(text.replace(/<!--[\s\S]*?-->/g, (comment) => ' '.repeat(comment.length)));
  return match?.[1] ?? '';
}
