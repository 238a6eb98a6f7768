/**
 * Checks the XML signature of a trusted list (ETSI TS 119 612 §5.7) and returns only what it covers.
 *
 * The XML work (parsing, exclusive canonicalization, XMLDSig) is @xmldom/xmldom and xml-crypto; this
 * module adds the rules a trusted list must meet on top of a valid signature, so that what esign
 * reads is exactly what the scheme operator signed:
 * - no DTD, entity or other markup declaration at all (XXE, billion laughs), checked before parsing;
 * - one TrustServiceStatusList (the root) and one ds:Signature, a child of that root;
 * - one Reference to the list itself (URI "" or "#" + the root's Id) with exactly the
 *   enveloped-signature and exclusive canonicalization transforms; any other Reference may only be
 *   the XAdES SignedProperties inside that Signature;
 * - the key that verifies it is one of the certificates given by the caller (the shipped LOTL
 *   signers, or those the LOTL gives for the territory).
 * The caller then reads the list from `signedXml`, the canonical form of the covered document
 * (comments dropped), never from the bytes it was given.
 */
import { constants, createHash, createVerify, X509Certificate, type KeyObject } from 'node:crypto';
import { SignedXml } from 'xml-crypto';
import { EsignError } from '../errors.js';
import { childElements } from '../xml/dom.js';
import { NS, SIGNED_PROPERTIES_TYPE, TRANSFORM } from '../xml/namespaces.js';
import { decodeXml, firstLine, parseSecureXml, type XmlRefusalKind } from '../xml/secure-parse.js';
import type { XmlDocument, XmlElement } from '../xml/types/xml-libs.js';

/** Above any real national list (the largest are a few MB). */
export const MAX_TRUSTED_LIST_BYTES = 16 * 1024 * 1024;

const TSL_NS = 'http://uri.etsi.org/02231/v2#';
const DSIG_NS = NS.ds;
const ENVELOPED = TRANSFORM.enveloped;
const EXC_C14N = TRANSFORM.excC14n;

export interface VerifiedTrustedListXml {
  /** The covered document, canonical (exclusive c14n, no comments, the Signature removed). */
  signedXml: string;
  /** The given certificate (DER, base64) whose key verified the signature. */
  signerCertificate: string;
  /** SHA-256 of the bytes as given, lower-case hex. */
  sha256: string;
}

/**
 * Verifies `bytes` as a signed trusted list, against `trustedCertificates` (DER, base64).
 * `name` (a territory, URL or file) starts every error message.
 */
