/**
 * Checks shared by PAdES, CAdES and document timestamps: a CMS signature against the digest of
 * what it signs, its signature-time-stamp, and certificate chains with revocation status.
 */
import { createHash } from 'node:crypto';
import type { KeyObject, X509Certificate } from 'node:crypto';
import { concatBytes } from '../cms/der.js';
import { bytesEqual, parseSignedData } from '../cms/parse.js';
import type { ParsedSignedData } from '../cms/parse.js';
import { checkSigningCertificate } from '../cms/verify-signer.js';
import { isEsignError } from '../errors.js';
import { qualifyCertificate, qualifyTimestamp } from '../qualification/determine.js';
import { ServiceCertificateIndex } from '../qualification/service-index.js';
import type { TrustedListCacheEntry } from '../trusted-list/model.js';
import { parseTimeStampToken, checkTimeStampingUsage } from '../tsp/response.js';
import type { ParsedTimeStampToken } from '../tsp/response.js';
import { buildChain, certificate, certificatePool, summarize } from './chain.js';
import { combineMaterial, embeddedRevocation, revocationMaterial, revocationStatus } from './revocation.js';
import type { RevocationMaterial } from './revocation.js';
import {
  certificateSignatureWeakness,
  createDigest,
  describeKey,
  digestAlgorithm,
  isUnsupported,
  keyWeakness,
  opensUnderKey,
  signatureScheme,
  streamingVerifier,
  UNSUPPORTED,
  verifyWith,
} from './algorithms.js';
import { checkTokenSignature, verificationHashName } from './token-signature.js';
import type { DigestAlgorithm, SignatureScheme } from './algorithms.js';
import { noFindings } from './types.js';
import type {
  ChainReport,
  Findings,
  RevocationPolicy,
  RevocationResult,
  SignatureReport,
  SubIndication,
  TimestampReport,
} from './types.js';

export interface CmsContext {
  anchors: X509Certificate[];
  /** Extra certificates (the DSS's) to build chains through. */
  extraCerts: Uint8Array[];
  /** Revocation data from outside the CMS (the DSS); what a CMS carries itself is added to it. */
  revocation: RevocationMaterial;
  now: Date;
  /** Verified trusted lists: signatures and timestamps are qualified against them. */
  trustedLists?: readonly TrustedListCacheEntry[];
  /** The earliest proof of existence of the signature from later timestamps that passed validation (archive timestamps). */
  proofOfExistence?: (parsed: ParsedSignedData) => Promise<Date | undefined>;
  /** Revocation status the file does not hold: fetched through the policy's source, judged by its mode (default hard, nothing fetched). */
  revocationPolicy?: RevocationPolicy;
}

/** Streams the signed bytes (a PDF's ByteRange, a .p7s's content file) to `consume`, in order. */
export type ReadSignedBytes = (consume: (chunk: Uint8Array) => void) => Promise<void>;

export interface SignedBytes {
  read: ReadSignedBytes;
  /** adbe.pkcs7.sha1: the CMS encapsulates the SHA-1 of the signed bytes and signs that. */
  encapsulatedSha1?: boolean;
}

export type CmsChecks = Pick<
  SignatureReport,
  'integrity' | 'signatureValue' | 'signer' | 'timestamp' | 'chain' | 'qualification'
> &
  Findings & {
    warnings: string[];
    parsed: ParsedSignedData | undefined;
  };

// PureEdDSA without signed attributes signs the content itself, which it cannot stream: held up to this.
const MAX_BUFFERED_EDDSA_CONTENT = 64 * 1024 * 1024;

