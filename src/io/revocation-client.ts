/**
 * Revocation data over HTTP: OCSP requests (POST application/ocsp-request, RFC 6960 appendix A),
 * CRLs and issuer certificates (GET). All three are idempotent, so the HttpClient retries them
 * (429/502/503, time-outs). Failures name the URL: the user must know which responder is down.
 */
import { EsignError, isEsignError } from '../core/errors.js';
import type { RevocationFetcher } from '../core/ltv/index.js';
import type { HttpClient, HttpResponse } from './http.js';

export interface RevocationClientOptions {
  http: HttpClient;
  trace?: (line: string) => void;
  /** Each call's time limit (default: the HttpClient's). */
  timeoutMs?: number;
}

export class RevocationClient implements RevocationFetcher {
  private readonly certificates = new Map<string, Promise<Uint8Array>>();

  constructor(private readonly options: RevocationClientOptions) {}

  async ocsp(url: string, request: Uint8Array): Promise<Uint8Array> {
    const response = await this.send(url, 'OCSP responder', {
      method: 'POST',
      headers: { 'content-type': 'application/ocsp-request', accept: 'application/ocsp-response' },
      body: request,
    });
    return body(response);
  }

  /** Not kept here: a batch window asks once (RevocationCache), and the next window asks again, for news of a revocation. */
  async crl(url: string): Promise<Uint8Array> {
    return body(
      await this.send(url, 'CRL distribution point', { method: 'GET', headers: { accept: 'application/pkix-crl' } }),
    );
  }

  certificate(url: string): Promise<Uint8Array> {
    return memo(this.certificates, url, async () =>
      derOrPem(
        body(
          await this.send(url, 'CA issuers location', { method: 'GET', headers: { accept: 'application/pkix-cert' } }),
        ),
      ),
    );
  }

  private async send(
    url: string,
    service: string,
    request: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: Uint8Array },
  ): Promise<HttpResponse> {
    let response: HttpResponse;
    try {
      response = await this.options.http.request({
        ...request,
        url,
        retry: 'idempotent',
        ...(this.options.timeoutMs !== undefined ? { timeoutMs: this.options.timeoutMs } : {}),
        service,
        signedContentOverHttp: true,
      });
    } catch (error) {
      if (!isEsignError(error)) throw error;
      throw new EsignError(
        'REVOCATION_UNAVAILABLE',
        `No revocation data from the ${service} at ${url}: ${error.message.replace(/\.$/, '')}.`,
        {
          hint: 'Long-term levels need the revocation data the certificates point to; check your network and try again later (the signed file can be extended later with `esign extend`).',
          cause: error,
          details: { url, service },
        },
      );
    }
    this.options.trace?.(`${request.method} ${url} → ${response.status}`);
    if (response.status !== 200) {
      const transient = response.status === 429 || response.status >= 500;
      throw new EsignError(
        transient ? 'REVOCATION_UNAVAILABLE' : 'REVOCATION_BAD_RESPONSE',
        `The ${service} at ${url} answered HTTP ${response.status}.`,
        {
          hint: transient
            ? 'The service is unavailable; try again later (the signed file can be extended later with `esign extend`).'
            : 'Check the URL in the certificate with the CA; esign cannot get the revocation data it needs.',
          details: { url, service, status: response.status },
        },
      );
    }
    return response;
  }
}

function body(response: HttpResponse): Uint8Array {
  return new Uint8Array(response.body);
}

function memo(
  cache: Map<string, Promise<Uint8Array>>,
  key: string,
  load: () => Promise<Uint8Array>,
): Promise<Uint8Array> {
  let pending = cache.get(key);
  if (!pending) {
    pending = load();
    cache.set(key, pending);
    pending.catch(() => cache.delete(key));
  }
  return pending;
}

/** caIssuers usually serves DER; some servers send PEM. */
function derOrPem(bytes: Uint8Array): Uint8Array {
  if (bytes[0] === 0x30) return bytes;
  const text = Buffer.from(bytes).toString('latin1');
  const match = /-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/.exec(text);
  return match ? new Uint8Array(Buffer.from((match[1] ?? '').replace(/\s+/g, ''), 'base64')) : bytes;
}

/** The fetcher for a command context. */
export function createRevocationClient(ctx: { http: HttpClient; io: { debug(line: string): void } }): RevocationClient {
  return new RevocationClient({ http: ctx.http, trace: (line) => ctx.io.debug(line) });
}
