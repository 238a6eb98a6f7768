/** What the two evidence-record readers (RFC 4998 ASN.1, RFC 6283 XML) share: the data objects, and the check of an archive timestamp's token. */
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
export async function bestTimestamp(
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
export function recordTimestamp(
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

export function invalid(report: EvidenceRecordReport, problem: string): EvidenceRecordReport {
  return { ...report, status: 'invalid', problems: [...report.problems, problem] };
}
