import { readCertificate } from './certificate.js';
import {
  Asn1StructureError,
  children,
  decode,
  definiteEncoding,
  encoded,
  explicitInner,
  integerHex,
  integerValue,
  isContext,
  isUniversal,
  octets,
  oid,
  retag,
  sequenceItems,
  setItems,
  Tag,
  timeValue,
} from './der.js';
import type { Block } from './der.js';
import { OID } from './oids.js';
import { internedCertificate } from './x509.js';
import { EsignError } from '../errors.js';

export interface CmsAttribute {
  type: string;
  /** DER of each AttributeValue. */
  values: Uint8Array[];
}

export interface ParsedSignedAttributes {
  /** DER of the attributes as a SET (tag 0x31): the bytes the signature covers (indefinite lengths made definite). */
  der: Uint8Array;
  attributes: CmsAttribute[];
  contentType: string | undefined;
  messageDigest: Uint8Array | undefined;
  signingTime: Date | undefined;
}

export type SignerIdentifier =
  | { kind: 'issuerAndSerialNumber'; issuer: Uint8Array; serialNumber: string }
  | { kind: 'subjectKeyIdentifier'; subjectKeyIdentifier: Uint8Array };

export interface ParsedSignedData {
  version: number;
  encapContentType: string;
  /** eContent, absent for a detached signature. */
  encapContent: Uint8Array | undefined;
  /** Every certificate in the CertificateSet, DER, in the order given. */
  certificates: Uint8Array[];
  /** The certificate the SignerInfo identifies, when the CMS carries it. */
  signerCertificate: Uint8Array | undefined;
  signerIdentifier: SignerIdentifier;
  digestAlgorithm: string;
  /** DER of the digest AlgorithmIdentifier's parameters (id-shake256-len's output length), when present. */
  digestAlgorithmParameters: Uint8Array | undefined;
  signedAttributes: ParsedSignedAttributes | undefined;
  signatureAlgorithm: string;
  /** DER of the signature AlgorithmIdentifier's parameters (RSASSA-PSS-params; NULL for RSA), when present. */
  signatureAlgorithmParameters: Uint8Array | undefined;
  signatureValue: Uint8Array;
  unsignedAttributes: CmsAttribute[];
  /** The first signature-time-stamp unsigned attribute (a TimeStampToken ContentInfo), if any. */
  signatureTimeStampToken: Uint8Array | undefined;
  /** The RevocationInfoChoices of the `crls` field, DER, in the order given (unchecked). */
  revocationChoices: Uint8Array[];
}

/**
 * Reads a CMS ContentInfo(SignedData) with exactly one SignerInfo. Malformed input is reported
 * as `CMS_BAD_STRUCTURE`; nothing is verified here.
 */
export function parseSignedData(cmsDer: Uint8Array): ParsedSignedData {
  try {
    return readSignedData(cmsDer);
  } catch (error) {
    if (error instanceof Asn1StructureError) {
      throw new EsignError('CMS_BAD_STRUCTURE', `Not a valid CMS signature: ${error.message}.`, {
        hint: 'The signature data is damaged or is not a CMS SignedData.',
        cause: error,
      });
    }
    throw error;
  }
}

function readSignedData(cmsDer: Uint8Array): ParsedSignedData {
  const [contentType, content] = sequenceItems(decode(cmsDer, 'ContentInfo'), 'ContentInfo');
  if (oid(contentType, 'ContentInfo contentType') !== OID.signedData)
    throw new Asn1StructureError('ContentInfo: content type is not SignedData');
  const fields = sequenceItems(explicitInner(content, 0, 'ContentInfo content'), 'SignedData');
  const [versionBlock, digestAlgorithms, encapContentInfo, ...rest] = fields;
  const version = Number(integerValue(versionBlock, 'SignedData version'));
  setItems(digestAlgorithms, 'digestAlgorithms');
  const [eContentType, eContent] = sequenceItems(encapContentInfo, 'encapContentInfo');
  const encapContentType = oid(eContentType, 'eContentType');
  const encapContent = eContent === undefined ? undefined : octets(explicitInner(eContent, 0, 'eContent'), 'eContent');

  const signerInfosBlock = rest[rest.length - 1];
  const certificatesBlock = rest.find((block) => isContext(block, 0));
  const certificates = certificatesBlock
    ? children(certificatesBlock, 'certificates')
        .filter((choice) => isUniversal(choice, 16))
        .map((choice) => internedCertificate(encoded(choice)))
    : [];
  const revocationChoices = (rest.find((block) => isContext(block, 1))?.items ?? []).map((choice) =>
    Uint8Array.from(encoded(choice)),
  );
  const signerInfos = setItems(signerInfosBlock, 'signerInfos');
  if (signerInfos.length !== 1)
    throw new Asn1StructureError(`signerInfos: expected one SignerInfo, found ${signerInfos.length}`);
  const signer = readSignerInfo(signerInfos[0]);
  return {
    version,
    encapContentType,
    encapContent: encapContent === undefined ? undefined : Uint8Array.from(encapContent),
    certificates,
    signerCertificate: findSignerCertificate(certificates, signer.signerIdentifier),
    ...signer,
    revocationChoices,
  };
}

