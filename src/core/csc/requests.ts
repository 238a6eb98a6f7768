/**
 * Request builders for the remote signing service: the authorization URL, the token request and
 * the `/csc/v1/*` calls. Pure: they return what to send; `src/io/csc-client.ts` sends it.
 */
import { createHash, createHmac } from 'node:crypto';
import { DIGEST_OID, digestOfLength } from '../cms/algorithms.js';
import { EsignError } from '../errors.js';
import type { ClientAuthSetting, HashEncodingSetting, TokenRequestSetting } from '../profile.js';
import {
  CSC_SIGN_ALGO_RSA,
  MAX_HASHES_PER_AUTHORIZATION,
  MAX_HASHES_PER_CREDENTIAL_AUTHORIZATION,
  MAX_STATE_BYTES,
  type PreparedRequest,
} from './shapes.js';

interface AuthorizeCommon {
  baseUrl: string;
  clientId: string;
  redirectUri: string;
  state: string;
  lang?: string;
  /** PKCE S256 challenge; sent always, harmless to a service that ignores it. */
  codeChallenge?: string;
  /** The authorization endpoint when it is not {baseUrl}/oauth2/authorize (a setting, or the server's metadata). */
  authorizeUrl?: string;
  /** How the hashes of scope credential are encoded: base64url (the specification) unless a provider wants base64. */
  hashEncoding?: HashEncodingSetting;
  /** A CSC account_token (§8.3.1), for services that restrict their authorization server. */
  accountToken?: string;
}

export type AuthorizeParams =
  | (AuthorizeCommon & { scope: 'service' })
  | (AuthorizeCommon & { scope: 'credential'; credentialID: string; hashes: Uint8Array[] });

/** `GET {base}/oauth2/authorize` for scope `service` or `credential` (hashes base64url, comma-separated). */
export function buildAuthorizeUrl(params: AuthorizeParams): string {
  return authorizeUrlWith(params, (query, hashes) => query.set('hash', encodeHashes(hashes, params.hashEncoding)));
}

/** Hashes for an authorization URL, comma-separated: base64url as the specification says (§8.3.2), or base64. */
export function encodeHashes(hashes: Uint8Array[], encoding: HashEncodingSetting = 'base64url'): string {
  return hashes.map((hash) => Buffer.from(hash).toString(encoding)).join(',');
}

/** The authorization URL both dialects share; `putHashes` writes the hashes of scope credential in the dialect's way. */
export function authorizeUrlWith(
  params: AuthorizeParams,
  putHashes: (query: URLSearchParams, hashes: Uint8Array[]) => void,
): string {
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
  if (params.accountToken) query.set('account_token', params.accountToken);
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
  const target = new URL(params.authorizeUrl ?? endpoint(params.baseUrl, '/oauth2/authorize'));
  // An endpoint given whole may carry a query of its own: esign's parameters join it.
  for (const [name, value] of query) target.searchParams.append(name, value);
  return target.toString();
}

/**
 * The CSC account_token (§8.3.1): a JWT `{typ: JWT, alg: HS256}` over `{sub, iat, jti, iss, azp}`,
 * its HMAC-SHA256 keyed by the SHA-256 digest of the client secret.
 */
export function buildAccountToken(params: {
  accountId: string;
  clientId: string;
  clientSecret: string;
  issuedAtS: number;
  jti: string;
  issuer?: string;
}): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
  const header = part({ typ: 'JWT', alg: 'HS256' });
  const payload = part({
    sub: params.accountId,
    iat: params.issuedAtS,
    jti: params.jti,
    ...(params.issuer ? { iss: params.issuer } : {}),
    azp: params.clientId,
  });
  const key = createHash('sha256').update(params.clientSecret, 'utf8').digest();
  const signature = createHmac('sha256', key).update(`${header}.${payload}`).digest('base64url');
  return `${header}.${payload}.${signature}`;
}

/** How esign talks to a token endpoint: where it is, and the body and client authentication the provider wants. */
export interface TokenEndpoint {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  /** HTTP Basic (RFC 6749 §2.3.1, the default), client_secret in the body, or client_id alone. */
  clientAuth?: ClientAuthSetting;
  /** Also put the secret in the body beside HTTP Basic (clientSecretInBody). */
  clientSecretInBody?: boolean;
  /** A form (RFC 6749, the default) or a JSON object. */
  encoding?: TokenRequestSetting;
}

