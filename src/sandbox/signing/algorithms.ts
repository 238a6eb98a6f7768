/**
 * The sandbox signing service's keys and signature algorithms: what each credential's key/algo
 * lists on each dialect, which signHash requests it accepts (signAlgo one of key/algo, hashAlgo or
 * hashAlgorithmOID when signAlgo does not name the hash, signAlgoParams for RSASSA-PSS), and the
 * signature values it returns — ECDSA as DER on v1 and as raw r||s (IEEE P1363) on v2, as services
 * differ, so that the client's conversion is put to the test.
 */
import { constants, privateEncrypt } from 'node:crypto';
import {
  digestInfo,
  digestOfLength,
  digestOfOid,
  readPssParameters,
  type DigestName,
  type SignatureScheme,
} from '../../core/cms/algorithms.js';
import { signEcdsaHash, type CurveName } from '../../core/cms/ecdsa.js';
import { OID } from '../../core/cms/oids.js';
import { signPssHash } from '../../core/cms/rsa-pss.js';
import { CMS_SHA256_WITH_RSA, CSC_SIGN_ALGO_RSA } from '../../core/csc/shapes.js';
import type { SandboxCredential } from '../pki.js';

const CURVE_DIGEST: Readonly<Record<CurveName, DigestName>> = {
  'P-256': 'sha256',
  'P-384': 'sha384',
  'P-521': 'sha512',
};
const CURVE_OID: Readonly<Record<CurveName, string>> = {
  'P-256': '1.2.840.10045.3.1.7',
  'P-384': '1.3.132.0.34',
  'P-521': '1.3.132.0.35',
};
const ECDSA_BY_DIGEST: Readonly<Record<DigestName, string>> = {
  sha256: OID.ecdsaWithSHA256,
  sha384: OID.ecdsaWithSHA384,
  sha512: OID.ecdsaWithSHA512,
};

/** signAlgo values that name their hash, and which. */
const HASH_NAMED_BY: Readonly<Record<string, DigestName>> = {
  [OID.sha256WithRSAEncryption]: 'sha256',
  [OID.sha384WithRSAEncryption]: 'sha384',
  [OID.sha512WithRSAEncryption]: 'sha512',
  [OID.ecdsaWithSHA256]: 'sha256',
  [OID.ecdsaWithSHA384]: 'sha384',
  [OID.ecdsaWithSHA512]: 'sha512',
};

/**
 * key/algo: an EC credential lists the ECDSA of its curve's digest, the PSS credential only
 * id-RSASSA-PSS. An RSA credential lists rsaEncryption, except on v2 alice-rsa3072, which lists only
 * sha256WithRSAEncryption as several v2 services list their keys, so that the client's choice of
 * signAlgo (one of key/algo, §11.10) is put to the test.
 */
export function keyAlgorithms(credential: SandboxCredential, version: 1 | 2): string[] {
  if (credential.key.type === 'ec') return [ECDSA_BY_DIGEST[CURVE_DIGEST[credential.key.curve]]];
  if (credential.key.type === 'rsa-pss') return [OID.rsassaPss];
  return version === 2 && credential.credentialID === 'alice-rsa3072' ? [CMS_SHA256_WITH_RSA] : [CSC_SIGN_ALGO_RSA];
}

/** key/curve (the curve's OID), for an EC credential only. */
export function keyCurve(credential: SandboxCredential): { curve?: string } {
  return credential.key.type === 'ec' ? { curve: CURVE_OID[credential.key.curve] } : {};
}

export interface SignHashAlgorithm {
  signAlgo: string;
  /** v1 hashAlgo or v2 hashAlgorithmOID, as sent. */
  hashAlgorithm?: string;
  /** Base64 DER, as sent. */
  signAlgoParams?: string;
}

/**
 * The scheme a signHash request asks for, or the specification's description of what is wrong
 * with it: signAlgo outside key/algo, hashAlgo missing where signAlgo does not name the hash or
 * unknown (ignored where signAlgo names it), signAlgoParams missing or malformed for RSASSA-PSS, hashes of another length.
 */
export function schemeOfRequest(
  credential: SandboxCredential,
  version: 1 | 2,
  request: SignHashAlgorithm,
  hashes: Uint8Array[],
): SignatureScheme | string {
  const hashWord = version === 1 ? 'hashAlgo' : 'hashAlgorithmOID';
  if (!keyAlgorithms(credential, version).includes(request.signAlgo)) return 'Invalid parameter signAlgo';
  // "omitted or ignored if the hash algorithm is implicitly specified by the signAlgo" (v1.0.4 §11.9, v2 §11.10)
  const named = HASH_NAMED_BY[request.signAlgo];
  if (named === undefined && request.hashAlgorithm === undefined)
    return `Missing (or invalid type) string parameter ${hashWord}`;
  const digest = named ?? digestOfOid(request.hashAlgorithm ?? '');
  if (digest === undefined) return `Invalid parameter ${hashWord}`;
  if (hashes.some((hash) => digestOfLength(hash.length) !== digest)) return 'Invalid digest value length';
  if (credential.key.type === 'ec') return { kind: 'ecdsa', digest, curve: credential.key.curve };
  if (request.signAlgo !== OID.rsassaPss) return { kind: 'rsa-pkcs1', digest };
  if (request.signAlgoParams === undefined) return 'Missing (or invalid type) string parameter signAlgoParams';
  const params = readPssParameters(new Uint8Array(Buffer.from(request.signAlgoParams, 'base64')));
  if (!params || params.digest !== digest) return 'Invalid parameter signAlgoParams';
  return { kind: 'rsa-pss', digest, saltLength: params.saltLength };
}

/** A signature over `hash` with the credential's key. */
export function signWith(
  credential: SandboxCredential,
  scheme: SignatureScheme,
  hash: Uint8Array,
  version: 1 | 2,
): Uint8Array {
  const key = credential.signer.privateKey;
  if (scheme.kind === 'ecdsa') return signEcdsaHash(key, hash, version === 1 ? 'der' : 'ieee-p1363');
  if (scheme.kind === 'rsa-pss') return signPssHash(key, hash, { hash: scheme.digest, saltLength: scheme.saltLength });
  return new Uint8Array(privateEncrypt({ key, padding: constants.RSA_PKCS1_PADDING }, digestInfo(scheme.digest, hash)));
}