type SignerInfoFields = Pick<
  ParsedSignedData,
  | 'signerIdentifier'
  | 'digestAlgorithm'
  | 'digestAlgorithmParameters'
  | 'signedAttributes'
  | 'signatureAlgorithm'
  | 'signatureAlgorithmParameters'
  | 'signatureValue'
  | 'unsignedAttributes'
  | 'signatureTimeStampToken'
>;

function readSignerInfo(block: Block | undefined): SignerInfoFields {
  const fields = sequenceItems(block, 'SignerInfo');
  const [, sid, digestAlgorithm] = fields;
  let index = 3;
  const signedAttrsBlock = isContext(fields[index], 0) ? fields[index++] : undefined;
  const signatureAlgorithm = fields[index++];
  const signature = fields[index++];
  const unsignedAttrsBlock = isContext(fields[index], 1) ? fields[index++] : undefined;
  if (index !== fields.length) throw new Asn1StructureError('SignerInfo: unexpected fields');

  const unsignedAttributes = unsignedAttrsBlock ? readAttributes(unsignedAttrsBlock) : [];
  const timestamp = unsignedAttributes.find((attribute) => attribute.type === OID.signatureTimeStampToken);
  return {
    signerIdentifier: readSignerIdentifier(sid),
    digestAlgorithm: algorithmOid(digestAlgorithm, 'digestAlgorithm'),
    digestAlgorithmParameters: algorithmParameters(digestAlgorithm),
    signedAttributes: signedAttrsBlock ? readSignedAttributes(signedAttrsBlock) : undefined,
    signatureAlgorithm: algorithmOid(signatureAlgorithm, 'signatureAlgorithm'),
    signatureAlgorithmParameters: algorithmParameters(signatureAlgorithm),
    signatureValue: Uint8Array.from(octets(signature, 'signature')),
    unsignedAttributes,
    signatureTimeStampToken: timestamp?.values[0],
  };
}

function readSignerIdentifier(block: Block | undefined): SignerIdentifier {
  if (isContext(block, 0))
    return {
      kind: 'subjectKeyIdentifier',
      subjectKeyIdentifier: Uint8Array.from(octets(block, 'subjectKeyIdentifier')),
    };
  const [issuer, serial] = sequenceItems(block, 'issuerAndSerialNumber');
  sequenceItems(issuer, 'issuer');
  return {
    kind: 'issuerAndSerialNumber',
    issuer: Uint8Array.from(encoded(issuer as Block)),
    serialNumber: integerHex(serial, 'serialNumber'),
  };
}

function readSignedAttributes(block: Block): ParsedSignedAttributes {
  const der = retag(definiteEncoding(block), Tag.set);
  const attributes = readAttributes(block);
  const single = (type: string): Block | undefined => {
    const found = attributes.filter((attribute) => attribute.type === type);
    if (found.length > 1) throw new Asn1StructureError(`signed attributes: ${type} appears more than once`);
    const [only] = found;
    if (only === undefined) return undefined;
    if (only.values.length !== 1) throw new Asn1StructureError(`signed attributes: ${type} must have one value`);
    return decode(only.values[0] as Uint8Array, type);
  };
  const contentType = single(OID.contentType);
  const messageDigest = single(OID.messageDigest);
  const signingTime = single(OID.signingTime);
  return {
    der,
    attributes,
    contentType: contentType ? oid(contentType, 'content-type') : undefined,
    messageDigest: messageDigest ? Uint8Array.from(octets(messageDigest, 'message-digest')) : undefined,
    signingTime: signingTime ? timeValue(signingTime, 'signing-time') : undefined,
  };
}

/** Reads `[n] IMPLICIT SET OF Attribute`. */
function readAttributes(block: Block): CmsAttribute[] {
  return children(block, 'attributes').map((item) => {
    const [type, values] = sequenceItems(item, 'Attribute');
    return {
      type: oid(type, 'attrType'),
      values: setItems(values, 'attrValues').map((value) => Uint8Array.from(encoded(value))),
    };
  });
}

function algorithmOid(block: Block | undefined, what: string): string {
  const [algorithm] = sequenceItems(block, what);
  return oid(algorithm, what);
}

function algorithmParameters(block: Block | undefined): Uint8Array | undefined {
  const parameters = block?.items[1];
  return parameters ? Uint8Array.from(definiteEncoding(parameters)) : undefined;
}

function findSignerCertificate(certificates: Uint8Array[], sid: SignerIdentifier): Uint8Array | undefined {
  for (const der of certificates) {
    let certificate: ReturnType<typeof readCertificate>;
    try {
      certificate = readCertificate(der);
    } catch {
      continue;
    }
    if (sid.kind === 'subjectKeyIdentifier') {
      if (certificate.subjectKeyIdentifier && bytesEqual(certificate.subjectKeyIdentifier, sid.subjectKeyIdentifier))
        return der;
    } else if (certificate.serialNumber === sid.serialNumber && bytesEqual(certificate.issuer, sid.issuer)) {
      return der;
    }
  }
  return undefined;
}

/** Byte-wise equality, compared natively (a signature's CMS is kilobytes, and a batch compares one per file). */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0;
}
