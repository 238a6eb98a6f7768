/**
 * The timestamp authority over HTTP (RFC 3161 §3.4): the TimestampAuthority port. Requests come
 * from `core/tsp/request.ts`, answers are checked by `core/tsp/response.ts` before anything uses
 * them. This adapter adds Basic auth, the HTTP error mapping, retries and the list of TSA URLs.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { EsignError, ExitCode, isEsignError } from '../core/errors.js';
import type { TimestampAuthority, TimestampResult } from '../core/ports.js';
import { DIGEST_OID, type DigestName } from '../core/cms/algorithms.js';
import { TSA_POLICY, buildTimeStampReq } from '../core/tsp/request.js';
import { processTimeStampResp } from '../core/tsp/response.js';
import type { TstInfo } from '../core/tsp/tst-info.js';
import { MAX_TRIES, RETRYABLE_STATUS, retryAfterMs } from './http.js';
import type { HttpClient, HttpResponse } from './http.js';

export const TIMESTAMP_QUERY = 'application/timestamp-query';
const REPLY_TYPES = new Set([
  'application/timestamp-reply',
  'application/timestamp-response',
  'application/octet-stream',
]);
const SERVICE = 'timestamp authority';
const NONCE_BYTES = 16;

export interface TsaClientOptions {
  /** TSA endpoints, tried in order. */
  urls: string[];
  username?: string;
  password?: string;
  http: HttpClient;
  /** DER roots the TSA certificate must chain to; when it yields none, only its key usage is checked. */
  trustAnchors?: () => Promise<Uint8Array[]>;
  /** Tries per URL; default 3. */
  maxTries?: number;
  sleep?: (ms: number) => Promise<void>;
  randomNonce?: () => Uint8Array;
  /** One line per attempt, for --verbose. */
  trace?: (line: string) => void;
  /** The policy asked for and required; default the service's `0.4.0.2023.1.1`; `null` asks for none and accepts any. */
  policy?: string | null;
}

export interface TsaTimestamp extends TimestampResult {
  tstInfo: TstInfo;
  /** DER of the TSA certificate from the token, when it carries it. */
  signerCertificate: Uint8Array | undefined;
  /** Whether the TSA certificate was checked against trust anchors. */
  chainChecked: boolean;
  /** The URL that answered. */
  url: string;
}

export class TsaClient implements TimestampAuthority {
  private readonly maxTries: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private anchors: Promise<Uint8Array[]> | undefined;

