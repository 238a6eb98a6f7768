/**
 * CAdES verification of a detached `.p7s` against its content, which the caller streams (read once:
 * hashed, and verified as it goes by when there are no signed attributes). The level reached: B-T
 * with a valid signature timestamp, B-LT with every chain's revocation data in the CMS, B-LTA with a
 * valid archive timestamp over it: an archive-time-stamp-v3 (EN 319 122-1 §5.5.3, its token with an
 * ats-hash-index-v3 or the older ats-hash-index) or an archive-time-stamp-v2 (CAdES 2.x), which
 * covers the content itself and has it read once more.
 */
import { X509Certificate } from 'node:crypto';
import type { Hash } from 'node:crypto';
import {
  archivedParts,
  archiveV2Coverage,
  expectedArchiveImprint,
  OID_ARCHIVE_TIMESTAMP_V2,
  OID_ARCHIVE_TIMESTAMP_V3,
} from '../cms/archive-timestamp.js';
import {
  decode,
  explicit,
  explicitInner,
  objectIdentifier,
  sequence,
  sequenceItems,
  setItems,
  smallInteger,
  Tag,
  tlv,
} from '../cms/der.js';
import { OID } from '../cms/oids.js';
import { bytesEqual, parseSignedData, type ParsedSignedData } from '../cms/parse.js';
import { oneSignerEach } from '../cms/signed-data.js';
import { parseTimeStampToken } from '../tsp/response.js';
import { createDigest, digestAlgorithm, isUnsupported, UNSUPPORTED, type DigestAlgorithm } from './algorithms.js';
import { checkSignatureCms, checkTimestampToken } from './cms-check.js';
import type { CmsChecks, CmsContext, ReadSignedBytes } from './cms-check.js';
import type { TimestampReport } from './types.js';
import { combineMaterial, embeddedRevocation, revocationMaterial } from './revocation.js';
import { verificationHashName } from './token-signature.js';
import { codeOf, judgedQualification, verdict, worstOfSignatures } from './types.js';
import type { RevocationStore, SignatureReport, VerificationReport, VerifyOptions } from './types.js';

/** id-countersignature (RFC 5652 §11.4): an unsigned attribute whose value is a SignerInfo over the signature value. */
const OID_COUNTER_SIGNATURE = '1.2.840.113549.1.9.6';

export async function verifyCades(
  p7s: Uint8Array,
  file: string,
  readContent: ReadSignedBytes,
  options: VerifyOptions,
  /** An enveloping CMS's encapContentInfo as it lies in the file (the content inside), for an archive-time-stamp-v2. */
  readEncapsulated?: ReadSignedBytes,
): Promise<VerificationReport> {
  // Several SignerInfos (parallel signatures in one file): each a signature, over the content read again.
  const signers = signerInfoCount(p7s) > 1 ? splitSigners(p7s) : [p7s];
  const signatures: SignatureReport[] = [];
  for (const signer of signers)
    signatures.push({
      ...(await verifySigner(signer, readContent, options, readEncapsulated)),
      index: signatures.length + 1,
    });
  const status = worstOfSignatures(signatures);
  return {
    file,
    kind: 'cades',
    signatures,
    status,
    code: codeOf(status),
    checkedAt: options.now.toISOString(),
  };
}

/** One detached SignedData per SignerInfo; the CMS as it is when it cannot be split (checkSignatureCms then says why). */
function splitSigners(cms: Uint8Array): Uint8Array[] {
  try {
    return oneSignerEach(cms);
  } catch {
    return [cms];
  }
}

/** How many SignerInfos a CMS holds (1 when it cannot be read: checkSignatureCms reports that). */
function signerInfoCount(cms: Uint8Array): number {
  try {
    const [, content] = sequenceItems(decode(cms, 'ContentInfo'), 'ContentInfo');
    const fields = sequenceItems(explicitInner(content, 0, 'ContentInfo content'), 'SignedData');
    return setItems(fields[fields.length - 1], 'signerInfos').length;
  } catch {
    return 1;
  }
}

