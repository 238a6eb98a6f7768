/**
 * A XAdES signature (ETSI EN 319 132-1) as esign writes it, enveloped in an XML document or in an
 * ASiC's `signatures*.xml`: built before signing up to its SignedInfo (what the signing service
 * signs), then completed with the signature value, and at B-T and above its unsigned properties.
 *
 *     <ds:Signature Id>
 *       <ds:SignedInfo> exclusive c14n, the signature method, one Reference per data object,
 *                       and one to the SignedProperties
 *       <ds:SignatureValue Id>
 *       <ds:KeyInfo> the signer's certificate and its chain
 *       <ds:Object><xades:QualifyingProperties Target>
 *         <xades:SignedProperties Id> SigningTime, SigningCertificateV2, [SignaturePolicyIdentifier,
 *                                     SignerRoleV2], DataObjectFormat per data object
 *         <xades:UnsignedProperties> SignatureTimeStamp (B-T), CertificateValues and
 *                                    RevocationValues (B-LT), ArchiveTimeStamp (B-LTA)
 *
 * Every canonicalization is exclusive c14n 1.0 without comments. The Ids come from a hash of what is
 * signed, so preparing the same input at the same signing time gives the same bytes (the split
 * flow's `--complete` checks that).
 */
import { createHash, type Hash } from 'node:crypto';
import type { DigestName, SignatureScheme } from '../../../cms/algorithms.js';
import { readCertificate } from '../../../cms/certificate.js';
import { explicit, sequence } from '../../../cms/der.js';
import { derToP1363 } from '../../../cms/ecdsa.js';
import type { SignaturePolicy } from '../../../documents.js';
import { EsignError } from '../../../errors.js';
import {
  digestElements,
  DIGEST_URI,
  DSIG_NS,
  escapeXml,
  EXC_C14N,
  SIGNED_PROPERTIES_TYPE,
  signatureMethod,
  XADES_NS,
  XADES141_NS,
} from './algorithms.js';
import { c14nOfBuilt, excC14n, firstElement, parseBuilt } from './c14n.js';

/** A data object the signature covers: the document itself (`URI=""`, enveloped) or a file of a container. */
export interface DataObject {
  /** `""` for the enveloping document, else the (URI-encoded) entry name. */
  readonly uri: string;
  /** Transforms of the reference (none for a file of a container, taken as bytes). */
  readonly transforms: readonly string[];
  /** Digest (the credential's) of what the reference gives after its transforms. */
  readonly digest: Uint8Array;
  readonly mimeType: string;
}

export type { SignaturePolicy };

export interface XadesInput {
  readonly objects: readonly DataObject[];
  /** The signer's certificate first, then its chain (DER). */
  readonly certificates: readonly Uint8Array[];
  readonly scheme: SignatureScheme;
  readonly signingTime: Date;
  readonly policy?: SignaturePolicy;
}

/** A signature built up to what is signed. */
export interface XadesDraft {
  readonly id: string;
  readonly scheme: SignatureScheme;
  /** The SignedInfo element as written. */
  readonly signedInfo: string;
  /** Its exclusive c14n: the bytes whose hash is signed. */
  readonly canonicalSignedInfo: Uint8Array;
  readonly keyInfo: string;
  readonly signedProperties: string;
}

/** What the unsigned properties hold at B-T and above. */
export interface UnsignedValues {
  readonly signatureTimestamp?: Uint8Array;
  readonly certificateValues?: readonly Uint8Array[];
  readonly crls?: readonly Uint8Array[];
  readonly ocsps?: readonly Uint8Array[];
  readonly archiveTimestamp?: Uint8Array;
}

const B64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const DS = `xmlns:ds="${DSIG_NS}"`;

