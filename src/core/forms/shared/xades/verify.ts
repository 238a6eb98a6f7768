/**
 * XAdES verification (ETSI EN 319 132-1, EN 319 102-1): each signature of an XML document, its
 * references' digests, its SignatureValue over the canonical SignedInfo, the signing certificate
 * the SignedProperties name, the signature timestamps (their imprint over the canonical
 * SignatureValue), the certificate chain with the revocation data the signature carries, the
 * archive timestamps (EN 319 132-1 §5.5.2), the level reached and the qualification, and its
 * counter-signatures (EN 319 132-1 §5.2.7), each verified the same way and nested under it: the same
 * report, indications and checks as CAdES (the chain, revocation, timestamp-token and
 * qualification checks are verification's own, shared).
 */
import { X509Certificate } from 'node:crypto';
import { longTermLevel } from '../../../verify/cades.js';
import {
  chainAndPath,
  checkTimestampToken,
  collectChainProblems,
  collectRevocationFindings,
  judgeSignatureTimestamp,
  type CmsContext,
} from '../../../verify/cms-check.js';
import {
  createDigest,
  describeKey,
  digestAlgorithm,
  keyWeakness,
  UNSUPPORTED,
  type DigestAlgorithm,
} from '../../../verify/algorithms.js';
import { certificate, summarize } from '../../../verify/chain.js';
import { revocationMaterial, type RevocationItem } from '../../../verify/revocation.js';
import { judgedQualification, noFindings, verdict } from '../../../verify/types.js';
import type {
  Findings,
  SignatureReport,
  SubIndication,
  TimestampReport,
  VerifyOptions,
} from '../../../verify/types.js';
import { qualifyCertificate } from '../../../qualification/determine.js';
import { parseTimeStampToken } from '../../../tsp/response.js';
import { bytesEqual } from '../../../cms/parse.js';
import { attribute, childElements, childrenNamed, isWithin, textOf } from '../../../xml/dom.js';
import { NS, SIGNED_PROPERTIES_TYPE, TRANSFORM } from '../../../xml/namespaces.js';
import { xadesRefused, xmlRules } from '../../../xml/refusal.js';
import { MAX_XML_DOCUMENT_BYTES, parseSecureXml } from '../../../xml/secure-parse.js';
import type { XmlDocument, XmlElement } from '../../../xml/types/xml-libs.js';
import {
  canonicalization,
  verifyXmlSignature,
  xmlDigest,
  xmlSignatureScheme,
  type Canonicalization,
} from './read-algorithms.js';
import { canonicalize, Unsupported } from './read-c14n.js';
import {
  COUNTERSIGNED_SIGNATURE_TYPE,
  idIndex,
  keyInfoCertificates,
  readSignature,
  topSignatures,
  type ReadSignature,
  type ResolveDetached,
} from './read.js';

export type XadesVerifyOptions = Omit<VerifyOptions, 'password'>;

export interface XadesInput {
  /** How refusals name it: the file, or `bundle.asice: META-INF/signatures0.xml`. */
  name: string;
  bytes: Uint8Array;
  /** Detached references' data (a container's entries, the file a detached signature is given with). */
  resolve?: ResolveDetached;
  maxBytes?: number;
}

export interface XadesSignatureResult {
  report: SignatureReport;
  /** Detached references whose data was found and matched. */
  covered: string[];
  /** Detached references whose data is not there. */
  missing: string[];
}

/** Parses `input` by the shared XML rules and verifies every signature in it (none: an empty list). */
export async function verifyXadesXml(input: XadesInput, options: XadesVerifyOptions): Promise<XadesSignatureResult[]> {
  const doc = parseSecureXml(input.bytes, xmlRules(input.name, input.maxBytes ?? MAX_XML_DOCUMENT_BYTES));
  const ids = idIndex(doc, input.name);
  const read = topSignatures(doc).map((signature) => readSignature(signature, doc, ids, input.name, input.resolve));
  const context: DocumentContext = { doc, ids, input };
  const results: XadesSignatureResult[] = [];
  for (const signature of read) {
    const result = await verifySignature(signature, context, options);
    result.report.index = results.length + 1;
    results.push(result);
  }
  return results;
}