/** Checks a signature CMS over the signed bytes: digest, signature value, algorithms, timestamp, chain. */
export async function checkSignatureCms(cmsDer: Uint8Array, signed: SignedBytes, ctx: CmsContext): Promise<CmsChecks> {
  const result: CmsChecks = {
    integrity: { valid: false, digestAlgorithm: 'unknown' },
    signatureValue: { valid: false, algorithm: 'unknown' },
    ...noFindings(),
    warnings: [],
    parsed: undefined,
  };
  const fail = (failure: SubIndication, reason: string, what: Array<'integrity' | 'signatureValue'> = []): void => {
    for (const part of what) result[part].reason ??= reason;
    if (!result.problems.includes(reason)) result.problems.push(reason);
    result.failures.add(failure);
  };
  let parsed: ParsedSignedData;
  try {
    parsed = parseSignedData(cmsDer);
  } catch (error) {
    const reason = isEsignError(error) ? error.message : String(error);
    fail('FORMAT_FAILURE', `the signature is not a readable CMS SignedData (${reason})`, [
      'integrity',
      'signatureValue',
    ]);
    return result;
  }
  result.parsed = parsed;
  const context = withEmbeddedRevocation(ctx, parsed);
  const signerDer = parsed.signerCertificate;
  const signerCert = signerDer ? certificate(signerDer) : undefined;
  if (signerCert) result.signer = summarize(signerCert);
  const digest = digestAlgorithm(parsed.digestAlgorithm, parsed.digestAlgorithmParameters, parsed.signatureAlgorithm);
  result.integrity.digestAlgorithm = digest?.name ?? parsed.digestAlgorithm;
  result.signatureValue.algorithm = parsed.signatureAlgorithm;
  if (!digest) {
    fail('CRYPTO_CONSTRAINTS_FAILURE', `${UNSUPPORTED} the digest algorithm ${parsed.digestAlgorithm}`, [
      'integrity',
      'signatureValue',
    ]);
    return result;
  }
  const scheme = signatureScheme(parsed.signatureAlgorithm, parsed.signatureAlgorithmParameters, digest);
  const key = signerCert ? readablePublicKey(signerCert) : undefined;
  if ('name' in scheme) result.signatureValue.algorithm = scheme.name;
  if (key) result.signatureValue.key = describeKey(key);
  for (const weakness of [
    digest.weakness,
    'weakness' in scheme ? scheme.weakness : undefined,
    key ? keyWeakness(key) : undefined,
  ]) {
    if (weakness && !result.weak.includes(weakness)) result.weak.push(weakness);
  }

  const checked = await checkSignedBytes(parsed, signed, digest, 'name' in scheme ? scheme : undefined, key);
  if (checked.intact) result.integrity.valid = true;
  else if (checked.integrityFailure)
    fail(checked.integrityFailure.failure, checked.integrityFailure.reason, ['integrity']);
  if ('unsupported' in scheme) fail('CRYPTO_CONSTRAINTS_FAILURE', scheme.unsupported, ['signatureValue']);
  else if (!signerCert)
    fail('NO_SIGNING_CERTIFICATE_FOUND', 'the signer certificate is not in the CMS', ['signatureValue']);
  else if (!key)
    fail('NO_SIGNING_CERTIFICATE_FOUND', "the signer certificate's public key cannot be read", ['signatureValue']);
  else if (checked.signatureFailure)
    fail(checked.signatureFailure.failure, checked.signatureFailure.reason, ['signatureValue']);
  else result.signatureValue.valid = true;
  if (!result.integrity.valid && !result.integrity.reason)
    result.integrity.reason = result.signatureValue.reason ?? 'not checked';

  let validationTime = ctx.now;
  let proofOfExistence = false;
  if (parsed.signatureTimeStampToken) {
    // The imprint's hash is the token's choice (esign asks for the signature's digest: SHA-384 for P-384).
    const imprintOf = (imprintDigest: DigestAlgorithm): Uint8Array =>
      new Uint8Array(createDigest(imprintDigest).update(parsed.signatureValue).digest());
    // The TSA's chain may be completed from the SignedData's certificates (a CAdES B-LT carries it there).
    const withSignerPool = { ...context, extraCerts: [...parsed.certificates, ...ctx.extraCerts] };
    result.timestamp = await checkTimestampToken(parsed.signatureTimeStampToken, undefined, withSignerPool, imprintOf);
    const stampedAt = judgeSignatureTimestamp(result.timestamp, result, result.warnings, ctx);
    if (stampedAt) {
      validationTime = stampedAt;
      proofOfExistence = true;
    }
  }
  // EN 319 102-1: the best-signature-time is the earliest proof of existence from timestamps that passed validation.
  const archived =
    result.integrity.valid && result.signatureValue.valid ? await ctx.proofOfExistence?.(parsed) : undefined;
  if (archived && archived.getTime() < validationTime.getTime()) {
    validationTime = archived;
    proofOfExistence = true;
  }
  if (signerCert) {
    const { report, path } = await chainAndPath(
      signerCert,
      [...parsed.certificates, ...ctx.extraCerts],
      context,
      validationTime,
    );
    result.chain = report;
    collectChainProblems(result.chain, result, 'signer', proofOfExistence);
    if (report.trusted) collectRevocationFindings(report, result, result.warnings, 'signer', ctx);
    if (ctx.trustedLists)
      result.qualification = qualifyCertificate({
        certificate: new Uint8Array(signerCert.raw),
        chain: path.slice(1).map((cert) => new Uint8Array(cert.raw)),
        signingTime: validationTime,
        validationTime: ctx.now,
        lists: ctx.trustedLists,
      });
  }
  return result;
}

