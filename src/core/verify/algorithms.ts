/**
 * The algorithms `esign verify` recognises in signatures others made: digest algorithms (with
 * SHAKE256's output length), signature algorithms (RSA PKCS#1 v1.5, RSASSA-PSS with its parameters,
 * ECDSA, Ed25519, Ed448) and what makes one no longer acceptable (SHA-1, MD5, RSA under 2048 bits).
 * Verification's own table: the signing side keeps its own.
 */
import { createHash, createVerify, constants, publicDecrypt, verify } from 'node:crypto';
import type { Hash, KeyObject } from 'node:crypto';
import {
  Asn1StructureError,
  decode,
  explicitInner,
  integerValue,
  isContext,
  isUniversal,
  oid,
  sequenceItems,
} from '../cms/der.js';

export interface DigestAlgorithm {
  oid: string;
  /** How reports name it: sha256, shake256-512, … */
  name: string;
  /** node:crypto's name. */
  hash: string;
  /** Output bytes for an extendable-output function (SHAKE). */
  outputLength?: number;
  /** Why it is no longer acceptable, when it is not. */
  weakness?: string;
}

const DIGESTS: Readonly<Record<string, Omit<DigestAlgorithm, 'oid'>>> = {
  '1.2.840.113549.2.5': { name: 'md5', hash: 'md5', weakness: 'MD5 is broken' },
  '1.3.14.3.2.26': {
    name: 'sha1',
    hash: 'sha1',
    weakness: 'SHA-1 is no longer acceptable for signatures (collisions)',
  },
  '2.16.840.1.101.3.4.2.4': { name: 'sha224', hash: 'sha224' },
  '2.16.840.1.101.3.4.2.1': { name: 'sha256', hash: 'sha256' },
  '2.16.840.1.101.3.4.2.2': { name: 'sha384', hash: 'sha384' },
  '2.16.840.1.101.3.4.2.3': { name: 'sha512', hash: 'sha512' },
  '2.16.840.1.101.3.4.2.5': { name: 'sha512-224', hash: 'sha512-224' },
  '2.16.840.1.101.3.4.2.6': { name: 'sha512-256', hash: 'sha512-256' },
  '2.16.840.1.101.3.4.2.7': { name: 'sha3-224', hash: 'sha3-224' },
  '2.16.840.1.101.3.4.2.8': { name: 'sha3-256', hash: 'sha3-256' },
  '2.16.840.1.101.3.4.2.9': { name: 'sha3-384', hash: 'sha3-384' },
  '2.16.840.1.101.3.4.2.10': { name: 'sha3-512', hash: 'sha3-512' },
  // RFC 8702: id-shake256 is 256 bits of output; id-shake256-len says how many (RFC 8419: 512 for Ed448)
  '2.16.840.1.101.3.4.2.12': { name: 'shake256', hash: 'shake256', outputLength: 32 },
};
const SHAKE256 = '2.16.840.1.101.3.4.2.12';
const SHAKE256_LEN = '2.16.840.1.101.3.4.2.18';
const ED448 = '1.3.101.113';

/**
 * The digest algorithm of an AlgorithmIdentifier, or undefined when esign does not know it.
 * `signatureAlgorithm` is the SignerInfo's: beside Ed448, id-shake256 without parameters is
 * SHAKE256 with 512 bits of output (RFC 8419 §2.3), not RFC 8702's 256.
 */
export function digestAlgorithm(
  algorithm: string,
  parameters?: Uint8Array,
  signatureAlgorithm?: string,
): DigestAlgorithm | undefined {
  if (algorithm === SHAKE256 && signatureAlgorithm === ED448)
    return { oid: algorithm, name: 'shake256-512', hash: 'shake256', outputLength: 64 };
  if (algorithm === SHAKE256_LEN) {
    const bits = parameters ? Number(integerValue(decode(parameters, 'ShakeOutputLen'), 'ShakeOutputLen')) : 0;
    if (!(bits > 0 && bits % 8 === 0 && bits <= 4096)) return undefined;
    return { oid: algorithm, name: `shake256-${bits}`, hash: 'shake256', outputLength: bits / 8 };
  }
  const known = DIGESTS[algorithm];
  return known ? { oid: algorithm, ...known } : undefined;
}

export function createDigest(digest: DigestAlgorithm): Hash {
  return digest.outputLength === undefined
    ? createHash(digest.hash)
    : createHash(digest.hash, { outputLength: digest.outputLength });
}

