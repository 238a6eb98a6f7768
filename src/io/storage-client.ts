/**
 * The storage side (seed 002 part A) from the client: temporary credentials from
 * `POST {storageAuthUrl}/v1/credentials` with the login session's Bearer token, then S3 calls with
 * `@aws-sdk/client-s3` (multipart uploads through `@aws-sdk/lib-storage`) on the endpoint the
 * service names, path-style unless it is AWS itself. Credentials are renewed before they run out,
 * so a long upload outlives them. Secrets and tokens are never printed or logged.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import { EsignError, ExitCode, isEsignError, sentence } from '../core/errors.js';
import type { Clock } from '../core/ports.js';
import { writeFileAtomically } from './atomic-write.js';
import { inputError } from './file-source.js';
import {
  backoffMs,
  MAX_TRIES,
  responseJson,
  RETRYABLE_STATUS,
  retryAfterMs,
  tlsFailure,
  type HttpClient,
} from './http.js';
import { readIdentitySession } from './identity-client.js';
import { STORAGE_SCOPE, processStorageCredentialsResponse, type StorageGrant } from './storage-grant.js';
import type { TokenStore } from './token-store.js';
import { Transport } from './transport.js';

export { STORAGE_SCOPE, type StorageGrant };

const SERVICE = 'storage authorization service';
const LOGIN_HINT = 'Run `esign login --scope openid --scope com.vendor.storage` first.';
const PART_SIZE = 8 * 1024 * 1024;
const QUEUE_SIZE = 3;

/** `POST /v1/credentials`; the answer is validated by `processStorageCredentialsResponse`. */
export async function requestStorageCredentials(
  http: HttpClient,
  storageAuthUrl: string,
  accessToken: string,
): Promise<StorageGrant> {
  const url = `${storageAuthUrl.replace(/\/+$/, '')}/v1/credentials`;
  const response = await http.request({
    method: 'POST',
    url,
    headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' },
    retry: 'idempotent',
    service: SERVICE,
  });
  return processStorageCredentialsResponse(
    response.status,
    response.headers.get('www-authenticate'),
    responseJson(response),
  );
}

export interface StoredObject {
  bucket: string;
  key: string;
  size: number;
  sha256?: string;
  lastModified?: string;
  etag?: string;
}

export interface UploadOptions {
  overwrite?: boolean;
  contentType?: string;
  onProgress?: (loaded: number, total: number) => void;
}

/**
 * One storage session: a credentials grant that renews itself, and the S3 client over it. The
 * bucket and endpoint come from the first grant; renewals must name the same.
 */
export class StorageSession {
  private grant: StorageGrant;
  private renewing: Promise<StorageGrant> | undefined;
  private clientPromise: Promise<S3Client> | undefined;
  private issuedAt: number;
  /** How many grants this session obtained (the first included). */
  grants = 1;

  private constructor(
    private readonly fetchGrant: () => Promise<StorageGrant>,
    first: StorageGrant,
    private readonly clock: Clock,
    private readonly region: string,
    private readonly timeoutMs: number,
    private readonly transport: Transport,
  ) {
    this.grant = first;
    this.issuedAt = clock.now().getTime();
  }

  static async open(options: {
    fetchGrant: () => Promise<StorageGrant>;
    clock: Clock;
    region: string;
    timeoutMs?: number;
    transport?: Transport;
  }): Promise<StorageSession> {
    return new StorageSession(
      options.fetchGrant,
      await options.fetchGrant(),
      options.clock,
      options.region,
      options.timeoutMs ?? 30_000,
      options.transport ?? Transport.direct(),
    );
  }

  get bucket(): string {
    return this.grant.bucket;
  }

  get endpoint(): string {
    return this.grant.endpoint;
  }

  /** Current credentials, renewed when less than min(5 min, half their life) is left. */
  async credentials(force = false): Promise<StorageGrant> {
    const now = this.clock.now().getTime();
    const left = this.grant.expiration.getTime() - now;
    if (!force && left > 0 && left > Math.min(5 * 60_000, this.lifetimeMs / 2)) return this.grant;
    this.renewing ??= this.fetchGrant()
      .then((grant) => {
        if (grant.bucket !== this.grant.bucket || grant.endpoint !== this.grant.endpoint) {
          throw new EsignError(
            'STORAGE_BAD_RESPONSE',
            'The storage service named another bucket or endpoint when renewing credentials.',
            { hint: 'Run the command again.' },
          );
        }
        this.grant = grant;
        this.grants += 1;
        this.issuedAt = this.clock.now().getTime();
        return grant;
      })
      .finally(() => (this.renewing = undefined));
    return this.renewing;
  }