/** `POST {token endpoint}` with one grant's parameters, the client authenticated as the endpoint wants. */
export function buildTokenEndpointRequest(to: TokenEndpoint, grant: Record<string, string>): PreparedRequest {
  const clientAuth = to.clientAuth ?? 'basic';
  const fields: Record<string, string> = { ...grant, client_id: to.clientId };
  if (clientAuth === 'body' || (clientAuth === 'basic' && to.clientSecretInBody))
    fields['client_secret'] = to.clientSecret;
  const json = to.encoding === 'json';
  return {
    method: 'POST',
    url: to.tokenUrl,
    headers: {
      'content-type': json ? 'application/json' : 'application/x-www-form-urlencoded',
      ...(clientAuth === 'basic' ? { authorization: basicAuthorization(to.clientId, to.clientSecret) } : {}),
      accept: 'application/json',
    },
    body: json ? JSON.stringify(fields) : new URLSearchParams(fields).toString(),
  };
}

export interface TokenRequestParams extends Omit<TokenEndpoint, 'tokenUrl'> {
  baseUrl: string;
  code: string;
  redirectUri: string;
  codeVerifier?: string;
  /** CSC v2: the RFC 9396 authorization_details the code was approved for, repeated. */
  authorizationDetails?: string;
  /** The token endpoint, when a setting or the server's metadata names it; else {baseUrl}/oauth2/token. */
  tokenUrl?: string;
}

/** `POST {base}/oauth2/token` with grant_type authorization_code: form body, client authenticated with HTTP Basic unless the endpoint wants otherwise. */
export function buildTokenRequest(params: TokenRequestParams): PreparedRequest {
  const grant: Record<string, string> = {
    grant_type: 'authorization_code',
    code: params.code,
    redirect_uri: params.redirectUri,
  };
  if (params.codeVerifier) grant['code_verifier'] = params.codeVerifier;
  if (params.authorizationDetails) grant['authorization_details'] = params.authorizationDetails;
  return buildTokenEndpointRequest(
    { ...params, tokenUrl: params.tokenUrl ?? endpoint(params.baseUrl, '/oauth2/token') },
    grant,
  );
}

/**
 * grant_type client_credentials (RFC 6749 §4.4; CSC §8.3.3): the client signs in as itself, with
 * no browser, for scope service.
 */
export function buildClientCredentialsTokenRequest(to: TokenEndpoint): PreparedRequest {
  return buildTokenEndpointRequest(to, { grant_type: 'client_credentials', scope: 'service' });
}

/** grant_type password (RFC 6749 §4.3), scope service: the user's name and password, for providers that offer it to unattended clients. */
export function buildPasswordTokenRequest(
  to: TokenEndpoint,
  login: { username: string; password: string },
): PreparedRequest {
  return buildTokenEndpointRequest(to, {
    grant_type: 'password',
    username: login.username,
    password: login.password,
    scope: 'service',
  });
}

/**
 * `POST {base}/csc/v{1|2}/auth/login` (§11.2): the user's name and password in HTTP Basic, or the
 * refresh token a previous login returned; rememberMe asks for such a token.
 */
export function buildAuthLoginRequest(
  baseUrl: string,
  version: CscPathVersion | 2,
  login: { username: string; password: string } | { refreshToken: string },
): PreparedRequest {
  const path = `/csc/v${version}/auth/login`;
  if ('refreshToken' in login)
    return jsonRequest(baseUrl, path, undefined, { refresh_token: login.refreshToken, rememberMe: true });
  const request = jsonRequest(baseUrl, path, undefined, { rememberMe: true });
  // RFC 7617: user-id and password joined by a colon, UTF-8, base64 (no form encoding here).
  request.headers['authorization'] =
    `Basic ${Buffer.from(`${login.username}:${login.password}`, 'utf8').toString('base64')}`;
  return request;
}

