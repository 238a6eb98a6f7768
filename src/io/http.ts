import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { EsignError } from '../core/errors.js';

export interface HttpRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'HEAD';
  url: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /**
   * `idempotent` retries 429/502/503, time-outs and connection failures (at most 3 tries, honouring
   * Retry-After); `never` sends once (signHash, token exchanges: repeating them is not safe).
   */
  retry?: 'idempotent' | 'never';
  timeoutMs?: number;
  /** Names the service in messages, e.g. "signing service". */
  service: string;
  /**
   * Allows plain http:// beyond loopback. Only for objects signed end to end (OCSP responses,
   * CRLs, CA certificates), which CAs publish over http and whose integrity esign checks itself.
   */
  signedContentOverHttp?: boolean;
}

/** The part of `Headers` callers use; names are case-insensitive. */
export interface ResponseHeaders {
  get(name: string): string | null;
}

export interface HttpResponse {
  status: number;
  headers: ResponseHeaders;
  body: Buffer;
  url: string;
}

export interface HttpClientOptions {
  timeoutMs?: number;
  userAgent?: string;
  maxTries?: number;
  sleep?: (ms: number) => Promise<void>;
  /** Called with one line per attempt when `--verbose` is on; never given headers or bodies. */
  trace?: (line: string) => void;
}

/** DESIGN §4: idempotent calls are tried at most this often, again only after these answers (or none). */
export const MAX_TRIES = 3;
export const RETRYABLE_STATUS: ReadonlySet<number> = new Set([429, 502, 503]);
const MAX_RETRY_AFTER_MS = 30_000;

/** fetch with a time-out, retries where they are safe, and failures mapped to EsignErrors. */
export class HttpClient {
  /** The per-call time-out; also the S3 client's connect and idle time-out. */
  readonly timeoutMs: number;
  private readonly maxTries: number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly options: HttpClientOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.maxTries = options.maxTries ?? MAX_TRIES;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  async request(request: HttpRequest): Promise<HttpResponse> {
    if (!request.signedContentOverHttp) assertSecureUrl(request.url, request.service);
    const tries = request.retry === 'idempotent' ? this.maxTries : 1;
    for (let attempt = 1; ; attempt++) {
      let response: HttpResponse;
      try {
        response = await this.once(request);
      } catch (error) {
        if (attempt < tries) {
          await this.sleep(backoffMs(attempt));
          continue;
        }
        throw error;
      }
      if (attempt < tries && RETRYABLE_STATUS.has(response.status)) {
        await this.sleep(retryAfterMs(response.headers.get('retry-after')) ?? backoffMs(attempt));
        continue;
      }
      return response;
    }
  }

  private async once(request: HttpRequest): Promise<HttpResponse> {
    const timeoutMs = request.timeoutMs ?? this.timeoutMs;
    const started = Date.now();
    try {
      const response = await send(request, { 'user-agent': this.options.userAgent ?? 'esign', ...request.headers }, timeoutMs);
      this.options.trace?.(`${request.method} ${redactUrl(request.url)} → ${response.status} (${Date.now() - started} ms)`);
      return response;
    } catch (error) {
      this.options.trace?.(`${request.method} ${redactUrl(request.url)} failed (${Date.now() - started} ms)`);
      throw transportError(error, request, timeoutMs);
    }
  }
}

/** A plain GET that follows redirects, as a browser would (the sandbox's --auto-approve browser, health checks). */
export async function getFollowingRedirects(url: string, timeoutMs: number, maxRedirects = 10): Promise<HttpResponse> {
  let current = url;
  for (let hop = 0; ; hop++) {
    const response = await send({ method: 'GET', url: current, service: 'browser' }, {}, timeoutMs);
    const location = response.headers.get('location');
    if (response.status < 300 || response.status >= 400 || !location || hop >= maxRedirects) return response;
    current = new URL(location, current).toString();
  }
}

class TimeoutError extends Error {
  override name = 'TimeoutError';
}