type Failure = { failure: SubIndication; reason: string };

interface SignedBytesCheck {
  intact: boolean;
  integrityFailure?: Failure;
  signatureFailure?: Failure;
}

/**
 * Reads the signed bytes once: their digest against the message-digest attribute (or, without
 * signed attributes, the signature over them as they stream by), and the signature value.
 */
async function checkSignedBytes(
  parsed: ParsedSignedData,
  signed: SignedBytes,
  digest: DigestAlgorithm,
  scheme: SignatureScheme | undefined,
  key: KeyObject | undefined,
): Promise<SignedBytesCheck> {
  let read = signed.read;
  let rangeIntact = true;
  if (signed.encapsulatedSha1) {
    const encapsulated = parsed.encapContent;
    if (encapsulated === undefined)
      return {
        intact: false,
        integrityFailure: {
          failure: 'FORMAT_FAILURE',
          reason: 'an adbe.pkcs7.sha1 signature without the encapsulated SHA-1 digest',
        },
      };
    const sha1 = createHash('sha1');
    await signed.read((chunk) => sha1.update(chunk));
    rangeIntact = bytesEqual(new Uint8Array(sha1.digest()), encapsulated);
    read = async (consume) => consume(encapsulated);
  }
  const changed: Failure = {
    failure: 'HASH_FAILURE',
    reason: 'the message digest does not match the signed bytes: the document was changed',
  };
  const attributes = parsed.signedAttributes;
  const hash = createDigest(digest);
  const usable = scheme !== undefined && key !== undefined;
  if (attributes === undefined) {
    // RFC 5652 §5.4: without signed attributes the signature is over the content itself.
    const verifier = usable ? streamingVerifier(scheme, key) : undefined;
    const held: Uint8Array[] | undefined = usable && verifier === undefined ? [] : undefined;
    let heldBytes = 0;
    await read((chunk) => {
      hash.update(chunk);
      verifier?.update(chunk);
      if (held && heldBytes <= MAX_BUFFERED_EDDSA_CONTENT) {
        held.push(Uint8Array.from(chunk));
        heldBytes += chunk.length;
      }
    });
    if (!usable) return { intact: false };
    if (heldBytes > MAX_BUFFERED_EDDSA_CONTENT) {
      const reason = `${scheme.name} without signed attributes over more than ${MAX_BUFFERED_EDDSA_CONTENT / 1024 / 1024} MiB: esign does not hold that much in memory`;
      return {
        intact: false,
        signatureFailure: { failure: 'SIG_CONSTRAINTS_FAILURE', reason },
        integrityFailure: { failure: 'SIG_CONSTRAINTS_FAILURE', reason },
      };
    }
    const valid = verifier
      ? verifier.verify(parsed.signatureValue)
      : verifyWith(scheme, concatBytes(held ?? []), key, parsed.signatureValue);
    if (!rangeIntact)
      return {
        intact: false,
        integrityFailure: changed,
        ...(valid
          ? {}
          : {
              signatureFailure: {
                failure: 'SIG_CRYPTO_FAILURE',
                reason: 'the signature does not verify with the signer certificate',
              },
            }),
      };
    if (valid) return { intact: true };
    if (opensUnderKey(scheme, key, parsed.signatureValue))
      return {
        intact: false,
        integrityFailure: {
          ...changed,
          reason: 'the signature is genuine but signs other bytes: the document was changed',
        },
      };
    const reason =
      'the signature over the signed bytes does not verify (no signed attributes: a changed document and a bad signature look alike)';
    return {
      intact: false,
      integrityFailure: { failure: 'SIG_CRYPTO_FAILURE', reason },
      signatureFailure: { failure: 'SIG_CRYPTO_FAILURE', reason },
    };
  }
  await read((chunk) => hash.update(chunk));
  const claimed = attributes.messageDigest;
  const check: SignedBytesCheck = { intact: false };
  if (!claimed)
    check.integrityFailure = {
      failure: 'FORMAT_FAILURE',
      reason: 'the signed attributes have no message-digest attribute',
    };
  else if (rangeIntact && bytesEqual(claimed, new Uint8Array(hash.digest()))) check.intact = true;
  else check.integrityFailure = changed;
  if (!usable) return check;
  const ess = parsed.signerCertificate
    ? checkSigningCertificate(parsed, parsed.signerCertificate, verificationHashName)
    : undefined;
  if (ess !== undefined && ess !== 'absent')
    check.signatureFailure = { failure: 'NO_SIGNING_CERTIFICATE_FOUND', reason: ess };
  else if (!verifyWith(scheme, attributes.der, key, parsed.signatureValue)) {
    check.signatureFailure = {
      failure: 'SIG_CRYPTO_FAILURE',
      reason: 'the signature over the signed attributes does not verify with the signer certificate',
    };
  }
  return check;
}

