import {
  DIGEST_OID,
  RSA_PKCS1_SHA256,
  acceptedSignatureValue,
  signatureAlgorithmIdentifier,
  type SignatureScheme,
} from './algorithms.js';
import { readCertificate } from './certificate.js';
import {
  Asn1StructureError,
  Tag,
  concatBytes,
  decode,
  encoded,
  explicit,
  explicitInner,
  isContext,
  objectIdentifier,
  oid,
  octetString,
  retag,
  sequence,
  sequenceItems,
  setItems,
  setOf,
  smallInteger,
  tlv,
  tlvHeader,
} from './der.js';
import type { Block } from './der.js';
import { OID } from './oids.js';
import { parseSignedData } from './parse.js';
import { attribute } from './signed-attributes.js';
import { isOtherRevocationInfo, revocationInfoChoices, uniqueDer, type CmsValidationData } from './long-term.js';
import { EsignError } from '../errors.js';

export interface SignedDataInput {
  /** DER of the signed attributes as a SET (tag 0x31), exactly as hashed and signed. */
  signedAttributesDer: Uint8Array;
  /** Signature value from the remote signer (ECDSA as DER Ecdsa-Sig-Value). */
  signatureValue: Uint8Array;
  /** How it was signed; RSA PKCS#1 v1.5 with SHA-256 when absent. */
  scheme?: SignatureScheme;
  /** Certificate chain, DER, signer first. */
  certificates: Uint8Array[];
  unsignedAttributes?: { signatureTimeStampToken?: Uint8Array; archiveTimeStampV3Token?: Uint8Array };
  /** B-LT: the chains' certificates and revocation data, put in `certificates` and `crls`. */
  validationData?: CmsValidationData;
}

/** id-aa-ets-archiveTimestampV3 (EN 319 122-1 §5.5.3): CAdES B-LTA. */
export const OID_ARCHIVE_TIMESTAMP_V3 = '0.4.0.1733.2.4';
const CRLS_TAG = 0xa1; // SignedData `crls [1] IMPLICIT RevocationInfoChoices`
const SIGNED_ATTRS_TAG = 0xa0; // [0] IMPLICIT SET OF Attribute
const UNSIGNED_ATTRS_TAG = 0xa1; // [1] IMPLICIT SET OF Attribute

/**
 * Assembles a detached CMS ContentInfo(SignedData) around a signature made elsewhere: one SignerInfo
 * identified by issuer and serial number, the scheme's digest and signature algorithms, and
 * optionally a signature timestamp token as unsigned attribute (PAdES/CAdES B-T).
 */
export function buildSignedData(input: SignedDataInput): Uint8Array {
  return encodeSignedData(signedDataParts(input));
}

/** The parts of `buildSignedData`'s structure, for a caller that puts content inside it (`signedDataAround`). */
export function signedDataParts(input: SignedDataInput): Omit<SignedDataParts, 'eContent'> {
  const [signer] = input.certificates;
  if (signer === undefined) throw new EsignError('INTERNAL', 'A CMS signature needs at least the signer certificate.');
  const unsigned = input.unsignedAttributes?.signatureTimeStampToken;
  const archived = input.unsignedAttributes?.archiveTimeStampV3Token;
  const scheme = input.scheme ?? RSA_PKCS1_SHA256;
  const validation = input.validationData;
  return {
    eContentType: OID.data,
    certificates: validation ? uniqueDer([...input.certificates, ...validation.certificates]) : input.certificates,
    ...(validation ? { revocations: uniqueDer(revocationInfoChoices(validation)) } : {}),
    signer: {
      certificate: signer,
      digestAlgorithm: DIGEST_OID[scheme.digest],
      signedAttributesDer: input.signedAttributesDer,
      signatureAlgorithm: signatureAlgorithmIdentifier(scheme),
      signatureValue: input.signatureValue,
      unsignedAttributes: [
        ...(unsigned ? [signatureTimeStampAttribute(unsigned)] : []),
        ...(archived ? [attribute(OID_ARCHIVE_TIMESTAMP_V3, archived)] : []),
      ],
    },
  };
}

export interface SignerInfoInput {
  /** DER of the certificate named by the SignerInfo (issuerAndSerialNumber). */
  certificate: Uint8Array;
  digestAlgorithm: string;
  /** DER of the signed attributes as a SET (tag 0x31). */
  signedAttributesDer: Uint8Array;
  /** DER of the signatureAlgorithm AlgorithmIdentifier. */
  signatureAlgorithm: Uint8Array;
  signatureValue: Uint8Array;
  /** DER of each unsigned Attribute. */
  unsignedAttributes?: Uint8Array[];
}

