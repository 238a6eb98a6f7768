/**
 * Request builders for the remote signing service: the authorization URL, the token request and
 * the `/csc/v1/*` calls. Pure: they return what to send; `src/io/csc-client.ts` sends it.
 */
import { DIGEST_OID, digestOfLength } from '../cms/algorithms.js';
import { EsignError } from '../errors.js';
import { CSC_SIGN_ALGO_RSA, MAX_HASHES_PER_AUTHORIZATION, MAX_STATE_BYTES, type PreparedRequest } from './shapes.js';

interface AuthorizeCommon {
  baseUrl: string;
  clientId: string;
  redirectUri: string;
  state: string;
  lang?: string;
  /** PKCE S256 challenge; sent always, harmless to a service that ignores it. */
  codeChallenge?: string;
}

export type AuthorizeParams =
  | (AuthorizeCommon & { scope: 'service' })
  | (AuthorizeCommon & { scope: 'credential'; credentialID: string; hashes: Uint8Array[] });

/** `GET {base}/oauth2/authorize` for scope `service` or `credential` (hashes base64url, comma-separated). */
export function buildAuthorizeUrl(params: AuthorizeParams): string {
  return authorizeUrlWith(params, (query, hashes) => query.set('hash', hashes.map((hash) => Buffer.from(hash).toString('base64url')).join(',')));
}

/** The authorization URL both dialects share; `putHashes` writes the hashes of scope credential in the dialect's way. */
export function authorizeUrlWith(params: AuthorizeParams, putHashes: (query: URLSearchParams, hashes: Uint8Array[]) => void): string {
  if (Buffer.byteLength(params.state, 'utf8') > MAX_STATE_BYTES) {
    throw new EsignError('INTERNAL', `The OAuth state is longer than ${MAX_STATE_BYTES} bytes.`);
  }
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: params.clientId,
    redirect_uri: params.redirectUri,
    scope: params.scope,
    state: params.state,
  });
  if (params.lang) query.set('lang', params.lang);
  if (params.codeChallenge) {
    query.set('code_challenge', params.codeChallenge);
    query.set('code_challenge_method', 'S256');
  }
  if (params.scope === 'credential') {
    checkHashes(params.hashes);
    query.set('credentialID', params.credentialID);
    query.set('numSignatures', String(params.hashes.length));
    putHashes(query, params.hashes);
  }
  return `${endpoint(params.baseUrl, '/oauth2/authorize')}?${query.toString()}`;
}

export interface TokenRequestParams {
  baseUrl: string;
  code: string;
  redirectUri: string;
  clientId: string;
  clientSecret: string;
  codeVerifier?: string;
  /** Also put the secret in the form, for services that want it there as well as in Basic. */
  clientSecretInBody?: boolean;
  /** CSC v2: the RFC 9396 authorization_details the code was approved for, repeated. */
  authorizationDetails?: string;
}

