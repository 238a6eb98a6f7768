/** The shared XML rules' refusals for XML esign verifies (XAdES): `XML_*` and `XADES_REFUSED`, exit 7. */
import { EsignError } from '../errors.js';
import { MAX_XML_DOCUMENT_BYTES, type SecureParseOptions, type XmlRefusalKind } from './secure-parse.js';

const CODES = { 'too-large': 'XML_TOO_LARGE', unsafe: 'XML_UNSAFE', malformed: 'XML_MALFORMED' } as const;

const HINTS: Record<XmlRefusalKind, string> = {
  'too-large': 'XML over 50 MB is signed in an ASiC-E (--format asice), where it is hashed as bytes.',
  unsafe: 'Signed XML never needs a DTD or entities; ask the sender for the file without them.',
  malformed: 'The file is damaged or not XML; ask the sender for it again.',
};

/** The rules for an XML document read for verification, refusals naming `file`. */
export function xmlRules(file: string, maxBytes = MAX_XML_DOCUMENT_BYTES): SecureParseOptions {
  return {
    maxBytes,
    refuse: (kind, reason) =>
      new EsignError(CODES[kind], `${file}: ${reason}`, { hint: HINTS[kind], details: { file } }),
  };
}

/** A signature structure esign refuses to read (wrapping, an external reference, XSLT…), in one line. */
export function xadesRefused(file: string, reason: string): EsignError {
  return new EsignError('XADES_REFUSED', `${file}: ${reason}`, {
    hint: 'esign reads only signatures whose every reference resolves inside the file or container, by a unique Id.',
    details: { file },
  });
}