/** One SignerInfo's signature (`p7s` holds one): checked, its level named, its counter-signatures under it. */
async function verifySigner(
  p7s: Uint8Array,
  readContent: ReadSignedBytes,
  options: VerifyOptions,
  readEncapsulated: ReadSignedBytes | undefined,
): Promise<SignatureReport> {
  // Revocation data can only come from the .p7s itself; checkSignatureCms reads it there.
  const ctx: CmsContext = {
    anchors: options.trustAnchors.map((der) => new X509Certificate(der)),
    extraCerts: [],
    revocation: revocationMaterial([], []),
    now: options.now,
    ...(options.trustedLists ? { trustedLists: options.trustedLists } : {}),
    ...(options.revocation ? { revocationPolicy: options.revocation } : {}),
  };
  // The content is read once: an archive timestamp's hash of it is taken as it goes by.
  const archives = archiveTokens(p7s);
  const contentHashes = new Map<string, Hash>(
    archives.flatMap(({ digest, version }) =>
      digest && version === 3 ? [[digest.name, createDigest(digest)] as const] : [],
    ),
  );
  const reading: ReadSignedBytes = (consume) =>
    readContent((chunk) => {
      for (const hash of contentHashes.values()) hash.update(chunk);
      consume(chunk);
    });
  let digests: Map<string, Uint8Array> | undefined;
  const digestsOnce = () =>
    (digests ??= new Map([...contentHashes].map(([name, hash]) => [name, new Uint8Array(hash.digest())])));
  // EN 319 102-1: an archive timestamp that passed validation is a proof of existence of the signature.
  const proofOfExistence = (parsed: ParsedSignedData) => archivedAt(p7s, archives, digestsOnce(), ctx, parsed);
  const checks = await checkSignatureCms(p7s, { read: reading }, { ...ctx, proofOfExistence });
  const contentDigests = digestsOnce();
  const rereadContent: ReadSignedBytes = readEncapsulated ?? readContent;
  const archived =
    checks.integrity.valid && checks.signatureValue.valid && archives.length > 0
      ? await checkArchiveTimestamps(p7s, archives, contentDigests, rereadContent, !readEncapsulated, ctx, checks)
      : false;
  const report = signatureReport(checks);
  report.level = checks.timestamp?.valid ? 'B-T' : 'B-B';
  if (!checks.integrity.valid || !checks.signatureValue.valid) delete report.level;
  else if (report.level === 'B-T') report.level = longTermLevel(report);
  if (report.level === 'B-LT' && archived) report.level = 'B-LTA';
  else if (archived) report.warnings.push('B-LTA not reached: the archive timestamp covers a signature below B-LT');
  const counter = checks.parsed ? await counterSignatures(p7s, checks.parsed, ctx, 1) : [];
  return counter.length > 0 ? { ...report, counterSignatures: counter } : report;
}

/** A SignatureReport from a CMS signature's checks (its level and counter-signatures the caller's). */
function signatureReport(checks: CmsChecks): SignatureReport {
  const signingTime = checks.parsed?.signedAttributes?.signingTime;
  const judged = verdict(checks);
  return {
    index: 1,
    kind: 'cades',
    integrity: checks.integrity,
    signatureValue: checks.signatureValue,
    ...(checks.signer ? { signer: checks.signer } : {}),
    ...(signingTime ? { claimedTime: signingTime.toISOString() } : {}),
    ...(checks.timestamp ? { timestamp: checks.timestamp } : {}),
    ...(checks.chain ? { chain: checks.chain } : {}),
    ...(checks.qualification ? { qualification: judgedQualification(checks.qualification, judged) } : {}),
    ...judged,
    problems: [
      ...checks.problems,
      ...checks.untrusted,
      ...checks.unestablished,
      ...checks.weak.map((weakness) => `algorithm not acceptable: ${weakness}`),
    ],
    warnings: checks.warnings,
  };
}

/** Counter-signatures inside counter-signatures: deeper than this is not read. */
const MAX_COUNTER_SIGNATURE_DEPTH = 4;

/**
 * The countersignature attributes (RFC 5652 §11.4) of a SignerInfo: each a SignerInfo over that
 * SignerInfo's signature value, checked as a detached signature of those octets with the
 * certificates and revocation data of the SignedData it sits in, and its own counter-signatures
 * under it.
 */
async function counterSignatures(
  parentCms: Uint8Array,
  parent: ParsedSignedData,
  ctx: CmsContext,
  depth: number,
): Promise<SignatureReport[]> {
  const values = parent.unsignedAttributes
    .filter((attribute) => attribute.type === OID_COUNTER_SIGNATURE)
    .flatMap((attribute) => attribute.values);
  const reports: SignatureReport[] = [];
  for (const signerInfo of values) {
    const cms = counterSignatureCms(parentCms, signerInfo);
    const checks = await checkSignatureCms(cms, { read: async (consume) => consume(parent.signatureValue) }, ctx);
    const report = { ...signatureReport(checks), index: reports.length + 1 };
    const nested =
      checks.parsed && depth < MAX_COUNTER_SIGNATURE_DEPTH
        ? await counterSignatures(cms, checks.parsed, ctx, depth + 1)
        : [];
    reports.push(nested.length > 0 ? { ...report, counterSignatures: nested } : report);
  }
  return reports;
}