export interface SignatureScheme {
  /** Readable: sha256WithRSAEncryption, ecdsa-with-SHA384, RSASSA-PSS (sha256, MGF1 sha256, salt 32), Ed25519, … */
  name: string;
  /** node:crypto key types it verifies with. */
  keyTypes: readonly string[];
  /** The hash inside the signature; undefined for EdDSA (PureEdDSA signs the message itself). */
  hash: string | undefined;
  pss?: { saltLength: number };
  weakness?: string;
}

const RSA = ['rsa', 'rsa-pss'];
const SHA1_WEAKNESS = DIGESTS['1.3.14.3.2.26']?.weakness;

interface SchemeEntry {
  name: string;
  keyTypes: readonly string[];
  /** undefined: the SignerInfo's digest algorithm (rsaEncryption, id-ecPublicKey as NSS writes it). */
  hash?: string;
  eddsa?: true;
}

const SCHEMES: Readonly<Record<string, SchemeEntry>> = {
  '1.2.840.113549.1.1.1': { name: 'rsaEncryption', keyTypes: RSA },
  '1.2.840.113549.1.1.5': { name: 'sha1WithRSAEncryption', keyTypes: RSA, hash: 'sha1' },
  '1.2.840.113549.1.1.14': { name: 'sha224WithRSAEncryption', keyTypes: RSA, hash: 'sha224' },
  '1.2.840.113549.1.1.11': { name: 'sha256WithRSAEncryption', keyTypes: RSA, hash: 'sha256' },
  '1.2.840.113549.1.1.12': { name: 'sha384WithRSAEncryption', keyTypes: RSA, hash: 'sha384' },
  '1.2.840.113549.1.1.13': { name: 'sha512WithRSAEncryption', keyTypes: RSA, hash: 'sha512' },
  '1.2.840.113549.1.1.15': { name: 'sha512-224WithRSAEncryption', keyTypes: RSA, hash: 'sha512-224' },
  '1.2.840.113549.1.1.16': { name: 'sha512-256WithRSAEncryption', keyTypes: RSA, hash: 'sha512-256' },
  // NIST CSOR: RSA PKCS#1 v1.5 and ECDSA over SHA3 (RFC 8702 names them for CMS)
  '2.16.840.1.101.3.4.3.13': { name: 'id-rsassa-pkcs1-v1_5-with-sha3-224', keyTypes: RSA, hash: 'sha3-224' },
  '2.16.840.1.101.3.4.3.14': { name: 'id-rsassa-pkcs1-v1_5-with-sha3-256', keyTypes: RSA, hash: 'sha3-256' },
  '2.16.840.1.101.3.4.3.15': { name: 'id-rsassa-pkcs1-v1_5-with-sha3-384', keyTypes: RSA, hash: 'sha3-384' },
  '2.16.840.1.101.3.4.3.16': { name: 'id-rsassa-pkcs1-v1_5-with-sha3-512', keyTypes: RSA, hash: 'sha3-512' },
  '2.16.840.1.101.3.4.3.9': { name: 'id-ecdsa-with-sha3-224', keyTypes: ['ec'], hash: 'sha3-224' },
  '2.16.840.1.101.3.4.3.10': { name: 'id-ecdsa-with-sha3-256', keyTypes: ['ec'], hash: 'sha3-256' },
  '2.16.840.1.101.3.4.3.11': { name: 'id-ecdsa-with-sha3-384', keyTypes: ['ec'], hash: 'sha3-384' },
  '2.16.840.1.101.3.4.3.12': { name: 'id-ecdsa-with-sha3-512', keyTypes: ['ec'], hash: 'sha3-512' },
  '1.2.840.10045.2.1': { name: 'ecPublicKey', keyTypes: ['ec'] },
  '1.2.840.10045.4.1': { name: 'ecdsa-with-SHA1', keyTypes: ['ec'], hash: 'sha1' },
  '1.2.840.10045.4.3.1': { name: 'ecdsa-with-SHA224', keyTypes: ['ec'], hash: 'sha224' },
  '1.2.840.10045.4.3.2': { name: 'ecdsa-with-SHA256', keyTypes: ['ec'], hash: 'sha256' },
  '1.2.840.10045.4.3.3': { name: 'ecdsa-with-SHA384', keyTypes: ['ec'], hash: 'sha384' },
  '1.2.840.10045.4.3.4': { name: 'ecdsa-with-SHA512', keyTypes: ['ec'], hash: 'sha512' },
  '1.3.101.112': { name: 'Ed25519', keyTypes: ['ed25519'], eddsa: true },
  '1.3.101.113': { name: 'Ed448', keyTypes: ['ed448'], eddsa: true },
};
const RSASSA_PSS = '1.2.840.113549.1.1.10';

