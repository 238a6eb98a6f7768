/**
 * CAdES verification of a detached `.p7s` against its content, which the caller streams (read once:
 * hashed, and verified as it goes by when there are no signed attributes). The level reached: B-T
 * with a valid signature timestamp, B-LT with every chain's revocation data in the CMS, B-LTA with a
 * valid archive-time-stamp-v3 over it (EN 319 122-1 §5.5.3).
 */
import { createHash, X509Certificate } from 'node:crypto';
import type { Hash } from 'node:crypto';
import { digestNameOf, expectedArchiveImprint, OID_ARCHIVE_TIMESTAMP_V3 } from '../cms/archive-timestamp.js';
import type { DigestName } from '../cms/algorithms.js';
import { parseSignedData } from '../cms/parse.js';
import type { ParsedSignedData } from '../cms/parse.js';
import { parseTimeStampToken } from '../tsp/response.js';
import { checkSignatureCms, checkTimestampToken } from './cms-check.js';
import type { CmsChecks, CmsContext, ReadSignedBytes } from './cms-check.js';
import { combineMaterial, embeddedRevocation, revocationMaterial } from './revocation.js';
import { judgedQualification, verdict } from './types.js';
import type { SignatureReport, VerificationReport, VerifyOptions } from './types.js';

export async function verifyCades(
  p7s: Uint8Array,
  file: string,
  readContent: ReadSignedBytes,
  options: VerifyOptions,
): Promise<VerificationReport> {
  // Revocation data can only come from the .p7s itself; checkSignatureCms reads it there.
  const ctx: CmsContext = {
    anchors: options.trustAnchors.map((der) => new X509Certificate(der)),
    extraCerts: [],
    revocation: revocationMaterial([], []),
    now: options.now,
    ...(options.trustedLists ? { trustedLists: options.trustedLists } : {}),
  };
  // The content is read once: an archive timestamp's hash of it is taken as it goes by.
  const archives = archiveTokens(p7s);
  const contentHashes = new Map<DigestName, Hash>(
    archives.flatMap(({ digest }) => (digest ? [[digest, createHash(digest)]] : [])),
  );
  const reading: ReadSignedBytes = (consume) =>
    readContent((chunk) => {
      for (const hash of contentHashes.values()) hash.update(chunk);
      consume(chunk);
    });
  let digests: Map<DigestName, Uint8Array> | undefined;
  const digestsOnce = () =>
    (digests ??= new Map([...contentHashes].map(([name, hash]) => [name, new Uint8Array(hash.digest())])));
  // EN 319 102-1: an archive timestamp that passed validation is a proof of existence of the signature.
  const proofOfExistence = (parsed: ParsedSignedData) => archivedAt(p7s, archives, digestsOnce(), ctx, parsed);
  const checks = await checkSignatureCms(p7s, { read: reading }, { ...ctx, proofOfExistence });
  const contentDigests = digestsOnce();
  const archived =
    checks.integrity.valid && checks.signatureValue.valid && archives.length > 0
      ? checkArchiveTimestamps(p7s, archives, contentDigests, ctx, checks)
      : false;
  const signingTime = checks.parsed?.signedAttributes?.signingTime;
  const judged = verdict(checks);
  const report: SignatureReport = {
    index: 1,
    kind: 'cades',
    integrity: checks.integrity,
    signatureValue: checks.signatureValue,
    ...(checks.signer ? { signer: checks.signer } : {}),
    ...(signingTime ? { claimedTime: signingTime.toISOString() } : {}),
    ...(checks.timestamp ? { timestamp: checks.timestamp } : {}),
    ...(checks.chain ? { chain: checks.chain } : {}),
    ...(checks.qualification ? { qualification: judgedQualification(checks.qualification, judged) } : {}),
    level: checks.timestamp?.valid ? 'B-T' : 'B-B',
    ...judged,
    problems: [
      ...checks.problems,
      ...checks.untrusted,
      ...checks.weak.map((weakness) => `algorithm not acceptable: ${weakness}`),
    ],
    warnings: checks.warnings,
  };
  if (!checks.integrity.valid || !checks.signatureValue.valid) delete report.level;
  else if (report.level === 'B-T') report.level = longTermLevel(report);
  if (report.level === 'B-LT' && archived) report.level = 'B-LTA';
  else if (archived) report.warnings.push('B-LTA not reached: the archive timestamp covers a signature below B-LT');
  return {
    file,
    kind: 'cades',
    signatures: [report],
    status: judged.status,
    code: judged.code,
    checkedAt: options.now.toISOString(),
  };
}

