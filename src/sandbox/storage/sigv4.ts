/**
 * AWS Signature Version 4 as S3 checks it, for the sandbox gateway: parsing the Authorization
 * header and presigned query, the canonical request, the signing key, and the per-chunk signatures
 * of `aws-chunked` bodies. Only verification lives here; the gateway decides what to do about it.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export const ALGORITHM = 'AWS4-HMAC-SHA256';
export const EMPTY_SHA256 = createHash('sha256').digest('hex');

/** What a request claims about who signed it and how. */
export interface SignedRequestAuth {
  form: 'header' | 'query';
  accessKeyId: string;
  /** `YYYYMMDD/region/service/aws4_request` */
  scope: string;
  date: string;
  region: string;
  service: string;
  /** `YYYYMMDDTHHMMSSZ` */
  amzDate: string;
  signedHeaders: string[];
  signature: string;
  /** Seconds a presigned URL is valid (query form only). */
  expires?: number;
  sessionToken?: string;
  /** The payload hash the signature covers: hex, `UNSIGNED-PAYLOAD`, or a `STREAMING-…` mode. */
  contentSha256: string;
}

export class AuthParseError extends Error {
  constructor(
    readonly code:
      | 'AccessDenied'
      | 'InvalidRequest'
      | 'AuthorizationHeaderMalformed'
      | 'AuthorizationQueryParametersError'
      | 'InvalidArgument',
    message: string,
  ) {
    super(message);
  }
}

export interface RequestShape {
  method: string;
  /** The raw request target, path and query as sent. */
  rawUrl: string;
  /** Node's `rawHeaders`: name, value, name, value… */
  rawHeaders: string[];
}

/** Reads the SigV4 claims from a request; undefined for an anonymous one. */
export function parseAuth(request: RequestShape): SignedRequestAuth | undefined {
  const headers = headerMap(request.rawHeaders);
  const query = new URL(request.rawUrl, 'http://s3.invalid').searchParams;
  const authorization = headers.get('authorization');
  const hasQuery = query.has('X-Amz-Algorithm') || query.has('X-Amz-Signature');
  if (authorization !== undefined && hasQuery)
    throw new AuthParseError(
      'InvalidArgument',
      'Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter or the Authorization header should be specified.',
    );
  if (
    query.has('Signature') ||
    query.has('AWSAccessKeyId') ||
    (authorization !== undefined && /^AWS\s/.test(authorization))
  ) {
    throw new AuthParseError(
      'InvalidRequest',
      'The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256.',
    );
  }
  if (authorization !== undefined) {
    const match = /^AWS4-HMAC-SHA256\s+(.*)$/s.exec(authorization.trim());
    if (!match?.[1])
      throw new AuthParseError(
        'InvalidRequest',
        'The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256.',
      );
    const parts = new Map<string, string>();
    for (const piece of match[1].split(',')) {
      const at = piece.indexOf('=');
      if (at > 0) parts.set(piece.slice(0, at).trim(), piece.slice(at + 1).trim());
    }
    const credential = parts.get('Credential');
    const signedHeaders = parts.get('SignedHeaders');
    const signature = parts.get('Signature');
    if (!credential || !signedHeaders || !signature)
      throw new AuthParseError(
        'AuthorizationHeaderMalformed',
        'The authorization header is malformed; it needs Credential, SignedHeaders and Signature.',
      );
    const amzDate = headers.get('x-amz-date');
    if (!amzDate)
      throw new AuthParseError('AccessDenied', 'AWS authentication requires a valid Date or x-amz-date header');
    const contentSha256 = headers.get('x-amz-content-sha256');
    if (!contentSha256)
      throw new AuthParseError('InvalidRequest', 'Missing required header for this request: x-amz-content-sha256');
    return {
      form: 'header',
      ...splitCredential(credential, 'AuthorizationHeaderMalformed'),
      amzDate,
      signedHeaders: signedHeaders.split(';'),
      signature,
      sessionToken: headers.get('x-amz-security-token'),
      contentSha256,
    };
  }
  if (hasQuery) {
    const need = (name: string): string => {
      const value = query.get(name);
      if (!value)
        throw new AuthParseError(
          'AuthorizationQueryParametersError',
          `Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters; ${name} is missing.`,
        );
      return value;
    };
    if (need('X-Amz-Algorithm') !== ALGORITHM)
      throw new AuthParseError('AuthorizationQueryParametersError', 'X-Amz-Algorithm only supports "AWS4-HMAC-SHA256"');
    const expires = Number(need('X-Amz-Expires'));
    if (!Number.isInteger(expires) || expires < 1 || expires > 604_800)
      throw new AuthParseError(
        'AuthorizationQueryParametersError',
        'X-Amz-Expires must be between 1 and 604800 seconds',
      );
    return {
      form: 'query',
      ...splitCredential(need('X-Amz-Credential'), 'AuthorizationQueryParametersError'),
      amzDate: need('X-Amz-Date'),
      signedHeaders: need('X-Amz-SignedHeaders').split(';'),
      signature: need('X-Amz-Signature'),
      expires,
      sessionToken: query.get('X-Amz-Security-Token') ?? undefined,
      contentSha256: query.get('X-Amz-Content-Sha256') ?? headers.get('x-amz-content-sha256') ?? 'UNSIGNED-PAYLOAD',
    };
  }
  return undefined;
}

