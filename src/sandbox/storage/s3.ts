/**
 * The sandbox object store: s3rver (a real S3-compatible server from npm) keeps the objects in
 * `dataDir/s3` and listens on a Unix socket only; in front of it, on 127.0.0.1, a small gateway
 * enforces the temporary credentials as the storage seed says — SigV4 (header and presigned forms,
 * `aws-chunked` bodies) checked with the temporary secret, the session token required and matching,
 * expired credentials refused, and only GetObject, PutObject, DeleteObject and ListBucket on the
 * assigned bucket (a write that sets ACLs, tags or Object Lock needs more, so it is refused too).
 * Bodies stream through; nothing is buffered whole.
 *
 * Each request is logged in the host's request log as `s3 METHOD /{bucket}/{key}?QUERY` (query
 * parameter names, sorted; `partNumber` with its value), e.g. `s3 PUT /{bucket}/{key}` (PutObject)
 * or `s3 PUT /{bucket}/{key}?partNumber=2&uploadId` (UploadPart); the host's faults armed for that
 * id apply to the request once it is authenticated.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { createServer as createTlsServer } from 'node:https';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { pipeline } from 'node:stream';
import type { Clock } from '../../core/ports.js';
import type { Fault, FaultInjector } from '../faults.js';
import { ALLOWED_ACTIONS, type CredentialIssuer } from './credentials.js';
import { announcedChecksum, PayloadVerifier, S3RequestError, type PayloadMode } from './payload.js';
import {
  AuthParseError,
  canonicalRequest,
  headerMap,
  parseAmzDate,
  parseAuth,
  sameSignature,
  sign,
  signingKey,
  stringToSign,
} from './sigv4.js';

export interface S3Server {
  /** The endpoint clients use: the gateway, `http://127.0.0.1:PORT`. */
  url: string;
  region: string;
  ensureBucket(name: string): Promise<void>;
  close(): Promise<void>;
}

export interface S3ServerOptions {
  dataDir: string;
  clock: Clock;
  issuer: CredentialIssuer;
  region: string;
  /** When set, every S3 call answers 503 SlowDown-style "storage side unavailable". */
  isUnavailable?: () => boolean;
  /** The host's fault injector and request log (see above). */
  faults?: FaultInjector;
  requestLog?: string[];
  /** Serve the gateway over HTTPS with this certificate chain and key. */
  tls?: { chainPem: string; keyPem: string };
  /** The host name in the endpoint URL instead of 127.0.0.1 (it still listens on 127.0.0.1). */
  hostName?: string;
}

interface S3rverInstance {
  store: { getBucket(name: string): Promise<unknown>; putBucket(name: string): Promise<unknown> };
  httpServer?: Server;
  listen(...args: unknown[]): Promise<Server>;
  close(): Promise<void>;
}
type S3rverConstructor = new (options: Record<string, unknown>) => S3rverInstance;

const MAX_SKEW_MS = 15 * 60 * 1000;
const AUTH_QUERY_PARAMS = new Set([
  'x-amz-algorithm',
  'x-amz-credential',
  'x-amz-date',
  'x-amz-expires',
  'x-amz-signedheaders',
  'x-amz-signature',
  'x-amz-security-token',
  'x-amz-content-sha256',
]);
const DROPPED_HEADERS = new Set([
  'authorization',
  'x-amz-security-token',
  'x-amz-content-sha256',
  'x-amz-decoded-content-length',
  'x-amz-trailer',
  'x-amz-date',
  'content-length',
  'transfer-encoding',
  'content-encoding',
  'connection',
  'keep-alive',
  'expect',
  'host',
]);
/** Query parameters each kind of request may carry and still be the permitted action. */
const LIST_PARAMS = new Set([
  'list-type',
  'prefix',
  'delimiter',
  'marker',
  'max-keys',
  'continuation-token',
  'start-after',
  'encoding-type',
  'fetch-owner',
  'x-id',
]);
const GET_OBJECT_PARAMS = new Set([
  'partNumber',
  'x-id',
  'response-content-type',
  'response-content-language',
  'response-expires',
  'response-cache-control',
  'response-content-disposition',
  'response-content-encoding',
]);
const PUT_OBJECT_PARAMS = new Set(['partNumber', 'uploadId', 'x-id']);
const POST_OBJECT_PARAMS = new Set(['uploads', 'uploadId', 'x-id']);
/** Request headers with which a write needs another permission on AWS than s3:PutObject. */
const HEADER_PERMISSIONS: ReadonlyArray<[RegExp, string]> = [
  [/^x-amz-(acl|grant-.+)$/, 's3:PutObjectAcl'],
  [/^x-amz-tagging$/, 's3:PutObjectTagging'],
  [/^x-amz-object-lock-legal-hold$/, 's3:PutObjectLegalHold'],
  [/^x-amz-object-lock-/, 's3:PutObjectRetention'],
];
const FAULT_CODES: Record<number, string> = {
  429: 'SlowDown',
  500: 'InternalError',
  502: 'BadGateway',
  503: 'ServiceUnavailable',
  504: 'GatewayTimeout',
};

