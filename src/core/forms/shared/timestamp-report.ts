/** A timestamp token as the evidence over some bytes, reported as a document timestamp: an ASiC-S's `timestamp.tst`, an ASiC-E's archive manifest. */
import { X509Certificate } from 'node:crypto';
import { checkTimestampOver, type ReadSignedBytes } from '../../verify/cms-check.js';
import { revocationMaterial } from '../../verify/revocation.js';
import { noFindings, verdict, type SignatureReport, type VerifyOptions } from '../../verify/types.js';

/** What a container's verification is given: a container has no password. */
export type ContainerVerifyOptions = Omit<VerifyOptions, 'password'>;

export async function timestampReport(
  token: Uint8Array,
  covers: string[],
  /** The bytes the token is over, or the imprint it must hold. */
  readContent: ReadSignedBytes | { readonly imprint: Uint8Array },
  { trustAnchors, now, trustedLists, revocation }: ContainerVerifyOptions,
): Promise<SignatureReport> {
  const ctx = {
    anchors: trustAnchors.map((der) => new X509Certificate(der)),
    extraCerts: [],
    revocation: revocationMaterial([], []),
    now,
    ...(trustedLists ? { trustedLists } : {}),
    ...(revocation ? { revocationPolicy: revocation } : {}),
  };
  const report: SignatureReport = {
    index: 1,
    kind: 'docTimeStamp',
    integrity: { valid: false, digestAlgorithm: 'unknown' },
    signatureValue: { valid: false, algorithm: 'timestamp token' },
    covers,
    status: 'invalid',
    code: 'VERIFY_FAILED',
    indication: 'TOTAL-FAILED',
    problems: [],
    warnings: [],
  };
  const findings = { ...noFindings(), problems: report.problems };
  await checkTimestampOver(token, readContent, ctx, report, findings);
  Object.assign(report, verdict(findings));
  if (report.status === 'valid') delete report.subIndication;
  report.problems.push(
    ...findings.untrusted,
    ...findings.unestablished,
    ...findings.weak.map((weakness) => `algorithm not acceptable: ${weakness}`),
  );
  return report;
}