export interface CredentialAuthorizeParams {
  baseUrl: string;
  /** The service token; none when the service is authorized by other means (external). */
  accessToken: string | undefined;
  credentialID: string;
  hashes: Uint8Array[];
  pin?: string;
  otp?: string;
  /** v1.0.4 field names on `/csc/v0/` (the CSC 0.x paths some providers kept) or `/csc/v1/`. */
  pathVersion?: CscPathVersion;
}

/** The path of the v1.0.4 field names: `/csc/v1/` as specified, or `/csc/v0/` where a provider kept CSC 0.x paths. */
export type CscPathVersion = 0 | 1;

/** `POST {base}/csc/v1/credentials/authorize` (§11.6): numSignatures, the hashes (standard base64), PIN and OTP. */
export function buildCredentialsAuthorizeRequest(params: CredentialAuthorizeParams): PreparedRequest {
  checkHashes(params.hashes, MAX_HASHES_PER_CREDENTIAL_AUTHORIZATION);
  const body: Record<string, unknown> = {
    credentialID: params.credentialID,
    numSignatures: params.hashes.length,
    hash: params.hashes.map((hash) => Buffer.from(hash).toString('base64')),
    ...(params.pin === undefined ? {} : { PIN: params.pin }),
    ...(params.otp === undefined ? {} : { OTP: params.otp }),
  };
  return jsonRequest(
    params.baseUrl,
    `/csc/v${params.pathVersion ?? 1}/credentials/authorize`,
    params.accessToken,
    body,
  );
}

/** `POST {base}/csc/v1/credentials/extendTransaction` (v1.0.4 §11.7; `/csc/v0/` for cscVersion 0): a new SAD for the current one, bound to the hashes (standard base64). */
export function buildExtendTransactionRequest(params: {
  baseUrl: string;
  pathVersion?: CscPathVersion;
  accessToken: string | undefined;
  credentialID: string;
  sad: string;
  hashes: Uint8Array[];
}): PreparedRequest {
  checkHashes(params.hashes, MAX_HASHES_PER_CREDENTIAL_AUTHORIZATION);
  const body = {
    credentialID: params.credentialID,
    hash: params.hashes.map((hash) => Buffer.from(hash).toString('base64')),
    SAD: params.sad,
  };
  return jsonRequest(
    params.baseUrl,
    `/csc/v${params.pathVersion ?? 1}/credentials/extendTransaction`,
    params.accessToken,
    body,
  );
}

/** `POST {base}/csc/v{1|2}/credentials/sendOTP` (§11.8). */
export function buildSendOtpRequest(
  baseUrl: string,
  version: CscPathVersion | 2,
  accessToken: string | undefined,
  credentialID: string,
): PreparedRequest {
  return jsonRequest(baseUrl, `/csc/v${version}/credentials/sendOTP`, accessToken, { credentialID });
}

export function buildCredentialsListRequest(
  baseUrl: string,
  accessToken: string | undefined,
  options: { maxResults?: number; pageToken?: string; clientData?: string; pathVersion?: CscPathVersion } = {},
): PreparedRequest {
  const body: Record<string, unknown> = {};
  if (options.maxResults !== undefined) body['maxResults'] = options.maxResults;
  if (options.pageToken !== undefined) body['pageToken'] = options.pageToken;
  if (options.clientData !== undefined) body['clientData'] = options.clientData;
  return jsonRequest(baseUrl, `/csc/v${options.pathVersion ?? 1}/credentials/list`, accessToken, body);
}

/**
 * `credentials/info` (§11.5) asking for everything esign uses: the whole chain (the default is the
 * signer's certificate alone), the certificate's details and the PIN and OTP groups (absent unless asked).
 */
export function buildCredentialsInfoRequest(
  baseUrl: string,
  accessToken: string | undefined,
  credentialID: string,
  options: { certInfo?: boolean; pathVersion?: CscPathVersion } = {},
): PreparedRequest {
  return jsonRequest(baseUrl, `/csc/v${options.pathVersion ?? 1}/credentials/info`, accessToken, {
    credentialID,
    ...CREDENTIAL_INFO_WANTED,
    ...(options.certInfo === false ? { certInfo: false } : {}),
  });
}