  constructor(private readonly options: TsaClientOptions) {
    if (options.urls.length === 0)
      throw new EsignError('TSA_NOT_CONFIGURED', 'No timestamp authority URL is configured.', {
        hint: 'Set tsaUrls (or ESIGN_TSA_URL).',
      });
    this.maxTries = options.maxTries ?? MAX_TRIES;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /**
   * Gets a verified token for an imprint (SHA-256 unless `digest` says otherwise). Transient failures (connection, HTTP 429/502/503,
   * timeNotAvailable) are retried with backoff, at most `maxTries` times per URL; after those, and
   * on systemFailure, the next URL is tried. Anything else fails at once.
   */
  async timestamp(imprint: Uint8Array, digest: DigestName = 'sha256'): Promise<TsaTimestamp> {
    const trustAnchors = await (this.anchors ??= this.options.trustAnchors?.() ?? Promise.resolve([]));
    let last: unknown;
    for (const url of this.options.urls) {
      for (let attempt = 1; attempt <= this.maxTries; attempt++) {
        try {
          return await this.once(url, imprint, digest, trustAnchors);
        } catch (error) {
          last = error;
          const failure = classify(error);
          this.options.trace?.(`timestamp ${url} try ${attempt}: ${isEsignError(error) ? error.code : String(error)}`);
          if (failure === 'fatal') throw error;
          if (failure === 'next-url' || attempt === this.maxTries) break;
          await this.sleep(delayMs(error, attempt));
        }
      }
    }
    throw exhausted(last, this.options.urls.length, this.maxTries);
  }

  private async once(
    url: string,
    imprint: Uint8Array,
    digest: DigestName,
    trustAnchors: Uint8Array[],
  ): Promise<TsaTimestamp> {
    const nonce = this.options.randomNonce?.() ?? new Uint8Array(randomBytes(NONCE_BYTES));
    const policy = this.options.policy === undefined ? TSA_POLICY : this.options.policy;
    const request = buildTimeStampReq({ imprint, digest, nonce, certReq: true, policy });
    const response = await this.options.http.request({
      method: 'POST',
      url,
      headers: { 'content-type': TIMESTAMP_QUERY, accept: 'application/timestamp-reply', ...this.authorization() },
      body: request,
      retry: 'never',
      service: SERVICE,
    });
    checkHttp(response);
    const body = new Uint8Array(response.body);
    const checked = processTimeStampResp(body, {
      imprint,
      hashAlgorithm: DIGEST_OID[digest],
      nonce,
      policy,
      trustAnchors: trustAnchors.length > 0 ? trustAnchors : undefined,
    });
    return {
      response: body,
      token: checked.token,
      genTime: checked.tstInfo.genTime,
      serialNumber: checked.tstInfo.serialNumber,
      tstInfo: checked.tstInfo,
      signerCertificate: checked.signerCertificate,
      certificates: checked.chain,
      chainChecked: trustAnchors.length > 0,
      url,
    };
  }

  private authorization(): Record<string, string> {
    const { username, password } = this.options;
    if (username === undefined || username === '') return {};
    if (password === undefined || password === '') {
      throw new EsignError('CONFIG_MISSING', `The timestamping user ${JSON.stringify(username)} has no password.`, {
        hint: 'Set ESIGN_TSA_PASSWORD, or TSA_PASSWORD= in the secrets file.',
      });
    }
    return { authorization: `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}` };
  }
}

type FailureKind = 'retry' | 'next-url' | 'fatal';

function classify(error: unknown): FailureKind {
  if (!isEsignError(error)) return 'fatal';
  if (error.code === 'HTTP_UNREACHABLE' || error.code === 'HTTP_TIMEOUT') return 'retry';
  if (error.details?.['retryable'] === true) return 'retry';
  if (error.code === 'TSA_REJECTED' && (error.details?.['failInfo'] as string[] | undefined)?.includes('systemFailure'))
    return 'next-url';
  return 'fatal';
}

function delayMs(error: unknown, attempt: number): number {
  const retryAfter = isEsignError(error) ? (error.details?.['retryAfterMs'] as number | undefined) : undefined;
  return retryAfter ?? 500 * 2 ** (attempt - 1);
}

function exhausted(last: unknown, urls: number, tries: number): unknown {
  if (!isEsignError(last)) return last;
  const where = urls === 1 ? `${tries} tries` : `${tries} tries at each of ${urls} URLs`;
  return new EsignError(last.code, `${last.message.replace(/\.$/, '')} (gave up after ${where}).`, {
    hint: last.hint,
    cause: last.cause ?? last,
    details: { ...last.details, tries, urls },
    exitCode: last.exitCode,
  });
}

function checkHttp(response: HttpResponse): void {
  const status = response.status;
  if (status === 200) {
    const type = (response.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
    if (type !== '' && !REPLY_TYPES.has(type)) {
      throw new EsignError(
        'TSA_BAD_RESPONSE',
        `The timestamp authority answered with Content-Type ${type}, not application/timestamp-reply.`,
        {
          hint: 'Check that the TSA URL points at the RFC 3161 endpoint (…/tsa/tss03).',
          details: { status, contentType: type },
        },
      );
    }
    return;
  }
  const detail = textSnippet(response.body);
  const host = new URL(response.url).host;
  if (status === 401 || status === 403) {
    throw new EsignError(
      'TSA_UNAUTHORIZED',
      `The timestamp authority at ${host} refused the credentials (HTTP ${status}).`,
      {
        hint: 'Check tsaUsername and the TSA password (ESIGN_TSA_PASSWORD or the secrets file).',
        details: { status },
      },
    );
  }
  // DESIGN §4: 429, 502 and 503 are retried; any 5xx or 429 is the service being unavailable (exit 5).
  const retryable = RETRYABLE_STATUS.has(status);
  const unavailable = status === 429 || status >= 500;
  const why =
    status === 400
      ? 'refused the request as malformed: wrong Content-Type or empty body'
      : status === 429
        ? 'is rate limiting requests'
        : status >= 500
          ? 'had an internal error'
          : 'answered with an HTTP error';
  throw new EsignError(
    'TSA_HTTP_ERROR',
    `The timestamp authority at ${host} ${why} (HTTP ${status})${detail ? `: ${detail}` : ''}.`,
    {
      hint: unavailable
        ? 'This is usually temporary; try again later or configure another TSA URL.'
        : 'Check the TSA URL (…/tsa/tss03).',
      details: { status, retryable, retryAfterMs: retryAfterMs(response.headers.get('retry-after')) },
      ...(unavailable ? { exitCode: ExitCode.unavailable } : {}),
    },
  );
}

function textSnippet(body: Buffer): string {
  const text = body.toString('utf8').replace(/\s+/g, ' ').trim();
  return /^[\x20-\x7e]*$/.test(text) ? text.slice(0, 200) : '';
}

/** Reads trust anchors from PEM (one or more certificates) or DER files. */
export async function loadTrustAnchors(paths: readonly string[]): Promise<Uint8Array[]> {
  const anchors: Uint8Array[] = [];
  for (const path of paths) {
    let bytes: Buffer;
    try {
      bytes = await readFile(path);
    } catch (error) {
      throw new EsignError('CONFIG_INVALID', `The trust anchor file ${path} cannot be read.`, {
        hint: 'Check the trustAnchors setting.',
        cause: error,
      });
    }
    const pem = bytes.toString('latin1');
    const blocks = [...pem.matchAll(/-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g)];
    if (blocks.length > 0)
      anchors.push(
        ...blocks.map((block) => new Uint8Array(Buffer.from((block[1] ?? '').replace(/\s+/g, ''), 'base64'))),
      );
    else if (bytes[0] === 0x30) anchors.push(new Uint8Array(bytes));
    else
      throw new EsignError('CONFIG_INVALID', `The trust anchor file ${path} holds no certificate (PEM or DER).`, {
        hint: 'Check the trustAnchors setting.',
      });
  }
  return anchors;
}