  private get lifetimeMs(): number {
    return Math.max(0, this.grant.expiration.getTime() - this.issuedAt);
  }

  async client(): Promise<S3Client> {
    this.clientPromise ??= (async () => {
      // The SDK warns on every Node 20 process about its future Node 22 floor; esign supports Node 20.
      process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';
      const { S3Client } = await import('@aws-sdk/client-s3');
      const endpoint = new URL(this.grant.endpoint);
      const host = endpoint.hostname;
      // The proxy and trusted roots of every other call: the SDK takes them as its agent.
      const agent = await this.transport.agentFor(endpoint);
      return new S3Client({
        endpoint: this.grant.endpoint,
        region: this.region,
        forcePathStyle: !/\.amazonaws\.com(\.cn)?$/i.test(host),
        maxAttempts: MAX_TRIES,
        retryStrategy: S3_RETRY_STRATEGY,
        // Idle, not total: a multi-gigabyte upload may take long, but a silent server is a failure.
        requestHandler: {
          connectionTimeout: this.timeoutMs,
          socketTimeout: this.timeoutMs,
          ...(agent ? (endpoint.protocol === 'https:' ? { httpsAgent: agent } : { httpAgent: agent }) : {}),
        },
        credentials: async () => {
          const grant = await this.credentials();
          return {
            accessKeyId: grant.accessKeyId,
            secretAccessKey: grant.secretAccessKey,
            sessionToken: grant.sessionToken,
            expiration: grant.expiration,
          };
        },
      });
    })();
    return this.clientPromise;
  }

  /**
   * Renews the credentials now and starts a new S3 client with them: the SDK keeps the credentials
   * it holds until they near their expiration by this computer's clock, which the server may not share.
   */
  private async renewedClient(): Promise<S3Client> {
    await this.credentials(true);
    const previous = this.clientPromise;
    this.clientPromise = undefined;
    (await previous)?.destroy();
    return this.client();
  }

  /** Runs an S3 call; on ExpiredToken renews the credentials once and runs it again. */
  private async call<T>(what: string, key: string | undefined, run: (client: S3Client) => Promise<T>): Promise<T> {
    try {
      return await run(await this.client());
    } catch (error) {
      if (errorName(error) !== 'ExpiredToken')
        throw s3Error(error, what, this.bucket, key, new URL(this.grant.endpoint).host);
    }
    try {
      return await run(await this.renewedClient());
    } catch (again) {
      throw s3Error(again, what, this.bucket, key, new URL(this.grant.endpoint).host);
    }
  }

