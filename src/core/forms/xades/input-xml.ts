/**
 * An XML document to sign, parsed by the secure parser the XML reader uses (no DTD, no entity or
 * other markup declaration, well-formed, at most 50 MB), and not signed already: a second enveloped
 * signature would break the first (sign such a file in an `.asice`).
 */
import { EsignError } from '../../errors.js';
import { xmlRules } from '../../xml/refusal.js';
import { parseSecureXml } from '../../xml/secure-parse.js';
import type { XmlDocument } from '../../xml/types/xml-libs.js';
import { DSIG_NS } from '../shared/xades/algorithms.js';

/**
 * Whether `text` can hold an element in the XML-DSig namespace: only if it names the namespace, in
 * an `xmlns` attribute, literally or through character references (the only references the secure
 * parser lets through that could spell it: the URI holds none of `&<>"'`).
 */
export function mayNameDsig(text: string): boolean {
  return text.includes(DSIG_NS) || text.includes('&#');
}

export function parseInputXml(text: string, path: string): XmlDocument {
  const doc = parseSecureXml(text, xmlRules(path));
  // The walk of a large document's DOM costs seconds: skipped when its text cannot name the namespace.
  if (mayNameDsig(text) && doc.getElementsByTagNameNS(DSIG_NS, 'Signature').length > 0)
    throw new EsignError('INPUT_UNREADABLE', `${path}: the XML is signed already.`, {
      hint: 'A second enveloped signature would break the first: sign it in a container (--format asice).',
    });
  return doc;
}
