/**
 * The network side of `esign verify`'s revocation checks (EN 319 102-1): for a certificate whose
 * status the file does not hold, its OCSP responder (AIA), then its CRL distribution point, through
 * the HttpClient (proxies, ESIGN_CA_FILE, retries of idempotent calls) with a time limit per call.
 * One `OnlineRevocation` per run: each certificate is asked about once, each OCSP response and CRL
 * fetched and checked once (failures too, so a responder that is down costs the run one wait).
 *
 * Answers are kept across runs in the on-disk cache (src/io/revocation-disk-cache.ts) while they
 * are fresh (nextUpdate, else a short max age): a cached answer is checked exactly as a fetched one
 * (the responder's signature and authorization, the CertID, the CRL's issuer and signature, then
 * again by the verification itself), and one that no longer checks out is removed and fetched
 * again. `--offline` reads the cache and fetches nothing.
 */
import { createHash } from 'node:crypto';
import { EsignError, isEsignError } from '../core/errors.js';
import { buildOcspRequest, checkCrl, checkOcspResponse, RevocationCache } from '../core/ltv/index.js';
import type { CertificateFacts, RevocationFetcher } from '../core/ltv/index.js';
import { isFresh, type CachedRevocation, type CachedRevocationKind } from '../core/ltv/revocation-cache-entry.js';
import type { FetchedRevocation, RevocationMode, RevocationPolicy, RevocationSource } from '../core/verify/types.js';
import type { HttpClient } from './http.js';
import { RevocationClient } from './revocation-client.js';
import { RevocationDiskCache } from './revocation-disk-cache.js';

/** The time limit of each revocation call of a verification (shorter if ESIGN_HTTP_TIMEOUT_MS is). */
export const VERIFY_REVOCATION_TIMEOUT_MS = 10_000;

/** What `--offline` says for a certificate neither the file nor the cache answers for. */
export const OFFLINE_NOTHING_CACHED =
  'the file holds no revocation data for it, no fresh answer for it is cached, and --offline fetches none';

export interface OnlineRevocationOptions {
  /** The on-disk cache; absent: answers are kept for the run only. */
  disk?: RevocationDiskCache;
  /** The time freshness is judged at (default: now). */
  now?: () => Date;
}

/** An answer read from the disk cache and checked, and when it was fetched. */
interface CacheHit<T> {
  checked: T;
  fetchedAt: Date;
}

export class OnlineRevocation implements RevocationSource {
  private readonly answers = new Map<string, Promise<FetchedRevocation>>();
  private readonly cache: RevocationCache;
  private readonly entries = new Map<string, Promise<CachedRevocation | undefined>>();
  private readonly kept = new Map<string, Promise<void>>();
  private readonly now: () => Date;

  /** `fetcher` undefined (--offline): nothing is fetched, the disk cache only is read. */
  constructor(
    private readonly fetcher: RevocationFetcher | undefined,
    private readonly options: OnlineRevocationOptions = {},
  ) {
    this.cache = new RevocationCache(fetcher ?? OFFLINE_FETCHER);
    this.now = options.now ?? (() => new Date());
  }

  fetch(cert: Uint8Array, issuer: Uint8Array): Promise<FetchedRevocation> {
    const key = `${digest(issuer)} ${digest(cert)}`;
    let pending = this.answers.get(key);
    if (!pending) {
      pending = this.ask(cert, issuer);
      this.answers.set(key, pending);
    }
    return pending;
  }

  /** OCSP first; the CRL when no responder gave a usable good or revoked answer. The cache before the network. */
  private async ask(certDer: Uint8Array, issuerDer: Uint8Array): Promise<FetchedRevocation> {
    const failures: string[] = [];
    let cert: CertificateFacts;
    let issuer: CertificateFacts;
    try {
      cert = this.cache.certificate(certDer);
      issuer = this.cache.certificate(issuerDer);
    } catch (error) {
      return { ocsps: [], crls: [], failures: [`its certificate cannot be read (${(error as Error).message})`] };
    }
    const ocsps: Uint8Array[] = [];
    let ocspUrl: string | undefined;
    for (const url of cert.ocspUrls) {
      const request = buildOcspRequest(cert, issuer);
      const hit = await this.fromDisk('ocsp', url, request, (der) => checkOcspResponse(der, cert, issuer, url));
      if (hit && hit.checked.status.kind !== 'unknown')
        return { ocsps: [hit.checked.der], crls: [], url, failures, cachedAt: hit.fetchedAt.toISOString() };
      if (!this.fetcher) continue;
      try {
        const checked = await this.cache.ocsp(cert, issuer, url);
        if (checked.status.kind !== 'unknown') {
          await this.toDisk('ocsp', url, request, checked);
          return { ocsps: [checked.der], crls: [], url, failures };
        }
        ocsps.push(checked.der);
        ocspUrl ??= url;
        failures.push(`the OCSP responder at ${url} answers unknown`);
      } catch (error) {
        failures.push(lineOf(error));
      }
    }
    for (const url of cert.crlUrls) {
      const hit = await this.fromDisk('crl', url, undefined, (der) => checkCrl(der, issuer, url));
      if (hit) return { ocsps, crls: [hit.checked.der], url, failures, cachedAt: hit.fetchedAt.toISOString() };
      if (!this.fetcher) continue;
      try {
        const checked = await this.cache.crl(issuer, url);
        await this.toDisk('crl', url, undefined, checked);
        return { ocsps, crls: [checked.der], url, failures };
      } catch (error) {
        failures.push(lineOf(error));
      }
    }
    if (!this.fetcher) failures.push(OFFLINE_NOTHING_CACHED);
    else if (cert.ocspUrls.length === 0 && cert.crlUrls.length === 0)
      failures.push('the certificate names no OCSP responder and no CRL distribution point');
    return { ocsps, crls: [], ...(ocspUrl ? { url: ocspUrl } : {}), failures };
  }