/**
 * How every check words an algorithm esign does not implement: INDETERMINATE
 * (CRYPTO_CONSTRAINTS_FAILURE), never a broken signature (`isUnsupported` tells it apart).
 */
export const UNSUPPORTED = 'esign does not implement';

export function isUnsupported(problem: string): boolean {
  return problem.includes(UNSUPPORTED);
}
const MGF1 = '1.2.840.113549.1.1.8';

/**
 * The signature scheme of a SignerInfo's signatureAlgorithm, or why esign cannot check it.
 * `digest` is the SignerInfo's digest algorithm, which rsaEncryption and id-ecPublicKey sign under.
 */
export function signatureScheme(
  algorithm: string,
  parameters: Uint8Array | undefined,
  digest: DigestAlgorithm,
): SignatureScheme | { unsupported: string } {
  if (algorithm === RSASSA_PSS) return pssScheme(parameters);
  const entry = SCHEMES[algorithm];
  if (!entry) return { unsupported: `${UNSUPPORTED} the signature algorithm ${algorithm}` };
  if (entry.eddsa) return { name: entry.name, keyTypes: entry.keyTypes, hash: undefined };
  const hash = entry.hash ?? digest.hash;
  const name = entry.hash ? entry.name : `${entry.name} with ${digest.name}`;
  const weakness = hash === 'sha1' || hash === 'md5' ? (DIGESTS[digest.oid]?.weakness ?? SHA1_WEAKNESS) : undefined;
  if (digest.outputLength !== undefined && entry.hash === undefined)
    return { unsupported: `${UNSUPPORTED} ${entry.name} under ${digest.name}` };
  return { name, keyTypes: entry.keyTypes, hash, ...(weakness ? { weakness } : {}) };
}

/** RSASSA-PSS-params (RFC 4055): defaults SHA-1, MGF1 with SHA-1, salt 20, trailer 1. */
function pssScheme(parameters: Uint8Array | undefined): SignatureScheme | { unsupported: string } {
  let hash = 'sha1';
  let mgfHash = 'sha1';
  let saltLength = 20;
  try {
    const fields = parameters ? sequenceItems(decode(parameters, 'RSASSA-PSS-params'), 'RSASSA-PSS-params') : [];
    for (const field of fields) {
      const inner = explicitInner(field, field.tagNumber, 'RSASSA-PSS-params');
      if (isContext(field, 0)) hash = hashOf(inner);
      else if (isContext(field, 1)) {
        const [mgf, mgfParameters] = sequenceItems(inner, 'maskGenAlgorithm');
        if (oid(mgf, 'maskGenAlgorithm') !== MGF1)
          return { unsupported: `${UNSUPPORTED} RSASSA-PSS with a mask generation function other than MGF1` };
        mgfHash = hashOf(mgfParameters);
      } else if (isContext(field, 2)) saltLength = Number(integerValue(inner, 'saltLength'));
      else if (isContext(field, 3) && integerValue(inner, 'trailerField') !== 1n)
        return { unsupported: `${UNSUPPORTED} RSASSA-PSS with a trailer field other than 1` };
    }
  } catch (error) {
    if (error instanceof Asn1StructureError)
      return { unsupported: `RSASSA-PSS parameters are malformed (${error.message})` };
    throw error;
  }
  // node:crypto (OpenSSL) uses the signature's hash for MGF1 as well.
  if (mgfHash !== hash)
    return { unsupported: `${UNSUPPORTED} RSASSA-PSS with MGF1 over ${mgfHash} but the hash ${hash}` };
  const weakness = hash === 'sha1' ? SHA1_WEAKNESS : undefined;
  return {
    name: `RSASSA-PSS (${hash}, MGF1 ${mgfHash}, salt ${saltLength})`,
    keyTypes: RSA,
    hash,
    pss: { saltLength },
    ...(weakness ? { weakness } : {}),
  };
}

function hashOf(algorithmIdentifier: ReturnType<typeof decode> | undefined): string {
  if (!isUniversal(algorithmIdentifier, 16)) throw new Asn1StructureError('expected an AlgorithmIdentifier');
  const [algorithm] = sequenceItems(algorithmIdentifier, 'AlgorithmIdentifier');
  const digest = DIGESTS[oid(algorithm, 'algorithm')];
  if (!digest || digest.outputLength !== undefined) throw new Asn1StructureError('unknown hash algorithm');
  return digest.hash;
}

/**
 * Why a certificate's own signature (its issuer's, over it) is no longer acceptable: a SHA-1 or
 * MD5 signature algorithm, read from the certificate's outer AlgorithmIdentifier.
 */