/** `ctx` with the revocation data the CMS carries, which is consulted first. */
function withEmbeddedRevocation(ctx: CmsContext, parsed: ParsedSignedData): CmsContext {
  return { ...ctx, revocation: combineMaterial(embeddedRevocation(parsed), ctx.revocation) };
}

/** `proofOfExistence`: the chain was checked at a trusted timestamp's time, not now. */
export function collectChainProblems(chain: ChainReport, into: Findings, who: string, proofOfExistence: boolean): void {
  if (!chain.trusted) {
    into.untrusted.push(...chain.problems.map((p) => `${who}: ${p}`));
    into.failures.add('NO_CERTIFICATE_CHAIN_FOUND');
  } else into.problems.push(...chain.problems.map((p) => `${who}: ${p}`));
  for (const weakness of chain.weak ?? [])
    if (!into.weak.includes(`${who}: ${weakness}`)) into.weak.push(`${who}: ${weakness}`);
  const at = new Date(chain.checkedAt).getTime();
  if (chain.certificates.some((cert) => new Date(cert.notAfter).getTime() < at))
    into.failures.add('OUT_OF_BOUNDS_NO_POE');
  if (chain.certificates.some((cert) => new Date(cert.notBefore).getTime() > at)) into.failures.add('NOT_YET_VALID');
  for (const entry of chain.revocation) {
    if (entry.status !== 'revoked') continue;
    into.problems.push(`${who}: ${entry.subject} was revoked on ${entry.revokedAt ?? '?'} (${entry.source})`);
    into.failures.add(proofOfExistence ? 'REVOKED' : 'REVOKED_NO_POE');
  }
}

/**
 * The judgement of a signature timestamp (EN 319 102-1), the same for CMS and XAdES: its weak
 * algorithms; its problems (the signature then fails: SIG_CONSTRAINTS_FAILURE, or
 * CRYPTO_CONSTRAINTS_FAILURE when esign could not check it); an untrusted TSA
 * (NO_CERTIFICATE_CHAIN_FOUND); a trusted TSA chain's revocation findings. Returns the time it
 * proves when it passed validation (only such a timestamp moves the best-signature-time).
 */
export function judgeSignatureTimestamp(
  timestamp: TimestampReport,
  findings: Findings,
  warnings: string[],
  ctx: Pick<CmsContext, 'revocationPolicy'>,
): Date | undefined {
  for (const weakness of timestamp.weak ?? []) {
    const line = `signature timestamp: ${weakness}`;
    if (!findings.weak.includes(line)) findings.weak.push(line);
  }
  let provedAt: Date | undefined;
  if (!timestamp.valid) {
    findings.problems.push(...timestamp.problems.map((p) => `signature timestamp: ${p}`));
    findings.failures.add(
      timestamp.problems.every(isUnsupported) ? 'CRYPTO_CONSTRAINTS_FAILURE' : 'SIG_CONSTRAINTS_FAILURE',
    );
  } else if (!timestamp.chain?.trusted) {
    findings.untrusted.push(...(timestamp.chain?.problems ?? []).map((p) => `timestamp authority: ${p}`));
    findings.failures.add('NO_CERTIFICATE_CHAIN_FOUND');
  } else provedAt = new Date(timestamp.time);
  if (timestamp.chain?.trusted)
    collectRevocationFindings(timestamp.chain, findings, warnings, 'timestamp authority', ctx);
  return provedAt;
}

/**
 * EN 319 102-1: a trusted chain whose certificates' revocation status is not established makes the
 * signature INDETERMINATE (TRY_LATER, REVOCATION_OUT_OF_BOUNDS_NO_POE); under soft-fail it passes,
 * and `warnings` says so. Revocation data signed with SHA-1 or MD5 is weak.
 */
