/**
 * B-LT and B-LTA inside a CMS signature (`.p7s`, `.p7m`, ASiC-S): the window's validation data in
 * the SignedData (certificates, crls), and at B-LTA an archive-time-stamp-v3 over it, with its
 * ats-hash-index-v3 (EN 319 122-1 §5.5.3).
 */
import { buildSignedData } from '../../cms/signed-data.js';
import type { PreparedDocument, SignedValue } from '../../documents.js';
import type { SigningCredential } from '../../ports.js';
import type { LongTermWindow } from '../form.js';
import { signedDataInput } from './cms-signature.js';

/** The signature value with its validation data, and at B-LTA its archive timestamp token (below B-LT, as it is). */
export async function withCmsLongTerm(
  prepared: PreparedDocument,
  credential: SigningCredential,
  value: SignedValue,
  longTerm: LongTermWindow | undefined,
): Promise<SignedValue> {
  if (!longTerm) return value;
  const withData = { ...value, validationData: await longTerm.validationData(prepared.job.input, value) };
  if (longTerm.level !== 'B-LTA' || !prepared.contentDigest) return withData;
  const { archiveTimestampRequest, archiveTimestampToken } = await import('../../cms/archive-timestamp.js');
  const digest = credential.scheme.digest;
  const cms = buildSignedData(signedDataInput(prepared, credential, withData));
  const { imprint, index } = archiveTimestampRequest(cms, prepared.contentDigest, digest);
  const stamp = await longTerm.archiveTimestamp(prepared.job.input, imprint, digest);
  return { ...withData, archiveTimestampToken: archiveTimestampToken(stamp.token, index) };
}
