/**
 * The network side of `esign verify`'s revocation checks (EN 319 102-1): for a certificate whose
 * status the file does not hold, its OCSP responder (AIA), then its CRL distribution point, through
 * the HttpClient (proxies, ESIGN_CA_FILE, retries of idempotent calls) with a time limit per call.
 * One `OnlineRevocation` per run: each certificate is asked about once, each OCSP response and CRL
 * fetched and checked once (failures too, so a responder that is down costs the run one wait).
 */
import { createHash } from 'node:crypto';
import { isEsignError } from '../core/errors.js';
import { RevocationCache } from '../core/ltv/index.js';
import type { RevocationFetcher } from '../core/ltv/index.js';
import type { FetchedRevocation, RevocationMode, RevocationPolicy, RevocationSource } from '../core/verify/types.js';
import type { HttpClient } from './http.js';
import { RevocationClient } from './revocation-client.js';

/** The time limit of each revocation call of a verification (shorter if ESIGN_HTTP_TIMEOUT_MS is). */
export const VERIFY_REVOCATION_TIMEOUT_MS = 10_000;

export class OnlineRevocation implements RevocationSource {
  private readonly answers = new Map<string, Promise<FetchedRevocation>>();
  private readonly cache: RevocationCache;

  constructor(fetcher: RevocationFetcher) {
    this.cache = new RevocationCache(fetcher);
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

  /** OCSP first; the CRL when no responder gave a usable good or revoked answer. */
  private async ask(certDer: Uint8Array, issuerDer: Uint8Array): Promise<FetchedRevocation> {
    const failures: string[] = [];
    let cert;
    let issuer;
    try {
      cert = this.cache.certificate(certDer);
      issuer = this.cache.certificate(issuerDer);
    } catch (error) {
      return { ocsps: [], crls: [], failures: [`its certificate cannot be read (${(error as Error).message})`] };
    }
    const ocsps: Uint8Array[] = [];
    let ocspUrl: string | undefined;
    for (const url of cert.ocspUrls) {
      try {
        const checked = await this.cache.ocsp(cert, issuer, url);
        if (checked.status.kind !== 'unknown') return { ocsps: [checked.der], crls: [], url, failures };
        ocsps.push(checked.der);
        ocspUrl ??= url;
        failures.push(`the OCSP responder at ${url} answers unknown`);
      } catch (error) {
        failures.push(lineOf(error));
      }
    }
    for (const url of cert.crlUrls) {
      try {
        const checked = await this.cache.crl(issuer, url);
        return { ocsps, crls: [checked.der], url, failures };
      } catch (error) {
        failures.push(lineOf(error));
      }
    }
    if (cert.ocspUrls.length === 0 && cert.crlUrls.length === 0)
      failures.push('the certificate names no OCSP responder and no CRL distribution point');
    return { ocsps, crls: [], ...(ocspUrl ? { url: ocspUrl } : {}), failures };
  }
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
 * The revocation policy of one `esign verify` run: `offline` fetches nothing. Make it once per run
 * (its cache is the run's) and give it to every file's VerifyOptions.
 */
export function revocationPolicy(
  ctx: { http: HttpClient; io: { debug(line: string): void } },
  { mode, offline }: { mode: RevocationMode; offline: boolean },
): RevocationPolicy {
  if (offline) return { mode };
  const client = new RevocationClient({
    http: ctx.http,
    trace: (line) => ctx.io.debug(line),
    timeoutMs: Math.min(VERIFY_REVOCATION_TIMEOUT_MS, ctx.http.timeoutMs),
  });
  return { mode, source: new OnlineRevocation(client) };
}