/** Whether a parsed document is XML with at least one ds:Signature (recognition by content). */
export function hasXmlSignature(doc: XmlDocument): boolean {
  return topSignatures(doc).length > 0;
}

/** The document a signature is read from, for its counter-signatures. */
interface DocumentContext {
  doc: XmlDocument;
  ids: Map<string, XmlElement>;
  input: XadesInput;
}

/** Counter-signatures of counter-signatures are verified this deep (as CAdES's). */
const MAX_COUNTER_SIGNATURE_DEPTH = 4;

/**
 * Verifies one signature; `parent`: the signature it countersigns, when it is a counter-signature
 * (its reference to the parent's SignatureValue is then what it covers).
 */
async function verifySignature(
  signature: ReadSignature,
  context: DocumentContext,
  options: XadesVerifyOptions,
  parent?: ReadSignature,
  depth = 0,
): Promise<XadesSignatureResult> {
  const { doc } = context;
  const findings = noFindings();
  const warnings: string[] = [];
  const fail = (failure: SubIndication, reason: string) => {
    if (!findings.problems.includes(reason)) findings.problems.push(reason);
    findings.failures.add(failure);
  };
  const weak = (weakness: string) => {
    if (!findings.weak.includes(weakness)) findings.weak.push(weakness);
  };

  // The references: each one's data, digested as its DigestMethod says.
  const covered: string[] = [];
  const missing: string[] = [];
  const digests = new Set<string>();
  let intact = true;
  let integrityReason: string | undefined;
  for (const reference of signature.references) {
    const label =
      reference.name ??
      (reference.type === SIGNED_PROPERTIES_TYPE
        ? 'the SignedProperties'
        : parent && reference.target === parent.signatureValue
          ? 'the countersigned SignatureValue'
          : reference.uri || 'the document');
    if (reference.digest) digests.add(reference.digest.name);
    if (reference.digest?.weakness) weak(`the reference to ${label} is digested with ${reference.digest.weakness}`);
    const problem = (failure: SubIndication, reason: string) => {
      intact = false;
      integrityReason ??= reason;
      fail(failure, reason);
    };
    if (reference.unsupported) problem('CRYPTO_CONSTRAINTS_FAILURE', reference.unsupported);
    else if (!reference.digest)
      problem('CRYPTO_CONSTRAINTS_FAILURE', `${UNSUPPORTED} the digest algorithm ${reference.digestUri}`);
    else if (reference.missing) {
      intact = false;
      missing.push(reference.missing);
    } else if (reference.read) {
      const hash = createDigest(reference.digest);
      await reference.read((chunk) => hash.update(chunk));
      if (bytesEqual(new Uint8Array(hash.digest()), reference.expected)) {
        if (reference.name) covered.push(reference.name);
      } else problem('HASH_FAILURE', `the digest of ${label} does not match: it was changed after signing`);
    }
  }
  const coversDocument = signature.references.some(
    (reference) =>
      reference.type !== SIGNED_PROPERTIES_TYPE &&
      (reference.target === doc || reference.target === doc.documentElement),
  );
  const detached = signature.references.some((reference) => reference.name !== undefined);
  const enveloping = doc.documentElement === signature.element;
  if (parent) {
    // A counter-signature covers its parent's SignatureValue (EN 319 132-1 §5.2.7); its
    // CountersignedSignature reference names nothing else (as DSS: the counter-signature fails).
    const reasons = signature.references
      .filter(
        (reference) => reference.type === COUNTERSIGNED_SIGNATURE_TYPE && reference.target !== parent.signatureValue,
      )
      .map(
        (reference) =>
          `the counter-signature's CountersignedSignature reference (${reference.uri}) names something other than its parent's SignatureValue`,
      );
    if (!signature.references.some((reference) => reference.target === parent.signatureValue))
      reasons.push("the counter-signature has no reference to its parent's SignatureValue");
    for (const reason of reasons) {
      intact = false;
      integrityReason ??= reason;
      fail('SIG_CONSTRAINTS_FAILURE', reason);
    }
  } else if (!coversDocument && !detached && !enveloping)
    warnings.push(
      'the signature covers only parts of the document, not the whole of it: what it does not cover may have been changed',
    );

  // The signing certificate: the one the SignedProperties name, among those the signature carries.
  const unsigned = unsignedProperties(signature);
  // A counter-signature sits in its parent's unsigned properties, and so does the validation data a
  // B-LT extension adds for it: the parent's is read too (DSS reads any in the document).
  const holders = parent ? [...unsigned, ...unsignedProperties(parent)] : unsigned;
  const certificateValues = holders.flatMap((property) =>
    encapsulated(property, 'CertificateValues', 'EncapsulatedX509Certificate'),
  );
  const candidates = [...keyInfoCertificates(signature.keyInfo), ...certificateValues];
  const scheme = xmlSignatureScheme(signature.signatureMethod);
  const signatureValue: SignatureReport['signatureValue'] = {
    valid: false,
    algorithm: scheme?.name ?? signature.signatureMethod,
  };
  let signedInfo: Uint8Array | undefined;
  if (!signature.c14n) fail('CRYPTO_CONSTRAINTS_FAILURE', `${UNSUPPORTED} the canonicalization ${signature.c14nUri}`);
  else
    try {
      signedInfo = utf8(
        canonicalize(
          { node: signature.signedInfo, excluded: [], comments: true },
          signature.c14n,
          signature.c14nPrefixes,
        ),
      );
    } catch (error) {
      if (!(error instanceof Unsupported)) throw error;
      fail('CRYPTO_CONSTRAINTS_FAILURE', error.message);
    }
  const value = new Uint8Array(Buffer.from(textOf(signature.signatureValue).replace(/\s+/g, ''), 'base64'));
  const named = signingCertificate(signature, candidates, weak);
  let signer: X509Certificate | undefined;
  if (named.problem) fail('NO_SIGNING_CERTIFICATE_FOUND', named.problem);
  else signer = named.certificate;
  if (!scheme)
    fail('CRYPTO_CONSTRAINTS_FAILURE', `${UNSUPPORTED} the signature algorithm ${signature.signatureMethod}`);
  else {
    if (scheme.weakness) weak(`${scheme.name}: ${scheme.weakness}`);
    if (!signer && !named.problem) {
      // Plain XML-DSig: the certificate whose key verifies it.
      signer = candidates
        .map(certificate)
        .find((cert) => cert && signedInfo && verifyXmlSignature(scheme, signedInfo, cert.publicKey, value));
      signer ??= candidates.length > 0 ? certificate(candidates[0]!) : undefined;
    }
    if (!signer && !named.problem)
      fail('NO_SIGNING_CERTIFICATE_FOUND', 'the signature carries no signer certificate (KeyInfo X509Certificate)');
    else if (signer && signedInfo) {
      signatureValue.key = describeKey(signer.publicKey);
      const keyWeak = keyWeakness(signer.publicKey);
      if (keyWeak) weak(keyWeak);
      if (verifyXmlSignature(scheme, signedInfo, signer.publicKey, value)) signatureValue.valid = true;
      else {
        signatureValue.reason = 'the SignatureValue does not verify over the SignedInfo with the signer certificate';
        fail('SIG_CRYPTO_FAILURE', signatureValue.reason);
      }
    }
  }
  if (!signatureValue.valid && !signatureValue.reason)
    signatureValue.reason = findings.problems[findings.problems.length - 1] ?? 'not checked';

  // Validation data the signature carries, and the trust context of verification.
  const ocsps = holders.flatMap((property) => encapsulated(property, 'RevocationValues', 'EncapsulatedOCSPValue'));
  const crls = holders.flatMap((property) => encapsulated(property, 'RevocationValues', 'EncapsulatedCRLValue'));
  const item = (der: Uint8Array): RevocationItem => ({ der, store: 'xades' });
  const ctx: CmsContext = {
    anchors: options.trustAnchors.map((der) => new X509Certificate(der)),
    extraCerts: candidates,
    revocation: revocationMaterial(ocsps.map(item), crls.map(item)),
    now: options.now,
    ...(options.trustedLists ? { trustedLists: options.trustedLists } : {}),
    ...(options.revocation ? { revocationPolicy: options.revocation } : {}),
  };

  // Signature timestamps: the imprint over the canonical SignatureValue element.
  let validationTime = options.now;
  let proofOfExistence = false;
  let timestamp: TimestampReport | undefined;
  for (const stamp of unsigned.filter((p) => isNamed(p, 'SignatureTimeStamp'))) {
    const checked = await checkXmlTimestamp(stamp, ctx, async (consume) =>
      consume(utf8(canonicalize({ node: signature.signatureValue, excluded: [], comments: true }, stampC14n(stamp)))),
    );
    if (timestamp?.valid) continue;
    timestamp = checked;
  }
  const stampedAt = timestamp ? judgeSignatureTimestamp(timestamp, findings, warnings, ctx) : undefined;
  if (stampedAt) {
    validationTime = stampedAt;
    proofOfExistence = true;
  }

  const report: SignatureReport = {
    index: 1,
    kind: 'xades',
    integrity: {
      valid: intact && signature.references.length > 0,
      ...(integrityReason
        ? { reason: integrityReason }
        : missing.length > 0
          ? { reason: `${missing.join(', ')} not found` }
          : {}),
      digestAlgorithm: [...digests].join(', ') || 'unknown',
    },
    signatureValue,
    problems: [],
    warnings,
    status: 'valid',
    code: null,
    indication: 'TOTAL-PASSED',
  };
  if (signer) {
    report.signer = summarize(signer);
    const { report: chain, path } = await chainAndPath(signer, candidates, ctx, validationTime);
    report.chain = chain;
    collectChainProblems(chain, findings, 'signer', proofOfExistence);
    if (chain.trusted) collectRevocationFindings(chain, findings, warnings, 'signer', ctx);
    if (options.trustedLists)
      report.qualification = qualifyCertificate({
        certificate: new Uint8Array(signer.raw),
        chain: path.slice(1).map((cert) => new Uint8Array(cert.raw)),
        signingTime: validationTime,
        validationTime: options.now,
        lists: options.trustedLists,
      });
  }
  const signingTime = textOf(signedSignatureProperty(signature, 'SigningTime'));
  if (signingTime && !Number.isNaN(Date.parse(signingTime))) report.claimedTime = new Date(signingTime).toISOString();
  if (timestamp) report.timestamp = timestamp;

  // Archive timestamps (EN 319 132-1 §5.5.2): over the references' data, SignedInfo, SignatureValue,
  // KeyInfo, the unsigned properties before each, and the other ds:Objects.
  let archived = false;
  if (intact && signatureValue.valid)
    for (const stamp of unsigned.filter((p) => isNamed(p, 'ArchiveTimeStamp'))) {
      const checked = await checkXmlTimestamp(stamp, ctx, archiveInput(signature, unsigned, stamp));
      for (const weakness of checked.weak ?? []) weak(`archive timestamp: ${weakness}`);
      if (checked.valid && checked.chain?.trusted) archived = true;
      else
        warnings.push(
          `an archive timestamp does not validate: ${[...checked.problems, ...(checked.chain?.problems ?? [])].join('; ') || 'its TSA is not trusted'}`,
        );
    }

  const judged = verdict(findings as Findings);
  Object.assign(report, judged);
  report.problems = [
    ...findings.problems,
    ...findings.untrusted,
    ...findings.unestablished,
    ...findings.weak.map((weakness) => `algorithm not acceptable: ${weakness}`),
  ];
  if (report.qualification) report.qualification = judgedQualification(report.qualification, judged);
  if (intact && signatureValue.valid) {
    report.level = timestamp?.valid ? 'B-T' : 'B-B';
    if (report.level === 'B-T') report.level = longTermLevel(report, 'xades');
    if (report.level === 'B-LT' && archived) report.level = 'B-LTA';
    else if (archived) warnings.push('B-LTA not reached: the archive timestamp covers a signature below B-LT');
  }
  const names = signature.references.flatMap((reference) => (reference.name ? [reference.name] : []));
  if (names.length > 0) report.covers = names;
  if (depth < MAX_COUNTER_SIGNATURE_DEPTH) {
    const counters = await counterSignatures(signature, unsigned, context, options, depth);
    if (counters.length > 0) report.counterSignatures = counters;
  }
  return { report, covered, missing };
}