/** Builds the signature up to its SignedInfo. */
export function draftSignature(input: XadesInput): XadesDraft {
  const [signer] = input.certificates;
  if (!signer) throw new EsignError('CREDENTIAL_UNSUPPORTED_KEY', 'The credential has no certificate.');
  const { digest } = input.scheme;
  const seed = createHash('sha256')
    .update(input.signingTime.toISOString())
    .update(signer)
    .update(input.objects.map((o) => `${o.uri}\n${B64(o.digest)}`).join('\n'));
  const id = `id-${seed.digest('hex').slice(0, 32)}`;
  const references = input.objects.map((object, index) => ({ ...object, refId: `r-${id}-${index + 1}` }));

  const signedProperties =
    `<xades:SignedProperties Id="xades-${id}"><xades:SignedSignatureProperties>` +
    `<xades:SigningTime>${input.signingTime.toISOString().replace(/\.\d{3}Z$/, 'Z')}</xades:SigningTime>` +
    signingCertificateV2(signer, digest) +
    (input.policy ? policyIdentifier(input.policy) : '') +
    '</xades:SignedSignatureProperties><xades:SignedDataObjectProperties>' +
    references
      .map(
        (ref) =>
          `<xades:DataObjectFormat ObjectReference="#${ref.refId}">` +
          dataObjectDescription(input.policy) +
          `<xades:MimeType>${escapeXml(ref.mimeType)}</xades:MimeType></xades:DataObjectFormat>`,
      )
      .join('') +
    '</xades:SignedDataObjectProperties></xades:SignedProperties>';
  const propertiesDigest = createHash(digest)
    .update(
      c14nOfBuilt(
        `<ds:Signature ${DS}><xades:QualifyingProperties xmlns:xades="${XADES_NS}">${signedProperties}</xades:QualifyingProperties></ds:Signature>`,
        'SignedProperties',
        XADES_NS,
      ),
    )
    .digest();

  const signedInfo =
    `<ds:SignedInfo><ds:CanonicalizationMethod Algorithm="${EXC_C14N}"/>${signatureMethod(input.scheme)}` +
    references
      .map(
        (ref) =>
          `<ds:Reference Id="${ref.refId}" URI="${escapeXml(ref.uri)}">` +
          transformsElement(ref.transforms) +
          digestElements(digest, ref.digest) +
          '</ds:Reference>',
      )
      .join('') +
    `<ds:Reference Type="${SIGNED_PROPERTIES_TYPE}" URI="#xades-${id}">` +
    transformsElement([EXC_C14N]) +
    digestElements(digest, propertiesDigest) +
    '</ds:Reference></ds:SignedInfo>';
  const canonicalSignedInfo = new Uint8Array(
    Buffer.from(c14nOfBuilt(`<ds:Signature ${DS}>${signedInfo}</ds:Signature>`, 'SignedInfo'), 'utf8'),
  );
  const keyInfo =
    '<ds:KeyInfo><ds:X509Data>' +
    input.certificates.map((der) => `<ds:X509Certificate>${B64(der)}</ds:X509Certificate>`).join('') +
    '</ds:X509Data></ds:KeyInfo>';
  return { id, scheme: input.scheme, signedInfo, canonicalSignedInfo, keyInfo, signedProperties };
}

/** The hash the signing service signs: of the canonical SignedInfo, with the credential's digest. */
export function toBeSignedOf(draft: XadesDraft): { der: Uint8Array; toBeSignedHash: Uint8Array } {
  return {
    der: draft.canonicalSignedInfo,
    toBeSignedHash: new Uint8Array(createHash(draft.scheme.digest).update(draft.canonicalSignedInfo).digest()),
  };
}

/** The signature value as XML carries it: base64, an ECDSA one as raw r||s (RFC 4050) whether the service gave DER or raw. */
export function signatureValueText(draft: XadesDraft, signature: Uint8Array): string {
  if (draft.scheme.kind !== 'ecdsa') return B64(signature);
  const raw = derToP1363(signature, draft.scheme.curve);
  if (!raw) throw new EsignError('CSC_BAD_RESPONSE', 'The signing service returned an ECDSA value esign cannot read.');
  return B64(raw);
}

function signatureValueElement(draft: XadesDraft, signature: Uint8Array): string {
  return `<ds:SignatureValue Id="value-${draft.id}">${signatureValueText(draft, signature)}</ds:SignatureValue>`;
}

/**
 * What the signature timestamp covers (EN 319 132-1 §5.3): the `ds:SignatureValue` element,
 * canonicalized with the method the SignatureTimeStamp names (exclusive c14n).
 */
export function signatureTimestampInput(draft: XadesDraft, signature: Uint8Array): Uint8Array {
  return new Uint8Array(
    Buffer.from(
      c14nOfBuilt(`<ds:Signature ${DS}>${signatureValueElement(draft, signature)}</ds:Signature>`, 'SignatureValue'),
      'utf8',
    ),
  );
}

/** The whole `ds:Signature` element, with the unsigned properties `values` holds. */
export function signatureXml(draft: XadesDraft, signature: Uint8Array, values: UnsignedValues = {}): string {
  const unsigned = unsignedProperties(draft, values);
  return (
    `<ds:Signature ${DS} Id="${draft.id}">` +
    draft.signedInfo +
    signatureValueElement(draft, signature) +
    draft.keyInfo +
    `<ds:Object><xades:QualifyingProperties xmlns:xades="${XADES_NS}" Target="#${draft.id}">` +
    draft.signedProperties +
    (unsigned
      ? `<xades:UnsignedProperties><xades:UnsignedSignatureProperties>${unsigned}</xades:UnsignedSignatureProperties></xades:UnsignedProperties>`
      : '') +
    '</xades:QualifyingProperties></ds:Object></ds:Signature>'
  );
}

