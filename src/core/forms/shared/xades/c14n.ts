/**
 * Exclusive canonicalization (without comments) as XAdES writing needs it, by xml-crypto over an
 * @xmldom/xmldom tree: of an element of a fragment esign built, and of a whole document after the
 * enveloped-signature transform (the root element, and the processing instructions around it as
 * c14n puts them). These libraries load with this module, which only XML work imports.
 */
import { ExclusiveCanonicalization } from 'xml-crypto';
import { DOMParser } from '@xmldom/xmldom';
import { EsignError } from '../../../errors.js';
import type { XmlDocument, XmlElement, XmlNode } from '../../../xml/types/xml-libs.js';
import { DSIG_NS } from './algorithms.js';

const ELEMENT_NODE = 1;
const PROCESSING_INSTRUCTION_NODE = 7;

/** Exclusive c14n of an element (its namespaces as it uses them, whatever its ancestors declare). */
export function excC14n(element: XmlNode): string {
  return new ExclusiveCanonicalization().process(element, {});
}

/**
 * Parses XML that esign built (a signature fragment): a failure here is esign's own bug. Documents
 * from outside go through the secure parser instead.
 */
export function parseBuilt(xml: string): XmlDocument {
  const errors: string[] = [];
  const doc = new DOMParser({
    errorHandler: { error: (m) => errors.push(m), fatalError: (m) => errors.push(m) },
  }).parseFromString(xml, 'text/xml');
  if (errors.length > 0 || !doc.documentElement)
    throw new EsignError('INTERNAL', `esign built XML it cannot parse: ${errors[0] ?? 'no root element'}`);
  return doc;
}

/** The first element named `localName` in `namespace` under `root` (itself included). */
export function firstElement(root: XmlDocument | XmlElement, namespace: string, localName: string): XmlElement {
  const found = root.getElementsByTagNameNS(namespace, localName)[0];
  if (!found) throw new EsignError('INTERNAL', `No ${localName} in the XML esign built.`);
  return found;
}

/** Exclusive c14n of the first `ds:localName` (or `namespace`'s) element of a fragment esign built. */
export function c14nOfBuilt(xml: string, localName: string, namespace: string = DSIG_NS): string {
  return excC14n(firstElement(parseBuilt(xml), namespace, localName));
}

/**
 * What a `URI=""` reference with the enveloped-signature and exclusive c14n transforms covers, for
 * a document that holds no signature yet: the root element canonical, the processing instructions
 * before it each followed by a line feed and those after it each preceded by one (comments are
 * dropped, as a same-document reference drops them).
 */
export function documentC14n(doc: XmlDocument): string {
  const root = doc.documentElement;
  if (!root) throw new EsignError('INPUT_UNREADABLE', 'The XML document has no root element.');
  let before = '';
  let after = '';
  let seenRoot = false;
  for (let node = doc.firstChild; node; node = node.nextSibling) {
    if (node === root) seenRoot = true;
    else if (node.nodeType === PROCESSING_INSTRUCTION_NODE) {
      const pi = node as XmlNode & { target: string; data: string };
      // xmldom keeps the XML declaration as an instruction named xml: it is no node of the document.
      if (pi.target.toLowerCase() === 'xml') continue;
      const text = `<?${pi.target}${pi.data ? ` ${pi.data}` : ''}?>`;
      if (seenRoot) after += `\n${text}`;
      else before += `${text}\n`;
    }
  }
  refuseInnerInstructions(root);
  return before + excC14n(root) + after;
}

/** xml-crypto renders a processing instruction inside the root as its text alone: such a document is refused rather than signed wrongly. */
function refuseInnerInstructions(root: XmlNode): void {
  const stack: XmlNode[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    for (let child = node.firstChild; child; child = child.nextSibling) {
      if (child.nodeType === PROCESSING_INSTRUCTION_NODE)
        throw new EsignError(
          'INPUT_UNREADABLE',
          'The XML document has a processing instruction inside its root element, which esign does not sign.',
          { hint: 'Remove it, or sign the file in a container (--format asice).' },
        );
      if (child.nodeType === ELEMENT_NODE) stack.push(child);
    }
  }
}
