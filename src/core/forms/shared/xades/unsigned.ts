/** The unsigned properties of a XAdES signature, by level: what an enveloped signature and one in a container add alike. */
import type { Hash } from 'node:crypto';
import type { SignedValue } from '../../../documents.js';
import type { LongTermWindow } from '../../form.js';
import { archiveTimestampImprint, signatureXml, type UnsignedValues, type XadesDraft } from './signature.js';

/** The signature timestamp; at B-LT/B-LTA the validation data (signer's and TSA's chains); at B-LTA the archive timestamp over it all. */
export async function unsignedValuesOf(
  input: string,
  draft: XadesDraft,
  /** The archive timestamp's hash, fed with what each data object's reference gives (read only at B-LTA). */
  references: () => Promise<Hash>,
  value: SignedValue,
  longTerm: Pick<LongTermWindow, 'level' | 'validationData' | 'archiveTimestamp'> | undefined,
): Promise<UnsignedValues> {
  const base: UnsignedValues = value.timestampToken ? { signatureTimestamp: value.timestampToken } : {};
  if (!longTerm) return base;
  const data = await longTerm.validationData(input, value);
  const withData: UnsignedValues = {
    ...base,
    certificateValues: data.certificates,
    crls: data.crls,
    ocsps: data.ocsps,
  };
  if (longTerm.level !== 'B-LTA') return withData;
  const digest = draft.scheme.digest;
  const imprint = archiveTimestampImprint(signatureXml(draft, value.signature, withData), await references());
  const stamp = await longTerm.archiveTimestamp(input, imprint, digest);
  return { ...withData, archiveTimestamp: stamp.token };
}