function unsignedProperties(draft: XadesDraft, values: UnsignedValues): string {
  return unsignedPropertiesXml(values, { signatureTimestamp: `ts-${draft.id}`, archiveTimestamp: `ats-${draft.id}` });
}

/** How the unsigned properties esign writes are put: their Ids, and whether each declares its namespaces. */
export interface UnsignedPropertyOptions {
  readonly signatureTimestamp?: string;
  readonly archiveTimestamp?: string;
  /**
   * Each property element declares the namespaces it uses (`xades`, `xades141`, `ds`): for a
   * signature esign did not write, whose prefixes may be others (`esign extend`).
   */
  readonly declare?: boolean;
}

/** The children of UnsignedSignatureProperties `values` holds, in the order EN 319 132-1 gives them. */
export function unsignedPropertiesXml(values: UnsignedValues, options: UnsignedPropertyOptions): string {
  const xadesNs = options.declare ? ` xmlns:xades="${XADES_NS}"` : '';
  const dsNs = options.declare ? ` ${DS}` : '';
  let xml = '';
  if (values.signatureTimestamp)
    xml +=
      `<xades:SignatureTimeStamp${xadesNs}${dsNs} Id="${options.signatureTimestamp}"><ds:CanonicalizationMethod Algorithm="${EXC_C14N}"/>` +
      `<xades:EncapsulatedTimeStamp>${B64(values.signatureTimestamp)}</xades:EncapsulatedTimeStamp></xades:SignatureTimeStamp>`;
  xml += validationValuesXml(values, xadesNs);
  if (values.archiveTimestamp)
    xml +=
      `<xades141:ArchiveTimeStamp xmlns:xades141="${XADES141_NS}"${xadesNs}${dsNs} Id="${options.archiveTimestamp}">` +
      `<ds:CanonicalizationMethod Algorithm="${EXC_C14N}"/>` +
      `<xades:EncapsulatedTimeStamp>${B64(values.archiveTimestamp)}</xades:EncapsulatedTimeStamp></xades141:ArchiveTimeStamp>`;
  return xml;
}

/**
 * A `xadesv141:TimeStampValidationData` (EN 319 132-1 §5.5.1): the certificates and revocation
 * values that come after an archive timestamp (those of its TSA's chain, at a refresh), in the
 * CertificateValues and RevocationValues forms. Declares its namespaces.
 */
export function timeStampValidationDataXml(
  values: Pick<UnsignedValues, 'certificateValues' | 'crls' | 'ocsps'>,
  id: string,
): string {
  return (
    `<xades141:TimeStampValidationData xmlns:xades141="${XADES141_NS}" xmlns:xades="${XADES_NS}" Id="${id}">` +
    validationValuesXml(values, '') +
    '</xades141:TimeStampValidationData>'
  );
}

/** CertificateValues and RevocationValues (each only when it has values); `xadesNs`: a declaration on each. */
function validationValuesXml(
  values: Pick<UnsignedValues, 'certificateValues' | 'crls' | 'ocsps'>,
  xadesNs: string,
): string {
  let xml = '';
  if (values.certificateValues && values.certificateValues.length > 0)
    xml +=
      `<xades:CertificateValues${xadesNs}>` +
      values.certificateValues
        .map((der) => `<xades:EncapsulatedX509Certificate>${B64(der)}</xades:EncapsulatedX509Certificate>`)
        .join('') +
      '</xades:CertificateValues>';
  const crls = values.crls ?? [];
  const ocsps = values.ocsps ?? [];
  if (crls.length + ocsps.length > 0)
    xml +=
      `<xades:RevocationValues${xadesNs}>` +
      (crls.length > 0
        ? `<xades:CRLValues>${crls.map((der) => `<xades:EncapsulatedCRLValue>${B64(der)}</xades:EncapsulatedCRLValue>`).join('')}</xades:CRLValues>`
        : '') +
      (ocsps.length > 0
        ? `<xades:OCSPValues>${ocsps.map((der) => `<xades:EncapsulatedOCSPValue>${B64(der)}</xades:EncapsulatedOCSPValue>`).join('')}</xades:OCSPValues>`
        : '') +
      '</xades:RevocationValues>';
  return xml;
}