  /** Whether `key` exists (ListObjectsV2 on the key as prefix: within the session policy, and errors carry their code). */
  async exists(key: string): Promise<StoredObject | undefined> {
    const { ListObjectsV2Command } = await import('@aws-sdk/client-s3');
    const page = await this.call('existence check', key, (client) =>
      client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: key, MaxKeys: 1 })),
    );
    const first = page.Contents?.[0];
    return first?.Key === key ? toStored(this.bucket, first) : undefined;
  }

  async *list(prefix: string | undefined): AsyncGenerator<StoredObject> {
    const { ListObjectsV2Command } = await import('@aws-sdk/client-s3');
    let token: string | undefined;
    do {
      const page = await this.call('list', prefix, (client) =>
        client.send(
          new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix || undefined, ContinuationToken: token }),
        ),
      );
      for (const item of page.Contents ?? []) yield toStored(this.bucket, item);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  /** Streams a file into `key` (multipart above one part), hashing it on the way; refuses an existing key unless `overwrite`. */
  async upload(path: string, key: string, options: UploadOptions = {}): Promise<StoredObject> {
    let size: number;
    try {
      const info = await stat(path);
      if (!info.isFile())
        throw new EsignError('INPUT_UNREADABLE', `${path} is not a regular file.`, { hint: 'Name files to upload.' });
      size = info.size;
    } catch (error) {
      throw isEsignError(error) ? error : inputError(path, error);
    }
    if (!options.overwrite && (await this.exists(key))) {
      throw new EsignError(
        'STORAGE_OBJECT_EXISTS',
        `${key} already exists in bucket ${this.bucket}; esign does not replace objects unasked.`,
        {
          hint: 'Pass --overwrite to replace it, or choose another --prefix.',
          exitCode: ExitCode.output,
          details: { bucket: this.bucket, key },
        },
      );
    }
    const run = async (client: S3Client): Promise<string> => {
      const { Upload } = await import('@aws-sdk/lib-storage');
      const hash = createHash('sha256');
      const source = createReadStream(path, { highWaterMark: 1024 * 1024 });
      const hashing = new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          hash.update(chunk);
          callback(null, chunk);
        },
      });
      let readFailure: unknown;
      source.on('error', (error) => {
        readFailure = error;
        hashing.destroy(error);
      });
      source.pipe(hashing);
      // Parts are left on failure: AbortMultipartUpload is outside the session policy, and asking for it
      // would replace the part's own error (an expired token, a 503) with AccessDenied.
      const upload = new Upload({
        client,
        queueSize: QUEUE_SIZE,
        partSize: PART_SIZE,
        leavePartsOnError: true,
        params: {
          Bucket: this.bucket,
          Key: key,
          Body: hashing,
          ContentType: options.contentType ?? contentTypeFor(path),
          ContentLength: size <= PART_SIZE ? size : undefined,
        },
      });
      upload.on('httpUploadProgress', (progress) => options.onProgress?.(Math.min(progress.loaded ?? 0, size), size));
      try {
        await upload.done();
      } catch (error) {
        source.destroy();
        // Only a failure of the file's own reads is about the file; a socket's EPIPE is the network's.
        if (readFailure !== undefined) throw inputError(path, readFailure);
        throw error;
      }
      return hash.digest('hex');
    };
    const sha256 = await this.call('upload', key, run);
    return { bucket: this.bucket, key, size, sha256 };
  }

  /** Streams `key` into `target` (temp file renamed into place), hashing it on the way. */
  async download(
    key: string,
    target: string,
    options: { overwrite?: boolean } = {},
  ): Promise<StoredObject & { path: string }> {
    const { GetObjectCommand } = await import('@aws-sdk/client-s3');
    let size = 0;
    let sha256 = '';
    await writeFileAtomically(
      target,
      async (handle) => {
        const answer = await this.call('download', key, (client) =>
          client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key })),
        );
        const hash = createHash('sha256');
        try {
          for await (const chunk of answer.Body as Readable) {
            hash.update(chunk as Buffer);
            size += (chunk as Buffer).length;
            await handle.write(chunk as Buffer);
          }
        } catch (error) {
          if (isEsignError(error)) throw error;
          if ((error as { syscall?: string }).syscall === 'write') throw error;
          throw new EsignError('STORAGE_UNAVAILABLE', `The download of ${key} broke off.`, {
            hint: 'Run the command again.',
            cause: error,
          });
        }
        sha256 = hash.digest('hex');
      },
      { overwrite: options.overwrite },
    );
    return { bucket: this.bucket, key, size, sha256, path: target };
  }

  async remove(key: string): Promise<StoredObject> {
    const found = await this.exists(key);
    if (!found) throw notFound(this.bucket, key);
    const { DeleteObjectCommand } = await import('@aws-sdk/client-s3');
    await this.call('delete', key, (client) => client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key })));
    return found;
  }

  async close(): Promise<void> {
    if (this.clientPromise) (await this.clientPromise).destroy();
  }
}

export interface StorageSessionSettings {
  http: HttpClient;
  tokens: TokenStore;
  clock: Clock;
  /** The profile whose login session is traded for storage credentials. */
  profileName: string;
  storageAuthUrl: string;
  region: string;
}