export async function startS3Server(options: S3ServerOptions): Promise<S3Server> {
  const storeDir = join(options.dataDir, 's3');
  await mkdir(storeDir, { recursive: true, mode: 0o700 });
  // A plain import, which the bundlers follow (scripts/bundle.mjs, the single executable's assets).
  const S3rver = (await import('s3rver')).default as S3rverConstructor;
  const backend = new S3rver({ directory: storeDir, silent: true, vhostBuckets: false, address: '127.0.0.1', port: 0 });

  // The store listens on a Unix socket in the data dir, so only the gateway reaches it.
  const socketPath = join(options.dataDir, `s3.${process.pid}.${randomBytes(3).toString('hex')}.sock`);
  const useSocket = process.platform !== 'win32' && Buffer.byteLength(socketPath) < 100;
  backend.httpServer = useSocket ? await backend.listen(socketPath) : await backend.listen(0, '127.0.0.1');
  const backendAddress = backend.httpServer.address();
  const target = useSocket ? { socketPath } : { host: '127.0.0.1', port: (backendAddress as AddressInfo).port };

  const sockets = new Set<Socket>();
  const handler = (request: IncomingMessage, response: ServerResponse) => {
    void serve(request, response).catch((error: unknown) => {
      if (!response.headersSent)
        sendError(request, response, {
          status: 500,
          code: 'InternalError',
          message: `We encountered an internal error: ${(error as Error)?.message ?? String(error)}`,
        });
      else response.destroy();
    });
  };
  const gateway: Server = options.tls
    ? createTlsServer({ cert: options.tls.chainPem, key: options.tls.keyPem }, handler)
    : createServer(handler);
  gateway.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    gateway.once('error', reject);
    gateway.listen(0, '127.0.0.1', () => resolve());
  });
  const url = `${options.tls ? 'https' : 'http'}://${options.hostName ?? '127.0.0.1'}:${(gateway.address() as AddressInfo).port}`;

  async function serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    try {
      const id = routeId(request.method ?? 'GET', request.url ?? '/');
      options.requestLog?.push(id);
      if (options.isUnavailable?.())
        throw failure(
          503,
          'ServiceUnavailable',
          'The storage side is unavailable (sandbox fault). Please retry later.',
        );
      const admitted = authenticate(request, options);
      const fault = options.faults?.take(id);
      if (fault && (await applyFault(fault, request, response))) return;
      proxy(request, response, admitted, target, options.clock);
    } catch (error) {
      if (error instanceof S3RequestError) {
        response.setHeader('date', options.clock.now().toUTCString());
        sendError(request, response, error.failure);
        return;
      }
      throw error;
    }
  }

  return {
    url,
    region: options.region,
    async ensureBucket(name) {
      if (!(await backend.store.getBucket(name))) await backend.store.putBucket(name);
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => gateway.close(() => resolve()));
      await backend.close().catch(() => undefined);
      if (useSocket) await rm(socketPath, { force: true });
    },
  };
}

