import { constants, createHash, verify } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { Asn1StructureError, decode, isUniversal, octets, oid, sequenceItems } from './der.js';
import { HASH_NAME_BY_OID, OID } from './oids.js';
import { bytesEqual } from './parse.js';
import type { ParsedSignedData } from './parse.js';
import { x509Of } from './x509.js';

export type SignerCheck = { valid: true } | { valid: false; reason: string };

export interface SignerCheckOptions {
  /** SHA-digest of the signed content under the SignerInfo's digestAlgorithm; computed from eContent when absent. */
  contentDigest?: Uint8Array;
  /** Fail when neither signing-certificate nor signing-certificate-v2 is present (RFC 3161, CAdES). */
  requireSigningCertificate?: boolean;
}

/**
 * Checks the one SignerInfo of a parsed SignedData: the signer certificate is present, the
 * message-digest attribute matches the content, the ESS signing-certificate(-v2) attribute names that
 * certificate, and the signature over the signed attributes verifies with its public key.
 * Says why it fails instead of throwing, so callers choose their error code.
 */
export function verifySignerInfo(signed: ParsedSignedData, options: SignerCheckOptions = {}): SignerCheck {
  const certificate = signed.signerCertificate;
  if (certificate === undefined) return invalid('the signer certificate is not in the CMS');
  const attributes = signed.signedAttributes;
  if (attributes === undefined) return invalid('the SignerInfo has no signed attributes');
  const hashName = HASH_NAME_BY_OID[signed.digestAlgorithm];
  if (hashName === undefined) return invalid(`unsupported digest algorithm ${signed.digestAlgorithm}`);

  let digest = options.contentDigest;
  if (digest === undefined) {
    if (signed.encapContent === undefined) return invalid('detached content and no digest given');
    digest = new Uint8Array(createHash(hashName).update(signed.encapContent).digest());
  }
  if (attributes.messageDigest === undefined) return invalid('the message-digest attribute is missing');
  if (!bytesEqual(attributes.messageDigest, digest))
    return invalid('the message-digest attribute does not match the content');

  const essCheck = checkSigningCertificate(signed, certificate);
  if (essCheck !== undefined) {
    if (essCheck !== 'absent') return invalid(essCheck);
    if (options.requireSigningCertificate) return invalid('the signing-certificate attribute is missing');
  }

  let publicKey: KeyObject;
  try {
    publicKey = x509Of(certificate).publicKey;
  } catch (error) {
    return invalid(`the signer certificate cannot be read (${(error as Error).message})`);
  }
  return verifySignature(signed.signatureAlgorithm, hashName, attributes.der, signed.signatureValue, publicKey)
    ? { valid: true }
    : invalid('the signature over the signed attributes does not verify with the signer certificate');
}

const SIGNATURE_HASH_BY_OID: Readonly<Record<string, { keyType: string; hash: string | undefined }>> = {
  [OID.rsaEncryption]: { keyType: 'rsa', hash: undefined },
  [OID.sha256WithRSAEncryption]: { keyType: 'rsa', hash: 'sha256' },
  [OID.sha384WithRSAEncryption]: { keyType: 'rsa', hash: 'sha384' },
  [OID.sha512WithRSAEncryption]: { keyType: 'rsa', hash: 'sha512' },
  [OID.ecdsaWithSHA256]: { keyType: 'ec', hash: 'sha256' },
  [OID.ecdsaWithSHA384]: { keyType: 'ec', hash: 'sha384' },
  [OID.ecdsaWithSHA512]: { keyType: 'ec', hash: 'sha512' },
};

/** Verifies `signature` over `data` for a CMS signatureAlgorithm (rsaEncryption takes the digest algorithm's hash). */
export function verifySignature(
  algorithm: string,
  digestHash: string,
  data: Uint8Array,
  signature: Uint8Array,
  key: KeyObject,
): boolean {
  if (algorithm === OID.rsassaPss) {
    // Parameters unread here: the hash is the digest algorithm's, the salt length found by the check.
    if (key.asymmetricKeyType !== 'rsa') return false;
    try {
      return verify(
        digestHash,
        data,
        { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_AUTO },
        signature,
      );
    } catch {
      return false;
    }
  }
  const scheme = SIGNATURE_HASH_BY_OID[algorithm];
  if (scheme === undefined || key.asymmetricKeyType !== scheme.keyType) return false;
  try {
    return verify(scheme.hash ?? digestHash, data, key, signature);
  } catch {
    return false;
  }
}

/** undefined when the ESS attribute names the certificate; 'absent'; or the reason it does not. */
export function checkSigningCertificate(
  signed: ParsedSignedData,
  certificate: Uint8Array,
  /** node:crypto's name of an ESSCertIDv2 hash algorithm; verification passes its wider table. */
  hashNameOf: (oid: string) => string | undefined = (oid) => HASH_NAME_BY_OID[oid],
): string | 'absent' | undefined {
  const attributes = signed.signedAttributes?.attributes ?? [];
  const v2 = attributes.find((attribute) => attribute.type === OID.signingCertificateV2);
  const v1 = attributes.find((attribute) => attribute.type === OID.signingCertificate);
  const found = v2 ?? v1;
  if (found === undefined) return 'absent';
  try {
    const [value] = found.values;
    if (value === undefined) throw new Asn1StructureError('no value');
    const [certs] = sequenceItems(decode(value, 'SigningCertificate'), 'SigningCertificate');
    const [first] = sequenceItems(certs, 'certs');
    const fields = sequenceItems(first, 'ESSCertID');
    let hashName = 'sha1';
    let hashField = fields[0];
    if (v2 !== undefined) {
      hashName = 'sha256';
      // ESSCertIDv2 starts with hashAlgorithm unless it is the DEFAULT (SHA-256).
      if (isUniversal(hashField, 16)) {
        const [algorithm] = sequenceItems(hashField, 'hashAlgorithm');
        const named = hashNameOf(oid(algorithm, 'hashAlgorithm'));
        if (named === undefined) return 'the signing-certificate-v2 attribute uses an unsupported hash';
        hashName = named;
        hashField = fields[1];
      }
    }
    const expected = octets(hashField, 'certHash');
    const actual = new Uint8Array(createHash(hashName).update(certificate).digest());
    return bytesEqual(expected, actual) ? undefined : 'the signing-certificate attribute names a different certificate';
  } catch (error) {
    return `the signing-certificate attribute is malformed (${(error as Error).message})`;
  }
}

function invalid(reason: string): SignerCheck {
  return { valid: false, reason };
}