export interface SignedDataParts {
  eContentType: string;
  /** Encapsulated content; absent for a detached signature. */
  eContent?: Uint8Array;
  certificates: Uint8Array[];
  /** RevocationInfoChoices (DER each) for the `crls` field: CRLs, OCSP responses as `other`. */
  revocations?: Uint8Array[];
  signer: SignerInfoInput;
}

/** Encodes ContentInfo(SignedData) with one SignerInfo from finished parts (RFC 5652 §5). */
export function encodeSignedData(parts: SignedDataParts): Uint8Array {
  const { head, tail } = signedDataAround(parts, parts.eContent?.length);
  return parts.eContent ? concatBytes([head, parts.eContent, tail]) : concatBytes([head, tail]);
}

/**
 * ContentInfo(SignedData) as the bytes before and after its eContent's `contentLength` octets, so
 * that a large content can be streamed between them (an enveloping .p7m): every length is
 * definite and computed up front. Without `contentLength`, the signature is detached and `head`
 * and `tail` together are the whole structure.
 */
export function signedDataAround(
  parts: Omit<SignedDataParts, 'eContent'>,
  contentLength?: number,
): { head: Uint8Array; tail: Uint8Array } {
  const { signer } = parts;
  const { issuer, serialNumberDer } = certificateOrThrow(signer.certificate);
  try {
    setItems(decode(signer.signedAttributesDer, 'signed attributes'), 'signed attributes');
  } catch (error) {
    throw new EsignError('CMS_BAD_STRUCTURE', 'The signed attributes are not a DER SET OF Attribute.', {
      cause: error,
    });
  }
  const digestAlgorithm = sequence(objectIdentifier(signer.digestAlgorithm));
  const unsigned = signer.unsignedAttributes ?? [];
  const signerInfo = sequence(
    smallInteger(1),
    sequence(issuer, serialNumberDer),
    digestAlgorithm,
    retag(signer.signedAttributesDer, SIGNED_ATTRS_TAG),
    signer.signatureAlgorithm,
    octetString(signer.signatureValue),
    ...(unsigned.length > 0 ? [setOf(unsigned, UNSIGNED_ATTRS_TAG)] : []),
  );
  const revocations = parts.revocations ?? [];
  return envelopeAround(
    {
      // RFC 5652 §5.1: version 5 with an `other` revocation choice, else 3 when the content is not id-data.
      version: smallInteger(revocations.some(isOtherRevocationInfo) ? 5 : parts.eContentType === OID.data ? 1 : 3),
      digestAlgorithms: [digestAlgorithm],
      eContentType: parts.eContentType,
      certificates: parts.certificates,
      ...(revocations.length > 0 ? { crls: tlv(CRLS_TAG, ...revocations) } : {}),
      signerInfos: [signerInfo],
    },
    contentLength,
  );
}

/** The encoded fields of a SignedData, with any number of SignerInfos. */
interface EnvelopeFields {
  version: Uint8Array;
  digestAlgorithms: Uint8Array[];
  eContentType: string;
  certificates: Uint8Array[];
  /** The `crls [1]` field whole, when there is one. */
  crls?: Uint8Array;
  signerInfos: Uint8Array[];
}

function envelopeAround(fields: EnvelopeFields, contentLength?: number): { head: Uint8Array; tail: Uint8Array } {
  const before = concatBytes([fields.version, setOf(fields.digestAlgorithms)]);
  const after = concatBytes([
    ...(fields.certificates.length > 0 ? [tlv(0xa0, ...fields.certificates)] : []),
    ...(fields.crls ? [fields.crls] : []),
    setOf(fields.signerInfos),
  ]);
  const contentType = objectIdentifier(fields.eContentType);
  // Each header is built from the length of what it holds, from the content outwards.
  const encapHead: Uint8Array[] = [contentType];
  let encapLength = contentType.length;
  if (contentLength !== undefined) {
    const octetHeader = tlvHeader(Tag.octetString, contentLength);
    const explicitHeader = tlvHeader(0xa0, octetHeader.length + contentLength);
    encapHead.push(explicitHeader, octetHeader);
    encapLength += explicitHeader.length + octetHeader.length + contentLength;
  }
  const encapHeader = tlvHeader(Tag.sequence, encapLength);
  const signedDataLength = before.length + encapHeader.length + encapLength + after.length;
  const signedDataHeader = tlvHeader(Tag.sequence, signedDataLength);
  const signedDataType = objectIdentifier(OID.signedData);
  const wrapperHeader = tlvHeader(0xa0, signedDataHeader.length + signedDataLength);
  const contentInfoHeader = tlvHeader(
    Tag.sequence,
    signedDataType.length + wrapperHeader.length + signedDataHeader.length + signedDataLength,
  );
  return {
    head: concatBytes([
      contentInfoHeader,
      signedDataType,
      wrapperHeader,
      signedDataHeader,
      before,
      encapHeader,
      ...encapHead,
    ]),
    tail: after,
  };
}

