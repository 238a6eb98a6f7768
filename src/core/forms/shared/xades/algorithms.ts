/**
 * The URIs a XAdES signature esign writes names its algorithms by (XMLDSig 1.1, RFC 6931), and the
 * canonicalization it uses on write: exclusive c14n 1.0 without comments everywhere (SignedInfo,
 * the references, the timestamps). Exclusive c14n does not depend on the namespaces of the
 * ancestors, so what is signed is the same wherever the signature lands (the root of an invoice with
 * its own default namespace, or a `signatures0.xml` of an ASiC-E).
 */
import type { DigestName, SignatureScheme } from '../../../cms/algorithms.js';
import { NS, TRANSFORM } from '../../../xml/namespaces.js';

export { SIGNED_PROPERTIES_TYPE } from '../../../xml/namespaces.js';
export const DSIG_NS = NS.ds;
export const XADES_NS = NS.xades;
export const XADES141_NS = NS.xades141;

/** Exclusive canonicalization 1.0, without comments: the one esign writes with. */
export const EXC_C14N = TRANSFORM.excC14n;
export const ENVELOPED_SIGNATURE = TRANSFORM.enveloped;

export const DIGEST_URI: Readonly<Record<DigestName, string>> = {
  sha256: 'http://www.w3.org/2001/04/xmlenc#sha256',
  sha384: 'http://www.w3.org/2001/04/xmldsig-more#sha384',
  sha512: 'http://www.w3.org/2001/04/xmlenc#sha512',
};

/** RSASSA-PSS with MGF1 of the same digest and a salt of the digest's length (RFC 6931 §2.3.10). */
const PSS_URI: Readonly<Record<DigestName, string>> = {
  sha256: 'http://www.w3.org/2007/05/xmldsig-more#sha256-rsa-MGF1',
  sha384: 'http://www.w3.org/2007/05/xmldsig-more#sha384-rsa-MGF1',
  sha512: 'http://www.w3.org/2007/05/xmldsig-more#sha512-rsa-MGF1',
};

const DIGEST_BYTES: Readonly<Record<DigestName, number>> = { sha256: 32, sha384: 48, sha512: 64 };

/**
 * The `ds:SignatureMethod` element of a scheme: RSA PKCS#1 v1.5, ECDSA (its value raw r||s, RFC
 * 4050), RSASSA-PSS (RFC 6931's URI when the salt is the digest's length, else RFC 9231's generic
 * one with its RSAPSSParams).
 */
export function signatureMethod(scheme: SignatureScheme): string {
  const bits = scheme.digest.slice(3);
  if (scheme.kind === 'ecdsa')
    return `<ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha${bits}"/>`;
  if (scheme.kind === 'rsa-pkcs1')
    return `<ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha${bits}"/>`;
  if (scheme.saltLength === DIGEST_BYTES[scheme.digest])
    return `<ds:SignatureMethod Algorithm="${PSS_URI[scheme.digest]}"/>`;
  return (
    '<ds:SignatureMethod Algorithm="http://www.w3.org/2007/05/xmldsig-more#rsa-pss">' +
    '<pss:RSAPSSParams xmlns:pss="http://www.w3.org/2007/05/xmldsig-more#">' +
    `<ds:DigestMethod Algorithm="${DIGEST_URI[scheme.digest]}"/>` +
    `<pss:SaltLength>${scheme.saltLength}</pss:SaltLength></pss:RSAPSSParams></ds:SignatureMethod>`
  );
}

/** `<ds:DigestMethod/><ds:DigestValue/>` of a digest. */
export function digestElements(digest: DigestName, value: Uint8Array): string {
  return (
    `<ds:DigestMethod Algorithm="${DIGEST_URI[digest]}"/>` +
    `<ds:DigestValue>${Buffer.from(value).toString('base64')}</ds:DigestValue>`
  );
}

/**
 * Text and attribute values escaped for XML (what esign puts in: names, URLs, MIME types), every
 * character outside ASCII as a character reference too: a signature is then ASCII, and goes into a
 * document of any ASCII-compatible encoding as it is.
 */
export function escapeXml(text: string): string {
  return text.replace(/[<>&"'\u0080-\u{10ffff}]/gu, (c) => `&#${c.codePointAt(0)};`);
}