/** What both dialects ask `credentials/info` (and v2 `credentials/list`) for. */
export const CREDENTIAL_INFO_WANTED = { certificates: 'chain', certInfo: true, authInfo: true } as const;

export interface SignHashParams {
  baseUrl: string;
  accessToken: string | undefined;
  credentialID: string;
  sad: string;
  hashes: Uint8Array[];
  clientData?: string;
  /** One of the credential's key/algo; rsaEncryption when absent. */
  signAlgo?: string;
  /** Base64 DER parameters of the signature algorithm (RSASSA-PSS). */
  signAlgoParams?: string;
  pathVersion?: CscPathVersion;
}

/**
 * `POST {base}/csc/v1/signatures/signHash`: hashes in standard base64, `hashAlgo` naming their
 * digest (sent also where signAlgo implies it, which v1.0.4 lets the service ignore).
 */
export function buildSignHashRequest(params: SignHashParams): PreparedRequest {
  const hashAlgo = hashAlgorithmOf(params.hashes, MAX_HASHES_PER_CREDENTIAL_AUTHORIZATION);
  const body: Record<string, unknown> = {
    credentialID: params.credentialID,
    SAD: params.sad,
    hash: params.hashes.map((hash) => Buffer.from(hash).toString('base64')),
    hashAlgo,
    signAlgo: params.signAlgo ?? CSC_SIGN_ALGO_RSA,
    ...(params.signAlgoParams === undefined ? {} : { signAlgoParams: params.signAlgoParams }),
  };
  if (params.clientData !== undefined) body['clientData'] = params.clientData;
  return jsonRequest(params.baseUrl, `/csc/v${params.pathVersion ?? 1}/signatures/signHash`, params.accessToken, body);
}

/** At most `limit` SHA-2 values of one digest: 50 for a browser approval, a seal's multisign (≤ 1,000) for credentials/authorize and signHash. */
export function checkHashes(hashes: Uint8Array[], limit = MAX_HASHES_PER_AUTHORIZATION): void {
  if (hashes.length === 0)
    throw new EsignError('CSC_INVALID_REQUEST', 'There is nothing to sign: no hashes were given.');
  if (hashes.length > limit) {
    throw new EsignError(
      'CSC_TOO_MANY_HASHES',
      `${hashes.length} hashes cannot be authorized at once; the service allows at most ${limit}.`,
      {
        hint: `Sign at most ${limit} documents per approval.`,
      },
    );
  }
  const length = hashes[0]!.length;
  for (const hash of hashes) {
    if (digestOfLength(hash.length) === undefined)
      throw new EsignError(
        'CSC_INVALID_REQUEST',
        `A hash to sign is ${hash.length} bytes long; SHA-256, SHA-384 and SHA-512 give 32, 48 and 64.`,
      );
    if (hash.length !== length)
      throw new EsignError('CSC_INVALID_REQUEST', 'The hashes of one request come from different digest algorithms.');
  }
}

/** The hash algorithm OID of checked hashes (one SHA-2 digest, told by their length). */
export function hashAlgorithmOf(hashes: Uint8Array[], limit = MAX_HASHES_PER_AUTHORIZATION): string {
  checkHashes(hashes, limit);
  return DIGEST_OID[digestOfLength(hashes[0]!.length)!];
}

export function jsonRequest(
  baseUrl: string,
  path: string,
  accessToken: string | undefined,
  body: Record<string, unknown>,
): PreparedRequest {
  return {
    method: 'POST',
    url: endpoint(baseUrl, path),
    headers: {
      'content-type': 'application/json',
      ...(accessToken === undefined ? {} : { authorization: `Bearer ${accessToken}` }),
      accept: 'application/json',
    },
    body: JSON.stringify(body),
  };
}

export function endpoint(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${path}`;
}

/** HTTP Basic client authentication, each part form-encoded first (RFC 6749 §2.3.1). */
function basicAuthorization(clientId: string, clientSecret: string): string {
  return `Basic ${Buffer.from(`${formEncode(clientId)}:${formEncode(clientSecret)}`, 'utf8').toString('base64')}`;
}

/** application/x-www-form-urlencoded encoding of one value (RFC 6749 Appendix B). */
function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}
