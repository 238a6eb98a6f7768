/**
 * The rules of esign's on-disk revocation cache (issue 49, item 8), kept pure: how an answer is
 * keyed, how long it is kept, and how an entry is written and read back. The files themselves are
 * src/io/revocation-disk-cache.ts's affair; what reads an entry checks it (signature, CertID,
 * issuer) exactly as it checks a fetched answer.
 *
 * - Key: the kind, the URL and, for OCSP, the DER OCSPRequest (one SHA-1 CertID, no nonce, so the
 *   same certificate asks the same bytes), hashed with SHA-256. A CRL is keyed by its URL alone.
 * - Kept until the answer's nextUpdate (RFC 5280 §5.1.2.5, RFC 6960 §4.2.2.1: newer information is
 *   promised by then, not before); an answer with no nextUpdate (newer information may be had at
 *   any time) for REVOCATION_CACHE_MAX_AGE_MS after it was fetched.
 */
import { createHash } from 'node:crypto';

/** How long an OCSP response or CRL without nextUpdate is kept after it was fetched. */
export const REVOCATION_CACHE_MAX_AGE_MS = 15 * 60_000;

/** The entry format; an entry of another format is ignored (and replaced). */
const FORMAT = 1;

export type CachedRevocationKind = 'ocsp' | 'crl';

/** One answer as fetched: its kind, the URL that gave it, the DER, and when it was fetched. */
export interface CachedRevocation {
  kind: CachedRevocationKind;
  url: string;
  der: Uint8Array;
  fetchedAt: Date;
}

/** The entry's key (lower-case hex): the kind, the URL and, for OCSP, the request. */
export function revocationCacheKey(kind: CachedRevocationKind, url: string, request?: Uint8Array): string {
  const hash = createHash('sha256').update(`${kind}\n${url}\n`);
  if (kind === 'ocsp' && request) hash.update(request);
  return hash.digest('hex');
}

/** Until when an answer fetched at `fetchedAt` is used from the cache: its nextUpdate, else the short max age. */
export function keptUntil(fetchedAt: Date, nextUpdate: Date | undefined): Date {
  return nextUpdate ?? new Date(fetchedAt.getTime() + REVOCATION_CACHE_MAX_AGE_MS);
}

/** Whether an answer (fetched at `fetchedAt`, valid until `nextUpdate`) may still be used at `now`. */
export function isFresh(fetchedAt: Date, nextUpdate: Date | undefined, now: Date): boolean {
  // An entry fetched "in the future" was written by a clock that was wrong: not trusted for freshness.
  return (
    fetchedAt.getTime() <= now.getTime() + 5 * 60_000 && now.getTime() < keptUntil(fetchedAt, nextUpdate).getTime()
  );
}

/** The entry's text (JSON, the DER in base64). */
export function encodeRevocationEntry(entry: CachedRevocation): string {
  return (
    JSON.stringify({
      format: FORMAT,
      kind: entry.kind,
      url: entry.url,
      fetchedAt: entry.fetchedAt.toISOString(),
      der: Buffer.from(entry.der).toString('base64'),
    }) + '\n'
  );
}

/**
 * The entry `text` holds, when it is one for `kind` and `url`; undefined for anything else (not
 * JSON, another format, another URL, no DER, a date that does not parse). Never throws.
 */
export function decodeRevocationEntry(
  text: string,
  expected: { kind: CachedRevocationKind; url: string },
): CachedRevocation | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { format, kind, url, fetchedAt, der } = parsed as Record<string, unknown>;
  if (format !== FORMAT || kind !== expected.kind || url !== expected.url) return undefined;
  if (typeof fetchedAt !== 'string' || typeof der !== 'string' || !/^[A-Za-z0-9+/]+={0,2}$/.test(der)) return undefined;
  const when = new Date(fetchedAt);
  if (Number.isNaN(when.getTime())) return undefined;
  const bytes = new Uint8Array(Buffer.from(der, 'base64'));
  // Both an OCSPResponse and a CertificateList are a DER SEQUENCE.
  if (bytes.length < 2 || bytes[0] !== 0x30) return undefined;
  return { kind: expected.kind, url: expected.url, der: bytes, fetchedAt: when };
}