/**
 * One HTTP exchange over node:http(s). Not `fetch`: loading undici on first use costs ~40 ms, which
 * is most of what signing a small file takes. No redirects are followed.
 */
async function send(request: HttpRequest, headers: Record<string, string>, timeoutMs: number): Promise<HttpResponse> {
  const url = new URL(request.url);
  const body = request.body === undefined ? undefined : typeof request.body === 'string' ? Buffer.from(request.body, 'utf8') : request.body;
  const options: RequestOptions = {
    method: request.method,
    headers: body === undefined ? headers : { ...headers, 'content-length': String(body.length) },
  };
  const issue = url.protocol === 'https:' ? (await import('node:https')).request : httpRequest;
  return new Promise<HttpResponse>((resolve, reject) => {
    const outgoing = issue(url, options, (incoming: IncomingMessage) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('error', reject);
      incoming.on('end', () => {
        clearTimeout(timer);
        resolve({ status: incoming.statusCode ?? 0, headers: headersOf(incoming), body: Buffer.concat(chunks), url: request.url });
      });
    });
    const timer = setTimeout(() => outgoing.destroy(new TimeoutError(`no answer within ${timeoutMs} ms`)), timeoutMs);
    outgoing.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    outgoing.end(body);
  });
}

function headersOf(incoming: IncomingMessage): ResponseHeaders {
  return {
    get(name: string) {
      const value = incoming.headers[name.toLowerCase()];
      if (value === undefined) return null;
      return Array.isArray(value) ? value.join(', ') : value;
    },
  };
}

function transportError(error: unknown, request: HttpRequest, timeoutMs: number): EsignError {
  const name = (error as { name?: string })?.name;
  if (name === 'TimeoutError' || name === 'AbortError') {
    return new EsignError('HTTP_TIMEOUT', `The ${request.service} did not answer within ${Math.round(timeoutMs / 1000)} s (${new URL(request.url).host}).`, {
      hint: 'Check your network and try again.',
      cause: error,
    });
  }
  const code = (error as { code?: string })?.code ?? (error as { cause?: { code?: string } })?.cause?.code;
  const detail = code ? ` (${code})` : '';
  return new EsignError('HTTP_UNREACHABLE', `Could not reach the ${request.service} at ${new URL(request.url).origin}${detail}.`, {
    hint: 'Check the URL in your profile (esign config list) and your network; for the sandbox run `esign sandbox start`.',
    cause: error,
  });
}

/** The pause before try `attempt + 1` when the server names none. */
export function backoffMs(attempt: number): number {
  return 250 * 2 ** (attempt - 1);
}

/** Delay in ms from a Retry-After header (seconds or HTTP date), capped; undefined when absent. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - now;
  if (!Number.isFinite(ms)) return undefined;
  return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS);
}

const LOOPBACK_HOSTS = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

export function isLoopbackUrl(url: URL): boolean {
  return LOOPBACK_HOSTS.test(url.hostname) || url.hostname === '::1';
}

/** Plain http:// is allowed for loopback only; anything else must be https://. */
export function assertSecureUrl(raw: string, service: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch (error) {
    throw new EsignError('CONFIG_INVALID', `The ${service} URL is not a valid URL: ${JSON.stringify(raw)}.`, {
      hint: 'Fix it with `esign config set`.',
      cause: error,
    });
  }
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:' && isLoopbackUrl(url)) return url;
  throw new EsignError('CONFIG_INSECURE_URL', `Refusing plain ${url.protocol}// for the ${service} at ${url.host}: only loopback addresses may use http://.`, {
    hint: 'Use the https:// URL of the service in your profile.',
  });
}

/** Drops the query string, which may carry codes or hashes, from URLs shown in traces. */
export function redactUrl(raw: string): string {
  try {
    const url = new URL(raw);
    return `${url.origin}${url.pathname}${url.search ? '?…' : ''}`;
  } catch {
    return '(invalid URL)';
  }
}

export function responseJson(response: HttpResponse): unknown {
  try {
    return JSON.parse(response.body.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}
