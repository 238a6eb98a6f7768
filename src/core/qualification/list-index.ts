/**
 * The small index of one cached trusted list, written beside it whenever the cache writes the list:
 * what deciding whether the list is usable needs (verified, LOTL, TEST, dates), what `esign trust
 * status` shows, and the names and key identifiers of its CA/QC and TSA/QTST services. A verification
 * reads every list's index and then only the lists whose services may have issued the certificates
 * of the chain at hand (real lists are hundreds of kilobytes each, and a chain's CA is on one).
 */
import { createHash, X509Certificate } from 'node:crypto';
import type { TrustService, TrustedListCacheEntry } from '../trusted-list/model.js';
import { nameKey } from './name-key.js';
import { SERVICE_CA_QC, SERVICE_TSA_QTST } from './uris.js';

/** Raised when the form changes; an index of another version is rebuilt from its list. */
export const LIST_INDEX_VERSION = 4;

export interface TrustedListIndex {
  version: typeof LIST_INDEX_VERSION;
  territory: string;
  /** Identifies the list file the index was made from (the cache's stamp), so that a stale index is noticed. */
  stamp?: string;
  /** A verified copy exists (the entry has a snapshot). */
  verified: boolean;
  isLotl: boolean;
  test: boolean;
  sequenceNumber: number | null;
  issueDate: string | null;
  nextUpdate: string | null;
  verifiedAt: string | null;
  source: string | null;
  lastFailure: { at: string; reason: string } | null;
  /** Services by type and by current status (`esign trust status --json`). */
  services: { total: number; byType: Record<string, number>; byStatus: Record<string, number> };
  /**
   * National lists: the certificates of the CA/QC and TSA/QTST services, by the key of their subject
   * (name-key.ts): a line per subject, `\nKEY FINGERPRINT FINGERPRINT…`, fingerprints in list order.
   * One string, searched as it is: a verification looks up a few names among thousands.
   */
  names: string;
  /** National lists: the X509SKI values of the CA/QC and TSA/QTST services, lower-case hex. */
  keyIdentifiers: string[];
  /** The list has a TSA/QTST service. */
  tsa: boolean;
  /** A list added with `esign trust add`: its name and address (it is not one the LOTL points to). */
  added?: { name: string; url: string };
}

/** The short fingerprint the index gives a certificate (DER): a filter; the certificate itself is compared after. */
export function certificateFingerprint(der: Uint8Array): string {
  return createHash('sha256').update(der).digest('hex').slice(0, 16);
}

/** The index of a cache entry (parses its CA/QC and TSA/QTST certificates' subjects). */
export function indexTrustedList(entry: TrustedListCacheEntry, stamp?: string): TrustedListIndex {
  const list = entry.snapshot;
  const byType: Record<string, number> = {};
  const byStatus: Record<string, number> = {};
  const subjects = new Map<string, string[]>();
  const keyIdentifiers = new Set<string>();
  let tsa = false;
  for (const service of list?.services ?? []) {
    byType[service.type] = (byType[service.type] ?? 0) + 1;
    const current = service.history[0]?.status ?? 'unknown';
    byStatus[current] = (byStatus[current] ?? 0) + 1;
    if (list?.isLotl !== false || !isQualifiedService(service)) continue;
    if (hasType(service, SERVICE_TSA_QTST)) tsa = true;
    for (const ski of service.identity.subjectKeyIdentifiers) keyIdentifiers.add(ski.toLowerCase());
    for (const base64 of service.identity.certificates) {
      const der = Buffer.from(base64, 'base64');
      const key = subjectKeyOfDer(der);
      const fingerprint = certificateFingerprint(der);
      const known = subjects.get(key) ?? [];
      if (!known.includes(fingerprint)) subjects.set(key, [...known, fingerprint]);
    }
  }
  return {
    version: LIST_INDEX_VERSION,
    territory: entry.territory,
    ...(stamp !== undefined ? { stamp } : {}),
    verified: list !== undefined,
    isLotl: list?.isLotl ?? false,
    test: list?.test ?? false,
    sequenceNumber: list?.sequenceNumber ?? null,
    issueDate: list?.issueDate ?? null,
    nextUpdate: list?.nextUpdate ?? null,
    verifiedAt: entry.verifiedAt ?? null,
    source: list?.source ?? null,
    lastFailure: entry.lastFailure ?? null,
    services: { total: list?.services.length ?? 0, byType, byStatus },
    names: [...subjects].map(([key, fingerprints]) => `\n${key} ${fingerprints.join(' ')}`).join(''),
    keyIdentifiers: [...keyIdentifiers],
    tsa,
    ...(entry.added ? { added: { name: entry.added.name, url: entry.added.url } } : {}),
  };
}

/** Whether `value` (read from a file) is an index of this version. */
export function isTrustedListIndex(value: unknown): value is TrustedListIndex {
  const index = value as Partial<TrustedListIndex> | null;
  return (
    typeof index === 'object' &&
    index !== null &&
    index.version === LIST_INDEX_VERSION &&
    typeof index.territory === 'string' &&
    typeof index.names === 'string' &&
    Array.isArray(index.keyIdentifiers)
  );
}

/** The fingerprints of the list's service certificates whose subject has `key`, in list order. */
export function fingerprintsNamed(index: TrustedListIndex, key: string): string[] {
  const at = index.names.indexOf(`\n${key} `);
  if (at === -1) return [];
  const end = index.names.indexOf('\n', at + 1);
  return index.names
    .slice(at + key.length + 2, end === -1 ? undefined : end)
    .split(' ')
    .filter(Boolean);
}

const attached = new WeakMap<TrustedListCacheEntry, TrustedListIndex>();

/** Gives `entry` its index, read from the cache (so that finding its services does not read the entry's list). */
export function attachIndex(entry: TrustedListCacheEntry, index: TrustedListIndex): TrustedListCacheEntry {
  attached.set(entry, index);
  return entry;
}

/** The index attached to `entry`, else one made from its snapshot (and kept). */
export function indexOf(entry: TrustedListCacheEntry): TrustedListIndex {
  let index = attached.get(entry);
  if (!index) attached.set(entry, (index = indexTrustedList(entry)));
  return index;
}

/** A certificate's subject key, or, when it does not parse, a key no name has. */
function subjectKeyOfDer(der: Uint8Array): string {
  try {
    return nameKey(new X509Certificate(der).subject);
  } catch {
    return 'unparsed';
  }
}

/** Whether the service is, or was in some status entry, a CA/QC or a TSA/QTST (each entry has its own type). */
export function isQualifiedService(service: TrustService): boolean {
  return hasType(service, SERVICE_CA_QC) || hasType(service, SERVICE_TSA_QTST);
}

export function hasType(service: TrustService, type: string): boolean {
  return service.type === type || service.history.some((period) => period.type === type);
}
