import { request as httpRequest, type Agent, type IncomingMessage, type RequestOptions } from 'node:http';
import { EsignError } from '../core/errors.js';
import {
  CLIENT_KEY_PASSPHRASE_VARIABLE,
  isLoopbackHost,
  Transport,
  TRANSPORT_SETTING_NAMES,
  type TlsOptions,
} from './transport.js';

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
  /** Refuse a body larger than this (HTTP_BAD_RESPONSE) as it arrives, rather than holding it all. */
  maxBytes?: number;
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
  /** Proxy, trusted roots and client certificate, known once the profile is (src/io/transport.ts); default: direct, Node's roots. */
  transport?: () => Promise<Transport>;
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

  /** The transport requests go through; the S3 client takes its agent from it. */
  transport(): Promise<Transport> {
    return this.options.transport?.() ?? Promise.resolve(DIRECT);
  }

  async request(request: HttpRequest): Promise<HttpResponse> {
    if (!request.signedContentOverHttp) assertSecureUrl(request.url, request.service);
    const transport = await this.transport();
    const tries = request.retry === 'idempotent' ? this.maxTries : 1;
    for (let attempt = 1; ; attempt++) {
      let response: HttpResponse;
      try {
        response = await this.once(request, transport);
      } catch (error) {
        if (attempt < tries && isTransient(error)) {
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

  private async once(request: HttpRequest, transport: Transport): Promise<HttpResponse> {
    const timeoutMs = request.timeoutMs ?? this.timeoutMs;
    const started = Date.now();
    const route = await transport.route(new URL(request.url));
    const via = route.proxy ? ` via ${route.proxy}` : '';
    try {
      const response = await send(
        request,
        { 'user-agent': this.options.userAgent ?? 'esign', ...request.headers },
        timeoutMs,
        { ...route, tls: transport.tls },
      );
      this.options.trace?.(
        `${request.method} ${redactUrl(request.url)}${via} → ${response.status} (${Date.now() - started} ms)`,
      );
      return response;
    } catch (error) {
      this.options.trace?.(`${request.method} ${redactUrl(request.url)}${via} failed (${Date.now() - started} ms)`);
      if (error instanceof EsignError) throw error;
      throw transportError(error, request, timeoutMs, { proxy: route.proxy, caSetting: transport.caSettingName });
    }
  }
}

const DIRECT = Transport.direct();

/** Failures worth another try: time-outs and lost connections, not a certificate or a proxy's refusal. */
function isTransient(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  return code === 'HTTP_UNREACHABLE' || code === 'HTTP_TIMEOUT';
}

/** A plain GET that follows redirects, as a browser would (the sandbox's --auto-approve browser, health checks). */
export async function getFollowingRedirects(
  url: string,
  timeoutMs: number,
  maxRedirects = 10,
  transport: Transport = DIRECT,
): Promise<HttpResponse> {
  let current = url;
  for (let hop = 0; ; hop++) {
    const route = await transport.route(new URL(current));
    const response = await send({ method: 'GET', url: current, service: 'browser' }, {}, timeoutMs, {
      ...route,
      tls: transport.tls,
    });
    const location = response.headers.get('location');
    if (response.status < 300 || response.status >= 400 || !location || hop >= maxRedirects) return response;
    current = new URL(location, current).toString();
  }
}

class TimeoutError extends Error {
  override name = 'TimeoutError';
}

/** A proxy answered its CONNECT with something other than a tunnel; nothing of the request was sent. */
class ProxyAnswer extends Error {
  override name = 'ProxyAnswer';
  constructor(
    readonly status: number,
    readonly contentType: string | undefined,
  ) {
    super(`the proxy answered HTTP ${status}`);
  }
}

interface Connection {
  agent?: Agent;
  proxy?: string;
  tls: TlsOptions;
}

/**
 * One HTTP exchange over node:http(s). Not `fetch`: loading undici on first use costs ~40 ms, which
 * is most of what signing a small file takes. No redirects are followed.
 */
async function send(
  request: HttpRequest,
  headers: Record<string, string>,
  timeoutMs: number,
  connection: Connection = { tls: {} },
): Promise<HttpResponse> {
  const url = new URL(request.url);
  const body =
    request.body === undefined
      ? undefined
      : typeof request.body === 'string'
        ? Buffer.from(request.body, 'utf8')
        : request.body;
  const secure = url.protocol === 'https:';
  const options: RequestOptions = {
    method: request.method,
    headers: body === undefined ? headers : { ...headers, 'content-length': String(body.length) },
    ...(connection.agent ? { agent: connection.agent } : {}),
    ...(secure ? connection.tls : {}),
  };
  const issue = secure ? (await import('node:https')).request : httpRequest;
  return new Promise<HttpResponse>((resolve, reject) => {
    const outgoing = issue(url, options, (incoming: IncomingMessage) => {
      if (connection.proxy && incoming.statusCode === 407) {
        // A plain-http target through the proxy: the proxy itself asks for credentials.
        incoming.resume();
        outgoing.destroy(new ProxyAnswer(407, incoming.headers['content-type']));
        return;
      }
      const chunks: Buffer[] = [];
      let received = 0;
      incoming.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (request.maxBytes !== undefined && received > request.maxBytes) {
          clearTimeout(timer);
          outgoing.destroy();
          reject(
            new EsignError(
              'HTTP_BAD_RESPONSE',
              `The ${request.service} at ${url.host} sent more than ${request.maxBytes} bytes.`,
              { hint: 'Check the URL: this is not what esign expects there.' },
            ),
          );
          return;
        }
        chunks.push(chunk);
      });
      // A body cut short (the connection closed before Content-Length): said so, and retried as a lost
      // connection is; the time-out must not keep the process alive.
      incoming.on('error', (error) => {
        clearTimeout(timer);
        const expected = incoming.headers['content-length'];
        reject(
          new EsignError(
            'HTTP_UNREACHABLE',
            `The connection to the ${request.service} at ${url.host} closed before its whole answer came (${received}${expected ? ` of ${expected}` : ''} bytes).`,
            { hint: 'Try again in a moment.', cause: error },
          ),
        );
      });
      incoming.on('end', () => {
        clearTimeout(timer);
        resolve({
          status: incoming.statusCode ?? 0,
          headers: headersOf(incoming),
          body: Buffer.concat(chunks),
          url: request.url,
        });
      });
    });
    const timer = setTimeout(() => outgoing.destroy(new TimeoutError(`no answer within ${timeoutMs} ms`)), timeoutMs);
    outgoing.on('proxyConnect', (answer: IncomingMessage) => {
      if (answer.statusCode !== 200)
        outgoing.destroy(new ProxyAnswer(answer.statusCode ?? 0, answer.headers['content-type']));
    });
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

function transportError(
  error: unknown,
  request: HttpRequest,
  timeoutMs: number,
  where: { proxy?: string; caSetting?: string } = {},
): EsignError {
  const url = new URL(request.url);
  const name = (error as { name?: string })?.name;
  if (name === 'TimeoutError' || name === 'AbortError') {
    return new EsignError(
      'HTTP_TIMEOUT',
      `The ${request.service} did not answer within ${Math.round(timeoutMs / 1000)} s (${url.host}).`,
      {
        hint: 'Check your network and try again.',
        cause: error,
      },
    );
  }
  if (error instanceof ProxyAnswer && where.proxy) return proxyRefusal(error, where.proxy, url, request.service);
  const tls = tlsFailure(error, url.host, request.service, where.caSetting);
  if (tls) return tls;
  const code = errorCode(error);
  const detail = code ? ` (${code})` : '';
  if (where.proxy) {
    const refused = code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EHOSTUNREACH';
    return new EsignError(
      'HTTP_UNREACHABLE',
      refused
        ? `Could not reach the proxy at ${where.proxy}${detail} for the ${request.service} at ${url.host}.`
        : `The connection to the ${request.service} at ${url.host} through the proxy at ${where.proxy} was closed${detail}.`,
      { hint: 'Check HTTPS_PROXY / HTTP_PROXY, or exempt the host with NO_PROXY.', cause: error },
    );
  }
  return new EsignError('HTTP_UNREACHABLE', `Could not reach the ${request.service} at ${url.origin}${detail}.`, {
    hint: 'Check the URL in your profile (esign config list) and your network; for the sandbox run `esign sandbox start`.',
    cause: error,
  });
}

function errorCode(error: unknown): string | undefined {
  return (error as { code?: string })?.code ?? (error as { cause?: { code?: string } })?.cause?.code;
}

function proxyRefusal(answer: ProxyAnswer, proxy: string, url: URL, service: string): EsignError {
  if (answer.status === 407) {
    return new EsignError(
      'HTTP_PROXY_REFUSED',
      `The proxy at ${proxy} asks for credentials (HTTP 407) before it reaches the ${service} at ${url.host}.`,
      {
        hint: 'Put them in the proxy variable as http://USER:PASSWORD@HOST:PORT (HTTPS_PROXY, HTTP_PROXY).',
      },
    );
  }
  if (answer.status >= 500) {
    return new EsignError(
      'HTTP_UNREACHABLE',
      `The proxy at ${proxy} could not reach the ${service} at ${url.host} (HTTP ${answer.status}).`,
      {
        hint: 'Try again in a moment; if it repeats, ask whoever runs the proxy whether it may reach that host.',
      },
    );
  }
  const what = answer.contentType?.includes('html') ? 'an HTML page' : 'an answer';
  return new EsignError(
    'HTTP_PROXY_REFUSED',
    `The proxy at ${proxy} answered the tunnel to ${url.host} with ${what} (HTTP ${answer.status}) instead of opening it; nothing was sent.`,
    {
      hint: 'A captive portal or a proxy policy is in the way: sign in to the network, ask for the host to be allowed, or exempt it with NO_PROXY.',
    },
  );
}

const UNKNOWN_ISSUER = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
]);
const SELF_SIGNED = new Set(['SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT']);
/** Alerts a server sends when it wants, or refuses, the client certificate. */
const CLIENT_CERTIFICATE_REFUSED =
  /ALERT_(CERTIFICATE_REQUIRED|BAD_CERTIFICATE|UNKNOWN_CA|CERTIFICATE_UNKNOWN|CERTIFICATE_EXPIRED|CERTIFICATE_REVOKED|HANDSHAKE_FAILURE)/;

/**
 * A failed TLS handshake as one line: the host, what failed and the setting that fixes it; never
 * retried, since another try meets the same certificate. Undefined for failures that are not TLS.
 */
export function tlsFailure(
  error: unknown,
  host: string,
  service: string,
  caSetting = TRANSPORT_SETTING_NAMES.caFile,
): EsignError | undefined {
  const code = errorCode(error);
  if (!code) return undefined;
  const fail = (what: string, hint: string) =>
    new EsignError('HTTP_TLS_FAILED', `TLS to the ${service} at ${host} failed: ${what}.`, {
      hint,
      cause: error,
      details: { host, tlsError: code },
    });
  const addRoot = `If your organization uses its own certificate authority (a TLS-inspecting proxy, a private service), set ${caSetting} to its PEM bundle (NODE_EXTRA_CA_CERTS works too).`;
  if (UNKNOWN_ISSUER.has(code))
    return fail('the server certificate was issued by an unknown certificate authority', addRoot);
  if (SELF_SIGNED.has(code))
    return fail(
      code === 'DEPTH_ZERO_SELF_SIGNED_CERT'
        ? 'the server certificate is self-signed'
        : 'the server certificate chain ends in a self-signed root that is not trusted',
      addRoot,
    );
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') {
    return fail(
      code === 'CERT_HAS_EXPIRED' ? 'the server certificate has expired' : 'the server certificate is not yet valid',
      "Check this computer's clock; otherwise the service's operator must renew its certificate (no setting of esign can fix it).",
    );
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    const names = (error as { cert?: { subjectaltname?: string } }).cert?.subjectaltname;
    return fail(
      `the server certificate is not for ${host.replace(/:\d+$/, '')}${names ? ` (it names ${names})` : ''}`,
      'Use the host name the certificate names in the service URL of your profile (esign config list).',
    );
  }
  if (CLIENT_CERTIFICATE_REFUSED.test(code)) {
    return fail(
      `the server refused the handshake (${code}), as a server does that wants a TLS client certificate it was not given or does not accept`,
      `Set ${TRANSPORT_SETTING_NAMES.clientCert} and ${TRANSPORT_SETTING_NAMES.clientKey} (with ${CLIENT_KEY_PASSPHRASE_VARIABLE} for an encrypted key) to the certificate the service registered.`,
    );
  }
  if (code.startsWith('ERR_SSL_') || code === 'EPROTO' || code.startsWith('ERR_TLS_') || code.startsWith('CERT_')) {
    return fail(
      `the TLS handshake failed (${code})`,
      'Check that the URL names an https:// service; run with --verbose for details.',
    );
  }
  return undefined;
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

export function isLoopbackUrl(url: URL): boolean {
  return isLoopbackHost(url.hostname);
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
  throw new EsignError(
    'CONFIG_INSECURE_URL',
    `Refusing plain ${url.protocol}// for the ${service} at ${url.host}: only loopback addresses may use http://.`,
    {
      hint: 'Use the https:// URL of the service in your profile.',
    },
  );
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