/**
 * A parallel signature: `existing` (a SignedData without its eContent, as readEnveloping gives it)
 * with one more SignerInfo, around `contentLength` octets of content. The earlier SignerInfos,
 * certificates and CRLs are kept byte for byte; the digest algorithms and certificates are joined.
 */
export function addedSignerAround(
  existing: Uint8Array,
  parts: Omit<SignedDataParts, 'eContent'>,
  contentLength: number,
): { head: Uint8Array; tail: Uint8Array } {
  try {
    const fields = signedDataFields(existing);
    const added = signedDataFields(concatBytes(Object.values(signedDataAround(parts))));
    // The revocation data of both, the earlier's first (as they were); the higher version of the two.
    const revocations = uniqueDer([...revocationsOf(fields.crls), ...revocationsOf(added.crls)]);
    return envelopeAround(
      {
        version: higherVersion(fields.version, added.version),
        digestAlgorithms: uniqueDer([...fields.digestAlgorithms, ...added.digestAlgorithms]),
        eContentType: fields.eContentType,
        certificates: uniqueDer([...fields.certificates, ...added.certificates]),
        ...(revocations.length > 0 ? { crls: tlv(CRLS_TAG, ...revocations) } : {}),
        signerInfos: [...fields.signerInfos, ...added.signerInfos],
      },
      contentLength,
    );
  } catch (error) {
    if (error instanceof Asn1StructureError)
      throw new EsignError('CMS_BAD_STRUCTURE', `Cannot add a signature to the CMS: ${error.message}.`, {
        cause: error,
      });
    throw error;
  }
}

/** The same detached SignedData once per SignerInfo (with every certificate and CRL), for a checker of one. */
export function oneSignerEach(detached: Uint8Array): Uint8Array[] {
  let fields: EnvelopeFields;
  try {
    fields = signedDataFields(detached);
  } catch (error) {
    if (error instanceof Asn1StructureError)
      throw new EsignError('CMS_BAD_STRUCTURE', `Not a readable CMS signature: ${error.message}.`, {
        hint: 'The signature data is damaged or is not a CMS SignedData.',
        cause: error,
      });
    throw error;
  }
  return fields.signerInfos.map((signerInfo) => {
    const { head, tail } = envelopeAround({ ...fields, signerInfos: [signerInfo] });
    return concatBytes([head, tail]);
  });
}

/** The RevocationInfoChoices of a whole `crls [1]` field, DER each. */
function revocationsOf(crls: Uint8Array | undefined): Uint8Array[] {
  return crls ? (decode(retag(crls, Tag.set), 'crls').items ?? []).map(encoded) : [];
}

/** Of two encoded SignedData versions (small INTEGERs), the higher. */
function higherVersion(a: Uint8Array, b: Uint8Array): Uint8Array {
  return (b[b.length - 1] ?? 0) > (a[a.length - 1] ?? 0) ? b : a;
}

function signedDataFields(der: Uint8Array): EnvelopeFields {
  const [, content] = sequenceItems(decode(der, 'ContentInfo'), 'ContentInfo');
  const [version, digestAlgorithms, encap, ...rest] = sequenceItems(
    explicitInner(content, 0, 'ContentInfo content'),
    'SignedData',
  );
  const [eContentType, eContent] = sequenceItems(encap, 'encapContentInfo');
  if (eContent !== undefined) throw new Asn1StructureError('encapContentInfo: expected no eContent here');
  const certificates = rest.find((block) => isContext(block, 0));
  const crls = rest.find((block) => isContext(block, 1));
  return {
    version: encoded(version as Block),
    digestAlgorithms: setItems(digestAlgorithms, 'digestAlgorithms').map(encoded),
    eContentType: oid(eContentType, 'eContentType'),
    certificates: (certificates?.items ?? []).map(encoded),
    ...(crls ? { crls: encoded(crls) } : {}),
    signerInfos: setItems(rest[rest.length - 1], 'signerInfos').map(encoded),
  };
}