/** The archive-time-stamp-v3 tokens of the signature, with the digest of each one's imprint. */
function archiveTokens(p7s: Uint8Array): { token: Uint8Array; digest: DigestName | undefined }[] {
  let attributes;
  try {
    attributes = parseSignedData(p7s).unsignedAttributes;
  } catch {
    return []; // checkSignatureCms reports the unreadable CMS
  }
  return attributes
    .filter((attribute) => attribute.type === OID_ARCHIVE_TIMESTAMP_V3)
    .flatMap((attribute) => attribute.values)
    .map((token) => {
      try {
        return { token, digest: digestNameOf(parseTimeStampToken(token).tstInfo.messageImprint.hashAlgorithm) };
      } catch {
        return { token, digest: undefined };
      }
    });
}

/** The earliest time an archive timestamp that passed validation (imprint, token, trusted TSA) proves the signature existed. */
function archivedAt(
  p7s: Uint8Array,
  archives: { token: Uint8Array; digest: DigestName | undefined }[],
  contentDigests: Map<DigestName, Uint8Array>,
  ctx: CmsContext,
  parsed: ParsedSignedData,
): Date | undefined {
  const context: CmsContext = {
    ...ctx,
    extraCerts: [...parsed.certificates, ...ctx.extraCerts],
    revocation: combineMaterial(embeddedRevocation(parsed), ctx.revocation),
  };
  let earliest: Date | undefined;
  for (const { token, digest } of archives) {
    const content = digest ? contentDigests.get(digest) : undefined;
    const imprint = digest && content ? expectedArchiveImprint(p7s, token, content, digest).imprint : undefined;
    const timestamp = imprint ? checkTimestampToken(token, imprint, context) : undefined;
    if (!timestamp?.valid || !timestamp.chain?.trusted) continue;
    const time = new Date(timestamp.time);
    if (!earliest || time < earliest) earliest = time;
  }
  return earliest;
}

/**
 * Each archive timestamp: its ats-hash-index-v3 against what the CMS holds, its imprint over the
 * signature as it is, its signature and TSA chain (with the CMS's revocation data). A token that
 * does not match is a problem: the signature was changed after it was archived. True when one holds.
 */
function checkArchiveTimestamps(
  p7s: Uint8Array,
  archives: { token: Uint8Array; digest: DigestName | undefined }[],
  contentDigests: Map<DigestName, Uint8Array>,
  ctx: CmsContext,
  checks: CmsChecks,
): boolean {
  const parsed = checks.parsed!;
  const context: CmsContext = {
    ...ctx,
    extraCerts: [...parsed.certificates, ...ctx.extraCerts],
    revocation: combineMaterial(embeddedRevocation(parsed), ctx.revocation),
  };
  let valid = false;
  for (const { token, digest } of archives) {
    const content = digest ? contentDigests.get(digest) : undefined;
    const expected =
      digest && content
        ? expectedArchiveImprint(p7s, token, content, digest)
        : { problem: 'its imprint algorithm is not one esign checks', imprint: undefined };
    const timestamp = expected.imprint ? checkTimestampToken(token, expected.imprint, context) : undefined;
    const problems = expected.problem ? [expected.problem] : (timestamp?.problems ?? []);
    if (problems.length === 0 && timestamp?.chain?.trusted) {
      valid = true;
      continue;
    }
    if (problems.length === 0) {
      checks.untrusted.push(...(timestamp?.chain?.problems ?? []).map((p) => `archive timestamp authority: ${p}`));
      continue;
    }
    checks.problems.push(...problems.map((problem) => `archive timestamp: ${problem}`));
    checks.failures.add(problems.some((p) => /imprint|no longer/.test(p)) ? 'HASH_FAILURE' : 'SIG_CONSTRAINTS_FAILURE');
  }
  return valid;
}

/**
 * B-LT (EN 319 122-1): a valid signature timestamp, and revocation data in the CMS for every
 * certificate of the signer's chain and the TSA's (the trust anchors and OCSP responders with
 * id-pkix-ocsp-nocheck aside). Otherwise B-T, with a warning when some, but not all, is there.
 */
function longTermLevel(report: SignatureReport): 'B-T' | 'B-LT' {
  const chains = [
    ['signer chain', report.chain],
    ['timestamp authority chain', report.timestamp?.chain],
  ] as const;
  const entries = chains.flatMap(([, chain]) => chain?.revocation ?? []);
  if (!entries.some((entry) => entry.source.startsWith('cms-'))) return 'B-T';
  const missing = chains.flatMap(([who, chain]) =>
    !chain
      ? [`${who}: none`]
      : !chain.trusted
        ? [`${who}: it does not reach a trust anchor`]
        : chain.revocation.filter((entry) => entry.source === 'none').map((entry) => `${who}: ${entry.subject}`),
  );
  if (missing.length === 0) return 'B-LT';
  report.warnings.push(`B-LT not reached: the signature lacks revocation data for ${missing.join('; ')}`);
  return 'B-T';
}
