/**
 * Long-term ASiC-E with CAdES (ETSI EN 319 162-1 §4.4.5 and Annex A.7): an ASiCArchiveManifest —
 * an ASiCManifest whose SigReference is a timestamp token, `META-INF/timestampNNN.tst`, over the
 * manifest's bytes — lists every file of the container (documents, manifests, signatures, earlier
 * archive manifests and their timestamps) with its digest. A later archive timestamp renews it: the
 * current `META-INF/ASiCArchiveManifest.xml` is renamed `ASiCArchiveManifestNNN.xml` (its bytes,
 * which its timestamp covers, unchanged) and the new one, under the plain name, covers it too.
 */
import type { DigestName } from '../../cms/algorithms.js';
import { buildManifest, type ManifestReference } from './manifest.js';

export const ARCHIVE_MANIFEST = 'META-INF/ASiCArchiveManifest.xml';
export const TIMESTAMP_TOKEN_MIME_TYPE = 'application/vnd.etsi.timestamp-token';
const ARCHIVE_MANIFEST_NAME = /^META-INF\/ASiCArchiveManifest[^/]*\.xml$/i;
const TIMESTAMP_NAME = /^META-INF\/timestamp(\d+)\.tst$/i;

/** Whether an entry is an archive manifest (the current one or a renamed earlier one). */
export function isArchiveManifest(name: string): boolean {
  return ARCHIVE_MANIFEST_NAME.test(name);
}

export interface ArchivePlan {
  /** The current archive manifest's new name, when there is one to renew. */
  renamed?: { from: string; to: string };
  /** Where the new archive timestamp goes. */
  timestamp: string;
}

/** Names for a new archive manifest and its timestamp among the container's `names`. */
export function planArchive(names: readonly string[]): ArchivePlan {
  const highest = (pattern: RegExp) => Math.max(0, ...names.map((name) => Number(pattern.exec(name)?.[1] ?? 0)));
  const timestamp = `META-INF/timestamp${String(highest(TIMESTAMP_NAME) + 1).padStart(3, '0')}.tst`;
  if (!names.includes(ARCHIVE_MANIFEST)) return { timestamp };
  const renamedNumber = highest(/^META-INF\/ASiCArchiveManifest(\d+)\.xml$/i) + 1;
  return {
    renamed: {
      from: ARCHIVE_MANIFEST,
      to: `META-INF/ASiCArchiveManifest${String(renamedNumber).padStart(3, '0')}.xml`,
    },
    timestamp,
  };
}

/** The archive manifest over `entries` (each with its digest), signed by the timestamp token `timestamp`. */
export function buildArchiveManifest(
  timestamp: string,
  entries: readonly { name: string; mimeType: string; digest: DigestName; digestValue: Uint8Array }[],
): Uint8Array {
  const references: ManifestReference[] = entries.map(({ name, mimeType, digest, digestValue }) => ({
    name,
    mimeType,
    digest,
    digestValue,
  }));
  return buildManifest({ signature: timestamp, signatureMimeType: TIMESTAMP_TOKEN_MIME_TYPE, references });
}

/** The MIME type an archive manifest gives a META-INF entry. */
export function metadataMimeType(name: string): string {
  if (/\.p7s$/i.test(name)) return 'application/pkcs7-signature';
  if (/\.tst$/i.test(name)) return TIMESTAMP_TOKEN_MIME_TYPE;
  return 'text/xml';
}
