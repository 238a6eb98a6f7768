/**
 * ASiC-E with XAdES (EN 319 162-1 §4.4.3), as DigiDoc, DSS and most eID apps write it: the
 * signature in `META-INF/signaturesN.xml` (an `asic:XAdESSignatures` holding one `ds:Signature`),
 * one `ds:Reference` per file (its URI the entry name, the file's bytes hashed as they are, no
 * transforms) with a DataObjectFormat giving its MIME type, and the ODF `META-INF/manifest.xml`
 * listing every file. Loaded only when a container with XAdES is written (it reaches the XML code).
 */
import type { DigestName } from '../../cms/algorithms.js';
import type { SignaturePolicy } from '../../documents.js';
import type { SigningCredential } from '../../ports.js';
import { NS } from '../../xml/namespaces.js';
import { escapeXml } from '../shared/xades/algorithms.js';
import { draftSignature, type XadesDraft } from '../shared/xades/signature.js';

export { signaturesDocument } from '../shared/xades/asic.js';
import { ASIC_E_MIMETYPE } from '../shared/asic-container-rules.js';
import { mimeTypeOf, uriOf } from './manifest.js';

export { holdsXades, nextSignatureName, ODF_MANIFEST, XADES_SIGNATURE_ENTRY } from './xades-names.js';

/** The signature over a container's files, up to its SignedInfo. */
export function draftContainerSignature(
  files: readonly { name: string; digest: DigestName; digestValue: Uint8Array }[],
  credential: Pick<SigningCredential, 'certificates' | 'scheme'>,
  signingTime: Date,
  policy?: SignaturePolicy,
): XadesDraft {
  return draftSignature({
    objects: files.map((file) => ({
      uri: uriOf(file.name),
      transforms: [],
      digest: file.digestValue,
      mimeType: mimeTypeOf(file.name),
    })),
    certificates: credential.certificates,
    scheme: credential.scheme,
    signingTime,
    ...(policy ? { policy } : {}),
  });
}

/** `META-INF/manifest.xml` (OpenDocument 1.2 manifest), as DigiDoc writes it: the container, then each file with its MIME type. */
export function odfManifest(names: readonly string[]): Uint8Array {
  const entry = (path: string, type: string) =>
    ` <manifest:file-entry manifest:full-path="${escapeXml(path)}" manifest:media-type="${escapeXml(type)}"/>\n`;
  return Buffer.from(
    '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n' +
      `<manifest:manifest xmlns:manifest="${NS.manifest}" manifest:version="1.2">\n` +
      entry('/', ASIC_E_MIMETYPE) +
      names.map((name) => entry(name, mimeTypeOf(name))).join('') +
      '</manifest:manifest>\n',
    'utf8',
  );
}
