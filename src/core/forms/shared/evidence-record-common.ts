/** What the two evidence-record readers (RFC 4998 ASN.1, RFC 6283 XML) share: the data objects, and the check of an archive timestamp's token. */
import { compareBytes, concatBytes } from '../../cms/der.js';
import { createDigest, type DigestAlgorithm } from '../../verify/algorithms.js';
import { timestampReport, type ContainerVerifyOptions } from './timestamp-report.js';
import type { ReadSignedBytes } from '../../verify/cms-check.js';
import type { EvidenceRecordReport, SignatureReport } from '../../verify/types.js';

/** A file an evidence record may cover: its name, and how to read it. */
export interface DataObject {
  readonly name: string;
  readonly read: ReadSignedBytes;
}

/**
 * The check of an archive timestamp's token against the roots its hash tree may give: the one whose
 * imprint matches and checks out, else one intact with an untrusted TSA, else the first one's failure.
 */
async function bestTimestamp(
  token: Uint8Array,
  roots: readonly Uint8Array[],
  options: ContainerVerifyOptions,
): Promise<SignatureReport> {
  const checked = await timestampReport(token, [], { imprint: roots[0] ?? new Uint8Array(0) }, options);
  const matching =
    roots.length > 1 && checked.status !== 'valid'
      ? await Promise.all(roots.slice(1).map((root) => timestampReport(token, [], { imprint: root }, options)))
      : [];
  const candidates = [checked, ...matching];
  return candidates.find((r) => r.status === 'valid') ?? candidates.find((r) => r.status === 'untrusted') ?? checked;
}

/** Counts archive timestamp `index` (0-based) as checked and adds its problems to the report: how it came out. */
function recordTimestamp(
  report: EvidenceRecordReport,
  index: number,
  best: SignatureReport,
): 'ok' | 'untrusted' | 'failed' {
  report.checked++;
  if (best.status === 'valid') return 'ok';
  report.problems.push(...best.problems.map((problem) => `archive timestamp ${index + 1}: ${problem}`));
  if (best.status === 'untrusted') return 'untrusted';
  if (best.status !== 'invalid') report.problems.push(`archive timestamp ${index + 1}: ${best.status}`);
  return 'failed';
}

/**
 * The verdict on an evidence record from its first chain's archive timestamps, each with the roots
 * its hash tree gives (the first's from the data objects it `covers`): invalid when a token fails or
 * nothing is covered, untrusted when a TSA is, unverified when later chains (hash-tree renewal) are
 * left unchecked, else valid.
 */
export async function judgeFirstChain(
  report: EvidenceRecordReport,
  stamps: readonly { readonly token: Uint8Array; readonly roots: readonly Uint8Array[] }[],
  covers: string[],
  laterChains: number,
  options: ContainerVerifyOptions,
): Promise<EvidenceRecordReport> {
  let timestampsOk = true;
  let trusted = true;
  for (const [index, stamp] of stamps.entries()) {
    const best = await bestTimestamp(stamp.token, stamp.roots, options);
    if (index === 0) {
      report.covers = covers;
      if (best.timestamp) report.timestamp = best.timestamp;
      if (covers.length === 0) report.problems.push('its hash tree holds the hash of no file of the container');
    }
    const outcome = recordTimestamp(report, index, best);
    timestampsOk &&= outcome !== 'failed';
    trusted &&= outcome !== 'untrusted';
  }
  if (!timestampsOk || report.covers.length === 0) return { ...report, status: 'invalid' };
  const later = `its ${laterChains} later chain(s) (hash-tree renewal) are not verified by esign`;
  // Intact with an untrusted TSA: untrusted, saying what was left unchecked.
  if (!trusted) return { ...report, status: 'untrusted', ...(laterChains > 0 ? { reason: later } : {}) };
  if (laterChains > 0) return { ...report, reason: `its first chain checks out; ${later}` };
  return { ...report, status: 'valid' };
}

export function invalid(report: EvidenceRecordReport, problem: string): EvidenceRecordReport {
  return { ...report, status: 'invalid', problems: [...report.problems, problem] };
}

/**
 * The root a reduced hash tree gives from `start` (RFC 4998 §4.3; RFC 6283 §3.3.2 reduces it the same way): `start` must be in the first
 * list; each list's values (with the value from below added, when it is not there already) are
 * sorted, concatenated and hashed (a list of one value gives that value). Without a tree the root
 * is `start`. Returns the candidates.
 */
export function hashTreeRoot(
  groups: readonly Uint8Array[][],
  start: Uint8Array,
  digest: DigestAlgorithm,
): Uint8Array[] {
  if (groups.length === 0) return [start];
  if (!groups[0]!.some((value) => compareBytes(value, start) === 0)) return [];
  let value: Uint8Array | undefined;
  for (const group of groups) {
    const members = value && !group.some((member) => compareBytes(member, value!) === 0) ? [...group, value] : group;
    // A list of one value passes it up unhashed (as DSS reads a tree of one file).
    value = members.length === 1 ? members[0]! : hashBytes(digest, concatBytes([...members].sort(compareBytes)));
  }
  return [value!];
}

export function hashBytes(digest: DigestAlgorithm, bytes: Uint8Array): Uint8Array {
  return new Uint8Array(createDigest(digest).update(bytes).digest());
}