export function collectRevocationFindings(
  chain: ChainReport,
  into: Findings,
  warnings: string[],
  who: string,
  ctx: Pick<CmsContext, 'revocationPolicy'>,
): void {
  for (const entry of chain.revocation) {
    if (entry.weak && !into.weak.includes(`${who}: ${entry.weak}`)) into.weak.push(`${who}: ${entry.weak}`);
    if (!entry.unestablished || entry.status === 'revoked') continue;
    const line = `${who}: the revocation status of ${entry.subject} is not established: ${entry.unestablished.reason}`;
    if (ctx.revocationPolicy?.mode === 'soft-fail') {
      const warning = `${line}; passed under --revocation soft-fail (not EN 319 102-1)`;
      if (!warnings.includes(warning)) warnings.push(warning);
      continue;
    }
    if (!into.unestablished.includes(line)) into.unestablished.push(line);
    into.failures.add(entry.unestablished.subIndication);
  }
}

/**
 * The revocation status of `cert` (issued by `issuer`) from what the file holds; where that says
 * nothing, from what the policy's source fetches (once per certificate per run, the source's
 * affair). An unknown status, or good data issued after the certificate expired, is marked
 * unestablished with the reason.
 */
async function establishedStatus(
  cert: X509Certificate,
  issuer: X509Certificate | undefined,
  ctx: CmsContext,
  at: Date,
): Promise<RevocationResult> {
  let result = revocationStatus(cert, issuer, ctx.revocation, at);
  const tried: string[] = [];
  const source = ctx.revocationPolicy?.source;
  if (result.status === 'unknown' && issuer && source) {
    const fetched = await source.fetch(new Uint8Array(cert.raw), new Uint8Array(issuer.raw));
    tried.push(...fetched.failures);
    const item = (der: Uint8Array) => ({
      der,
      store: 'fetched' as const,
      ...(fetched.url ? { url: fetched.url } : {}),
    });
    const ocsps = fetched.ocsps.map(item);
    const crls = fetched.crls.map(item);
    const byOcsp = revocationStatus(cert, issuer, revocationMaterial(ocsps, []), at);
    const answer =
      byOcsp.status !== 'unknown' ? byOcsp : revocationStatus(cert, issuer, revocationMaterial([], crls), at);
    if (answer.status !== 'unknown' || answer.source !== 'none') result = answer;
    else if (byOcsp.source !== 'none') result = byOcsp;
    if (fetched.cachedAt && result.source.startsWith('fetched-')) result = { ...result, cached: fetched.cachedAt };
    if ((fetched.ocsps.length > 0 || fetched.crls.length > 0) && result.source === 'none')
      tried.push(
        'the data fetched does not answer for it (not signed by its issuer or a responder the issuer authorized)',
      );
  }
  if (result.status === 'unknown') {
    const reason =
      result.source !== 'none'
        ? `the ${result.source.endsWith('ocsp') ? 'OCSP responder' : 'CRL'} answers unknown${result.url ? ` (${result.url})` : ''}`
        : tried.length > 0
          ? tried.join('; ')
          : source
            ? 'the file holds no revocation data for it'
            : 'the file holds no revocation data for it, and --offline fetches none';
    return { ...result, unestablished: { subIndication: 'TRY_LATER', reason } };
  }
  if (result.status === 'good' && result.issuedAt && result.source !== 'ocsp-nocheck') {
    const expired = new Date(cert.validTo);
    if (new Date(result.issuedAt).getTime() > expired.getTime())
      return {
        ...result,
        unestablished: {
          subIndication: 'REVOCATION_OUT_OF_BOUNDS_NO_POE',
          reason: `the ${result.source.endsWith('ocsp') ? 'OCSP response' : 'CRL'} was issued on ${result.issuedAt}, after the certificate expired (${expired.toISOString()}), and no proof of existence of the revocation data from before then is known`,
        },
      };
  }
  return result;
}

