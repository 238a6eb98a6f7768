/**
 * How esign signs with a credential — which signature scheme its `key/algo` and certificate allow,
 * what `signAlgo` (and `signAlgoParams`) to send — and how each returned value is checked.
 */
import {
  DIGEST_NAMES,
  RSA_PKCS1_SHA256,
  acceptedSignatureValue,
  digestInfo,
  digestLabel,
  pssParameters,
  signerKeyOf,
  type DigestName,
  type SignatureScheme,
  type SignerKey,
} from '../cms/algorithms.js';
import { OID } from '../cms/oids.js';
import { certificate, validAt } from '../verify/chain.js';
import { EsignError } from '../errors.js';
import {
  MAX_HASHES_PER_AUTHORIZATION,
  MAX_HASHES_PER_CREDENTIAL_AUTHORIZATION,
  SHA256_LENGTH,
  type CredentialInfo,
} from './shapes.js';

/** The DigestInfo that an RSA PKCS#1 v1.5 signature over a SHA-256 `digest` encodes. */
export function sha256DigestInfo(digest: Uint8Array): Uint8Array {
  if (digest.length !== SHA256_LENGTH)
    throw new RangeError(`a SHA-256 digest is ${SHA256_LENGTH} bytes, got ${digest.length}`);
  return digestInfo('sha256', digest);
}

/**
 * True when `signature` is a signature of the scheme (RSA PKCS#1 v1.5 over SHA-256 by default) over
 * `hash` by the certificate's key. `acceptedSignatureValue` also gives the value to use (ECDSA as DER).
 */
export function verifyDigestSignature(
  certificateDer: Uint8Array,
  hash: Uint8Array,
  signature: Uint8Array,
  scheme: SignatureScheme = RSA_PKCS1_SHA256,
): boolean {
  return acceptedSignatureValue(certificateDer, scheme, hash, signature) !== undefined;
}

export interface SigningTerms {
  /** Hashes one approval covers. */
  signaturesPerApproval: number;
  /** The `signAlgo` sent with the hashes: one of the credential's key/algo. */
  signAlgorithm: string;
  /** `signAlgoParams` (base64 DER), for RSASSA-PSS. */
  signAlgorithmParams?: string;
  scheme: SignatureScheme;
}

/** What one key/algo value lets esign do with a key: the scheme kind and the digests it takes. */
interface Offer {
  signAlgo: string;
  kind: SignatureScheme['kind'];
  keyType: 'rsa' | 'ec';
  digests: readonly DigestName[];
}

const ANY_DIGEST = DIGEST_NAMES;

/** key/algo values esign can sign with, in its order of preference: PKCS#1 v1.5 as before, then PSS, then ECDSA. */
const OFFERS: readonly Offer[] = [
  { signAlgo: OID.rsaEncryption, kind: 'rsa-pkcs1', keyType: 'rsa', digests: ANY_DIGEST },
  { signAlgo: OID.sha256WithRSAEncryption, kind: 'rsa-pkcs1', keyType: 'rsa', digests: ['sha256'] },
  { signAlgo: OID.sha384WithRSAEncryption, kind: 'rsa-pkcs1', keyType: 'rsa', digests: ['sha384'] },
  { signAlgo: OID.sha512WithRSAEncryption, kind: 'rsa-pkcs1', keyType: 'rsa', digests: ['sha512'] },
  { signAlgo: OID.rsassaPss, kind: 'rsa-pss', keyType: 'rsa', digests: ANY_DIGEST },
  { signAlgo: OID.ecPublicKey, kind: 'ecdsa', keyType: 'ec', digests: ANY_DIGEST },
  { signAlgo: OID.ecdsaWithSHA256, kind: 'ecdsa', keyType: 'ec', digests: ['sha256'] },
  { signAlgo: OID.ecdsaWithSHA384, kind: 'ecdsa', keyType: 'ec', digests: ['sha384'] },
  { signAlgo: OID.ecdsaWithSHA512, kind: 'ecdsa', keyType: 'ec', digests: ['sha512'] },
];

/** signAlgo values that name their hash: CSC wants hashAlgo (v2: hashAlgorithmOID) left out with them. */
export function signAlgoNamesHash(signAlgo: string): boolean {
  return OFFERS.some((offer) => offer.signAlgo === signAlgo && offer.digests.length === 1);
}

/** The digest that follows the key: SHA-256 for RSA and P-256, SHA-384 for P-384, SHA-512 for P-521. */
export function defaultDigest(key: SignerKey): DigestName {
  if (key.type !== 'ec') return 'sha256';
  return key.curve === 'P-384' ? 'sha384' : key.curve === 'P-521' ? 'sha512' : 'sha256';
}