export function verifyTrustedListXml(
  bytes: Uint8Array,
  trustedCertificates: readonly string[],
  name: string,
  maxBytes = MAX_TRUSTED_LIST_BYTES,
): VerifiedTrustedListXml {
  const rules = { maxBytes, refuse: refusal(name) };
  const xml = decodeXml(bytes, rules);
  const doc = parseSecureXml(xml, rules);
  const root = doc.documentElement;
  if (!root || root.localName !== 'TrustServiceStatusList' || root.namespaceURI !== TSL_NS) {
    throw listError('TRUST_LIST_MALFORMED', name, 'not a trusted list (no TrustServiceStatusList root element)');
  }
  if (doc.getElementsByTagNameNS(TSL_NS, 'TrustServiceStatusList').length !== 1) {
    throw wrapped(name, 'more than one TrustServiceStatusList element');
  }
  const signatures = doc.getElementsByTagNameNS(DSIG_NS, 'Signature');
  if (signatures.length === 0) throw listError('TRUST_LIST_SIGNATURE_INVALID', name, 'the list is not signed');
  if (signatures.length > 1) throw wrapped(name, `${signatures.length} Signature elements, one expected`);
  const signature = signatures[0]!;
  if (signature.parentNode !== root) throw wrapped(name, 'the Signature is not a child of the list element');

  const signedInfo = onlyChild(signature, DSIG_NS, 'SignedInfo', name);
  const references = childElements(signedInfo).filter((e) => e.namespaceURI === DSIG_NS && e.localName === 'Reference');
  const rootId = root.getAttribute('Id');
  const listReferences = references.filter((ref) => ref.getAttribute('Type') !== SIGNED_PROPERTIES_TYPE);
  if (listReferences.length !== 1) {
    throw wrapped(name, `${listReferences.length} references to the list, one expected`);
  }
  const listUri = listReferences[0]!.getAttribute('URI');
  if (listUri !== '' && !(rootId && listUri === `#${rootId}`)) {
    throw wrapped(name, `the signature covers ${JSON.stringify(listUri)}, not the whole list`);
  }
  const transforms = transformsOf(listReferences[0]!);
  if (transforms.join(' ') !== `${ENVELOPED} ${EXC_C14N}`) {
    throw wrapped(name, 'the list reference must use the enveloped-signature and exclusive c14n transforms only');
  }
  for (const ref of references) {
    if (ref.getAttribute('Type') !== SIGNED_PROPERTIES_TYPE) continue;
    const id = (ref.getAttribute('URI') ?? '').replace(/^#/, '');
    const target = id ? elementWithId(signature, id) : undefined;
    if (!target || target.localName !== 'SignedProperties') {
      throw wrapped(name, 'a SignedProperties reference points outside its Signature');
    }
  }

  const keyInfoCertificate = keyInfoCertificateOf(signature);
  // The KeyInfo certificate first: it is the signer whenever the list names a trusted one.
  const candidates = [...trustedCertificates].sort(
    (a, b) => Number(b === keyInfoCertificate) - Number(a === keyInfoCertificate),
  );
  const keys = new CandidateKeys(candidates);
  const checker = new SignedXml({ publicCert: 'unused: CandidateKeys chooses', getCertFromKeyInfo: () => null });
  checker.SignatureAlgorithms = keys.algorithms();
  Object.assign(checker.HashAlgorithms, { 'http://www.w3.org/2001/04/xmldsig-more#sha384': Sha384 });
  let valid: boolean;
  try {
    checker.loadSignature(signature);
    valid = checker.checkSignature(xml);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (message.startsWith('invalid signature: the signature value')) {
      throw listError(
        'TRUST_LIST_SIGNER_UNTRUSTED',
        name,
        'the signature was not made by any certificate trusted for this list',
      );
    }
    throw listError('TRUST_LIST_SIGNATURE_INVALID', name, firstLine(message));
  }
  if (!valid) throw listError('TRUST_LIST_SIGNATURE_INVALID', name, 'a signed part was changed (digest mismatch)');
  const signedXml = checker
    .getSignedReferences()
    .find((part) => /^<([A-Za-z_][\w.-]*:)?TrustServiceStatusList[\s>]/.test(part));
  if (!signedXml || keys.matched === undefined) throw wrapped(name, 'the signed content is not the list');
  return {
    signedXml,
    signerCertificate: keys.matched,
    sha256: createHash('sha256').update(bytes).digest('hex'),
  };
}

/** Parses XML that passed (or came out of) the checks above: the canonical signed content. */
export function parseCheckedXml(xml: string, name: string): XmlDocument {
  return parseSecureXml(xml, { maxBytes: MAX_TRUSTED_LIST_BYTES, refuse: refusal(name) });
}

const REFUSAL_CODES: Record<XmlRefusalKind, TrustListErrorCode> = {
  'too-large': 'TRUST_LIST_TOO_LARGE',
  unsafe: 'TRUST_LIST_UNSAFE_XML',
  malformed: 'TRUST_LIST_MALFORMED',
};

/** The shared XML rules' refusals, in a trusted list's words. */
function refusal(name: string) {
  return (kind: XmlRefusalKind, reason: string) => listError(REFUSAL_CODES[kind], name, reason);
}

function listError(code: TrustListErrorCode, name: string, reason: string): EsignError {
  return new EsignError(code, `${name}: ${reason}`, { hint: HINTS[code], details: { list: name } });
}

function wrapped(name: string, reason: string): EsignError {
  return listError('TRUST_LIST_STRUCTURE_INVALID', name, `${reason} (possible signature wrapping)`);
}

type TrustListErrorCode =
  | 'TRUST_LIST_TOO_LARGE'
  | 'TRUST_LIST_UNSAFE_XML'
  | 'TRUST_LIST_MALFORMED'
  | 'TRUST_LIST_STRUCTURE_INVALID'
  | 'TRUST_LIST_SIGNATURE_INVALID'
  | 'TRUST_LIST_SIGNER_UNTRUSTED';

const HINTS: Record<TrustListErrorCode, string> = {
  TRUST_LIST_TOO_LARGE: 'This is not a trusted list esign can use; fetch it again from its official address.',
  TRUST_LIST_UNSAFE_XML:
    'Trusted lists never contain DTDs or entities; fetch the list again from its official address.',
  TRUST_LIST_MALFORMED: 'Fetch the list again from its official address (esign trust update).',
  TRUST_LIST_STRUCTURE_INVALID: 'The list was altered after signing; fetch it again from its official address.',
  TRUST_LIST_SIGNATURE_INVALID: 'The list was altered or damaged; fetch it again from its official address.',
  TRUST_LIST_SIGNER_UNTRUSTED:
    'Only lists signed by a certificate the LOTL (or esign, for the LOTL) gives are used; check the list address.',
};

function onlyChild(parent: XmlElement, ns: string, localName: string, name: string): XmlElement {
  const found = childElements(parent).filter((e) => e.namespaceURI === ns && e.localName === localName);
  if (found.length !== 1) throw wrapped(name, `${found.length} ${localName} elements in the Signature, one expected`);
  return found[0]!;
}

function transformsOf(reference: XmlElement): string[] {
  const transforms = childElements(reference).find((e) => e.namespaceURI === DSIG_NS && e.localName === 'Transforms');
  if (!transforms) return [];
  return childElements(transforms)
    .filter((e) => e.namespaceURI === DSIG_NS && e.localName === 'Transform')
    .map((e) => e.getAttribute('Algorithm') ?? '');
}

function elementWithId(scope: XmlElement, id: string): XmlElement | undefined {
  const stack = [scope];
  while (stack.length > 0) {
    const element = stack.pop()!;
    if (element.getAttribute('Id') === id) return element;
    stack.push(...childElements(element));
  }
  return undefined;
}

function keyInfoCertificateOf(signature: XmlElement): string | undefined {
  const certificates = signature.getElementsByTagNameNS(DSIG_NS, 'X509Certificate');
  return certificates.length > 0 ? (certificates[0]!.textContent ?? '').replace(/\s+/g, '') : undefined;
}

class Sha384 {
  getHash(xml: string): string {
    return createHash('sha384').update(xml, 'utf8').digest('base64');
  }
  getAlgorithmName(): string {
    return 'http://www.w3.org/2001/04/xmldsig-more#sha384';
  }
}

type VerifyOptions = { dsaEncoding?: 'ieee-p1363'; padding?: number; saltLength?: number };

/** Signature algorithms accepted on a list, with the Node hash and options that verify each. */
const SIGNATURE_ALGORITHMS: Record<string, [hash: string, options: VerifyOptions]> = {
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256': ['sha256', {}],
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha384': ['sha384', {}],
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha512': ['sha512', {}],
  'http://www.w3.org/2007/05/xmldsig-more#sha256-rsa-MGF1': [
    'sha256',
    { padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST },
  ],
  'http://www.w3.org/2007/05/xmldsig-more#sha384-rsa-MGF1': [
    'sha384',
    { padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST },
  ],
  'http://www.w3.org/2007/05/xmldsig-more#sha512-rsa-MGF1': [
    'sha512',
    { padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST },
  ],
  // XMLDSig writes an ECDSA signature as r‖s (IEEE P1363), not DER.
  'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256': ['sha256', { dsaEncoding: 'ieee-p1363' }],
  'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384': ['sha384', { dsaEncoding: 'ieee-p1363' }],
  'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha512': ['sha512', { dsaEncoding: 'ieee-p1363' }],
};

/**
 * The signature algorithms xml-crypto calls once the references' digests hold: each tries the
 * candidate certificates' keys in turn and remembers which one verified, so a list is canonicalized
 * once however many certificates may sign it. SHA-1 is not accepted.
 */
class CandidateKeys {
  matched: string | undefined;
  private readonly keys: Array<[certificate: string, key: KeyObject]>;

  constructor(certificates: readonly string[]) {
    this.keys = certificates.flatMap((certificate): Array<[string, KeyObject]> => {
      try {
        return [[certificate, new X509Certificate(Buffer.from(certificate, 'base64')).publicKey]];
      } catch {
        return [];
      }
    });
  }

  algorithms(): SignedXml['SignatureAlgorithms'] {
    const verify = (material: string, signatureValue: string, hash: string, options: VerifyOptions) =>
      this.verify(material, signatureValue, hash, options);
    return Object.fromEntries(
      Object.entries(SIGNATURE_ALGORITHMS).map(([uri, [hash, options]]) => [
        uri,
        class {
          verifySignature(material: string, _key: unknown, signatureValue: string): boolean {
            return verify(material, signatureValue, hash, options);
          }
          getSignature(): string {
            throw new Error('trusted lists are only verified here');
          }
          getAlgorithmName(): string {
            return uri;
          }
        },
      ]),
    ) as SignedXml['SignatureAlgorithms'];
  }

  private verify(material: string, signatureValue: string, hash: string, options: VerifyOptions): boolean {
    const signature = Buffer.from(signatureValue, 'base64');
    for (const [certificate, key] of this.keys) {
      try {
        if (
          createVerify(hash)
            .update(material)
            .verify({ key, ...options }, signature)
        ) {
          this.matched = certificate;
          return true;
        }
      } catch {
        // A key of another type (an RSA key for an ECDSA signature): not this one.
      }
    }
    return false;
  }
}
