/**
 * The XML-DSig algorithm URIs `esign verify` reads (RFC 9231, XML-DSig 1.1), mapped onto
 * verification's own table (src/core/verify/algorithms.ts): the same names, the same weaknesses
 * (SHA-1 is weak, never invalid), the same words for what esign does not implement.
 */
import { constants, verify, type KeyObject } from 'node:crypto';
import { digestAlgorithm, type DigestAlgorithm, type SignatureScheme } from '../../../verify/algorithms.js';
import { TRANSFORM } from '../../../xml/namespaces.js';

const MORE = 'http://www.w3.org/2001/04/xmldsig-more#';
const MORE07 = 'http://www.w3.org/2007/05/xmldsig-more#';
const ENC = 'http://www.w3.org/2001/04/xmlenc#';

/** DigestMethod URIs, by the OID verification knows them under. */
const DIGEST_OIDS: Readonly<Record<string, string>> = {
  'http://www.w3.org/2000/09/xmldsig#sha1': '1.3.14.3.2.26',
  [`${MORE}sha224`]: '2.16.840.1.101.3.4.2.4',
  [`${ENC}sha256`]: '2.16.840.1.101.3.4.2.1',
  [`${MORE}sha384`]: '2.16.840.1.101.3.4.2.2',
  [`${ENC}sha512`]: '2.16.840.1.101.3.4.2.3',
  [`${MORE07}sha3-224`]: '2.16.840.1.101.3.4.2.7',
  [`${MORE07}sha3-256`]: '2.16.840.1.101.3.4.2.8',
  [`${MORE07}sha3-384`]: '2.16.840.1.101.3.4.2.9',
  [`${MORE07}sha3-512`]: '2.16.840.1.101.3.4.2.10',
};

/** The digest algorithm of a DigestMethod, or undefined when esign does not know it. */
export function xmlDigest(uri: string): DigestAlgorithm | undefined {
  const oid = DIGEST_OIDS[uri];
  return oid ? digestAlgorithm(oid) : undefined;
}

export interface XmlSignatureScheme extends SignatureScheme {
  hash: string;
  /** XML-DSig writes an ECDSA value as r‖s (IEEE P1363), not DER. */
  ieeeP1363?: true;
}

const RSA = ['rsa', 'rsa-pss'];
const SHA1 = 'SHA-1 is no longer acceptable for signatures (collisions)';
const HASH_BYTES: Readonly<Record<string, number>> = { sha224: 28, sha256: 32, sha384: 48, sha512: 64 };

function rsa(hash: string): XmlSignatureScheme {
  return { name: `${hash}WithRSAEncryption`, keyTypes: RSA, hash, ...(hash === 'sha1' ? { weakness: SHA1 } : {}) };
}
function ecdsa(hash: string): XmlSignatureScheme {
  const label = hash.toUpperCase().replace('SHA', 'SHA');
  return {
    name: `ecdsa-with-${label}`,
    keyTypes: ['ec'],
    hash,
    ieeeP1363: true,
    ...(hash === 'sha1' ? { weakness: SHA1 } : {}),
  };
}
function pss(hash: string): XmlSignatureScheme {
  const salt = HASH_BYTES[hash] ?? 32;
  return {
    name: `RSASSA-PSS (${hash}, MGF1 ${hash}, salt ${salt})`,
    keyTypes: RSA,
    hash,
    pss: { saltLength: salt },
  };
}

const SCHEMES: Readonly<Record<string, XmlSignatureScheme>> = {
  'http://www.w3.org/2000/09/xmldsig#rsa-sha1': rsa('sha1'),
  [`${MORE}rsa-sha224`]: rsa('sha224'),
  [`${MORE}rsa-sha256`]: rsa('sha256'),
  [`${MORE}rsa-sha384`]: rsa('sha384'),
  [`${MORE}rsa-sha512`]: rsa('sha512'),
  [`${MORE}ecdsa-sha1`]: ecdsa('sha1'),
  [`${MORE}ecdsa-sha224`]: ecdsa('sha224'),
  [`${MORE}ecdsa-sha256`]: ecdsa('sha256'),
  [`${MORE}ecdsa-sha384`]: ecdsa('sha384'),
  [`${MORE}ecdsa-sha512`]: ecdsa('sha512'),
  [`${MORE07}sha224-rsa-MGF1`]: pss('sha224'),
  [`${MORE07}sha256-rsa-MGF1`]: pss('sha256'),
  [`${MORE07}sha384-rsa-MGF1`]: pss('sha384'),
  [`${MORE07}sha512-rsa-MGF1`]: pss('sha512'),
};

/** The scheme of a SignatureMethod, or undefined when esign does not implement it. */
export function xmlSignatureScheme(uri: string): XmlSignatureScheme | undefined {
  return SCHEMES[uri];
}

/** Verifies a SignatureValue over the canonical SignedInfo with `key`. */
export function verifyXmlSignature(
  scheme: XmlSignatureScheme,
  data: Uint8Array,
  key: KeyObject,
  signature: Uint8Array,
): boolean {
  if (!scheme.keyTypes.includes(key.asymmetricKeyType ?? '')) return false;
  try {
    if (scheme.pss)
      return verify(
        scheme.hash,
        data,
        { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: scheme.pss.saltLength },
        signature,
      );
    if (scheme.ieeeP1363) return verify(scheme.hash, data, { key, dsaEncoding: 'ieee-p1363' }, signature);
    return verify(scheme.hash, data, key, signature);
  } catch {
    return false;
  }
}

export interface Canonicalization {
  uri: string;
  exclusive: boolean;
  comments: boolean;
  /** Canonical XML 1.1: read as 1.0 where the two agree (no xml:* attribute above the subset), else refused. */
  version11: boolean;
}

const CANONICALIZATIONS: Readonly<Record<string, Omit<Canonicalization, 'uri'>>> = {
  [TRANSFORM.c14n]: { exclusive: false, comments: false, version11: false },
  [TRANSFORM.c14nComments]: { exclusive: false, comments: true, version11: false },
  [TRANSFORM.c14n11]: { exclusive: false, comments: false, version11: true },
  [TRANSFORM.c14n11Comments]: { exclusive: false, comments: true, version11: true },
  [TRANSFORM.excC14n]: { exclusive: true, comments: false, version11: false },
  [TRANSFORM.excC14nComments]: { exclusive: true, comments: true, version11: false },
};

/** The canonicalization a URI names, or undefined when it names none esign reads. */
export function canonicalization(uri: string): Canonicalization | undefined {
  const known = CANONICALIZATIONS[uri];
  return known ? { uri, ...known } : undefined;
}