/** Opens a storage session: the profile's login session's token → credentials. */
export async function openStorageSession(settings: StorageSessionSettings): Promise<StorageSession> {
  const { http, tokens, clock, profileName, storageAuthUrl } = settings;
  const fetchGrant = async (): Promise<StorageGrant> => {
    const session = await readIdentitySession(tokens, profileName);
    if (!session)
      throw new EsignError(
        'AUTH_LOGIN_REQUIRED',
        `Not signed in at the identity service on profile ${JSON.stringify(profileName)}; storage needs the login session.`,
        { hint: LOGIN_HINT },
      );
    if (session.expiresAt <= clock.now().getTime())
      throw new EsignError('AUTH_LOGIN_REQUIRED', 'The login session has expired.', { hint: LOGIN_HINT });
    return requestStorageCredentials(http, storageAuthUrl, session.accessToken);
  };
  return StorageSession.open({
    fetchGrant,
    clock,
    region: settings.region,
    timeoutMs: http.timeoutMs,
    transport: await http.transport(),
  });
}

/** `PREFIX/BASENAME` (DESIGN §4); the prefix loses leading and trailing slashes. */
export function objectKey(prefix: string | undefined, path: string): string {
  const clean = (prefix ?? '').replace(/^\/+|\/+$/g, '');
  return clean ? `${clean}/${basename(path)}` : basename(path);
}

/** Refuses files that would be stored under the same key (`PREFIX/BASENAME`), before anything is uploaded. */
export function assertDistinctKeys(paths: readonly string[], prefix: string | undefined): void {
  const keys = paths.map((path) => objectKey(prefix, path));
  const duplicate = keys.find((key, index) => keys.indexOf(key) !== index);
  if (duplicate)
    throw new EsignError('USAGE', `Two of the files would be stored under the same key ${duplicate}.`, {
      hint: 'Store them in separate runs (esign upload --prefix gives each run its own keys).',
    });
}

export function progressBar(loaded: number, total: number, width = 24): string {
  const fraction = total > 0 ? Math.min(1, loaded / total) : 1;
  const filled = Math.round(fraction * width);
  return `[${'█'.repeat(filled)}${'░'.repeat(width - filled)}] ${Math.floor(fraction * 100)}% ${formatSize(loaded)}/${formatSize(total)}`;
}

export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
}

function contentTypeFor(path: string): string {
  const lower = path.toLowerCase();
  if (lower.endsWith('.pdf')) return 'application/pdf';
  if (lower.endsWith('.p7s')) return 'application/pkcs7-signature';
  if (lower.endsWith('.tsr')) return 'application/timestamp-reply';
  if (lower.endsWith('.json')) return 'application/json';
  if (lower.endsWith('.txt')) return 'text/plain';
  return 'application/octet-stream';
}

