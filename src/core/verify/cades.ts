/**
 * CAdES verification of a detached `.p7s` against its content: the caller hashes the content
 * (streaming) under the digest algorithm the SignerInfo names.
 */
import { X509Certificate } from 'node:crypto';
import { checkSignatureCms } from './cms-check.js';
import { revocationMaterial } from './revocation.js';
import { codeOf } from './types.js';
import type { SignatureReport, VerificationReport, VerifyOptions } from './types.js';

export async function verifyCades(
  p7s: Uint8Array,
  file: string,
  digestOf: (hashName: string) => Promise<Uint8Array>,
  options: VerifyOptions,
): Promise<VerificationReport> {
  // Revocation data can only come from the .p7s itself; checkSignatureCms reads it there.
  const ctx = { anchors: options.trustAnchors.map((der) => new X509Certificate(der)), extraCerts: [], revocation: revocationMaterial([], []), now: options.now };
  const checks = await checkSignatureCms(p7s, digestOf, ctx);
  const signingTime = checks.parsed?.signedAttributes?.signingTime;
  const status = checks.problems.length > 0 ? 'invalid' : checks.untrusted.length > 0 ? 'untrusted' : 'valid';
  const report: SignatureReport = {
    index: 1,
    kind: 'cades',
    integrity: checks.integrity,
    signatureValue: checks.signatureValue,
    ...(checks.signer ? { signer: checks.signer } : {}),
    ...(signingTime ? { claimedTime: signingTime.toISOString() } : {}),
    ...(checks.timestamp ? { timestamp: checks.timestamp } : {}),
    ...(checks.chain ? { chain: checks.chain } : {}),
    level: checks.timestamp?.valid ? 'B-T' : 'B-B',
    status,
    code: codeOf(status),
    problems: [...checks.problems, ...checks.untrusted],
    warnings: checks.warnings,
  };
  if (!checks.integrity.valid || !checks.signatureValue.valid) delete report.level;
  return { file, kind: 'cades', signatures: [report], status, code: codeOf(status), checkedAt: options.now.toISOString() };
}