/** A detached SignedData around a counter-signature's SignerInfo, with the certificates and crls of the one it sits in. */
function counterSignatureCms(parentCms: Uint8Array, signerInfo: Uint8Array): Uint8Array {
  let fields: Uint8Array[] = [];
  let digestAlgorithm: Uint8Array = sequence(objectIdentifier(OID.sha256));
  try {
    const parts = archivedParts(parentCms);
    fields = [parts.certificatesField, parts.crlsField].filter((field): field is Uint8Array => field !== undefined);
    digestAlgorithm = sequenceItems(decode(signerInfo, 'SignerInfo'), 'SignerInfo')[2]?.encoded ?? digestAlgorithm;
  } catch {
    // An unreadable counter-signature is reported by checkSignatureCms, as any unreadable CMS.
  }
  return sequence(
    objectIdentifier(OID.signedData),
    explicit(
      0,
      sequence(
        smallInteger(1),
        tlv(Tag.set, digestAlgorithm),
        sequence(objectIdentifier(OID.data)),
        ...fields,
        tlv(Tag.set, signerInfo),
      ),
    ),
  );
}

interface ArchiveToken {
  token: Uint8Array;
  /** archive-time-stamp-v3 or -v2. */
  version: 2 | 3;
  /** The imprint's digest; undefined when esign does not implement it. */
  digest: DigestAlgorithm | undefined;
  genTime: Date | undefined;
  /** Its check against an imprint, kept: the proof of existence and the level both ask for a v3's. */
  checked?: { imprint: Uint8Array; report: Promise<TimestampReport> };
}

/** The token's check against `imprint`, made once per verification. */
function checkArchiveToken(archive: ArchiveToken, imprint: Uint8Array, context: CmsContext): Promise<TimestampReport> {
  if (!archive.checked || !bytesEqual(archive.checked.imprint, imprint))
    archive.checked = { imprint, report: checkTimestampToken(archive.token, imprint, context) };
  return archive.checked.report;
}

/** The archive timestamp tokens of the signature (v3 and v2), with the digest of each one's imprint. */
function archiveTokens(p7s: Uint8Array): ArchiveToken[] {
  let attributes;
  try {
    attributes = parseSignedData(p7s).unsignedAttributes;
  } catch {
    return []; // checkSignatureCms reports the unreadable CMS
  }
  return attributes
    .filter((attribute) => attribute.type === OID_ARCHIVE_TIMESTAMP_V3 || attribute.type === OID_ARCHIVE_TIMESTAMP_V2)
    .flatMap((attribute) =>
      attribute.values.map((token) => {
        const version = attribute.type === OID_ARCHIVE_TIMESTAMP_V3 ? 3 : 2;
        try {
          const { tstInfo } = parseTimeStampToken(token);
          return {
            token,
            version,
            digest: digestAlgorithm(tstInfo.messageImprint.hashAlgorithm),
            genTime: tstInfo.genTime,
          };
        } catch {
          return { token, version, digest: undefined, genTime: undefined };
        }
      }),
    );
}

/**
 * The earliest time an archive timestamp that passed validation (imprint, token, trusted TSA) proves
 * the signature existed. An archive-time-stamp-v3 only: a v2 covers the content, which is read again
 * only after the signature's checks.
 */
async function archivedAt(
  p7s: Uint8Array,
  archives: ArchiveToken[],
  contentDigests: Map<string, Uint8Array>,
  ctx: CmsContext,
  parsed: ParsedSignedData,
): Promise<Date | undefined> {
  const context: CmsContext = {
    ...ctx,
    extraCerts: [...parsed.certificates, ...ctx.extraCerts],
    revocation: combineMaterial(embeddedRevocation(parsed), ctx.revocation),
  };
  let earliest: Date | undefined;
  for (const archive of archives) {
    const { token, digest, version } = archive;
    const content = digest && version === 3 ? contentDigests.get(digest.name) : undefined;
    const imprint =
      digest && content
        ? expectedArchiveImprint(p7s, token, content, digest.name, verificationHashName).imprint
        : undefined;
    const timestamp = imprint ? await checkArchiveToken(archive, imprint, context) : undefined;
    if (!timestamp?.valid || !timestamp.chain?.trusted) continue;
    const time = new Date(timestamp.time);
    if (!earliest || time < earliest) earliest = time;
  }
  return earliest;
}

/**
 * Each archive timestamp: a v3's ats-hash-index(-v3) against what the CMS holds, its imprint over
 * the signature as it is; a v2's imprint over the encapContentInfo, the content (read once more:
 * `reread`, after `before` when the content is `detached`), and the rest of the SignedData as its
 * time found it. Then its signature and TSA chain (with the CMS's revocation data). A token that
 * does not match is a problem: the signature was changed after it was archived. True when one holds.
 */
