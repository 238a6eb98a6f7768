/**
 * ASiCManifest (ETSI EN 319 162-1 §A.4), the file an ASiC-E CAdES signature signs: for each data
 * object its name, MIME type and digest. Written by hand (a fixed shape), and read back by a small
 * strict reader of that shape: no DTD, no entities beyond XML's five and character references, so
 * nothing in a manifest can make the reader fetch, expand or loop.
 */
import type { DigestName } from '../../cms/algorithms.js';
import { invalid } from '../shared/asic-container-rules.js';
import { mimeTypeOf, uriOf } from '../shared/entry-names.js';

export { mimeTypeOf, uriOf };

const ASIC_NS = 'http://uri.etsi.org/02918/v1.2.1#';
const DSIG_NS = 'http://www.w3.org/2000/09/xmldsig#';

export const DIGEST_URI: Record<DigestName, string> = {
  sha256: 'http://www.w3.org/2001/04/xmlenc#sha256',
  sha384: 'http://www.w3.org/2001/04/xmldsig-more#sha384',
  sha512: 'http://www.w3.org/2001/04/xmlenc#sha512',
};

export interface ManifestReference {
  /** The entry's name in the container (the URI decoded). */
  name: string;
  mimeType: string;
  digest: DigestName;
  digestValue: Uint8Array;
}

export interface Manifest {
  /** The signature (or timestamp) this manifest is signed by. */
  signature: string;
  /** Its MIME type: a CAdES signature's unless said (an archive manifest's is a timestamp token's). */
  signatureMimeType?: string;
  references: ManifestReference[];
}

function escapeAttribute(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;').replace(/>/g, '&gt;');
}

export function buildManifest(manifest: Manifest): Uint8Array {
  const lines = [
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>',
    `<ASiCManifest xmlns="${ASIC_NS}" xmlns:ds="${DSIG_NS}">`,
    `  <SigReference URI="${escapeAttribute(uriOf(manifest.signature))}" MimeType="${escapeAttribute(manifest.signatureMimeType ?? 'application/pkcs7-signature')}"/>`,
    ...manifest.references.flatMap((reference) => [
      `  <DataObjectReference URI="${escapeAttribute(uriOf(reference.name))}" MimeType="${escapeAttribute(reference.mimeType)}">`,
      `    <ds:DigestMethod Algorithm="${DIGEST_URI[reference.digest]}"/>`,
      `    <ds:DigestValue>${Buffer.from(reference.digestValue).toString('base64')}</ds:DigestValue>`,
      '  </DataObjectReference>',
    ]),
    '</ASiCManifest>',
    '',
  ];
  return new TextEncoder().encode(lines.join('\n'));
}

interface XmlElement {
  name: string;
  attributes: Map<string, string>;
  children: XmlElement[];
  text: string;
}

/** Reads an ASiCManifest; anything else (or anything unsafe) is CONTAINER_INVALID. */
export function parseManifest(bytes: Uint8Array, what: string): Manifest {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw invalid(`${what} is not UTF-8`);
  }
  const root = parseXml(text, what);
  if (localName(root.name) !== 'ASiCManifest') throw invalid(`${what} is not an ASiCManifest`);
  const sigReferences = root.children.filter((child) => localName(child.name) === 'SigReference');
  if (sigReferences.length !== 1) throw invalid(`${what} must name one signature (SigReference)`);
  const signature = decodeUri(required(sigReferences[0]!, 'URI', what), what);
  const references = root.children
    .filter((child) => localName(child.name) === 'DataObjectReference')
    .map((reference): ManifestReference => {
      const method = reference.children.find((child) => localName(child.name) === 'DigestMethod');
      const value = reference.children.find((child) => localName(child.name) === 'DigestValue');
      if (!method || !value) throw invalid(`${what} has a DataObjectReference without its digest`);
      const algorithm = required(method, 'Algorithm', what);
      const digest = (Object.keys(DIGEST_URI) as DigestName[]).find((name) => DIGEST_URI[name] === algorithm);
      if (!digest) throw invalid(`${what} uses the digest ${algorithm}, which esign does not check`);
      const base64 = value.text.trim();
      if (!/^[A-Za-z0-9+/]+=*$/.test(base64)) throw invalid(`${what} has a DigestValue that is not base64`);
      return {
        name: decodeUri(required(reference, 'URI', what), what),
        mimeType: reference.attributes.get('MimeType') ?? '',
        digest,
        digestValue: new Uint8Array(Buffer.from(base64, 'base64')),
      };
    });
  if (references.length === 0) throw invalid(`${what} names no files`);
  return { signature, references };
}

