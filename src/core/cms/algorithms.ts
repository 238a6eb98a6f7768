/**
 * The signature schemes esign signs with — RSA PKCS#1 v1.5, RSASSA-PSS and ECDSA on P-256/P-384/P-521,
 * each over SHA-256, SHA-384 or SHA-512 — and what a CMS SignerInfo says of them (RFC 5754, RFC 4055,
 * RFC 5480). The signature value a service returns for a hash is checked here against the certificate.
 */
import { X509Certificate, constants, timingSafeEqual, type KeyObject } from 'node:crypto';
import {
  Asn1StructureError,
  decode,
  derNull,
  explicit,
  explicitInner,
  isContext,
  objectIdentifier,
  oid,
  sequence,
  sequenceItems,
  smallInteger,
  integerValue,
} from './der.js';
import { curveOf, maxDerSignatureLength, verifyEcdsaHash, type CurveName } from './ecdsa.js';
import { OID } from './oids.js';
import { digestLength, openRsaSignature, verifyPssHash } from './rsa-pss.js';

export type DigestName = 'sha256' | 'sha384' | 'sha512';
export const DIGEST_NAMES: readonly DigestName[] = ['sha256', 'sha384', 'sha512'];
export const DIGEST_OID: Readonly<Record<DigestName, string>> = {
  sha256: OID.sha256,
  sha384: OID.sha384,
  sha512: OID.sha512,
};

export type SignatureScheme =
  | { kind: 'rsa-pkcs1'; digest: DigestName }
  | { kind: 'rsa-pss'; digest: DigestName; saltLength: number }
  | { kind: 'ecdsa'; digest: DigestName; curve: CurveName };

export const RSA_PKCS1_SHA256: SignatureScheme = { kind: 'rsa-pkcs1', digest: 'sha256' };

/** "SHA-384" for sha384. */
export function digestLabel(digest: DigestName): string {
  return `SHA-${digest.slice(3)}`;
}

export function digestOfOid(oidText: string): DigestName | undefined {
  return DIGEST_NAMES.find((name) => DIGEST_OID[name] === oidText);
}

/** The digest a hash of this many bytes comes from (32, 48 or 64: the SHA-2 family esign uses). */
export function digestOfLength(length: number): DigestName | undefined {
  return DIGEST_NAMES.find((name) => digestLength(name) === length);
}

/** Words for people: "ECDSA P-384 with SHA-384", "RSASSA-PSS with SHA-256 (MGF1 SHA-256, salt 32)". */
export function schemeLabel(scheme: SignatureScheme): string {
  const digest = digestLabel(scheme.digest);
  if (scheme.kind === 'ecdsa') return `ECDSA ${scheme.curve} with ${digest}`;
  if (scheme.kind === 'rsa-pss') return `RSASSA-PSS with ${digest} (MGF1 ${digest}, salt ${scheme.saltLength})`;
  return `RSA PKCS#1 v1.5 with ${digest}`;
}

/** The CMS signatureAlgorithm OID of a scheme: sha256WithRSAEncryption, id-RSASSA-PSS, ecdsa-with-SHA384… */
export function signatureAlgorithmOid(scheme: SignatureScheme): string {
  if (scheme.kind === 'rsa-pss') return OID.rsassaPss;
  const bits = scheme.digest.slice(3) as '256' | '384' | '512';
  return scheme.kind === 'ecdsa' ? OID[`ecdsaWithSHA${bits}`] : OID[`sha${bits}WithRSAEncryption`];
}

/**
 * DER of the SignerInfo signatureAlgorithm: RSA PKCS#1 v1.5 with an explicit NULL (RFC 4055),
 * ECDSA without parameters (RFC 5754 §3.3), RSASSA-PSS with its RSASSA-PSS-params.
 */
export function signatureAlgorithmIdentifier(scheme: SignatureScheme): Uint8Array {
  const algorithm = objectIdentifier(signatureAlgorithmOid(scheme));
  if (scheme.kind === 'ecdsa') return sequence(algorithm);
  if (scheme.kind === 'rsa-pss') return sequence(algorithm, pssParameters(scheme.digest, scheme.saltLength));
  return sequence(algorithm, derNull);
}

/**
 * RSASSA-PSS-params (RFC 4055 §3.1): the hash, MGF1 over the same hash, the salt length, and the
 * trailer field left at its DEFAULT. Hash identifiers carry NULL parameters, as OpenSSL writes them.
 */
export function pssParameters(digest: DigestName, saltLength: number): Uint8Array {
  const hash = sequence(objectIdentifier(DIGEST_OID[digest]), derNull);
  return sequence(
    explicit(0, hash),
    explicit(1, sequence(objectIdentifier(OID.mgf1), hash)),
    explicit(2, smallInteger(saltLength)),
  );
}

/**
 * Reads RSASSA-PSS-params as esign can sign or check them: hash and MGF1 hash the same SHA-2,
 * trailer 1. Undefined for anything else (SHA-1 defaults included).
 */