/**
 * The input of an ArchiveTimeStamp (EN 319 132-1 §5.5.2.2, exclusive c14n): `references` (a hash
 * fed with what each ds:Reference to a data object gives after its transforms, in order), then the
 * SignedProperties (what its Reference gives), SignedInfo, SignatureValue and KeyInfo, then every
 * child of UnsignedSignatureProperties in order, each canonical. `signature` is the ds:Signature
 * without the archive timestamp. Returns the digest to stamp.
 */
export function archiveTimestampImprint(signature: string, references: Hash): Uint8Array {
  const doc = parseBuilt(signature);
  const hash = references;
  const feed = (element: Parameters<typeof excC14n>[0]) => hash.update(excC14n(element), 'utf8');
  feed(firstElement(doc, XADES_NS, 'SignedProperties'));
  feed(firstElement(doc, DSIG_NS, 'SignedInfo'));
  feed(firstElement(doc, DSIG_NS, 'SignatureValue'));
  feed(firstElement(doc, DSIG_NS, 'KeyInfo'));
  const unsigned = firstElement(doc, XADES_NS, 'UnsignedSignatureProperties');
  for (let child = unsigned.firstChild; child; child = child.nextSibling) if (child.nodeType === 1) feed(child);
  return new Uint8Array(hash.digest());
}

function transformsElement(transforms: readonly string[]): string {
  if (transforms.length === 0) return '';
  return `<ds:Transforms>${transforms.map((t) => `<ds:Transform Algorithm="${t}"/>`).join('')}</ds:Transforms>`;
}

/** SigningCertificateV2: the certificate's digest and its IssuerSerialV2 (DER IssuerSerial of RFC 5035, base64). */
function signingCertificateV2(certificateDer: Uint8Array, digest: DigestName): string {
  const certificate = readCertificate(certificateDer);
  const issuerSerial = sequence(sequence(explicit(4, certificate.issuer)), certificate.serialNumberDer);
  return (
    '<xades:SigningCertificateV2><xades:Cert><xades:CertDigest>' +
    digestElements(digest, new Uint8Array(createHash(digest).update(certificateDer).digest())) +
    `</xades:CertDigest><xades:IssuerSerialV2>${B64(issuerSerial)}</xades:IssuerSerialV2></xades:Cert></xades:SigningCertificateV2>`
  );
}

const SHA1_URI = 'http://www.w3.org/2000/09/xmldsig#sha1';

/** The Description and ObjectIdentifier a policy asks of a DataObjectFormat (FacturaE: the invoice's). */
function dataObjectDescription(policy: SignaturePolicy | undefined): string {
  if (!policy?.dataObject) return '';
  const { description, objectIdentifier } = policy.dataObject;
  return (
    `<xades:Description>${escapeXml(description)}</xades:Description>` +
    '<xades:ObjectIdentifier><xades:Identifier Qualifier="OIDAsURN">' +
    `${escapeXml(objectIdentifier)}</xades:Identifier></xades:ObjectIdentifier>`
  );
}

function policyIdentifier(policy: SignaturePolicy): string {
  const hashUri = policy.hashAlgorithm === 'sha1' ? SHA1_URI : DIGEST_URI[policy.hashAlgorithm];
  const identifier = policy.identifier.startsWith('urn:oid:')
    ? `<xades:Identifier Qualifier="OIDAsURN">${escapeXml(policy.identifier)}</xades:Identifier>`
    : `<xades:Identifier>${escapeXml(policy.identifier)}</xades:Identifier>`;
  return (
    '<xades:SignaturePolicyIdentifier><xades:SignaturePolicyId><xades:SigPolicyId>' +
    identifier +
    (policy.description ? `<xades:Description>${escapeXml(policy.description)}</xades:Description>` : '') +
    '</xades:SigPolicyId><xades:SigPolicyHash>' +
    `<ds:DigestMethod Algorithm="${hashUri}"/><ds:DigestValue>${escapeXml(policy.hashBase64)}</ds:DigestValue>` +
    '</xades:SigPolicyHash>' +
    (policy.url
      ? `<xades:SigPolicyQualifiers><xades:SigPolicyQualifier><xades:SPURI>${escapeXml(policy.url)}</xades:SPURI></xades:SigPolicyQualifier></xades:SigPolicyQualifiers>`
      : '') +
    '</xades:SignaturePolicyId></xades:SignaturePolicyIdentifier>' +
    (policy.claimedRole
      ? `<xades:${policy.claimedRole.element}><xades:ClaimedRoles><xades:ClaimedRole>${escapeXml(policy.claimedRole.role)}</xades:ClaimedRole></xades:ClaimedRoles></xades:${policy.claimedRole.element}>`
      : '')
  );
}
