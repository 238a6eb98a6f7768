/**
 * Reads the XML signatures of a document as esign accepts them, and refuses the structures that
 * let a signature say one thing and cover another (signature wrapping):
 * - an Id given to two elements (any of Id, ID, id): every `#id` must find one element;
 * - a reference that leaves the document (a URL, an absolute or `..` path), or, outside a
 *   container or a detached signature, names a file at all;
 * - an XSLT transform, or an XPath one other than the enveloped-signature forms real files use;
 * - an enveloped-signature transform on a reference that does not hold the signature (moved);
 * - a second SignedProperties or QualifyingProperties, a QualifyingProperties that targets
 *   another signature, SignedProperties referenced without the XAdES Type (or a Type on a
 *   reference to anything else).
 * Each refusal is one line naming what was found (XADES_REFUSED, exit 7).
 */
import { UNSUPPORTED } from '../../../verify/algorithms.js';
import type { ReadSignedBytes } from '../../../verify/cms-check.js';
import { attribute, childElements, childrenNamed, descendants, isWithin, textOf } from '../../../xml/dom.js';
import { NS, SIGNED_PROPERTIES_TYPE, TRANSFORM } from '../../../xml/namespaces.js';
import { xadesRefused } from '../../../xml/refusal.js';
import type { XmlDocument, XmlElement } from '../../../xml/types/xml-libs.js';
import { canonicalization, xmlDigest, type Canonicalization } from './read-algorithms.js';
import { canonicalize, namespaceOfPrefix, Unsupported, type NodeSet } from './read-c14n.js';
import type { DigestAlgorithm } from '../../../verify/algorithms.js';

/** Finds a detached reference's data: a container entry or the file beside a detached signature. */
export type ResolveDetached = (name: string) => ReadSignedBytes | undefined;

export interface ReadReference {
  uri: string;
  type: string | undefined;
  digestUri: string;
  digest: DigestAlgorithm | undefined;
  expected: Uint8Array;
  /** The data the digest is over, streamed (computed canonical XML, or a detached file's bytes). */
  read: ReadSignedBytes | undefined;
  /** A same-document target. */
  target?: XmlElement | XmlDocument;
  /** A detached reference's name (URI-decoded). */
  name?: string;
  /** Why it cannot be checked (INDETERMINATE), or that its file is not there. */
  unsupported?: string;
  missing?: string;
}

export interface ReadSignature {
  element: XmlElement;
  id: string | undefined;
  signedInfo: XmlElement;
  signatureValue: XmlElement;
  c14n: Canonicalization | undefined;
  c14nUri: string;
  c14nPrefixes: string[];
  signatureMethod: string;
  references: ReadReference[];
  keyInfo: XmlElement | undefined;
  qualifyingProperties: XmlElement | undefined;
  signedProperties: XmlElement | undefined;
}

/** The Type of a counter-signature's reference to the ds:SignatureValue it countersigns (EN 319 132-1 §5.2.7). */
export const COUNTERSIGNED_SIGNATURE_TYPE = 'http://uri.etsi.org/01903#CountersignedSignature';

const ID_ATTRIBUTES = ['Id', 'ID', 'id'];
const SIGNED_PROPERTIES_TYPE_132 = `${NS.xades}SignedProperties`;

/** The elements of `doc` by Id, refusing an Id given twice. */
export function idIndex(doc: XmlDocument, file: string): Map<string, XmlElement> {
  const ids = new Map<string, XmlElement>();
  for (const element of descendants(doc.documentElement!)) {
    for (const name of ID_ATTRIBUTES) {
      const value = attribute(element, name);
      if (value === undefined) continue;
      const other = ids.get(value);
      if (other && other !== element)
        throw xadesRefused(
          file,
          `the Id ${JSON.stringify(value)} is given to two elements (possible signature wrapping)`,
        );
      ids.set(value, element);
    }
  }
  return ids;
}

/** The document's signatures: every ds:Signature not inside another one (counter-signatures are read by theirs). */
export function topSignatures(doc: XmlDocument): XmlElement[] {
  const all = Array.from(doc.getElementsByTagNameNS(NS.ds, 'Signature'));
  return all.filter((signature) => !all.some((other) => other !== signature && isWithin(signature, other)));
}