/**
 * Adds a signature-time-stamp unsigned attribute to the (single) SignerInfo of a CMS signature,
 * keeping every other byte of the structure as it was.
 */
export function addSignatureTimestamp(cmsDer: Uint8Array, tokenDer: Uint8Array): Uint8Array {
  try {
    decode(tokenDer, 'timestamp token');
  } catch (error) {
    if (error instanceof Asn1StructureError)
      throw new EsignError('CMS_BAD_STRUCTURE', `Cannot add a timestamp to the CMS signature: ${error.message}.`, {
        cause: error,
      });
    throw error;
  }
  return addUnsignedAttribute(cmsDer, signatureTimeStampAttribute(tokenDer), 'the CMS signature');
}

/**
 * Adds an unsigned attribute (DER) to the single SignerInfo of a ContentInfo(SignedData) (a
 * signature, or a timestamp token: its eContent is kept), every other byte as it was.
 */
export function addUnsignedAttribute(cmsDer: Uint8Array, attributeDer: Uint8Array, what: string): Uint8Array {
  try {
    const [contentType, content] = sequenceItems(decode(cmsDer, 'ContentInfo'), 'ContentInfo');
    if (oid(contentType, 'contentType') !== OID.signedData) throw new Asn1StructureError('ContentInfo: not SignedData');
    const signedDataFields = sequenceItems(explicitInner(content, 0, 'ContentInfo content'), 'SignedData');
    const signerInfos = setItems(signedDataFields[signedDataFields.length - 1], 'signerInfos');
    const [signerInfo, other] = signerInfos;
    if (signerInfo === undefined || other !== undefined)
      throw new Asn1StructureError('signerInfos: expected exactly one SignerInfo');
    const fields = sequenceItems(signerInfo, 'SignerInfo');
    const last = fields[fields.length - 1];
    const existing = isContext(last, 1) ? splitElements(encoded(last as Block)) : [];
    const kept = (isContext(last, 1) ? fields.slice(0, -1) : fields).map(encoded);
    const newSignerInfo = sequence(...kept, setOf([...existing, attributeDer], UNSIGNED_ATTRS_TAG));
    const newSignedData = sequence(...signedDataFields.slice(0, -1).map(encoded), setOf([newSignerInfo]));
    return sequence(objectIdentifier(OID.signedData), explicit(0, newSignedData));
  } catch (error) {
    if (error instanceof Asn1StructureError) {
      throw new EsignError('CMS_BAD_STRUCTURE', `Cannot add an attribute to ${what}: ${error.message}.`, {
        cause: error,
      });
    }
    throw error;
  }
}

/** The SignerInfo signature value; its SHA-256 is the message imprint of a B-T signature timestamp. */
export function signatureValueOf(cmsDer: Uint8Array): Uint8Array {
  return parseSignedData(cmsDer).signatureValue;
}

/**
 * Checks an RSA PKCS#1 v1.5 signature over a precomputed SHA-256 digest (what signHash returns)
 * against the certificate's public key. The digest is not hashed again.
 */
export function verifyRsaPkcs1Sha256(
  signatureValue: Uint8Array,
  toBeSignedHash: Uint8Array,
  certificateDer: Uint8Array,
): boolean {
  try {
    return acceptedSignatureValue(certificateDer, RSA_PKCS1_SHA256, toBeSignedHash, signatureValue) !== undefined;
  } catch {
    return false; // not a certificate
  }
}

function signatureTimeStampAttribute(tokenDer: Uint8Array): Uint8Array {
  return attribute(OID.signatureTimeStampToken, tokenDer);
}

/** The encoded elements inside a constructed TLV (e.g. the attributes of `[1] IMPLICIT SET`). */
function splitElements(der: Uint8Array): Uint8Array[] {
  const block = decode(retag(der, Tag.set), 'attributes');
  return setItems(block, 'attributes').map(encoded);
}

function certificateOrThrow(der: Uint8Array): ReturnType<typeof readCertificate> {
  try {
    return readCertificate(der);
  } catch (error) {
    throw new EsignError('CMS_BAD_STRUCTURE', 'The signer certificate is not a DER X.509 certificate.', {
      cause: error,
    });
  }
}