function splitCredential(
  credential: string,
  code: 'AuthorizationHeaderMalformed' | 'AuthorizationQueryParametersError',
) {
  const [accessKeyId, date, region, service, terminator, ...rest] = credential.split('/');
  if (!accessKeyId || !date || !region || !service || terminator !== 'aws4_request' || rest.length > 0) {
    throw new AuthParseError(
      code,
      `The credential is malformed; expecting "<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request".`,
    );
  }
  return { accessKeyId, date, region, service, scope: `${date}/${region}/${service}/aws4_request` };
}

/** Header values by lower-case name, repeated headers joined with commas (as SigV4 wants). */
export function headerMap(rawHeaders: string[]): Map<string, string> {
  const map = new Map<string, string>();
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
    const name = (rawHeaders[index] ?? '').toLowerCase();
    const value = rawHeaders[index + 1] ?? '';
    const previous = map.get(name);
    map.set(name, previous === undefined ? value : `${previous},${value}`);
  }
  return map;
}

/** RFC 3986 encoding as SigV4 uses it: everything but unreserved characters, upper-case hex. */
export function uriEncode(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The canonical request of S3's SigV4 (no path normalization, each path segment encoded once). */
export function canonicalRequest(request: RequestShape, auth: SignedRequestAuth): string {
  const questionMark = request.rawUrl.indexOf('?');
  const rawPath = questionMark >= 0 ? request.rawUrl.slice(0, questionMark) : request.rawUrl;
  const rawQuery = questionMark >= 0 ? request.rawUrl.slice(questionMark + 1) : '';
  const canonicalUri =
    rawPath
      .split('/')
      .map((segment) => uriEncode(safeDecode(segment)))
      .join('/') || '/';
  const pairs: Array<[string, string]> = [];
  for (const piece of rawQuery.split('&')) {
    if (piece === '') continue;
    const at = piece.indexOf('=');
    const name = safeDecode((at >= 0 ? piece.slice(0, at) : piece).replace(/\+/g, '%20'));
    const value = at >= 0 ? safeDecode(piece.slice(at + 1).replace(/\+/g, '%20')) : '';
    if (auth.form === 'query' && name === 'X-Amz-Signature') continue;
    pairs.push([uriEncode(name), uriEncode(value)]);
  }
  pairs.sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0));
  const canonicalQuery = pairs.map(([name, value]) => `${name}=${value}`).join('&');
  const headers = headerMap(request.rawHeaders);
  const canonicalHeaders = auth.signedHeaders
    .map((name) => `${name}:${(headers.get(name) ?? '').trim().replace(/\s+/g, ' ')}\n`)
    .join('');
  const payload =
    auth.form === 'query' ? auth.contentSha256 : (headers.get('x-amz-content-sha256') ?? auth.contentSha256);
  return [request.method, canonicalUri, canonicalQuery, canonicalHeaders, auth.signedHeaders.join(';'), payload].join(
    '\n',
  );
}

export function stringToSign(auth: SignedRequestAuth, canonical: string): string {
  return [ALGORITHM, auth.amzDate, auth.scope, sha256Hex(canonical)].join('\n');
}

export function signingKey(secret: string, date: string, region: string, service: string): Buffer {
  const dateKey = hmac(`AWS4${secret}`, date);
  return hmac(hmac(hmac(dateKey, region), service), 'aws4_request');
}

/** The signature of one `aws-chunked` chunk (or, with `trailer`, of the trailing headers). */
export function chunkSignature(
  key: Buffer,
  auth: SignedRequestAuth,
  previousSignature: string,
  dataSha256Hex: string,
  trailer = false,
): string {
  const text = trailer
    ? ['AWS4-HMAC-SHA256-TRAILER', auth.amzDate, auth.scope, previousSignature, dataSha256Hex].join('\n')
    : ['AWS4-HMAC-SHA256-PAYLOAD', auth.amzDate, auth.scope, previousSignature, EMPTY_SHA256, dataSha256Hex].join('\n');
  return hmac(key, text).toString('hex');
}

export function sign(key: Buffer, text: string): string {
  return hmac(key, text).toString('hex');
}

export function sameSignature(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

/** `YYYYMMDDTHHMMSSZ` → Date, or undefined. */
export function parseAmzDate(text: string): Date | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text);
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s] = match;
  const date = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)));
  return Number.isNaN(date.getTime()) ? undefined : date;
}

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

function hmac(key: string | Buffer, text: string): Buffer {
  return createHmac('sha256', key).update(text, 'utf8').digest();
}