async function checkArchiveTimestamps(
  p7s: Uint8Array,
  archives: ArchiveToken[],
  contentDigests: Map<string, Uint8Array>,
  reread: ReadSignedBytes,
  detached: boolean,
  ctx: CmsContext,
  checks: CmsChecks,
): Promise<boolean> {
  const parsed = checks.parsed!;
  const context: CmsContext = {
    ...ctx,
    extraCerts: [...parsed.certificates, ...ctx.extraCerts],
    revocation: combineMaterial(embeddedRevocation(parsed), ctx.revocation),
  };
  let valid = false;
  for (const archive of archives) {
    const { token, digest } = archive;
    const expected = !digest
      ? { problem: `${UNSUPPORTED} its imprint hash algorithm`, imprint: undefined }
      : archive.version === 3
        ? expectedArchiveImprint(p7s, token, contentDigests.get(digest.name)!, digest.name, verificationHashName)
        : await expectedArchiveV2Imprint(p7s, archive, archives, reread, detached);
    const timestamp = expected.imprint ? await checkArchiveToken(archive, expected.imprint, context) : undefined;
    const problems = expected.problem ? [expected.problem] : (timestamp?.problems ?? []);
    for (const weakness of timestamp?.weak ?? []) checks.weak.push(`archive timestamp: ${weakness}`);
    if (problems.length === 0 && timestamp?.chain?.trusted) {
      valid = true;
      continue;
    }
    if (problems.length === 0) {
      checks.untrusted.push(...(timestamp?.chain?.problems ?? []).map((p) => `archive timestamp authority: ${p}`));
      continue;
    }
    checks.problems.push(...problems.map((problem) => `archive timestamp: ${problem}`));
    checks.failures.add(
      problems.every(isUnsupported)
        ? 'CRYPTO_CONSTRAINTS_FAILURE'
        : problems.some((p) => /imprint|no longer/.test(p))
          ? 'HASH_FAILURE'
          : 'SIG_CONSTRAINTS_FAILURE',
    );
  }
  return valid;
}

/** The imprint an archive-time-stamp-v2 must carry: of the two forms CAdES's versions give, the one it does. */
async function expectedArchiveV2Imprint(
  p7s: Uint8Array,
  archive: ArchiveToken,
  archives: readonly ArchiveToken[],
  reread: ReadSignedBytes,
  detached: boolean,
): Promise<{ problem?: string; imprint?: Uint8Array }> {
  const time = archive.genTime?.getTime();
  const coverage = archiveV2Coverage(p7s, archive.token, (other) => {
    const otherTime = archives.find(
      (candidate) => candidate.token === other || bytesEqual(candidate.token, other),
    )?.genTime;
    return time !== undefined && otherTime !== undefined && otherTime.getTime() < time;
  });
  const hash = createDigest(archive.digest!);
  if (detached) hash.update(coverage.before);
  await reread((chunk) => hash.update(chunk));
  const imprints = coverage.after.map((after) => new Uint8Array(hash.copy().update(after).digest()));
  let stamped: Uint8Array | undefined;
  try {
    stamped = parseTimeStampToken(archive.token).tstInfo.messageImprint.hashedMessage;
  } catch {
    // checkTimestampToken reports the unreadable token
  }
  return { imprint: imprints.find((imprint) => stamped && bytesEqual(imprint, stamped)) ?? imprints[0]! };
}

/**
 * B-LT (EN 319 122-1): a valid signature timestamp, and revocation data in the CMS for every
 * certificate of the signer's chain and the TSA's (the trust anchors and OCSP responders with
 * id-pkix-ocsp-nocheck aside). Otherwise B-T, with a warning when some, but not all, is there.
 */
export function longTermLevel(report: SignatureReport, store: RevocationStore = 'cms'): 'B-T' | 'B-LT' {
  const chains = [
    ['signer chain', report.chain],
    ['timestamp authority chain', report.timestamp?.chain],
  ] as const;
  const entries = chains.flatMap(([, chain]) => chain?.revocation ?? []);
  if (!entries.some((entry) => entry.source.startsWith(`${store}-`))) return 'B-T';
  const missing = chains.flatMap(([who, chain]) =>
    !chain
      ? [`${who}: none`]
      : !chain.trusted
        ? [`${who}: it does not reach a trust anchor`]
        : chain.revocation
            .filter((entry) => entry.source === 'none' || entry.source.startsWith('fetched-'))
            .map((entry) => `${who}: ${entry.subject}`),
  );
  if (missing.length === 0) return 'B-LT';
  report.warnings.push(`B-LT not reached: the signature lacks revocation data for ${missing.join('; ')}`);
  return 'B-T';
}