interface Admitted {
  payload: PayloadMode;
  checksum: ReturnType<typeof announcedChecksum>;
  /** Path and query to forward, without the authentication parameters. */
  forwardPath: string;
  hasBody: boolean;
}

function failure(status: number, code: string, message: string): S3RequestError {
  return new S3RequestError({ status, code, message });
}

/** Checks who signed the request and whether the session policy allows it; throws S3 errors. */
function authenticate(request: IncomingMessage, options: S3ServerOptions): Admitted {
  const method = request.method ?? 'GET';
  const rawUrl = request.url ?? '/';
  const shape = { method, rawUrl, rawHeaders: request.rawHeaders };
  let auth;
  try {
    auth = parseAuth(shape);
  } catch (error) {
    if (error instanceof AuthParseError)
      throw failure(error.code === 'AccessDenied' ? 403 : 400, error.code, error.message);
    throw error;
  }
  if (!auth)
    throw failure(
      403,
      'AccessDenied',
      'Anonymous access is denied: sign requests with the temporary credentials from POST /v1/credentials.',
    );
  const session = options.issuer.lookup(auth.accessKeyId);
  if (!session)
    throw failure(403, 'InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.');
  if (auth.sessionToken === undefined || auth.sessionToken === '') {
    throw failure(
      403,
      'InvalidAccessKeyId',
      'The access key is a temporary one and needs its session token: send x-amz-security-token (AWS_SESSION_TOKEN).',
    );
  }
  if (auth.form === 'header' && !auth.signedHeaders.includes('x-amz-security-token')) {
    throw failure(
      403,
      'AccessDenied',
      'There were headers present in the request which were not signed: x-amz-security-token',
    );
  }
  if (!sameSignature(auth.sessionToken, session.sessionToken))
    throw failure(400, 'InvalidToken', 'The provided token is malformed or otherwise invalid.');
  const now = options.clock.now();
  if (now.getTime() >= session.expiration.getTime())
    throw failure(400, 'ExpiredToken', 'The provided token has expired.');
  const malformed = auth.form === 'header' ? 'AuthorizationHeaderMalformed' : 'AuthorizationQueryParametersError';
  if (auth.service !== 's3')
    throw failure(400, malformed, `The credential scope names service '${auth.service}'; expecting 's3'.`);
  if (auth.region !== options.region)
    throw failure(
      400,
      malformed,
      `The authorization header is malformed; the region '${auth.region}' is wrong; expecting '${options.region}'.`,
    );
  const signedAt = parseAmzDate(auth.amzDate);
  if (!signedAt)
    throw failure(403, 'AccessDenied', "X-Amz-Date must be in the ISO8601 basic format YYYYMMDD'T'HHMMSS'Z'.");
  if (auth.date !== auth.amzDate.slice(0, 8))
    throw failure(400, malformed, 'Invalid credential date. Date is not the same as X-Amz-Date.');
  if (!auth.signedHeaders.includes('host')) throw failure(400, malformed, 'The host header must be signed.');

  const key = signingKey(session.secretAccessKey, auth.date, auth.region, auth.service);
  const canonical = canonicalRequest(shape, auth);
  const toSign = stringToSign(auth, canonical);
  if (!sameSignature(sign(key, toSign), auth.signature)) {
    throw failure(
      403,
      'SignatureDoesNotMatch',
      'The request signature we calculated does not match the signature you provided. Check your key and signing method.',
    );
  }
  if (auth.form === 'header' && Math.abs(now.getTime() - signedAt.getTime()) > MAX_SKEW_MS) {
    throw failure(
      403,
      'RequestTimeTooSkewed',
      'The difference between the request time and the current time is too large.',
    );
  }
  if (auth.form === 'query') {
    if (now.getTime() > signedAt.getTime() + (auth.expires ?? 0) * 1000)
      throw failure(403, 'AccessDenied', 'Request has expired');
    if (signedAt.getTime() - now.getTime() > MAX_SKEW_MS)
      throw failure(403, 'AccessDenied', 'Request is not valid yet');
  }

  // What is asked, and is it in the session policy?
  const questionMark = rawUrl.indexOf('?');
  const rawPath = questionMark >= 0 ? rawUrl.slice(0, questionMark) : rawUrl;
  const rawQuery = questionMark >= 0 ? rawUrl.slice(questionMark + 1) : '';
  const [, rawBucket = '', ...rawKey] = rawPath.split('/');
  const bucket = safeDecode(rawBucket);
  const objectKey = rawKey.map(safeDecode).join('/');
  const query = new URLSearchParams(rawQuery);
  const headers = headerMap(request.rawHeaders);
  const action = withHeaderPermissions(actionFor(method, bucket, objectKey, query), headers);
  if (!ALLOWED_ACTIONS.has(action) || bucket !== session.bucket) {
    throw failure(
      403,
      'AccessDenied',
      `Access Denied: these credentials allow only GetObject, PutObject, DeleteObject and ListBucket on bucket ${session.bucket} (asked: ${action} on ${bucket || 'the service'}).`,
    );
  }
  const copySource = headers.get('x-amz-copy-source');
  if (copySource !== undefined) {
    const source = safeDecode(copySource).replace(/^\//, '').split('/')[0];
    if (source !== session.bucket)
      throw failure(403, 'AccessDenied', 'Access Denied: the copy source is outside the assigned bucket.');
  }

  // How the body is carried.
  const contentSha256 = auth.contentSha256;
  const contentLength = headers.get('content-length');
  const chunked = contentSha256.startsWith('STREAMING-');
  let payload: PayloadMode;
  if (chunked) {
    const known: Record<string, { signed: boolean; trailer: boolean }> = {
      'STREAMING-AWS4-HMAC-SHA256-PAYLOAD': { signed: true, trailer: false },
      'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER': { signed: true, trailer: true },
      'STREAMING-UNSIGNED-PAYLOAD-TRAILER': { signed: false, trailer: true },
    };
    const modeOf = known[contentSha256];
    if (!modeOf)
      throw failure(400, 'InvalidArgument', `x-amz-content-sha256 ${contentSha256} is not supported by this server.`);
    const decoded = Number(headers.get('x-amz-decoded-content-length'));
    if (!Number.isSafeInteger(decoded) || decoded < 0)
      throw failure(411, 'MissingContentLength', 'You must provide the x-amz-decoded-content-length HTTP header.');
    payload = { kind: 'chunked', ...modeOf, decodedLength: decoded, key, auth };
  } else if (/^[0-9a-fA-F]{64}$/.test(contentSha256)) {
    payload = { kind: 'plain', sha256: contentSha256 };
  } else if (contentSha256 === 'UNSIGNED-PAYLOAD') {
    payload = { kind: 'plain' };
  } else {
    throw failure(
      400,
      'InvalidArgument',
      'x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-AWS4-HMAC-SHA256-PAYLOAD, or a valid sha256 value.',
    );
  }
  const hasBody = (contentLength !== undefined && contentLength !== '0') || headers.has('transfer-encoding');
  if (method === 'PUT' && contentLength === undefined && payload.kind !== 'chunked')
    throw failure(411, 'MissingContentLength', 'You must provide the Content-Length HTTP header.');

  const forwardQuery = rawQuery
    .split('&')
    .filter((piece) => piece !== '' && !AUTH_QUERY_PARAMS.has(safeDecode(piece.split('=')[0] ?? '').toLowerCase()))
    .join('&');
  return {
    payload,
    checksum: announcedChecksum(headers),
    forwardPath: rawPath + (forwardQuery ? `?${forwardQuery}` : ''),
    hasBody,
  };
}

/** The IAM action a path-style S3 request needs (those outside the session policy are refused). */
export function actionFor(method: string, bucket: string, key: string, query: URLSearchParams): string {
  const names = [...query.keys()].filter((name) => !AUTH_QUERY_PARAMS.has(name.toLowerCase()));
  const only = (allowed: Set<string>) => names.every((name) => allowed.has(name));
  const first = names.find((name) => !['x-id'].includes(name)) ?? '';
  if (!bucket) return method === 'GET' ? 's3:ListAllMyBuckets' : `s3:${method}Service`;
  if (!key) {
    if (method === 'GET' || method === 'HEAD') return only(LIST_PARAMS) ? 's3:ListBucket' : `s3:GetBucket(${first})`;
    if (method === 'POST' && names.includes('delete')) return 's3:DeleteObject';
    if (method === 'PUT') return names.length === 0 ? 's3:CreateBucket' : `s3:PutBucket(${first})`;
    if (method === 'DELETE') return names.length === 0 ? 's3:DeleteBucket' : `s3:DeleteBucket(${first})`;
    return `s3:${method}Bucket`;
  }
  switch (method) {
    case 'GET':
    case 'HEAD':
      if (names.includes('uploadId')) return 's3:ListMultipartUploadParts';
      return only(GET_OBJECT_PARAMS) ? 's3:GetObject' : `s3:GetObject(${first})`;
    case 'PUT':
      return only(PUT_OBJECT_PARAMS) ? 's3:PutObject' : `s3:PutObject(${first})`;
    case 'POST':
      return only(POST_OBJECT_PARAMS) && (names.includes('uploads') || names.includes('uploadId'))
        ? 's3:PutObject'
        : `s3:PostObject(${first})`;
    case 'DELETE':
      if (names.includes('uploadId')) return 's3:AbortMultipartUpload';
      return only(new Set(['x-id'])) ? 's3:DeleteObject' : `s3:DeleteObject(${first})`;
    default:
      return `s3:${method}Object`;
  }
}

/** A write that sets ACLs, tags or Object Lock settings needs those permissions too (AWS's rule). */
function withHeaderPermissions(action: string, headers: Map<string, string>): string {
  if (action !== 's3:PutObject') return action;
  for (const name of headers.keys()) {
    const needed = HEADER_PERMISSIONS.find(([pattern]) => pattern.test(name));
    if (needed) return needed[1];
  }
  return action;
}

/** The request's id in the request log and for faults: `s3 METHOD /{bucket}/{key}?names`. */
export function routeId(method: string, rawUrl: string): string {
  const url = new URL(rawUrl, 'http://s3.invalid');
  const [, bucket = '', ...key] = url.pathname.split('/');
  const names = [...new Set(url.searchParams.keys())]
    .filter((name) => name !== 'x-id' && !AUTH_QUERY_PARAMS.has(name.toLowerCase()))
    .sort()
    .map((name) => (name === 'partNumber' ? `partNumber=${url.searchParams.get(name)}` : name));
  return `s3 ${method} /${bucket ? '{bucket}' : ''}${key.join('') ? '/{key}' : ''}${names.length > 0 ? `?${names.join('&')}` : ''}`;
}

/** Applies an armed fault; true when it answered (or dropped) the request, false to go on (after a delay). */
async function applyFault(fault: Fault, request: IncomingMessage, response: ServerResponse): Promise<boolean> {
  switch (fault.kind) {
    case 'delay':
      await new Promise((resolve) => setTimeout(resolve, fault.ms));
      return false;
    case 'reset':
      request.socket.destroy();
      return true;
    case 'status':
      await drained(request);
      for (const [name, value] of Object.entries(fault.headers ?? {})) response.setHeader(name, value);
      sendError(request, response, {
        status: fault.status,
        code: FAULT_CODES[fault.status] ?? 'InternalError',
        message: `Injected HTTP ${fault.status} (sandbox fault).`,
      });
      return true;
    case 'malformed':
      await drained(request);
      response.writeHead(200, { 'content-type': fault.contentType ?? 'application/xml' });
      response.end(fault.body ?? '<Error><Code>');
      return true;
    case 'truncated':
      // The gateway streams the server's answer: cut short before any of it (as a reset).
      request.socket.destroy();
      return true;
  }
}

/** Reads and drops the rest of a request body, so that the client reads the answer, not a broken pipe. */
function drained(request: IncomingMessage): Promise<void> {
  return new Promise((resolve) => {
    if (request.complete) return resolve();
    request
      .once('end', resolve)
      .once('error', () => resolve())
      .resume();
  });
}

function proxy(
  request: IncomingMessage,
  response: ServerResponse,
  admitted: Admitted,
  target: { socketPath: string } | { host: string; port: number },
  clock: Clock,
): void {
  const headers: OutgoingHttpHeaders = { host: 'localhost' };
  for (let index = 0; index + 1 < request.rawHeaders.length; index += 2) {
    const name = (request.rawHeaders[index] ?? '').toLowerCase();
    if (DROPPED_HEADERS.has(name)) continue;
    headers[name] = request.rawHeaders[index + 1] ?? '';
  }
  const encoding = (request.headers['content-encoding'] ?? '')
    .split(',')
    .map((value) => value.trim())
    .filter((value) => value !== '' && value.toLowerCase() !== 'aws-chunked');
  if (encoding.length > 0) headers['content-encoding'] = encoding.join(', ');
  const declaredLength =
    admitted.payload.kind === 'chunked'
      ? admitted.payload.decodedLength
      : Number(request.headers['content-length'] ?? '0');
  if (admitted.hasBody || admitted.payload.kind === 'chunked') headers['content-length'] = String(declaredLength);
  else if (request.method === 'PUT' || request.method === 'POST') headers['content-length'] = '0';

  let failed = false;
  const upstream = httpRequest({ ...target, method: request.method, path: admitted.forwardPath, headers }, (answer) => {
    if (failed) {
      answer.resume();
      return;
    }
    response.writeHead(answer.statusCode ?? 502, { ...answer.headers, date: clock.now().toUTCString() });
    pipeline(answer, response, () => undefined);
  });
  upstream.on('error', (error) => {
    if (failed) return;
    failed = true;
    if (!response.headersSent)
      sendError(request, response, {
        status: 502,
        code: 'InternalError',
        message: `The object store did not answer: ${error.message}`,
      });
    else response.destroy();
  });
  if (!admitted.hasBody && admitted.payload.kind !== 'chunked') {
    request.resume();
    upstream.end();
    return;
  }
  const verifier = new PayloadVerifier(admitted.payload, admitted.checksum);
  pipeline(request, verifier, upstream, (error) => {
    if (!error || failed) return;
    failed = true;
    upstream.destroy();
    const body =
      error instanceof S3RequestError
        ? error.failure
        : { status: 400, code: 'IncompleteBody', message: 'The request body could not be read completely.' };
    if (!response.headersSent) sendError(request, response, body);
    else response.destroy();
  });
}

function sendError(
  request: IncomingMessage,
  response: ServerResponse,
  failureBody: { status: number; code: string; message: string },
): void {
  const requestId = randomUUID().replace(/-/g, '').slice(0, 16).toUpperCase();
  const resource = (request.url ?? '/').split('?')[0] ?? '/';
  const xml =
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<Error><Code>${escapeXml(failureBody.code)}</Code><Message>${escapeXml(failureBody.message)}</Message><Resource>${escapeXml(resource)}</Resource><RequestId>${requestId}</RequestId></Error>`;
  const answer = () => {
    response.writeHead(failureBody.status, {
      'content-type': 'application/xml',
      'x-amz-request-id': requestId,
      ...(request.method === 'HEAD' ? {} : { 'content-length': String(Buffer.byteLength(xml)) }),
    });
    response.end(request.method === 'HEAD' ? undefined : xml);
  };
  // The answer waits for the rest of the body: answering first and closing made a client still
  // writing a part see a broken pipe (EPIPE) instead of the error, at random.
  if (request.complete) answer();
  else void drained(request).then(answer);
}

function escapeXml(text: string): string {
  return text.replace(
    /[<>&"']/g,
    (char) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[char] ?? char,
  );
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