/**
 * How esign signs with a credential: how many hashes one approval covers (the least of the
 * profile's cscMaxSignatures, the credential's multisign, and 50 for a browser approval or 1,000
 * for credentials/authorize), and the scheme and signAlgo, taken
 * from the credential's key/algo for its certificate's key. The digest follows the key unless
 * `digest` asks for one the credential accepts.
 */
export function signingTerms(
  info: CredentialInfo,
  maxSignatures = MAX_HASHES_PER_CREDENTIAL_AUTHORIZATION,
  digest?: DigestName,
): SigningTerms {
  const [certificate] = info.certificates;
  const key: SignerKey = certificate ? signerKeyOf(certificate) : { type: 'other', name: 'no certificate' };
  const offers =
    key.type === 'other'
      ? []
      : OFFERS.filter((offer) => offer.keyType === key.type && info.algorithms.includes(offer.signAlgo));
  if (offers.length === 0) {
    const listed = info.algorithms.join(', ') || 'no algorithm it names';
    throw new EsignError(
      'CREDENTIAL_UNSUPPORTED_KEY',
      `The credential ${info.credentialID} (${keyWords(key)}) signs with ${listed}; esign signs with RSA (PKCS#1 v1.5 or RSASSA-PSS) and ECDSA (P-256, P-384, P-521) over SHA-256, SHA-384 or SHA-512.`,
      {
        hint: 'Choose another credential: esign credentials list.',
        details: { credentialID: info.credentialID, algorithms: info.algorithms },
      },
    );
  }
  const accepted = DIGEST_NAMES.filter((name) => offers.some((offer) => offer.digests.includes(name)));
  const wanted = digest ?? (accepted.includes(defaultDigest(key)) ? defaultDigest(key) : accepted[0]!);
  const offer = offers.find((candidate) => candidate.digests.includes(wanted));
  if (!offer) {
    throw new EsignError(
      'USAGE',
      `The credential ${info.credentialID} does not sign ${digestLabel(wanted)} hashes; it accepts ${accepted.map(digestLabel).join(', ')}.`,
      {
        hint: `Pass --digest ${accepted.join(' or --digest ')}, or leave --digest out.`,
        details: { credentialID: info.credentialID, digest: wanted, accepted },
      },
    );
  }
  const scheme: SignatureScheme =
    offer.kind === 'ecdsa' && key.type === 'ec'
      ? { kind: 'ecdsa', digest: wanted, curve: key.curve }
      : offer.kind === 'rsa-pss'
        ? { kind: 'rsa-pss', digest: wanted, saltLength: DIGEST_LENGTH[wanted] }
        : { kind: 'rsa-pkcs1', digest: wanted };
  const ceiling =
    info.authMode === 'oauth2code' ? MAX_HASHES_PER_AUTHORIZATION : MAX_HASHES_PER_CREDENTIAL_AUTHORIZATION;
  // Without a multisign a service promises nothing above the browser approval's 50.
  const signaturesPerApproval = Math.min(ceiling, maxSignatures, info.multisign ?? MAX_HASHES_PER_AUTHORIZATION);
  const terms: SigningTerms = { signaturesPerApproval, signAlgorithm: offer.signAlgo, scheme };
  if (scheme.kind === 'rsa-pss')
    terms.signAlgorithmParams = Buffer.from(pssParameters(scheme.digest, scheme.saltLength)).toString('base64');
  return terms;
}

/** PSS salt as long as the hash (RFC 8017 §9.1 note 4; what the SHA-256/32 profile is). */
const DIGEST_LENGTH: Readonly<Record<DigestName, number>> = { sha256: 32, sha384: 48, sha512: 64 };

function keyWords(key: SignerKey): string {
  return key.type === 'rsa' ? `RSA ${key.bits}` : key.type === 'ec' ? `EC ${key.curve}` : key.name;
}

/**
 * Refuses a credential whose signer certificate is not valid at `now` (expired, or not yet valid),
 * whatever the service says of its key: a signature made with it would not validate.
 */
export function assertCertificateCurrent(credentialID: string, signerDer: Uint8Array, now: Date): void {
  const signer = certificate(signerDer);
  if (!signer || validAt(signer, now)) return;
  const expired = new Date(signer.validTo).getTime() < now.getTime();
  const when = expired
    ? `expired on ${new Date(signer.validTo).toISOString()}`
    : `is not valid before ${new Date(signer.validFrom).toISOString()}`;
  throw new EsignError(
    'CREDENTIAL_DISABLED',
    `The certificate of the credential ${credentialID} ${when}, so it cannot sign (checked at ${now.toISOString()}).`,
    {
      hint: expired
        ? 'Choose a credential with a current certificate (esign credentials list), or ask the provider to renew it.'
        : "Check this machine's clock, or wait until the certificate is valid.",
      details: {
        credentialID,
        notBefore: new Date(signer.validFrom).toISOString(),
        notAfter: new Date(signer.validTo).toISOString(),
      },
    },
  );
}