/** Builds and checks the chain of `leaf` at `at` (revocation from the material, at `at`): the report and the path, leaf first. */
export async function chainAndPath(
  leaf: X509Certificate,
  extra: readonly Uint8Array[],
  ctx: CmsContext,
  at: Date,
): Promise<{ report: ChainReport; path: X509Certificate[] }> {
  const pool = certificatePool(extra);
  // The trusted lists' qualified CAs and TSAs are anchors beside the configured ones.
  const listed = ctx.trustedLists ? ServiceCertificateIndex.of(ctx.trustedLists) : undefined;
  const built = buildChain(leaf, pool, ctx.anchors, at, listed);
  const problems = built.anchored
    ? [...built.validityProblems]
    : [built.untrustedReason ?? 'no trust anchor', ...built.validityProblems];
  // Only a trusted path's certificates need their status established (an untrusted one fails already).
  const revocation = await Promise.all(
    built.path.map((cert, index): Promise<RevocationResult> | RevocationResult => {
      const isAnchor = built.anchored && index === built.path.length - 1;
      if (isAnchor)
        return { subject: summarize(cert).subject, status: 'not-checked' as const, source: 'trust-anchor' as const };
      return built.anchored
        ? establishedStatus(cert, built.path[index + 1], ctx, at)
        : revocationStatus(cert, built.path[index + 1], ctx.revocation, at);
    }),
  );
  // The anchor's self-signature vouches for nothing: trust in it is configured, not computed.
  const signedPath = built.anchored ? built.path.slice(0, -1) : built.path;
  const weak = signedPath.flatMap((cert) => {
    const weakness = certificateSignatureWeakness(new Uint8Array(cert.raw));
    return weakness ? [`${summarize(cert).subject} is signed with ${weakness}`] : [];
  });
  // Validity problems make the signature invalid; an unanchored path makes it untrusted.
  const report: ChainReport = {
    trusted: built.anchored,
    problems,
    ...(weak.length > 0 ? { weak } : {}),
    certificates: built.path.map(summarize),
    checkedAt: at.toISOString(),
    revocation,
  };
  return { report, path: built.path };
}

/** Checks a TimeStampToken for `imprint`: structure, imprint, token signature, TSA usage and chain at genTime. */
/**
 * A timestamp token as the whole evidence over some bytes (a document timestamp, an ASiC-S
 * `timestamp.tst`): its imprint against the bytes, hashed as the token says; its signature and TSA
 * chain. Fills the report's integrity, signature value, timestamp and chain, and the findings.
 */
export async function checkTimestampOver(
  tokenDer: Uint8Array,
  /** The bytes the token is over, or the imprint it must hold (an evidence record's root hash). */
  readSigned: ReadSignedBytes | { readonly imprint: Uint8Array },
  ctx: CmsContext,
  report: SignatureReport,
  findings: Findings,
): Promise<void> {
  let digest: DigestAlgorithm | undefined;
  try {
    const { messageImprint } = parseTimeStampToken(tokenDer).tstInfo;
    digest = digestAlgorithm(messageImprint.hashAlgorithm);
  } catch {
    // checkTimestampToken reports the unreadable token
  }
  const hash = digest && typeof readSigned === 'function' ? createDigest(digest) : undefined;
  if (hash && typeof readSigned === 'function') await readSigned((chunk) => hash.update(chunk));
  const imprint =
    typeof readSigned === 'function' ? (hash ? new Uint8Array(hash.digest()) : undefined) : readSigned.imprint;
  const timestamp = await checkTimestampToken(tokenDer, imprint, ctx);
  report.timestamp = timestamp;
  const imprintUnchecked = timestamp.problems.find((p) => isUnsupported(p) && p.includes('imprint'));
  report.integrity = {
    valid: !timestamp.problems.some((p) => p.includes('imprint')),
    digestAlgorithm: digest?.name ?? 'unknown',
  };
  if (imprintUnchecked) {
    report.integrity.reason = imprintUnchecked;
    findings.failures.add('CRYPTO_CONSTRAINTS_FAILURE');
  } else if (!report.integrity.valid) {
    report.integrity.reason = 'the message imprint does not match the signed bytes: the document was changed';
    findings.failures.add('HASH_FAILURE');
  }
  const unreadable = timestamp.problems.some((p) => p.includes('unreadable'));
  const signatureUnchecked = timestamp.problems.find((p) => isUnsupported(p) && !p.includes('imprint'));
  report.signatureValue = {
    valid: !unreadable && !signatureUnchecked && !timestamp.problems.some((p) => p.includes('not validly signed')),
    algorithm: 'timestamp token',
  };
  if (!report.signatureValue.valid)
    findings.failures.add(
      unreadable ? 'FORMAT_FAILURE' : signatureUnchecked ? 'CRYPTO_CONSTRAINTS_FAILURE' : 'SIG_CRYPTO_FAILURE',
    );
  if (timestamp.chain) report.chain = timestamp.chain;
  report.problems.push(...timestamp.problems);
  findings.weak.push(...(timestamp.weak ?? []));
  if (timestamp.chain && !timestamp.chain.trusted)
    findings.untrusted.push(...timestamp.chain.problems.map((p) => `timestamp authority: ${p}`));
  if (timestamp.chain?.trusted)
    collectRevocationFindings(timestamp.chain, findings, report.warnings, 'timestamp authority', ctx);
}

