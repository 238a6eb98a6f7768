/**
 * What a file to verify is, from its first bytes, never from its name: a PDF, a CMS SignedData
 * (enveloping when it carries its content, detached when not), a ZIP (an ASiC container, whose
 * stored `mimetype` is read when it comes first) or XML. The registry (`formForVerifying`) turns
 * the answer into a form.
 */

/** The `mimetype` of an ASiC-S and of an ASiC-E container (ETSI EN 319 162-1). */
export const ASIC_S_MIMETYPE = 'application/vnd.etsi.asic-s+zip';
export const ASIC_E_MIMETYPE = 'application/vnd.etsi.asic-e+zip';

/** How many bytes of a file `recognize` looks at. */
export const RECOGNIZE_BYTES = 4096;

export type Recognized =
  | { readonly kind: 'pdf' }
  /** A CMS SignedData; `enveloping` when its encapContentInfo holds eContent. */
  | { readonly kind: 'cms'; readonly enveloping: boolean }
  /** A ZIP; `mimetype` when its first entry is a stored `mimetype` (trimmed of white space). */
  | { readonly kind: 'zip'; readonly mimetype?: string }
  | { readonly kind: 'xml' }
  | { readonly kind: 'unknown' };

const SIGNED_DATA_OID = [0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x02];
const PDF_HEADER = [0x25, 0x50, 0x44, 0x46, 0x2d]; // %PDF-

/** Recognizes `head`, the first bytes of a file (up to `RECOGNIZE_BYTES`). */
export function recognize(head: Uint8Array): Recognized {
  if (head[0] === 0x50 && head[1] === 0x4b && head[2] === 0x03 && head[3] === 0x04) {
    const mimetype = storedMimetype(head);
    return mimetype === undefined ? { kind: 'zip' } : { kind: 'zip', mimetype };
  }
  if (head[0] === 0x30) {
    const enveloping = signedDataEnveloping(head);
    if (enveloping !== undefined) return { kind: 'cms', enveloping };
  }
  // A PDF's header may follow some bytes of junk (within the first 1024, as readers accept).
  if (indexOf(head.subarray(0, 1024 + PDF_HEADER.length), PDF_HEADER) >= 0) return { kind: 'pdf' };
  if (looksLikeXml(head)) return { kind: 'xml' };
  return { kind: 'unknown' };
}

function indexOf(bytes: Uint8Array, pattern: readonly number[]): number {
  outer: for (let i = 0; i + pattern.length <= bytes.length; i++) {
    for (let j = 0; j < pattern.length; j++) if (bytes[i + j] !== pattern[j]) continue outer;
    return i;
  }
  return -1;
}

/** A UTF-8 (or UTF-16) byte order mark and white space, then `<`. */
function looksLikeXml(head: Uint8Array): boolean {
  if ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff)) return true;
  let i = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
  while (i < head.length && (head[i] === 0x20 || head[i] === 0x09 || head[i] === 0x0a || head[i] === 0x0d)) i++;
  return head[i] === 0x3c;
}

/** The content of a first ZIP entry named `mimetype` and stored (not compressed), if it is one. */
function storedMimetype(head: Uint8Array): string | undefined {
  if (head.length < 30) return undefined;
  const u16 = (at: number) => head[at]! | (head[at + 1]! << 8);
  const u32 = (at: number) => (u16(at) | (u16(at + 2) << 16)) >>> 0;
  const method = u16(8);
  const size = u32(18);
  const nameLength = u16(26);
  const extraLength = u16(28);
  const name = new TextDecoder().decode(head.subarray(30, 30 + nameLength));
  if (name !== 'mimetype' || method !== 0 || size > 256) return undefined;
  const start = 30 + nameLength + extraLength;
  if (start + size > head.length) return undefined;
  return new TextDecoder().decode(head.subarray(start, start + size)).trim();
}

/**
 * The evidence files under META-INF/ that make a ZIP the content of a signed ASiC container, as DSS
 * decides it when the container has no `mimetype` (`ASiCUtils.isAsicFileContent`): a signature
 * (`signature*.p7s`, `signature*.xml`), a timestamp (`timestamp*.tst`) or an evidence record
 * (`evidencerecord*.ers`, `.xml`), in DSS's case (so not `ASiCEvidenceRecordManifest.xml`). None:
 * a plain ZIP, not a signed container.
 */
export function containerEvidence(names: readonly string[]): string[] {
  return names.filter((name) => {
    if (!name.startsWith('META-INF/')) return false;
    const base = name.slice('META-INF/'.length);
    if (base.includes('/')) return false;
    return (
      /signature[^/]*\.(p7s|xml)$/.test(base) ||
      /timestamp[^/]*\.tst$/.test(base) ||
      /evidencerecord[^/]*\.(ers|xml)$/.test(base)
    );
  });
}