export function readPssParameters(der: Uint8Array): { digest: DigestName; saltLength: number } | undefined {
  try {
    const fields = sequenceItems(decode(der, 'RSASSA-PSS-params'), 'RSASSA-PSS-params');
    const field = (tag: number) => fields.find((item) => isContext(item, tag));
    const hashField = field(0);
    const mgfField = field(1);
    const saltField = field(2);
    const trailerField = field(3);
    if (
      !hashField ||
      !mgfField ||
      fields.length !== [hashField, mgfField, saltField, trailerField].filter(Boolean).length
    )
      return undefined;
    const digest = digestOfOid(
      oid(sequenceItems(explicitInner(hashField, 0, 'hashAlgorithm'), 'hashAlgorithm')[0], 'hashAlgorithm'),
    );
    const [mgf, mgfHash] = sequenceItems(explicitInner(mgfField, 1, 'maskGenAlgorithm'), 'maskGenAlgorithm');
    if (oid(mgf, 'maskGenAlgorithm') !== OID.mgf1) return undefined;
    if (digestOfOid(oid(sequenceItems(mgfHash, 'MGF1 hash')[0], 'MGF1 hash')) !== digest) return undefined;
    const saltLength = saltField ? Number(integerValue(explicitInner(saltField, 2, 'saltLength'), 'saltLength')) : 20;
    if (trailerField && integerValue(explicitInner(trailerField, 3, 'trailerField'), 'trailerField') !== 1n)
      return undefined;
    return digest && saltLength >= 0 && saltLength <= 512 ? { digest, saltLength } : undefined;
  } catch (error) {
    if (error instanceof Asn1StructureError) return undefined;
    throw error;
  }
}

/** Most bytes a signature value of the scheme takes with a key of `keyBits` (the modulus, or the DER ECDSA maximum). */
export function maxSignatureLength(scheme: SignatureScheme, keyBits: number): number {
  return scheme.kind === 'ecdsa' ? maxDerSignatureLength(scheme.curve) : Math.ceil(keyBits / 8);
}

/** The signer's key as esign can sign with it: RSA with its length, or EC on a curve it knows. */
export type SignerKey =
  { type: 'rsa'; bits: number } | { type: 'ec'; curve: CurveName; bits: number } | { type: 'other'; name: string };

export function signerKeyOf(certificateDer: Uint8Array): SignerKey {
  const key = new X509Certificate(certificateDer).publicKey;
  const curve = curveOf(key);
  if (curve) return { type: 'ec', curve, bits: Number(curve.slice(2)) };
  const bits = key.asymmetricKeyDetails?.modulusLength;
  if (key.asymmetricKeyType === 'rsa' && bits !== undefined) return { type: 'rsa', bits };
  const named = key.asymmetricKeyDetails?.namedCurve;
  return { type: 'other', name: `${key.asymmetricKeyType ?? 'unknown'}${named ? ` ${named}` : ''}` };
}

// A batch checks every signature against the same certificate: parsing it once per batch, not per
// signature, was a fifth of esign's time on one-page PDFs. Keyed by the array, which the credential holds.
const publicKeys = new WeakMap<Uint8Array, KeyObject>();

function publicKeyOf(certificateDer: Uint8Array): KeyObject {
  let key = publicKeys.get(certificateDer);
  if (!key) {
    key = new X509Certificate(certificateDer).publicKey;
    publicKeys.set(certificateDer, key);
  }
  return key;
}

/**
 * The signature value to put into the CMS when `signature` is a signature of the scheme over `hash`
 * by the certificate's key, else undefined. An ECDSA value may come as DER or as raw r||s; it is
 * returned as DER. Wrong lengths and encodings are refused.
 */
export function acceptedSignatureValue(
  certificateDer: Uint8Array,
  scheme: SignatureScheme,
  hash: Uint8Array,
  signature: Uint8Array,
): Uint8Array | undefined {
  if (hash.length !== digestLength(scheme.digest)) return undefined;
  const publicKey = publicKeyOf(certificateDer);
  if (scheme.kind === 'ecdsa')
    return curveOf(publicKey) === scheme.curve ? verifyEcdsaHash(publicKey, hash, signature) : undefined;
  if (scheme.kind === 'rsa-pss')
    return verifyPssHash(publicKey, hash, signature, { hash: scheme.digest, saltLength: scheme.saltLength })
      ? signature
      : undefined;
  const decoded = openRsaSignature(publicKey, signature, constants.RSA_PKCS1_PADDING);
  const expected = digestInfo(scheme.digest, hash);
  return decoded && decoded.length === expected.length && timingSafeEqual(decoded, expected) ? signature : undefined;
}

/** DigestInfo { AlgorithmIdentifier { hash, NULL }, OCTET STRING digest }: what PKCS#1 v1.5 signs (RFC 8017 §9.2). */
export function digestInfo(digest: DigestName, hash: Uint8Array): Uint8Array {
  return sequence(sequence(objectIdentifier(DIGEST_OID[digest]), derNull), Uint8Array.of(0x04, hash.length, ...hash));
}
