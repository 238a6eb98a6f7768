/**
 * An ASiC-E at B-LT and B-LTA: its new signature's validation data (the same window stage as a batch
 * of PDFs or .p7s, `longTermExtender`), and at B-LTA an ASiCArchiveManifest over every file of the
 * container with its archive timestamp (EN 319 162-1 §4.4.5, Annex A.7). Loaded only at those levels.
 */
import { createHash } from 'node:crypto';
import {
  ARCHIVE_MANIFEST,
  buildArchiveManifest,
  metadataMimeType,
  planArchive,
} from '../core/forms/asic-e/archive-manifest.js';
import { mimeTypeOf, parseManifest } from '../core/forms/asic-e/manifest.js';
import type { DigestName } from '../core/cms/algorithms.js';
import { withValidationData, type CmsValidationData } from '../core/cms/long-term.js';
import type { TimestampAuthority } from '../core/ports.js';
import type { SignedValue } from '../core/sign-workflow.js';
import type { Context } from './context.js';
import { longTermExtender } from './sign-long-term.js';

/** The signature's validation data, fetched after its timestamp; its counts and the gaps found, for the report. */
export async function validationDataFor(
  ctx: Context,
  level: 'B-LT' | 'B-LTA',
  tsa: TimestampAuthority,
  signer: readonly Uint8Array[],
  name: string,
  value: SignedValue,
): Promise<{
  validationData: CmsValidationData;
  added: { certs: number; ocsps: number; crls: number };
  warnings: string[];
}> {
  const extender = await longTermExtender(ctx, level, tsa);
  const window = await extender.forWindow(signer, [{ status: 'fulfilled', value }]);
  const { validationData } = await window.withValidationData(name, value);
  const result = extender.results.get(name);
  return {
    validationData: validationData ?? { certificates: [], ocsps: [], crls: [] },
    added: result?.added ?? { certs: 0, ocsps: 0, crls: 0 },
    warnings: result?.warnings ?? [],
  };
}

type Entry = { name: string; bytes: Uint8Array };

/**
 * The container's META-INF entries with a new archive manifest and its timestamp: the current
 * archive manifest (if any) renamed, and the new one listing every document (by the digest it was
 * signed with) and every META-INF entry, hashed here.
 */
export async function archiveContainer(
  ctx: Context,
  documents: readonly { name: string; digest: DigestName; digestValue: Uint8Array }[],
  metadata: readonly Entry[],
  digest: DigestName,
  tsa: TimestampAuthority,
): Promise<{ metadata: Entry[]; manifest: string; timestamp: string; archiveTimestamp: Date }> {
  const plan = planArchive([...documents, ...metadata].map((entry) => entry.name));
  let kept = metadata.map((entry) =>
    plan.renamed && entry.name === plan.renamed.from ? { ...entry, name: plan.renamed.to } : entry,
  );
  // A renewal: the last archive timestamp gets its TSA's validation data before it is archived (A.7 item 2).
  const previous = plan.renamed ? kept.find((entry) => entry.name === plan.renamed!.to) : undefined;
  const previousToken = previous ? parseManifest(previous.bytes, previous.name).signature : undefined;
  if (previousToken) {
    const token = kept.find((entry) => entry.name === previousToken);
    if (token) {
      const { validationData } = await validationDataFor(ctx, 'B-LTA', tsa, [], previousToken, {
        signature: new Uint8Array(0),
        timestampToken: token.bytes,
      });
      const completed = withValidationData(token.bytes, validationData);
      kept = kept.map((entry) => (entry === token ? { ...entry, bytes: completed } : entry));
    }
  }
  const manifest = buildArchiveManifest(plan.timestamp, [
    ...documents.map((document) => ({ ...document, mimeType: mimeTypeOf(document.name) })),
    ...kept.map((entry) => ({
      name: entry.name,
      mimeType: metadataMimeType(entry.name),
      digest,
      digestValue: new Uint8Array(createHash(digest).update(entry.bytes).digest()),
    })),
  ]);
  const stamp = await tsa.timestamp(new Uint8Array(createHash(digest).update(manifest).digest()), digest);
  return {
    metadata: [...kept, { name: ARCHIVE_MANIFEST, bytes: manifest }, { name: plan.timestamp, bytes: stamp.token }],
    manifest: ARCHIVE_MANIFEST,
    timestamp: plan.timestamp,
    archiveTimestamp: stamp.genTime,
  };
}