export function certificateSignatureWeakness(der: Uint8Array): string | undefined {
  try {
    const algorithm = oid(
      sequenceItems(sequenceItems(decode(der, 'certificate'), 'certificate')[1], 'signatureAlgorithm')[0],
      'algorithm',
    );
    const hash = algorithm === RSASSA_PSS ? undefined : SCHEMES[algorithm]?.hash;
    if (hash === 'md5' || algorithm === '1.2.840.113549.1.1.4')
      return `${SCHEMES[algorithm]?.name ?? 'md5WithRSAEncryption'}: ${DIGESTS['1.2.840.113549.2.5']?.weakness}`;
    if (hash === 'sha1') return `${SCHEMES[algorithm]?.name}: ${SHA1_WEAKNESS}`;
  } catch {
    // An unreadable certificate is reported by the chain, not here.
  }
  return undefined;
}

/** "RSA 2048", "EC P-384", "Ed25519": the signer key as reports show it. */
export function describeKey(key: KeyObject): string {
  const details = key.asymmetricKeyDetails;
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return `RSA ${details?.modulusLength ?? '?'}`;
    case 'rsa-pss':
      return `RSA-PSS ${details?.modulusLength ?? '?'}`;
    case 'ec':
      return `EC ${CURVE_NAMES[details?.namedCurve ?? ''] ?? details?.namedCurve ?? '?'}`;
    case 'ed25519':
      return 'Ed25519';
    case 'ed448':
      return 'Ed448';
    default:
      return key.asymmetricKeyType ?? 'unknown';
  }
}

const CURVE_NAMES: Readonly<Record<string, string>> = { prime256v1: 'P-256', secp384r1: 'P-384', secp521r1: 'P-521' };

/** Why the signer key is no longer acceptable (RSA under 2048 bits, EC under 256), if it is not. */
export function keyWeakness(key: KeyObject): string | undefined {
  const details = key.asymmetricKeyDetails;
  const rsaBits =
    key.asymmetricKeyType === 'rsa' || key.asymmetricKeyType === 'rsa-pss' ? details?.modulusLength : undefined;
  if (rsaBits !== undefined && rsaBits < 2048) return `an RSA key of ${rsaBits} bits is too short (2048 at least)`;
  if (key.asymmetricKeyType === 'ec' && ['prime192v1', 'secp224r1'].includes(details?.namedCurve ?? ''))
    return `the curve ${details?.namedCurve ?? ''} is too small (P-256 at least)`;
  return undefined;
}

/** Verifies `signature` over `data` (PureEdDSA, or a hash-then-sign scheme) with `key`. */
export function verifyWith(scheme: SignatureScheme, data: Uint8Array, key: KeyObject, signature: Uint8Array): boolean {
  if (!scheme.keyTypes.includes(key.asymmetricKeyType ?? '')) return false;
  try {
    return verify(scheme.hash ?? null, data, keyInput(scheme, key), signature);
  } catch {
    return false;
  }
}

/** A streaming verifier for hash-then-sign schemes (no signed attributes: the content itself is signed). */
export function streamingVerifier(
  scheme: SignatureScheme,
  key: KeyObject,
): { update(chunk: Uint8Array): void; verify(signature: Uint8Array): boolean } | undefined {
  if (scheme.hash === undefined) return undefined;
  const verifier = createVerify(scheme.hash);
  return {
    update: (chunk) => void verifier.update(chunk),
    verify: (signature) => {
      if (!scheme.keyTypes.includes(key.asymmetricKeyType ?? '')) return false;
      try {
        return verifier.verify(keyInput(scheme, key), signature);
      } catch {
        return false;
      }
    },
  };
}

/**
 * RSA PKCS#1 v1.5 only: whether `signature` opens under `key` (a well-formed DigestInfo inside), so
 * that a signature over content which no longer matches is told apart from a forged one.
 */
export function opensUnderKey(scheme: SignatureScheme, key: KeyObject, signature: Uint8Array): boolean {
  if (scheme.pss || key.asymmetricKeyType !== 'rsa' || scheme.hash === undefined) return false;
  try {
    publicDecrypt({ key, padding: constants.RSA_PKCS1_PADDING }, signature);
    return true;
  } catch {
    return false;
  }
}

function keyInput(
  scheme: SignatureScheme,
  key: KeyObject,
): KeyObject | { key: KeyObject; padding: number; saltLength: number } {
  return scheme.pss ? { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: scheme.pss.saltLength } : key;
}
