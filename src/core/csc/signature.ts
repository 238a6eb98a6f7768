/** PKCS#1 v1.5 over a SHA-256 digest: what signHash returns, and how esign checks it. */
import { X509Certificate, constants, publicDecrypt, type KeyObject } from 'node:crypto';
import { EsignError } from '../errors.js';
import { MAX_HASHES_PER_AUTHORIZATION, PKCS1_SHA256_SIGN_ALGOS, SHA256_LENGTH, type CredentialInfo } from './shapes.js';

/** DER prefix of DigestInfo { sha256, OCTET STRING(32) } (RFC 8017 §9.2 note 1). */
export const SHA256_DIGEST_INFO_PREFIX = Uint8Array.from([0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20]);

/** The DigestInfo that an RSA PKCS#1 v1.5 signature over `digest` encodes. */
export function sha256DigestInfo(digest: Uint8Array): Uint8Array {
  if (digest.length !== SHA256_LENGTH) throw new RangeError(`a SHA-256 digest is ${SHA256_LENGTH} bytes, got ${digest.length}`);
  const out = new Uint8Array(SHA256_DIGEST_INFO_PREFIX.length + SHA256_LENGTH);
  out.set(SHA256_DIGEST_INFO_PREFIX, 0);
  out.set(digest, SHA256_DIGEST_INFO_PREFIX.length);
  return out;
}

/**
 * True when `signature` is an RSA PKCS#1 v1.5 signature over the SHA-256 `digest` by the key of the
 * certificate (DER): the signature is as long as the modulus and decodes to exactly the DigestInfo.
 */
export function verifyDigestSignature(certificateDer: Uint8Array, digest: Uint8Array, signature: Uint8Array): boolean {
  const publicKey = publicKeyOf(certificateDer);
  const bits = publicKey.asymmetricKeyDetails?.modulusLength;
  if (publicKey.asymmetricKeyType !== 'rsa' || bits === undefined || signature.length !== Math.ceil(bits / 8)) return false;
  let decoded: Buffer;
  try {
    decoded = publicDecrypt({ key: publicKey, padding: constants.RSA_PKCS1_PADDING }, signature);
  } catch {
    return false;
  }
  return decoded.equals(sha256DigestInfo(digest));
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
 * How esign signs with a credential: how many hashes one approval covers (the least of 50, the
 * profile's cscMaxSignatures and the credential's multisign), and the signAlgo, which CSC wants
 * to be one of the credential's key/algo values.
 */
export function signingTerms(info: CredentialInfo, maxSignatures = MAX_HASHES_PER_AUTHORIZATION): { signaturesPerApproval: number; signAlgorithm: string } {
  const signAlgorithm = PKCS1_SHA256_SIGN_ALGOS.find((algorithm) => info.algorithms.includes(algorithm));
  if (!signAlgorithm) {
    throw new EsignError('CREDENTIAL_UNSUPPORTED_KEY', `The credential ${info.credentialID} signs with ${info.algorithms.join(', ') || 'no algorithm it names'}; esign signs with RSA (PKCS#1 v1.5, SHA-256) only.`, {
      hint: 'Choose an RSA credential: esign credentials list.',
      details: { credentialID: info.credentialID, algorithms: info.algorithms },
    });
  }
  const signaturesPerApproval = Math.min(MAX_HASHES_PER_AUTHORIZATION, maxSignatures, info.multisign ?? MAX_HASHES_PER_AUTHORIZATION);
  return { signaturesPerApproval, signAlgorithm };
}