function toStored(
  bucket: string,
  item: { Key?: string; Size?: number; LastModified?: Date; ETag?: string },
): StoredObject {
  return {
    bucket,
    key: item.Key ?? '',
    size: item.Size ?? 0,
    ...(item.LastModified ? { lastModified: item.LastModified.toISOString() } : {}),
    ...(item.ETag ? { etag: item.ETag.replace(/"/g, '') } : {}),
  };
}

function notFound(bucket: string, key: string): EsignError {
  return new EsignError('STORAGE_NOT_FOUND', `There is no object ${key} in bucket ${bucket}.`, {
    hint: 'List what is there with `esign storage ls`.',
    exitCode: ExitCode.input,
    details: { bucket, key },
  });
}

function errorName(error: unknown): string {
  return String((error as { name?: string; Code?: string })?.Code ?? (error as { name?: string })?.name ?? '');
}

function httpStatus(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
}

/** What went wrong below HTTP (a time-out, a refused or reset connection), when no answer came. */
function transportFailure(error: unknown): string | undefined {
  if (httpStatus(error) !== undefined) return undefined;
  if (errorName(error) === 'TimeoutError') return 'no answer in time';
  return (error as { code?: string })?.code ?? (error as { cause?: { code?: string } })?.cause?.code;
}

type RetryStrategyV2 = Extract<NonNullable<S3ClientConfig['retryStrategy']>, { acquireInitialRetryToken: unknown }>;
type RetryToken = Awaited<ReturnType<RetryStrategyV2['acquireInitialRetryToken']>>;

/**
 * The SDK's retries narrowed to DESIGN §4 (its own also retry 500, 504 and more): 429, 502 and 503
 * answers, time-outs and connection failures, at most MAX_TRIES tries, Retry-After honoured — and
 * a request refused for this computer's clock once the SDK has corrected its clock offset.
 */
const S3_RETRY_STRATEGY: RetryStrategyV2 = {
  acquireInitialRetryToken: async () => retryToken(0, 0),
  refreshRetryTokenForRetry: async (token, info) => {
    const retries = token.getRetryCount() + 1;
    const status = httpStatus(info.error);
    const clockCorrected =
      (info.error as { $metadata?: { clockSkewCorrected?: boolean } } | undefined)?.$metadata?.clockSkewCorrected ===
      true;
    const transient = transportFailure(info.error) !== undefined && !tlsFailure(info.error, '', '');
    const retryable = clockCorrected || (status === undefined ? transient : RETRYABLE_STATUS.has(status));
    // Refusing the token makes the SDK throw the request's own error.
    if (!retryable || retries >= MAX_TRIES) throw new Error('not retried');
    return retryToken(retries, retryAfterMs(info.retryAfterHint?.toUTCString() ?? null) ?? backoffMs(retries));
  },
  recordSuccess: () => undefined,
};

function retryToken(count: number, delayMs: number): RetryToken {
  return { getRetryCount: () => count, getRetryDelay: () => delayMs };
}

/** Maps an S3 failure (SDK service exception or transport error) to an EsignError. */
export function s3Error(
  error: unknown,
  what: string,
  bucket: string,
  key: string | undefined,
  host?: string,
): EsignError {
  if (isEsignError(error)) return error;
  const tls = tlsFailure(error, host ?? bucket, 'storage server');
  if (tls) return tls;
  const name = errorName(error);
  const status = httpStatus(error);
  const message = (error as Error)?.message ?? String(error);
  const target = key ? `${key} in bucket ${bucket}` : `bucket ${bucket}`;
  const details = { bucket, ...(key ? { key } : {}), s3Code: name, ...(status ? { status } : {}) };
  if (name === 'NoSuchKey' || name === 'NotFound' || (status === 404 && name !== 'NoSuchBucket'))
    return notFound(bucket, key ?? '');
  if (name === 'AccessDenied' || name === 'Forbidden') {
    return new EsignError(
      'STORAGE_ACCESS_DENIED',
      sentence(`The storage server refused the ${what} of ${target}: ${message}`),
      {
        hint: 'Your storage credentials allow only your own bucket; run `esign login --scope openid --scope com.vendor.storage` if this persists.',
        exitCode: ExitCode.auth,
        details,
        cause: error,
      },
    );
  }
  if (name === 'ExpiredToken') {
    return new EsignError(
      'STORAGE_UNAUTHORIZED',
      `The temporary storage credentials expired during the ${what} of ${target}, and renewed ones expired too.`,
      {
        hint: "Check this computer's clock, then run the command again.",
        exitCode: ExitCode.auth,
        details,
        cause: error,
      },
    );
  }
  if (
    [
      'InvalidAccessKeyId',
      'SignatureDoesNotMatch',
      'InvalidToken',
      'RequestTimeTooSkewed',
      'AuthorizationHeaderMalformed',
    ].includes(name)
  ) {
    return new EsignError(
      'STORAGE_UNAUTHORIZED',
      sentence(
        `The storage server did not accept the temporary credentials for the ${what} of ${target} (${name}): ${message}`,
      ),
      { hint: 'Run the command again; if it repeats, log in again.', exitCode: ExitCode.auth, details, cause: error },
    );
  }
  if (status === 429 || name === 'SlowDown') {
    return new EsignError(
      'HTTP_RATE_LIMITED',
      sentence(`The storage server is rate limiting the ${what} of ${target} (HTTP ${status ?? 503}): ${message}`),
      { hint: 'Try again in a moment.', details, cause: error },
    );
  }
  const transport = transportFailure(error);
  if ((status !== undefined && status >= 500) || name === 'ServiceUnavailable' || transport) {
    return new EsignError(
      'STORAGE_UNAVAILABLE',
      sentence(
        `The storage server is unavailable for the ${what} of ${target} (${status ? `HTTP ${status}` : (transport ?? name)}): ${message}`,
      ),
      { hint: 'Try again in a moment.', details, cause: error },
    );
  }
  return new EsignError(
    'STORAGE_BAD_RESPONSE',
    sentence(`The ${what} of ${target} failed (${name || 'unknown error'}): ${message}`),
    { hint: 'Run with --verbose for details; report it if it repeats.', details, cause: error },
  );
}
