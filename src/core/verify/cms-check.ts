/**
 * Checks shared by PAdES, CAdES and document timestamps: a CMS signature against the digest of
 * what it signs, its signature-time-stamp, and certificate chains with revocation status.
 */
import { createHash } from 'node:crypto';
import type { X509Certificate } from 'node:crypto';
import { HASH_NAME_BY_OID, OID } from '../cms/oids.js';
import { bytesEqual, parseSignedData } from '../cms/parse.js';
import type { ParsedSignedData } from '../cms/parse.js';
import { verifySignerInfo } from '../cms/verify-signer.js';
import { isEsignError } from '../errors.js';
import { parseTimeStampToken, verifyTimeStampTokenSignature, checkTimeStampingUsage } from '../tsp/response.js';
import type { ParsedTimeStampToken } from '../tsp/response.js';
import { buildChain, certificate, certificatePool, summarize } from './chain.js';
import { combineMaterial, embeddedRevocation, revocationStatus } from './revocation.js';
import type { RevocationMaterial } from './revocation.js';
import type { ChainReport, SignatureReport, TimestampReport } from './types.js';

/** Signature algorithms accepted in a SignerInfo; anything else is refused. */
const ACCEPTED_SIGNATURE_ALGORITHMS = new Set<string>([
  OID.sha256WithRSAEncryption,
  OID.sha384WithRSAEncryption,
  OID.sha512WithRSAEncryption,
  OID.rsaEncryption,
  OID.rsassaPss,
  OID.ecdsaWithSHA256,
  OID.ecdsaWithSHA384,
  OID.ecdsaWithSHA512,
]);

export interface CmsContext {
  anchors: X509Certificate[];
  /** Extra certificates (the DSS's) to build chains through. */
  extraCerts: Uint8Array[];
  /** Revocation data from outside the CMS (the DSS); what a CMS carries itself is added to it. */
  revocation: RevocationMaterial;
  now: Date;
}

export type CmsChecks = Pick<SignatureReport, 'integrity' | 'signatureValue' | 'signer' | 'timestamp' | 'chain'> & {
  problems: string[];
  warnings: string[];
  untrusted: string[];
  parsed: ParsedSignedData | undefined;
};

/** Checks a signature CMS: `digestOf` hashes the signed data under the SignerInfo's digest algorithm. */
export async function checkSignatureCms(cmsDer: Uint8Array, digestOf: (hashName: string) => Promise<Uint8Array>, ctx: CmsContext): Promise<CmsChecks> {
  const result: CmsChecks = {
    integrity: { valid: false, digestAlgorithm: 'unknown' },
    signatureValue: { valid: false, algorithm: 'unknown' },
    problems: [],
    warnings: [],
    untrusted: [],
    parsed: undefined,
  };
  let parsed: ParsedSignedData;
  try {
    parsed = parseSignedData(cmsDer);
  } catch (error) {
    const reason = isEsignError(error) ? error.message : String(error);
    result.integrity.reason = reason;
    result.signatureValue.reason = reason;
    result.problems.push(`the signature is not a readable CMS SignedData (${reason})`);
    return result;
  }
  result.parsed = parsed;
  const context = withEmbeddedRevocation(ctx, parsed);
  const hashName = HASH_NAME_BY_OID[parsed.digestAlgorithm];
  result.integrity.digestAlgorithm = hashName ?? parsed.digestAlgorithm;
  result.signatureValue.algorithm = parsed.signatureAlgorithm;
  const signerDer = parsed.signerCertificate;
  const signerCert = signerDer ? certificate(signerDer) : undefined;
  if (signerCert) result.signer = summarize(signerCert);
  if (!hashName) {
    result.integrity.reason = `unsupported digest algorithm ${parsed.digestAlgorithm}`;
    result.problems.push(result.integrity.reason);
    return result;
  }
  const digest = await digestOf(hashName);
  const claimed = parsed.signedAttributes?.messageDigest;
  if (claimed && bytesEqual(claimed, digest)) result.integrity.valid = true;
  else {
    result.integrity.reason = claimed ? 'the message digest does not match the signed bytes: the document was changed' : 'no message-digest attribute';
    result.problems.push(result.integrity.reason);
  }
  if (!ACCEPTED_SIGNATURE_ALGORITHMS.has(parsed.signatureAlgorithm)) {
    result.signatureValue.reason = `signature algorithm ${parsed.signatureAlgorithm} is not accepted (only RSA PKCS#1 v1.5, RSASSA-PSS and ECDSA with SHA-2)`;
    result.problems.push(result.signatureValue.reason);
  } else if (!signerCert) {
    result.signatureValue.reason = 'the signer certificate is not in the CMS';
    result.problems.push(result.signatureValue.reason);
  } else {
    const check = verifySignerInfo(parsed, { contentDigest: claimed ?? digest });
    if (check.valid) result.signatureValue.valid = true;
    else {
      result.signatureValue.reason = check.reason;
      result.problems.push(check.reason);
    }
  }

  let validationTime = ctx.now;
  if (parsed.signatureTimeStampToken) {
    // The imprint is of the token's own hash algorithm (the signature's digest, or SHA-256).
    const imprintOf = (hashName: string) => new Uint8Array(createHash(hashName).update(parsed.signatureValue).digest());
    result.timestamp = checkTimestampToken(parsed.signatureTimeStampToken, undefined, context, imprintOf);
    if (!result.timestamp.valid) result.problems.push(...result.timestamp.problems.map((p) => `signature timestamp: ${p}`));
    else {
      validationTime = new Date(result.timestamp.time);
      if (!result.timestamp.chain?.trusted) result.untrusted.push(...(result.timestamp.chain?.problems ?? []).map((p) => `timestamp authority: ${p}`));
    }
  }
  if (signerCert) {
    result.chain = chainReport(signerCert, [...parsed.certificates, ...ctx.extraCerts], context, validationTime);
    collectChainProblems(result.chain, result, 'signer');
  }
  return result;
}