/** The documents of a container: its entries outside META-INF/, `mimetype` and folders aside. */
export function containerDocuments(names: readonly string[]): string[] {
  return names.filter((name) => name !== 'mimetype' && !name.startsWith('META-INF/') && !name.endsWith('/'));
}

/**
 * The type of a container from its layout, when its `mimetype` does not say (DSS's order, the
 * name of the file aside): a manifest (`META-INF/ASiCManifest*.xml`, `META-INF/manifest.xml`) or
 * XAdES signatures (`META-INF/*signatures*.xml`) make an ASiC-E, so do more than one document;
 * else an ASiC-S. `by` says from what, for the warning.
 */
export function containerTypeByLayout(names: readonly string[]): { type: 'asic-e' | 'asic-s'; by: string } {
  const manifest = names.find((name) => /^META-INF\/(ASiCManifest[^/]*|manifest)\.xml$/i.test(name));
  if (manifest) return { type: 'asic-e', by: `its ${manifest}` };
  const xades = names.find((name) => /^META-INF\/[^/]*signatures[^/]*\.xml$/i.test(name));
  if (xades) return { type: 'asic-e', by: `its ${xades}` };
  const documents = containerDocuments(names);
  if (documents.length > 1) return { type: 'asic-e', by: `its ${documents.length} documents` };
  return { type: 'asic-s', by: documents.length === 1 ? 'its one document' : 'its having no document' };
}

/** A TLV header read from `bytes` at `at`: the tag, where its content starts and ends (`end` undefined: indefinite length). */
interface Header {
  readonly tag: number;
  readonly start: number;
  readonly end: number | undefined;
}

function header(bytes: Uint8Array, at: number): Header | undefined {
  if (at + 2 > bytes.length) return undefined;
  const tag = bytes[at]!;
  if ((tag & 0x1f) === 0x1f) return undefined; // high tag numbers: not in the SignedData prefix read here
  const first = bytes[at + 1]!;
  if (first < 0x80) return { tag, start: at + 2, end: at + 2 + first };
  if (first === 0x80) return (tag & 0x20) !== 0 ? { tag, start: at + 2, end: undefined } : undefined;
  const count = first & 0x7f;
  if (count > 4 || at + 2 + count > bytes.length) return undefined;
  let length = 0;
  for (let i = 0; i < count; i++) length = length * 256 + bytes[at + 2 + i]!;
  return { tag, start: at + 2 + count, end: at + 2 + count + length };
}

/** Where the element at `at` ends (past its end-of-contents octets when of indefinite length), if `bytes` holds it. */
function skip(bytes: Uint8Array, at: number, depth = 0): number | undefined {
  const h = header(bytes, at);
  if (!h || depth > 16) return undefined;
  if (h.end !== undefined) return h.end;
  let position = h.start;
  while (position + 2 <= bytes.length) {
    if (bytes[position] === 0 && bytes[position + 1] === 0) return position + 2;
    const next = skip(bytes, position, depth + 1);
    if (next === undefined) return undefined;
    position = next;
  }
  return undefined;
}

/**
 * Whether a ContentInfo of SignedData (DER or BER) starting `bytes` holds its content (eContent);
 * undefined when it is no SignedData. When the SignedData is cut before its encapContentInfo (a
 * damaged file, or a large digestAlgorithms), it is taken as enveloping: that reader then says what
 * is wrong.
 */
function signedDataEnveloping(bytes: Uint8Array): boolean | undefined {
  const contentInfo = header(bytes, 0);
  if (!contentInfo || contentInfo.tag !== 0x30) return undefined;
  const oid = contentInfo.start;
  for (let i = 0; i < SIGNED_DATA_OID.length; i++) if (bytes[oid + i] !== SIGNED_DATA_OID[i]) return undefined;
  const explicit = header(bytes, oid + SIGNED_DATA_OID.length);
  if (!explicit || explicit.tag !== 0xa0) return true;
  const signedData = header(bytes, explicit.start);
  if (!signedData || signedData.tag !== 0x30) return true;
  const version = signedData.start;
  const digestAlgorithms = skip(bytes, version);
  const encapsulated = digestAlgorithms === undefined ? undefined : skip(bytes, digestAlgorithms);
  if (encapsulated === undefined) return true;
  const encap = header(bytes, encapsulated);
  if (!encap || encap.tag !== 0x30) return true;
  const contentType = encap.start;
  const afterType = skip(bytes, contentType);
  if (afterType === undefined) return true;
  if (encap.end !== undefined && afterType >= encap.end) return false;
  if (bytes[afterType] === 0 && bytes[afterType + 1] === 0) return false;
  return bytes[afterType] === 0xa0 || afterType >= bytes.length;
}