function required(element: XmlElement, attribute: string, what: string): string {
  const value = element.attributes.get(attribute);
  if (value === undefined) throw invalid(`${what}: ${localName(element.name)} has no ${attribute}`);
  return value;
}

function decodeUri(uri: string, what: string): string {
  try {
    return decodeURIComponent(uri.replace(/^\.\//, ''));
  } catch {
    throw invalid(`${what} has a URI that is not percent-encoded right: ${JSON.stringify(uri)}`);
  }
}

function localName(name: string): string {
  return name.slice(name.indexOf(':') + 1);
}

const MAX_MANIFEST_DEPTH = 8;

/** A strict reader of plain XML elements, attributes and text: no DTD, PI beyond the declaration, CDATA or entities. */
function parseXml(text: string, what: string): XmlElement {
  let at = 0;
  const fail = (reason: string): never => {
    throw invalid(`${what} is not XML esign reads (${reason})`);
  };
  const skipSpace = () => {
    while (at < text.length && /\s/.test(text[at]!)) at++;
  };
  const unescape = (raw: string): string =>
    raw.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-z]+);|&/g, (whole, entity: string | undefined) => {
      if (entity === undefined) return fail('a bare "&"');
      if (entity.startsWith('#x')) return String.fromCodePoint(Number.parseInt(entity.slice(2), 16));
      if (entity.startsWith('#')) return String.fromCodePoint(Number.parseInt(entity.slice(1), 10));
      const known: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
      return known[entity] ?? fail(`the entity &${entity};`);
    });
  if (text.startsWith('\uFEFF')) at = 1;
  skipSpace();
  if (text.startsWith('<?xml', at)) {
    const end = text.indexOf('?>', at);
    if (end < 0) fail('an unclosed declaration');
    at = end + 2;
    skipSpace();
  }
  const element = (depth: number): XmlElement => {
    if (depth > MAX_MANIFEST_DEPTH) fail('nesting too deep');
    const open = /^<([A-Za-z_][\w.-]*(?::[A-Za-z_][\w.-]*)?)/.exec(text.slice(at, at + 200));
    if (!open) fail(text.startsWith('<!', at) ? 'a DTD, comment or CDATA' : 'an element expected');
    const name = open![1]!;
    at += open![0].length;
    const attributes = new Map<string, string>();
    for (;;) {
      skipSpace();
      if (text.startsWith('/>', at)) {
        at += 2;
        return { name, attributes, children: [], text: '' };
      }
      if (text[at] === '>') {
        at++;
        break;
      }
      const attribute = /^([A-Za-z_][\w.:-]*)\s*=\s*("([^"<]*)"|'([^'<]*)')/.exec(text.slice(at, at + 4096));
      if (!attribute) fail(`a malformed attribute in <${name}>`);
      if (attributes.has(attribute![1]!)) fail(`a repeated attribute in <${name}>`);
      attributes.set(attribute![1]!, unescape(attribute![3] ?? attribute![4] ?? ''));
      at += attribute![0].length;
    }
    const children: XmlElement[] = [];
    let content = '';
    for (;;) {
      const next = text.indexOf('<', at);
      if (next < 0) fail(`<${name}> is not closed`);
      content += text.slice(at, next);
      at = next;
      if (text.startsWith(`</${name}`, at)) {
        at += name.length + 2;
        skipSpace();
        if (text[at] !== '>') fail(`a malformed </${name}>`);
        at++;
        return { name, attributes, children, text: unescape(content) };
      }
      children.push(element(depth + 1));
    }
  };
  const root = element(0);
  skipSpace();
  if (at !== text.length) fail('content after the root element');
  return root;
}