/** `POST {base}/oauth2/token`: form body, client authenticated with HTTP Basic (RFC 6749 §2.3.1). */
export function buildTokenRequest(params: TokenRequestParams): PreparedRequest {
  const form = new URLSearchParams({
    grant_type: 'authorization_code',
    code: params.code,
    client_id: params.clientId,
    redirect_uri: params.redirectUri,
  });
  if (params.codeVerifier) form.set('code_verifier', params.codeVerifier);
  if (params.clientSecretInBody) form.set('client_secret', params.clientSecret);
  if (params.authorizationDetails) form.set('authorization_details', params.authorizationDetails);
  const basic = Buffer.from(`${formEncode(params.clientId)}:${formEncode(params.clientSecret)}`, 'utf8').toString('base64');
  return {
    method: 'POST',
    url: endpoint(params.baseUrl, '/oauth2/token'),
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${basic}`, accept: 'application/json' },
    body: form.toString(),
  };
}

export function buildCredentialsListRequest(
  baseUrl: string,
  accessToken: string,
  options: { maxResults?: number; pageToken?: string; clientData?: string } = {},
): PreparedRequest {
  const body: Record<string, unknown> = {};
  if (options.maxResults !== undefined) body['maxResults'] = options.maxResults;
  if (options.pageToken !== undefined) body['pageToken'] = options.pageToken;
  if (options.clientData !== undefined) body['clientData'] = options.clientData;
  return jsonRequest(baseUrl, '/csc/v1/credentials/list', accessToken, body);
}

export function buildCredentialsInfoRequest(baseUrl: string, accessToken: string, credentialID: string): PreparedRequest {
  return jsonRequest(baseUrl, '/csc/v1/credentials/info', accessToken, { credentialID });
}

export interface SignHashParams {
  baseUrl: string;
  accessToken: string;
  credentialID: string;
  sad: string;
  hashes: Uint8Array[];
  clientData?: string;
  /** One of the credential's key/algo; rsaEncryption when absent. */
  signAlgo?: string;
  /** Base64 DER parameters of the signature algorithm (RSASSA-PSS). */
  signAlgoParams?: string;
}

/**
 * `POST {base}/csc/v1/signatures/signHash`: hashes in standard base64, `hashAlgo` naming their
 * digest (sent also where signAlgo implies it, which v1.0.4 lets the service ignore).
 */
export function buildSignHashRequest(params: SignHashParams): PreparedRequest {
  const hashAlgo = hashAlgorithmOf(params.hashes);
  const body: Record<string, unknown> = {
    credentialID: params.credentialID,
    SAD: params.sad,
    hash: params.hashes.map((hash) => Buffer.from(hash).toString('base64')),
    hashAlgo,
    signAlgo: params.signAlgo ?? CSC_SIGN_ALGO_RSA,
    ...(params.signAlgoParams === undefined ? {} : { signAlgoParams: params.signAlgoParams }),
  };
  if (params.clientData !== undefined) body['clientData'] = params.clientData;
  return jsonRequest(params.baseUrl, '/csc/v1/signatures/signHash', params.accessToken, body);
}

export function checkHashes(hashes: Uint8Array[]): void {
  if (hashes.length === 0) throw new EsignError('CSC_INVALID_REQUEST', 'There is nothing to sign: no hashes were given.');
  if (hashes.length > MAX_HASHES_PER_AUTHORIZATION) {
    throw new EsignError('CSC_TOO_MANY_HASHES', `${hashes.length} hashes cannot be authorized at once; the service allows at most ${MAX_HASHES_PER_AUTHORIZATION}.`, {
      hint: `Sign at most ${MAX_HASHES_PER_AUTHORIZATION} documents per approval.`,
    });
  }
  const length = hashes[0]!.length;
  for (const hash of hashes) {
    if (digestOfLength(hash.length) === undefined) throw new EsignError('CSC_INVALID_REQUEST', `A hash to sign is ${hash.length} bytes long; SHA-256, SHA-384 and SHA-512 give 32, 48 and 64.`);
    if (hash.length !== length) throw new EsignError('CSC_INVALID_REQUEST', 'The hashes of one request come from different digest algorithms.');
  }
}

/** The hash algorithm OID of checked hashes (one SHA-2 digest, told by their length). */
export function hashAlgorithmOf(hashes: Uint8Array[]): string {
  checkHashes(hashes);
  return DIGEST_OID[digestOfLength(hashes[0]!.length)!];
}

export function jsonRequest(baseUrl: string, path: string, accessToken: string | undefined, body: Record<string, unknown>): PreparedRequest {
  return {
    method: 'POST',
    url: endpoint(baseUrl, path),
    headers: { 'content-type': 'application/json', ...(accessToken === undefined ? {} : { authorization: `Bearer ${accessToken}` }), accept: 'application/json' },
    body: JSON.stringify(body),
  };
}

export function endpoint(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${path}`;
}

/** application/x-www-form-urlencoded encoding of one value (RFC 6749 Appendix B). */
function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}
