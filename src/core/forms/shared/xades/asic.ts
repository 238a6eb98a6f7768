/** The XAdES signature document of an ASiC (EN 319 162-1 §4.4.3): `META-INF/signatures*.xml`, an `asic:XAdESSignatures`. */
import { NS } from '../../../xml/namespaces.js';
import { signatureXml, type UnsignedValues, type XadesDraft } from './signature.js';

/** `META-INF/signaturesN.xml`: the XAdESSignatures document holding the signature. */
export function signaturesDocument(draft: XadesDraft, signature: Uint8Array, values: UnsignedValues = {}): Uint8Array {
  return Buffer.from(
    '<?xml version="1.0" encoding="UTF-8" standalone="no"?>' +
      `<asic:XAdESSignatures xmlns:asic="${NS.asic}">${signatureXml(draft, signature, values)}</asic:XAdESSignatures>`,
    'utf8',
  );
}
