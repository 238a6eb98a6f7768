import { createHash } from 'node:crypto';
import { digestLabel, digestOfLength, type DigestName } from './algorithms.js';
import { readCertificate } from './certificate.js';
import { explicit, objectIdentifier, octetString, sequence, setOf, time } from './der.js';
import { OID } from './oids.js';
import { EsignError } from '../errors.js';

export interface SignedAttributesInput {
  /** Digest of the signed data (the PDF byte ranges, or the whole file for CAdES). */
  contentDigest: Uint8Array;
  /** The signature's digest algorithm, of the content digest and of the signed attributes; SHA-256 when absent. */
  digest?: DigestName;
  /** DER of the signer's certificate. */
  signerCertificate: Uint8Array;
  /** CAdES only: PAdES carries the time in the signature dictionary's /M instead. */
  signingTime?: Date;
}

export interface SignedAttributes {
  /** DER of the SET OF Attribute (tag 0x31): exactly the bytes that are hashed and signed. */
  der: Uint8Array;
  /** Digest of `der`: the hash sent to the remote signer. */
  toBeSignedHash: Uint8Array;
}

/**
 * Builds the CMS signed attributes of a CAdES/PAdES baseline signature: content-type (id-data),
 * message-digest, signing-certificate-v2 (ESSCertIDv2 over SHA-256, with issuerSerial) and, when
 * given, signing-time. The SET is in DER order. The certificate's ESS hash stays SHA-256 whatever
 * the signature's digest: it names the certificate, and SHA-256 is its DEFAULT, which every validator reads.
 */
export function buildSignedAttributes(input: SignedAttributesInput): SignedAttributes {
  const digest = input.digest ?? 'sha256';
  if (digestOfLength(input.contentDigest.length) !== digest) {
    throw new EsignError(
      'INTERNAL',
      `The content digest must be ${createHash(digest).digest().length} bytes of ${digestLabel(digest)}, got ${input.contentDigest.length}.`,
    );
  }
  const attributes = [
    attribute(OID.contentType, objectIdentifier(OID.data)),
    attribute(OID.messageDigest, octetString(input.contentDigest)),
    attribute(OID.signingCertificateV2, signingCertificateV2(input.signerCertificate)),
  ];
  if (input.signingTime !== undefined) attributes.push(attribute(OID.signingTime, time(input.signingTime)));
  const der = setOf(attributes);
  return { der, toBeSignedHash: new Uint8Array(createHash(digest).update(der).digest()) };
}

/** Attribute ::= SEQUENCE { attrType OBJECT IDENTIFIER, attrValues SET OF AttributeValue } */
export function attribute(type: string, ...values: Uint8Array[]): Uint8Array {
  return sequence(objectIdentifier(type), setOf(values));
}

/**
 * SigningCertificateV2 ::= SEQUENCE { certs SEQUENCE OF ESSCertIDv2 } (RFC 5035), one ESSCertIDv2
 * { certHash, issuerSerial } with hashAlgorithm left at its DEFAULT, SHA-256.
 */
export function signingCertificateV2(certificateDer: Uint8Array): Uint8Array {
  let certificate: ReturnType<typeof readCertificate>;
  try {
    certificate = readCertificate(certificateDer);
  } catch (error) {
    throw new EsignError('CMS_BAD_STRUCTURE', 'The signing certificate is not a DER X.509 certificate.', {
      cause: error,
    });
  }
  const certHash = new Uint8Array(createHash('sha256').update(certificateDer).digest());
  const generalNames = sequence(explicit(4, certificate.issuer));
  const issuerSerial = sequence(generalNames, certificate.serialNumberDer);
  return sequence(sequence(sequence(octetString(certHash), issuerSerial)));
}