export async function checkTimestampToken(
  tokenDer: Uint8Array,
  imprint: Uint8Array | undefined,
  ctx: CmsContext,
  digestOf?: (digest: DigestAlgorithm) => Uint8Array,
): Promise<TimestampReport> {
  let token: ParsedTimeStampToken;
  try {
    token = parseTimeStampToken(tokenDer);
  } catch (error) {
    return {
      time: '',
      tsa: '',
      serialNumber: '',
      valid: false,
      problems: [`the token is unreadable (${(error as Error).message})`],
      chain: undefined,
    };
  }
  const { tstInfo } = token;
  const problems: string[] = [];
  const imprintDigest = digestAlgorithm(tstInfo.messageImprint.hashAlgorithm);
  const weak: string[] = [];
  if (imprintDigest?.weakness)
    weak.push(
      `the message imprint is a ${DIGEST_LABELS[imprintDigest.name] ?? imprintDigest.name} digest: ${imprintDigest.weakness}`,
    );
  const expected = imprint ?? (imprintDigest && digestOf ? digestOf(imprintDigest) : undefined);
  if (imprintDigest === undefined)
    problems.push(`${UNSUPPORTED} the imprint hash algorithm ${tstInfo.messageImprint.hashAlgorithm}`);
  else if (expected === undefined || !bytesEqual(expected, tstInfo.messageImprint.hashedMessage))
    problems.push('the message imprint does not match the timestamped data');
  const signature = checkTokenSignature(token);
  problems.push(...signature.problems.map((p) => p.replace(/\.$/, '')));
  weak.push(...signature.weak);
  // Only a key seen to verify the token can make its TSA a listed, qualified one.
  const tokenVerified = signature.problems.length === 0;
  try {
    if (token.signerCertificate) checkTimeStampingUsage(token.signerCertificate);
  } catch (error) {
    problems.push((error as Error).message.replace(/\.$/, ''));
  }
  const tsaCert = token.signerCertificate ? certificate(token.signerCertificate) : undefined;
  const built = tsaCert
    ? await chainAndPath(
        tsaCert,
        [...token.certificates, ...ctx.extraCerts],
        withEmbeddedRevocation(ctx, token.signedData),
        tstInfo.genTime,
      )
    : undefined;
  const chain = built?.report;
  const qualified =
    tsaCert && built && ctx.trustedLists
      ? qualifyTimestamp({
          certificate: new Uint8Array(tsaCert.raw),
          chain: built.path.slice(1).map((cert) => new Uint8Array(cert.raw)),
          time: tstInfo.genTime,
          validationTime: ctx.now,
          lists: ctx.trustedLists,
          tokenVerified,
        })
      : undefined;
  if (chain?.trusted) problems.push(...chain.problems);
  for (const weakness of chain?.weak ?? []) weak.push(`timestamp authority: ${weakness}`);
  for (const entry of chain?.revocation ?? [])
    if (entry.status === 'revoked') problems.push(`${entry.subject} was revoked on ${entry.revokedAt ?? '?'}`);
  return {
    time: tstInfo.genTime.toISOString(),
    tsa: tsaCert ? summarize(tsaCert).subject : (tstInfo.tsaName ?? '(unknown)'),
    serialNumber: tstInfo.serialNumber,
    valid: problems.length === 0,
    problems,
    ...(weak.length > 0 ? { weak } : {}),
    chain,
    ...(qualified ? { qualified } : {}),
  };
}

/** A certificate's public key, or undefined when its SubjectPublicKeyInfo does not decode (damaged or unknown). */
function readablePublicKey(certificate: X509Certificate): KeyObject | undefined {
  try {
    return certificate.publicKey;
  } catch {
    return undefined;
  }
}

const DIGEST_LABELS: Readonly<Record<string, string>> = { sha1: 'SHA-1', md5: 'MD5' };