/** Reads one ds:Signature, refusing what the module comment lists. */
export function readSignature(
  signature: XmlElement,
  doc: XmlDocument,
  ids: Map<string, XmlElement>,
  file: string,
  resolve: ResolveDetached | undefined,
): ReadSignature {
  const refuse = (reason: string) => xadesRefused(file, reason);
  const one = (parent: XmlElement, ns: string, name: string, where: string): XmlElement => {
    const found = childrenNamed(parent, ns, name);
    if (found.length !== 1) throw refuse(`${found.length} ${name} elements in ${where}, one expected`);
    return found[0]!;
  };
  const signedInfo = one(signature, NS.ds, 'SignedInfo', 'the Signature');
  const signatureValue = one(signature, NS.ds, 'SignatureValue', 'the Signature');
  const c14nElement = one(signedInfo, NS.ds, 'CanonicalizationMethod', 'SignedInfo');
  const c14nUri = attribute(c14nElement, 'Algorithm') ?? '';
  const methodElement = one(signedInfo, NS.ds, 'SignatureMethod', 'SignedInfo');
  const keyInfo = childrenNamed(signature, NS.ds, 'KeyInfo')[0];
  const id = attribute(signature, 'Id') ?? undefined;

  // XAdES: one QualifyingProperties, for this signature, with at most one SignedProperties.
  const objects = childrenNamed(signature, NS.ds, 'Object');
  const qualifying = objects.flatMap((object) => [
    ...childrenNamed(object, NS.xades, 'QualifyingProperties'),
    ...childrenNamed(object, NS.xades122, 'QualifyingProperties'),
  ]);
  const allSignedProperties = [
    ...Array.from(signature.getElementsByTagNameNS(NS.xades, 'SignedProperties')),
    ...Array.from(signature.getElementsByTagNameNS(NS.xades122, 'SignedProperties')),
  ].filter((element) => !insideCounterSignature(element, signature));
  if (qualifying.length > 1) throw refuse(`${qualifying.length} QualifyingProperties in one Signature, one expected`);
  if (allSignedProperties.length > 1)
    throw refuse(
      `${allSignedProperties.length} SignedProperties in one Signature, one expected (possible signature wrapping)`,
    );
  const qualifyingProperties = qualifying[0];
  if (qualifyingProperties) {
    const target = attribute(qualifyingProperties, 'Target') ?? '';
    if (!id || target !== `#${id}`)
      throw refuse(
        `the QualifyingProperties target ${JSON.stringify(target)}, not this Signature${id ? ` (#${id})` : ' (which has no Id)'}`,
      );
  }
  const signedProperties = allSignedProperties[0];
  if (signedProperties && (!qualifyingProperties || signedProperties.parentNode !== qualifyingProperties))
    throw refuse('a SignedProperties outside the signature’s QualifyingProperties (possible signature wrapping)');

  const references = childrenNamed(signedInfo, NS.ds, 'Reference').map((reference) =>
    readReference(reference, signature, doc, ids, file, resolve),
  );
  if (references.length === 0) throw refuse('a Signature with no Reference');
  const toProperties = references.filter((reference) => reference.type === SIGNED_PROPERTIES_TYPE);
  for (const reference of references) {
    const isProperties = reference.target === signedProperties && signedProperties !== undefined;
    if (reference.type === SIGNED_PROPERTIES_TYPE && !isProperties)
      throw refuse(
        `a SignedProperties reference (${reference.uri}) to something other than this signature's SignedProperties`,
      );
    if (isProperties && reference.type !== SIGNED_PROPERTIES_TYPE)
      throw refuse(`the SignedProperties are referenced without the XAdES Type (${reference.uri})`);
  }
  if (signedProperties && toProperties.length !== 1)
    throw refuse(`${toProperties.length} references to the SignedProperties, one expected`);
  const prefixes = inclusivePrefixes(c14nElement);
  return {
    element: signature,
    id,
    signedInfo,
    signatureValue,
    c14n: canonicalization(c14nUri),
    c14nUri,
    c14nPrefixes: prefixes,
    signatureMethod: attribute(methodElement, 'Algorithm') ?? '',
    references,
    keyInfo,
    qualifyingProperties,
    signedProperties,
  };
}

function insideCounterSignature(element: XmlElement, signature: XmlElement): boolean {
  for (let node = element.parentNode; node && node !== signature; node = node.parentNode)
    if (node.namespaceURI === NS.ds && node.localName === 'Signature') return true;
  return false;
}

function inclusivePrefixes(method: XmlElement): string[] {
  const list = attribute(childrenNamed(method, TRANSFORM.excC14n, 'InclusiveNamespaces')[0], 'PrefixList') ?? '';
  return list
    .split(/\s+/)
    .filter(Boolean)
    .map((prefix) => (prefix === '#default' ? '' : prefix));
}

function readReference(
  reference: XmlElement,
  signature: XmlElement,
  doc: XmlDocument,
  ids: Map<string, XmlElement>,
  file: string,
  resolve: ResolveDetached | undefined,
): ReadReference {
  const refuse = (reason: string) => xadesRefused(file, reason);
  const uriAttribute = attribute(reference, 'URI');
  // The Type some XAdES 1.3.2 writers give (…/v1.3.2#SignedProperties) read as the standard one.
  const declaredType = attribute(reference, 'Type');
  const type = declaredType === SIGNED_PROPERTIES_TYPE_132 ? SIGNED_PROPERTIES_TYPE : declaredType;
  const digestMethod = childrenNamed(reference, NS.ds, 'DigestMethod')[0];
  const digestUri = attribute(digestMethod, 'Algorithm') ?? '';
  const expected = new Uint8Array(Buffer.from(textOf(childrenNamed(reference, NS.ds, 'DigestValue')[0]), 'base64'));
  const base = { type, digestUri, digest: xmlDigest(digestUri), expected };
  if (uriAttribute === undefined) throw refuse('a Reference without a URI (esign cannot tell what it covers)');
  const uri = uriAttribute;
  const transforms = childrenNamed(childrenNamed(reference, NS.ds, 'Transforms')[0], NS.ds, 'Transform');

  // A detached reference: a file beside the signature (a container entry, or the --signature's content).
  if (uri !== '' && !uri.startsWith('#')) {
    if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(uri) || uri.startsWith('/') || uri.startsWith('\\'))
      throw refuse(`an external reference to ${JSON.stringify(uri)}`);
    let name: string;
    try {
      name = decodeURIComponent(uri.replace(/^\.\//, ''));
    } catch {
      throw refuse(`a reference ${JSON.stringify(uri)} that is not a valid URI`);
    }
    if (name.split(/[/\\]/).some((part) => part === '..'))
      throw refuse(`a reference to ${JSON.stringify(uri)}, outside the signature's document or container`);
    if (!resolve)
      throw refuse(
        `a reference to the file ${JSON.stringify(uri)}, outside the signature's own document (give the signature with --signature beside it)`,
      );
    for (const transform of transforms) checkTransformAllowed(transform, refuse);
    const read = resolve(name);
    if (transforms.length > 0)
      return {
        ...base,
        uri,
        name,
        read: undefined,
        unsupported: `${UNSUPPORTED} transforms on a detached reference (${name})`,
      };
    return { ...base, uri, name, read, ...(read ? {} : { missing: name }) };
  }

  // Same document: the whole of it, or one element by its unique Id.
  let set: NodeSet;
  const xpointer = /^#xpointer\((.*)\)$/.exec(uri);
  // "#" (an empty fragment: this document, RFC 3986) as "", as DSS reads it.
  if (uri === '' || uri === '#') set = { node: doc, excluded: [], comments: false };
  else if (xpointer) {
    const inner = xpointer[1]!.trim();
    const byId = /^id\(\s*['"]([^'"]+)['"]\s*\)$/.exec(inner);
    if (inner === '/') set = { node: doc, excluded: [], comments: true };
    else if (byId) set = { node: elementById(byId[1]!, ids, uri, refuse), excluded: [], comments: true };
    else throw refuse(`an XPointer reference esign does not read: ${JSON.stringify(uri)}`);
  } else set = { node: elementById(uri.slice(1), ids, uri, refuse), excluded: [], comments: false };

  const excluded: XmlElement[] = [];
  let method: Canonicalization | undefined;
  let prefixes: string[] = [];
  let unsupported: string | undefined;
  let base64 = false;
  for (const transform of transforms) {
    const algorithm = attribute(transform, 'Algorithm') ?? '';
    checkTransformAllowed(transform, refuse);
    if (method || base64)
      unsupported ??= `${UNSUPPORTED} a transform after ${base64 ? 'base64' : 'canonicalization'} (${algorithm})`;
    if (algorithm === TRANSFORM.base64) base64 = true;
    else if (algorithm === TRANSFORM.enveloped) {
      if (!isWithin(signature, set.node))
        throw refuse(
          `an enveloped-signature transform on ${JSON.stringify(uri)}, which does not hold the signature (a moved signature)`,
        );
      excluded.push(signature);
    } else if (algorithm === TRANSFORM.xpath) {
      excluded.push(...Array.from(doc.getElementsByTagNameNS(NS.ds, 'Signature')));
    } else if (algorithm === TRANSFORM.xpathFilter2) {
      excluded.push(...filter2Excluded(transform, signature, doc));
    } else {
      const c14n = canonicalization(algorithm);
      if (c14n) {
        method = c14n;
        prefixes = inclusivePrefixes(transform);
      } else unsupported ??= `${UNSUPPORTED} the transform ${algorithm}`;
    }
  }
  const target = set.node;
  set = { ...set, excluded };
  const finalMethod = method ?? (canonicalization(TRANSFORM.c14n) as Canonicalization);
  let octets: string | undefined;
  if (base64 && !unsupported) {
    // The base64 transform: the text of the node set, decoded (DSS's enveloping signatures of binary content).
    const decoded = new Uint8Array(Buffer.from((target.textContent ?? '').replace(/\s+/g, ''), 'base64'));
    return { ...base, uri, target, read: async (consume) => consume(decoded) };
  }
  if (!unsupported)
    try {
      octets = canonicalize(set, finalMethod, prefixes);
    } catch (error) {
      if (!(error instanceof Unsupported)) throw error;
      unsupported = error.message;
    }
  const bytes = octets === undefined ? undefined : new TextEncoder().encode(octets);
  return {
    ...base,
    uri,
    target,
    read: bytes ? async (consume) => consume(bytes) : undefined,
    ...(unsupported ? { unsupported } : {}),
  };
}

function elementById(
  id: string,
  ids: Map<string, XmlElement>,
  uri: string,
  refuse: (reason: string) => Error,
): XmlElement {
  const element = ids.get(id);
  if (!element) throw refuse(`a reference to ${JSON.stringify(uri)}, which no element of the document has as its Id`);
  return element;
}

/** XSLT and any XPath but the enveloped-signature forms are refused; other transforms are read or INDETERMINATE. */
function checkTransformAllowed(transform: XmlElement, refuse: (reason: string) => Error): void {
  const algorithm = attribute(transform, 'Algorithm') ?? '';
  if (algorithm === TRANSFORM.xslt) throw refuse('an XSLT transform (esign does not run stylesheets from a signature)');
  if (algorithm === TRANSFORM.xpath) {
    const xpath = childrenNamed(transform, NS.ds, 'XPath')[0];
    const expression = textOf(xpath).replace(/\s+/g, '');
    const prefix = /^not\(ancestor-or-self::([A-Za-z_][\w.-]*):Signature\)$/.exec(expression)?.[1];
    if (!xpath || !prefix || namespaceOfPrefix(xpath, prefix) !== NS.ds)
      throw refuse(
        `an XPath transform other than not(ancestor-or-self::ds:Signature): ${JSON.stringify(textOf(xpath).slice(0, 80))}`,
      );
  }
  if (algorithm === TRANSFORM.xpathFilter2) {
    const filters = childrenNamed(transform, NS.xpathFilter2, 'XPath');
    if (filters.length === 0 || filters.some((filter) => !isSubtractSignature(filter)))
      throw refuse(
        `an XPath Filter 2.0 transform other than subtracting the signature: ${JSON.stringify(
          filters
            .map((f) => `${attribute(f, 'Filter')} ${textOf(f)}`)
            .join('; ')
            .slice(0, 80),
        )}`,
      );
  }
}

const SUBTRACT =
  /^(?:\/descendant::([A-Za-z_][\w.-]*):Signature|here\(\)\/ancestor::([A-Za-z_][\w.-]*):Signature\[1\])$/;

function isSubtractSignature(filter: XmlElement): boolean {
  const match = SUBTRACT.exec(textOf(filter).replace(/\s+/g, ''));
  const prefix = match?.[1] ?? match?.[2];
  return (
    attribute(filter, 'Filter') === 'subtract' && prefix !== undefined && namespaceOfPrefix(filter, prefix) === NS.ds
  );
}

function filter2Excluded(transform: XmlElement, signature: XmlElement, doc: XmlDocument): XmlElement[] {
  return childrenNamed(transform, NS.xpathFilter2, 'XPath').flatMap((filter) =>
    /^here\(\)/.test(textOf(filter).replace(/\s+/g, ''))
      ? [signature]
      : Array.from(doc.getElementsByTagNameNS(NS.ds, 'Signature')),
  );
}

/** The X509Certificate values of a KeyInfo, DER. */
export function keyInfoCertificates(keyInfo: XmlElement | undefined): Uint8Array[] {
  if (!keyInfo) return [];
  return childrenNamed(keyInfo, NS.ds, 'X509Data')
    .flatMap((data) => childrenNamed(data, NS.ds, 'X509Certificate'))
    .map((cert) => new Uint8Array(Buffer.from(textOf(cert).replace(/\s+/g, ''), 'base64')));
}

export { childElements };