/**
 * The xades:CounterSignature properties of `signature` (EN 319 132-1 §5.2.7): each holds one
 * ds:Signature over `signature`'s SignatureValue, read by the same rules and verified as any
 * signature (chain, timestamps, level, qualification, its own counter-signatures).
 */
async function counterSignatures(
  signature: ReadSignature,
  unsigned: XmlElement[],
  context: DocumentContext,
  options: XadesVerifyOptions,
  depth: number,
): Promise<SignatureReport[]> {
  const reports: SignatureReport[] = [];
  for (const property of unsigned.filter((p) => isNamed(p, 'CounterSignature'))) {
    const inner = childrenNamed(property, NS.ds, 'Signature');
    if (inner.length !== 1)
      throw xadesRefused(context.input.name, `${inner.length} Signature elements in a CounterSignature, one expected`);
    const read = readSignature(inner[0]!, context.doc, context.ids, context.input.name, context.input.resolve);
    const { report } = await verifySignature(read, context, options, signature, depth + 1);
    report.index = reports.length + 1;
    reports.push(report);
  }
  return reports;
}

function utf8(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

export function isNamed(element: XmlElement, localName: string): boolean {
  return element.localName === localName && (element.namespaceURI === NS.xades || element.namespaceURI === NS.xades141);
}

/** The children of UnsignedSignatureProperties, in order. */
export function unsignedProperties(signature: ReadSignature): XmlElement[] {
  const unsigned = childrenNamed(signature.qualifyingProperties, NS.xades, 'UnsignedProperties')[0];
  return childElements(
    childrenNamed(unsigned, NS.xades, 'UnsignedSignatureProperties')[0] ?? ({ firstChild: null } as never),
  );
}

function signedSignatureProperty(signature: ReadSignature, localName: string): XmlElement | undefined {
  const properties = childrenNamed(signature.signedProperties, NS.xades, 'SignedSignatureProperties')[0];
  return childrenNamed(properties, NS.xades, localName)[0];
}

/** The base64 values `valueName` under a `listName` property (or under a TimeStampValidationData's). */
export function encapsulated(property: XmlElement, listName: string, valueName: string): Uint8Array[] {
  const lists = isNamed(property, listName)
    ? [property]
    : isNamed(property, 'TimeStampValidationData')
      ? [...childrenNamed(property, NS.xades, listName), ...childrenNamed(property, NS.xades141, listName)]
      : [];
  return lists.flatMap((list) =>
    Array.from(list.getElementsByTagNameNS(NS.xades, valueName)).map(
      (value) => new Uint8Array(Buffer.from(textOf(value).replace(/\s+/g, ''), 'base64')),
    ),
  );
}

/** The canonicalization a timestamp property names for what it covers (Canonical XML 1.0 when none). */
function stampC14n(stamp: XmlElement): Canonicalization {
  const uri = attribute(childrenNamed(stamp, NS.ds, 'CanonicalizationMethod')[0], 'Algorithm') ?? TRANSFORM.c14n;
  const method = canonicalization(uri);
  if (!method) throw new Unsupported(`${UNSUPPORTED} the canonicalization ${uri}`);
  return method;
}

/** Checks a XAdES timestamp property's token against the data `read` streams, hashed as the token says. */
async function checkXmlTimestamp(
  stamp: XmlElement,
  ctx: CmsContext,
  read: (consume: (chunk: Uint8Array) => void) => Promise<void>,
): Promise<TimestampReport> {
  const tokenText = textOf(childrenNamed(stamp, NS.xades, 'EncapsulatedTimeStamp')[0]).replace(/\s+/g, '');
  const token = new Uint8Array(Buffer.from(tokenText, 'base64'));
  let digest: DigestAlgorithm | undefined;
  try {
    digest = digestAlgorithm(parseTimeStampToken(token).tstInfo.messageImprint.hashAlgorithm);
  } catch {
    // checkTimestampToken reports the unreadable token
  }
  let imprint: Uint8Array | undefined;
  try {
    if (digest) {
      const hash = createDigest(digest);
      await read((chunk) => hash.update(chunk));
      imprint = new Uint8Array(hash.digest());
    }
  } catch (error) {
    if (!(error instanceof Unsupported)) throw error;
    return { time: '', tsa: '', serialNumber: '', valid: false, problems: [error.message], chain: undefined };
  }
  return checkTimestampToken(token, imprint, ctx);
}

/**
 * What an ArchiveTimeStamp covers, in EN 319 132-1 §5.5.2.2's order: `stamp`'s (the properties
 * before it, canonical as it names), or with none a new one's (every unsigned property, exclusive
 * c14n, as `esign extend` stamps it).
 */
export function archiveInput(
  signature: ReadSignature,
  unsigned: XmlElement[],
  stamp: XmlElement | undefined,
): (consume: (chunk: Uint8Array) => void) => Promise<void> {
  return async (consume) => {
    const method = stamp ? stampC14n(stamp) : (canonicalization(TRANSFORM.excC14n) as Canonicalization);
    const c14n = (node: XmlElement) => consume(utf8(canonicalize({ node, excluded: [], comments: true }, method)));
    for (const reference of signature.references) await reference.read?.(consume);
    c14n(signature.signedInfo);
    c14n(signature.signatureValue);
    if (signature.keyInfo) c14n(signature.keyInfo);
    for (const property of unsigned) {
      if (property === stamp) break;
      c14n(property);
    }
    for (const object of childrenNamed(signature.element, NS.ds, 'Object'))
      if (!signature.qualifyingProperties || !isWithin(signature.qualifyingProperties, object)) c14n(object);
  };
}

/**
 * The certificate the SignedProperties name (SigningCertificateV2, or SigningCertificate v1 with
 * its SHA-1 digest, weak but still matched), among `candidates`; none named: plain XML-DSig.
 */
function signingCertificate(
  signature: ReadSignature,
  candidates: readonly Uint8Array[],
  weak: (weakness: string) => void,
): { certificate?: X509Certificate; problem?: string } {
  const property =
    signedSignatureProperty(signature, 'SigningCertificateV2') ??
    signedSignatureProperty(signature, 'SigningCertificate');
  if (!property) {
    if (signature.signedProperties)
      return { problem: 'the SignedProperties name no signing certificate (SigningCertificateV2)' };
    return {};
  }
  const cert = childrenNamed(property, NS.xades, 'Cert')[0];
  const certDigest = childrenNamed(cert, NS.xades, 'CertDigest')[0];
  const uri = attribute(childrenNamed(certDigest, NS.ds, 'DigestMethod')[0], 'Algorithm') ?? '';
  const expected = new Uint8Array(Buffer.from(textOf(childrenNamed(certDigest, NS.ds, 'DigestValue')[0]), 'base64'));
  const digest = xmlDigest(uri);
  if (!digest) return { problem: `${UNSUPPORTED} the digest algorithm ${uri} of the ${property.localName}` };
  if (digest.weakness) weak(`the ${property.localName} digest: ${digest.weakness}`);
  for (const der of candidates) {
    if (bytesEqual(new Uint8Array(createDigest(digest).update(der).digest()), expected)) {
      const found = certificate(der);
      if (found) return { certificate: found };
    }
  }
  return { problem: `the ${property.localName} names a certificate the signature does not carry` };
}