/** `ctx` with the revocation data the CMS carries, which is consulted first. */
function withEmbeddedRevocation(ctx: CmsContext, parsed: ParsedSignedData): CmsContext {
  return { ...ctx, revocation: combineMaterial(embeddedRevocation(parsed), ctx.revocation) };
}

function collectChainProblems(chain: ChainReport, into: { problems: string[]; untrusted: string[] }, who: string): void {
  if (!chain.trusted) into.untrusted.push(...chain.problems.map((p) => `${who}: ${p}`));
  else into.problems.push(...chain.problems.map((p) => `${who}: ${p}`));
  for (const entry of chain.revocation) {
    if (entry.status === 'revoked') into.problems.push(`${who}: ${entry.subject} was revoked on ${entry.revokedAt ?? '?'} (${entry.source})`);
  }
}

/** Builds and checks the chain of `leaf` at `at`; revocation from the material, at `at`. */
export function chainReport(leaf: X509Certificate, extra: readonly Uint8Array[], ctx: CmsContext, at: Date): ChainReport {
  const pool = certificatePool(extra);
  const built = buildChain(leaf, pool, ctx.anchors, at);
  const problems = built.anchored ? [...built.validityProblems] : [built.untrustedReason ?? 'no trust anchor', ...built.validityProblems];
  const revocation = built.path.map((cert, index) => {
    const isAnchor = built.anchored && index === built.path.length - 1;
    if (isAnchor) return { subject: summarize(cert).subject, status: 'not-checked' as const, source: 'trust-anchor' as const };
    return revocationStatus(cert, built.path[index + 1], ctx.revocation, at);
  });
  // Validity problems make the signature invalid; an unanchored path makes it untrusted.
  return {
    trusted: built.anchored,
    problems,
    certificates: built.path.map(summarize),
    checkedAt: at.toISOString(),
    revocation,
  };
}

/** Checks a TimeStampToken for `imprint`: structure, imprint, token signature, TSA usage and chain at genTime. */
export function checkTimestampToken(tokenDer: Uint8Array, imprint: Uint8Array | undefined, ctx: CmsContext, digestOf?: (hashName: string) => Uint8Array): TimestampReport {
  let token: ParsedTimeStampToken;
  try {
    token = parseTimeStampToken(tokenDer);
  } catch (error) {
    return { time: '', tsa: '', serialNumber: '', valid: false, problems: [`the token is unreadable (${(error as Error).message})`], chain: undefined };
  }
  const { tstInfo } = token;
  const problems: string[] = [];
  const hashName = HASH_NAME_BY_OID[tstInfo.messageImprint.hashAlgorithm];
  const expected = imprint ?? (hashName && digestOf ? digestOf(hashName) : undefined);
  if (expected === undefined) problems.push(`unsupported imprint hash algorithm ${tstInfo.messageImprint.hashAlgorithm}`);
  else if (!bytesEqual(expected, tstInfo.messageImprint.hashedMessage)) problems.push('the message imprint does not match the timestamped data');
  try {
    verifyTimeStampTokenSignature(token);
    if (token.signerCertificate) checkTimeStampingUsage(token.signerCertificate);
  } catch (error) {
    problems.push((error as Error).message.replace(/\.$/, ''));
  }
  const tsaCert = token.signerCertificate ? certificate(token.signerCertificate) : undefined;
  const chain = tsaCert ? chainReport(tsaCert, [...token.certificates, ...ctx.extraCerts], withEmbeddedRevocation(ctx, token.signedData), tstInfo.genTime) : undefined;
  if (chain?.trusted) problems.push(...chain.problems);
  for (const entry of chain?.revocation ?? []) if (entry.status === 'revoked') problems.push(`${entry.subject} was revoked on ${entry.revokedAt ?? '?'}`);
  return {
    time: tstInfo.genTime.toISOString(),
    tsa: tsaCert ? summarize(tsaCert).subject : (tstInfo.tsaName ?? '(unknown)'),
    serialNumber: tstInfo.serialNumber,
    valid: problems.length === 0,
    problems,
    chain,
  };
}
