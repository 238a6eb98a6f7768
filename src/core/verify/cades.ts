/**
 * CAdES verification of a detached `.p7s` against its content, which the caller streams (read once:
 * hashed, and verified as it goes by when there are no signed attributes).
 */
import { X509Certificate } from 'node:crypto';
import { checkSignatureCms } from './cms-check.js';
import { revocationMaterial } from './revocation.js';
import type { ReadSignedBytes } from './cms-check.js';
import { judgedQualification, verdict } from './types.js';
import type { SignatureReport, VerificationReport, VerifyOptions } from './types.js';

export async function verifyCades(
  p7s: Uint8Array,
  file: string,
  readContent: ReadSignedBytes,
  options: VerifyOptions,
): Promise<VerificationReport> {
  // Revocation data can only come from the .p7s itself; checkSignatureCms reads it there.
  const ctx = {
    anchors: options.trustAnchors.map((der) => new X509Certificate(der)),
    extraCerts: [],
    revocation: revocationMaterial([], []),
    now: options.now,
    ...(options.trustedLists ? { trustedLists: options.trustedLists } : {}),
  };
  const checks = await checkSignatureCms(p7s, { read: readContent }, ctx);
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
    ...(checks.qualification ? { qualification: judgedQualification(checks.qualification, judged.status) } : {}),
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
  return {
    file,
    kind: 'cades',
    signatures: [report],
    status: judged.status,
    code: judged.code,
    checkedAt: options.now.toISOString(),
  };
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
