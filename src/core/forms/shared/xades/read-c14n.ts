/**
 * Canonical XML of a node set as XML-DSig makes one: a document or an element, with some elements
 * left out (the enveloped signature), through xml-crypto's canonicalizers (no hand-written
 * canonicalization). Canonical XML 1.1 is read as 1.0 where the two agree: they differ only in the
 * xml:* attributes a subset inherits, so a subset under an element with one is not canonicalized.
 */
import {
  C14nCanonicalization,
  C14nCanonicalizationWithComments,
  ExclusiveCanonicalization,
  ExclusiveCanonicalizationWithComments,
  type NamespacePrefix,
} from 'xml-crypto';
import { UNSUPPORTED } from '../../../verify/algorithms.js';
import { isElement, isWithin } from '../../../xml/dom.js';
import { NS } from '../../../xml/namespaces.js';
import type { XmlDocument, XmlElement, XmlNode } from '../../../xml/types/xml-libs.js';
import type { Canonicalization } from './read-algorithms.js';

/** An algorithm or a case esign cannot canonicalize: INDETERMINATE, naming it. */
export class Unsupported extends Error {}

export interface NodeSet {
  /** The apex: a document (URI "" and xpointer(/)) or an element. */
  node: XmlDocument | XmlElement;
  /** Elements left out with everything under them (enveloped signatures). */
  excluded: readonly XmlElement[];
  /** Whether comments are in the set (only the xpointer forms keep them). */
  comments: boolean;
}

/** The canonical form of `set` under `method` (exclusive c14n's InclusiveNamespaces PrefixList in `prefixes`). */
export function canonicalize(set: NodeSet, method: Canonicalization, prefixes: string[] = []): string {
  const withComments = method.comments && set.comments;
  const apex = isElement(set.node) ? set.node : undefined;
  if (apex && !method.exclusive && inheritsXmlAttributes(apex))
    throw new Unsupported(
      `${UNSUPPORTED} inclusive canonicalization of an element under an xml:* attribute (Canonical XML 1.0 and 1.1 differ there)`,
    );
  const removed: Array<{ node: XmlElement; parent: XmlNode; next: XmlNode | null }> = [];
  for (const node of set.excluded) {
    if (!node.parentNode || !isWithin(node, set.node) || node === set.node) continue;
    removed.push({ node, parent: node.parentNode, next: node.nextSibling });
    node.parentNode.removeChild(node);
  }
  try {
    const canonicalizer = method.exclusive
      ? withComments
        ? new ExclusiveCanonicalizationWithComments()
        : new ExclusiveCanonicalization()
      : withComments
        ? new C14nCanonicalizationWithComments()
        : new C14nCanonicalization();
    const element = (node: XmlElement) =>
      canonicalizer.process(node, {
        ancestorNamespaces: ancestorNamespaces(node),
        ...(method.exclusive && prefixes.length > 0 ? { inclusiveNamespacesPrefixList: prefixes } : {}),
      });
    return apex ? element(apex) : documentForm(set.node, element, withComments);
  } finally {
    for (const { node, parent, next } of removed.reverse()) parent.insertBefore(node, next);
  }
}

/** A whole document: its root element, with the processing instructions (and comments) around it. */
function documentForm(doc: XmlNode, element: (node: XmlElement) => string, comments: boolean): string {
  const parts: string[] = [];
  let beforeRoot = true;
  for (let node = doc.firstChild; node; node = node.nextSibling) {
    let text: string | undefined;
    if (isElement(node)) {
      parts.push(element(node));
      beforeRoot = false;
      continue;
    }
    // xmldom keeps the XML declaration as a processing instruction named xml: it is not one.
    if (node.nodeType === 7 && node.nodeName.toLowerCase() !== 'xml')
      text = `<?${node.nodeName}${node.textContent ? ` ${node.textContent}` : ''}?>`;
    else if (node.nodeType === 8 && comments) text = `<!--${node.textContent ?? ''}-->`;
    if (text !== undefined) parts.push(beforeRoot ? `${text}\n` : `\n${text}`);
  }
  return parts.join('');
}

/**
 * The namespaces in scope at `node` declared by its ancestors (nearest first wins), for inclusive
 * c14n. An element of the default namespace gets its `xmlns` from xml-crypto itself: given here as
 * well, it came out twice.
 */
function ancestorNamespaces(node: XmlElement): NamespacePrefix[] {
  const own = new Set(declarations(node).map(([prefix]) => prefix));
  if (!node.prefix && node.namespaceURI) own.add('');
  const seen = new Set<string>(own);
  const out: NamespacePrefix[] = [];
  for (let parent = node.parentNode; isElement(parent); parent = parent.parentNode)
    for (const [prefix, uri] of declarations(parent)) {
      if (seen.has(prefix)) continue;
      seen.add(prefix);
      if (uri !== '') out.push({ prefix, namespaceURI: uri });
    }
  return out;
}

function declarations(element: XmlElement): Array<[prefix: string, uri: string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i < element.attributes.length; i++) {
    const attribute = element.attributes[i]!;
    if (attribute.name === 'xmlns') out.push(['', attribute.value]);
    else if (attribute.name.startsWith('xmlns:')) out.push([attribute.name.slice(6), attribute.value]);
  }
  return out;
}

function inheritsXmlAttributes(node: XmlElement): boolean {
  for (let parent = node.parentNode; isElement(parent); parent = parent.parentNode)
    for (let i = 0; i < parent.attributes.length; i++) if (parent.attributes[i]!.namespaceURI === NS.xml) return true;
  return false;
}

/** The namespace `prefix` is bound to at `element`, if any. */
export function namespaceOfPrefix(element: XmlElement, prefix: string): string | undefined {
  for (let node: XmlNode | null = element; isElement(node); node = node.parentNode)
    for (const [declared, uri] of declarations(node)) if (declared === prefix) return uri || undefined;
  return undefined;
}