  /**
   * A fresh cached answer that checks out (the entry read once per run); an entry that is stale or
   * no longer checks out (another responder's now at that URL, a file changed on disk) is removed.
   */
  private async fromDisk<T extends { nextUpdate: Date | undefined }>(
    kind: CachedRevocationKind,
    url: string,
    request: Uint8Array | undefined,
    check: (der: Uint8Array) => T,
  ): Promise<CacheHit<T> | undefined> {
    const disk = this.options.disk;
    if (!disk) return undefined;
    const path = disk.pathOf(kind, url, request);
    let pending = this.entries.get(path);
    if (!pending) {
      pending = disk.read(kind, url, request);
      this.entries.set(path, pending);
    }
    const entry = await pending;
    if (!entry) return undefined;
    let checked: T | undefined;
    try {
      checked = check(entry.der);
    } catch {
      checked = undefined;
    }
    if (!checked || !isFresh(entry.fetchedAt, checked.nextUpdate, this.now())) {
      this.entries.set(path, Promise.resolve(undefined));
      await disk.forget(kind, url, request);
      return undefined;
    }
    return { checked, fetchedAt: entry.fetchedAt };
  }

  /** Keeps a fetched answer that is still fresh (once per entry and run). */
  private toDisk(
    kind: CachedRevocationKind,
    url: string,
    request: Uint8Array | undefined,
    checked: { der: Uint8Array; nextUpdate: Date | undefined },
  ): Promise<void> {
    const disk = this.options.disk;
    const fetchedAt = this.now();
    if (!disk || !isFresh(fetchedAt, checked.nextUpdate, fetchedAt)) return Promise.resolve();
    const path = disk.pathOf(kind, url, request);
    let pending = this.kept.get(path);
    if (!pending) {
      pending = disk.write({ kind, url, der: checked.der, fetchedAt }, request);
      this.kept.set(path, pending);
    }
    return pending;
  }
}

/** What --offline's RevocationCache is given: it is never asked (OnlineRevocation fetches nothing offline). */
const OFFLINE_FETCHER: RevocationFetcher = {
  ocsp: offline,
  crl: offline,
  certificate: offline,
};

function offline(): Promise<Uint8Array> {
  return Promise.reject(new EsignError('REVOCATION_UNAVAILABLE', '--offline fetches nothing.'));
}

function digest(der: Uint8Array): string {
  return createHash('sha256').update(der).digest('hex');
}

/** One line naming the URL (the EsignErrors of the revocation client and checks do). */
function lineOf(error: unknown): string {
  const message = isEsignError(error) ? error.message : String(error);
  return message.replace(/\.$/, '');
}

/**
 * The revocation policy of one `esign verify` run: `offline` fetches nothing but reads the disk
 * cache; without `cache` the disk cache is neither read nor written. Make it once per run (its
 * in-memory cache is the run's) and give it to every file's VerifyOptions.
 */
export function revocationPolicy(
  ctx: { http: HttpClient; io: { debug(line: string): void }; env: NodeJS.ProcessEnv; clock?: { now(): Date } },
  { mode, offline, cache = true }: { mode: RevocationMode; offline: boolean; cache?: boolean },
): RevocationPolicy {
  const disk = cache ? RevocationDiskCache.of(ctx.env, { debug: (line) => ctx.io.debug(line) }) : undefined;
  const clock = ctx.clock;
  const options: OnlineRevocationOptions = {
    ...(disk ? { disk } : {}),
    ...(clock ? { now: () => clock.now() } : {}),
  };
  if (offline) return { mode, source: new OnlineRevocation(undefined, options) };
  const client = new RevocationClient({
    http: ctx.http,
    trace: (line) => ctx.io.debug(line),
    timeoutMs: Math.min(VERIFY_REVOCATION_TIMEOUT_MS, ctx.http.timeoutMs),
  });
  return { mode, source: new OnlineRevocation(client, options) };
}
