/**
 * The identity service (seed 001) over HTTP: metadata (discovery, else the profile's issuer and
 * JWKS URL), the authorization code flow with state, nonce and PKCE S256 through the loopback
 * receiver, the ID token validated per OpenID Connect Core 3.1.3.7 with jose, and userinfo from the
 * legacy host with the same `sub`. The session goes to the token store (0600). Tokens, codes and
 * secrets are never logged or printed.
 */
import { randomBytes } from 'node:crypto';
import { EsignError, isEsignError } from '../core/errors.js';
import type { Clock } from '../core/ports.js';
import { buildIdentityAuthorizeUrl, identityAuthorizeError } from '../core/oidc/authorize.js';
import { normalizeScopes, parseProof, type ProofItem } from '../core/oidc/claims.js';
import {
  checkIdTokenClaims,
  checkUserinfoSubject,
  ID_TOKEN_ALGORITHMS,
  type IdTokenClaims,
} from '../core/oidc/id-token.js';
import { codeChallengeS256, verifierFromBytes } from '../core/oidc/pkce.js';
import { processIdentityTokenResponse, type IdentityTokens } from '../core/oidc/token-response.js';
import { responseJson, type HttpClient } from './http.js';
import type { StoredToken, TokenStore } from './token-store.js';

const SERVICE = 'identity service';
/** Used when the token response leaves `expires_in` out (seed §8: 3600 s in samples). */
const DEFAULT_ACCESS_TOKEN_LIFETIME_S = 3600;

/** One browser step, as `Context.authorize` runs it through the loopback receiver. */
export type IdentityBrowserAuthorize = (request: {
  buildAuthorizeUrl(redirectUri: string, state: string): string;
  purpose: string;
}) => Promise<{ code: string; redirectUri: string }>;

export interface IdentityClientOptions {
  /** `{base_url}`: authorize and token (and the discovery document, when the service has one). */
  baseUrl: string;
  /** `{legacy_base_url}`: `/userinfo`. */
  legacyBaseUrl?: string;
  clientId: string;
  clientSecret: string;
  clientSecretInBody?: boolean;
  /** Expected issuer and JWKS URL when there is no discovery document (profile identityIssuer, jwksUri). */
  issuer?: string;
  jwksUri?: string;
  http: HttpClient;
  clock: Clock;
  authorize: IdentityBrowserAuthorize;
}

export interface IdentityMetadata {
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  jwksUri: string;
  userinfoEndpoint?: string;
  idTokenAlgorithms: string[];
  source: 'discovery' | 'profile';
}

export interface ProofSummary {
  id: string;
  content_type: string;
  size: number;
}

/** What `tokens.json` keeps about a login (under `${profile}:identity`), besides the access token. */
export interface IdentitySessionExtra {
  kind: 'identity-session';
  issuer: string;
  clientId: string;
  sub: string;
  /** Scopes asked for and granted (the storage service needs `com.vendor.storage` in `scope`). */
  requestedScopes: string[];
  scope: string[];
  /** The validated ID token's claims. */
  idToken: IdTokenClaims;
  /** Userinfo claims; proof contents are not kept (see `proof`). */
  claims: Record<string, unknown>;
  proof?: ProofSummary[];
  /** Epoch milliseconds. */
  createdAt: number;
}

export interface IdentitySession extends StoredToken {
  expiresAt: number;
  extra: IdentitySessionExtra & Record<string, unknown>;
}

export interface LoginResult {
  session: IdentitySession;
  /** The whole userinfo answer, proof contents included (for --save-proof); never stored. */
  userinfo: Record<string, unknown>;
  proof?: ProofItem[];
  tokens: IdentityTokens;
}

export function identitySessionKey(profileName: string): string {
  return `${profileName}:identity`;
}

/** The stored identity session of a profile, if there is one. */
export async function readIdentitySession(
  tokens: TokenStore,
  profileName: string,
): Promise<IdentitySession | undefined> {
  const stored = await tokens.get(identitySessionKey(profileName));
  if (!stored || stored.extra?.['kind'] !== 'identity-session' || typeof stored.expiresAt !== 'number')
    return undefined;
  return stored as IdentitySession;
}

export class IdentityClient {
  private metadataPromise: Promise<IdentityMetadata> | undefined;

  constructor(private readonly options: IdentityClientOptions) {}

  /** The discovery document when the service publishes one; otherwise the profile's issuer and JWKS URL. */
  metadata(): Promise<IdentityMetadata> {
    this.metadataPromise ??= this.loadMetadata();
    return this.metadataPromise;
  }

  private async loadMetadata(): Promise<IdentityMetadata> {
    const base = this.options.baseUrl.replace(/\/+$/, '');
    const response = await this.options.http.request({
      method: 'GET',
      url: `${base}/.well-known/openid-configuration`,
      headers: { accept: 'application/json' },
      retry: 'idempotent',
      service: SERVICE,
    });
    // A service that is down is not a service without a discovery document, unless the profile can do without one.
    if (!this.options.issuer || !this.options.jwksUri) throwIfUnavailable(response.status, 'its discovery document');
    const document = response.status === 200 ? asObject(responseJson(response)) : undefined;
    if (document) {
      const issuer = document['issuer'];
      const expectedIssuer = this.options.issuer ?? base;
      if (issuer !== expectedIssuer) {
        throw new EsignError(
          'OIDC_DISCOVERY_FAILED',
          `The identity service's discovery document names issuer ${JSON.stringify(issuer)}, not ${JSON.stringify(expectedIssuer)}.`,
          {
            hint: 'Check identityBaseUrl, or set the expected issuer with `esign config set identityIssuer …`.',
          },
        );
      }
      const endpoint = (name: string): string | undefined =>
        typeof document[name] === 'string' ? (document[name] as string) : undefined;
      const authorizationEndpoint = endpoint('authorization_endpoint');
      const tokenEndpoint = endpoint('token_endpoint');
      const jwksUri = this.options.jwksUri ?? endpoint('jwks_uri');
      if (!authorizationEndpoint || !tokenEndpoint || !jwksUri) {
        throw new EsignError(
          'OIDC_DISCOVERY_FAILED',
          "The identity service's discovery document lacks authorization_endpoint, token_endpoint or jwks_uri.",
          {
            hint: 'Report it to the identity service, or set jwksUri in the profile.',
          },
        );
      }
      const advertised = Array.isArray(document['id_token_signing_alg_values_supported'])
        ? (document['id_token_signing_alg_values_supported'] as unknown[])
        : ['RS256'];
      const algorithms = (ID_TOKEN_ALGORITHMS as readonly string[]).filter((alg) => advertised.includes(alg));
      return {
        issuer: expectedIssuer,
        authorizationEndpoint,
        tokenEndpoint,
        jwksUri,
        userinfoEndpoint: endpoint('userinfo_endpoint'),
        idTokenAlgorithms: algorithms.length ? algorithms : ['RS256'],
        source: 'discovery',
      };
    }
    if (!this.options.issuer || !this.options.jwksUri) {
      if (response.status === 200) {
        throw new EsignError(
          'OIDC_DISCOVERY_FAILED',
          `The identity service's discovery document at ${base}/.well-known/openid-configuration is not a JSON object.`,
          {
            hint: 'Check identityBaseUrl; or set identityIssuer and jwksUri in the profile to do without discovery.',
          },
        );
      }
      throw new EsignError(
        'OIDC_DISCOVERY_FAILED',
        `The identity service at ${base} publishes no discovery document (HTTP ${response.status}), and the profile names no issuer and JWKS URL.`,
        {
          hint: 'Set both: esign config set identityIssuer ISSUER; esign config set jwksUri URL.',
        },
      );
    }
    return {
      issuer: this.options.issuer,
      authorizationEndpoint: `${base}/oauth2/authorize`,
      tokenEndpoint: `${base}/oauth2/token`,
      jwksUri: this.options.jwksUri,
      idTokenAlgorithms: ['RS256'],
      source: 'profile',
    };
  }

  /** The whole login: browser step, code exchange, ID token validation, userinfo with the same `sub`. */
  async login(request: { scopes: readonly string[]; lang?: string }): Promise<LoginResult> {
    const metadata = await this.metadata();
    const scopes = normalizeScopes(request.scopes);
    const nonce = randomBytes(32).toString('base64url');
    const verifier = verifierFromBytes(randomBytes(32));
    const codeChallenge = codeChallengeS256(verifier);
    let authorization: { code: string; redirectUri: string };
    try {
      authorization = await this.options.authorize({
        purpose: 'login at the identity service',
        buildAuthorizeUrl: (redirectUri, state) =>
          buildIdentityAuthorizeUrl({
            authorizationEndpoint: metadata.authorizationEndpoint,
            clientId: this.options.clientId,
            redirectUri,
            scopes,
            state,
            nonce,
            codeChallenge,
            ...(request.lang ? { lang: request.lang } : {}),
          }),
      });
    } catch (error) {
      throw remapAuthorizeError(error);
    }
    const tokens = await this.exchangeCode(metadata, authorization.code, authorization.redirectUri, verifier, scopes);
    const idToken = await this.validateIdToken(tokens.idToken, metadata, nonce, tokens.accessToken);
    const userinfo = await this.userinfo(metadata, tokens.accessToken);
    checkUserinfoSubject(userinfo, idToken.sub);
    let proof: ProofItem[] | undefined;
    const claims = { ...userinfo };
    if (userinfo['com.vendor.proof'] !== undefined) {
      const parsed = parseProof(userinfo['com.vendor.proof']);
      if ('problem' in parsed)
        throw new EsignError(
          'OIDC_BAD_RESPONSE',
          `The identity service's user information is malformed: ${parsed.problem}.`,
          { hint: 'Report it to the identity service.' },
        );
      proof = parsed.items;
      delete claims['com.vendor.proof'];
    }
    const now = this.options.clock.now().getTime();
    const session: IdentitySession = {
      accessToken: tokens.accessToken,
      tokenType: 'Bearer',
      expiresAt: now + (tokens.expiresIn ?? DEFAULT_ACCESS_TOKEN_LIFETIME_S) * 1000,
      extra: {
        kind: 'identity-session',
        issuer: metadata.issuer,
        clientId: this.options.clientId,
        sub: idToken.sub,
        requestedScopes: scopes,
        scope: tokens.scope,
        idToken,
        claims,
        ...(proof
          ? {
              proof: proof.map((item) => ({
                id: item.id,
                content_type: item.content_type,
                size: Buffer.from(item.base64_encoded_content, 'base64').length,
              })),
            }
          : {}),
        createdAt: now,
      },
    };
    return { session, userinfo, tokens, ...(proof ? { proof } : {}) };
  }

  /** `POST /oauth2/token` with HTTP Basic (and the secret in the form too when the profile asks). Sent once. */
  async exchangeCode(
    metadata: IdentityMetadata,
    code: string,
    redirectUri: string,
    codeVerifier: string,
    requested: readonly string[],
  ): Promise<IdentityTokens> {
    const { clientId, clientSecret } = this.options;
    const form = new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      client_id: clientId,
      redirect_uri: redirectUri,
      code_verifier: codeVerifier,
    });
    if (this.options.clientSecretInBody) form.set('client_secret', clientSecret);
    const basic = Buffer.from(`${formEncode(clientId)}:${formEncode(clientSecret)}`).toString('base64');
    const response = await this.options.http.request({
      method: 'POST',
      url: metadata.tokenEndpoint,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
        authorization: `Basic ${basic}`,
      },
      body: form.toString(),
      retry: 'never',
      service: SERVICE,
    });
    return processIdentityTokenResponse(response.status, response.body, requested);
  }

  /** OIDC Core 3.1.3.7: signature through the JWKS (never `none`), then iss, aud/azp, exp, iat, nonce. */
  async validateIdToken(
    idToken: string,
    metadata: IdentityMetadata,
    nonce: string,
    accessToken?: string,
  ): Promise<IdTokenClaims> {
    const jose = await import('jose');
    let alg: string | undefined;
    try {
      alg = jose.decodeProtectedHeader(idToken).alg;
    } catch (error) {
      throw new EsignError(
        'OIDC_ID_TOKEN_INVALID',
        'The ID token from the identity service is not a well-formed JWT.',
        { cause: error, hint: 'Report it to the identity service.' },
      );
    }
    if (!alg || !metadata.idTokenAlgorithms.includes(alg)) {
      throw new EsignError(
        'OIDC_ALG_UNSUPPORTED',
        `The ID token from the identity service is signed with ${JSON.stringify(alg ?? null)}, which esign does not accept (expected ${metadata.idTokenAlgorithms.join(', ')}).`,
        {
          hint: 'Nothing was stored. An unsigned or HMAC-signed ID token is never accepted; report it to the identity service.',
          details: { alg },
        },
      );
    }
    const keys = await this.jwks(metadata.jwksUri);
    let payloadBytes: Uint8Array;
    try {
      const verified = await jose.compactVerify(
        idToken,
        jose.createLocalJWKSet(keys as Parameters<typeof jose.createLocalJWKSet>[0]),
        { algorithms: metadata.idTokenAlgorithms },
      );
      payloadBytes = verified.payload;
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === 'ERR_JWKS_INVALID')
        throw new EsignError('OIDC_BAD_RESPONSE', 'The JWKS of the identity service is malformed.', {
          cause: error,
          hint: 'Check jwksUri; report it to the identity service.',
        });
      throw new EsignError(
        'OIDC_SIGNATURE_INVALID',
        'The ID token from the identity service does not carry a valid signature by a key of its JWKS; it was rejected.',
        {
          hint: 'Nothing was stored. Run esign login again; if it repeats, check jwksUri or report it to the identity service.',
          cause: error,
          details: { reason: code },
        },
      );
    }
    const payload = asObject(parseJsonBytes(payloadBytes));
    if (!payload)
      throw new EsignError('OIDC_ID_TOKEN_INVALID', 'The ID token payload is not a JSON object.', {
        hint: 'Report it to the identity service.',
      });
    return checkIdTokenClaims(payload, {
      issuer: metadata.issuer,
      clientId: this.options.clientId,
      nonce,
      now: Math.floor(this.options.clock.now().getTime() / 1000),
      ...(accessToken ? { accessToken, alg } : {}),
    });
  }

  private async jwks(url: string): Promise<{ keys: unknown[] }> {
    const response = await this.options.http.request({
      method: 'GET',
      url,
      headers: { accept: 'application/json' },
      retry: 'idempotent',
      service: SERVICE,
    });
    throwIfUnavailable(response.status, 'its JWKS');
    const body = asObject(responseJson(response));
    if (response.status !== 200 || !body || !Array.isArray(body['keys'])) {
      throw new EsignError(
        'OIDC_DISCOVERY_FAILED',
        `The JWKS of the identity service could not be read (HTTP ${response.status} from ${url}).`,
        { hint: 'Check jwksUri in the profile.' },
      );
    }
    return body as { keys: unknown[] };
  }

  /** `GET {legacy_base_url}/userinfo` with the Bearer token; JSON claims. */
  async userinfo(metadata: IdentityMetadata, accessToken: string): Promise<Record<string, unknown>> {
    const url = this.options.legacyBaseUrl
      ? `${this.options.legacyBaseUrl.replace(/\/+$/, '')}/userinfo`
      : metadata.userinfoEndpoint;
    if (!url) {
      throw new EsignError(
        'CONFIG_MISSING',
        'The profile has no identityLegacyBaseUrl, where the identity service answers /userinfo.',
        {
          hint: 'Set it with `esign config set identityLegacyBaseUrl URL`.',
        },
      );
    }
    const response = await this.options.http.request({
      method: 'GET',
      url,
      headers: { accept: 'application/json', authorization: `Bearer ${accessToken}` },
      retry: 'idempotent',
      service: SERVICE,
    });
    if (response.status === 401 || response.status === 403) {
      throw new EsignError(
        'AUTH_TOKEN_REJECTED',
        `The identity service did not accept the access token at /userinfo (HTTP ${response.status}).`,
        { hint: 'Run esign login again.' },
      );
    }
    throwIfUnavailable(response.status, '/userinfo');
    const contentType = response.headers.get('content-type') ?? '';
    const body = asObject(responseJson(response));
    if (response.status !== 200 || !/^application\/json\b/i.test(contentType) || !body) {
      throw new EsignError(
        'OIDC_BAD_RESPONSE',
        `The identity service's /userinfo answer is not a JSON object (HTTP ${response.status}, ${contentType || 'no content type'}).`,
        {
          hint: 'Check identityLegacyBaseUrl in the profile.',
        },
      );
    }
    return body;
  }
}

/** 429 and 5xx (after the HTTP client's own retries): the identity service is unavailable, exit 5. */
function throwIfUnavailable(status: number, what: string): void {
  if (status === 429)
    throw new EsignError('HTTP_RATE_LIMITED', `The identity service is rate limiting ${what} (HTTP 429).`, {
      hint: 'Run esign login again in a moment.',
    });
  if (status >= 500)
    throw new EsignError('HTTP_SERVER_ERROR', `The identity service failed at ${what} (HTTP ${status}).`, {
      hint: 'Run esign login again in a moment.',
    });
}

/** The loopback receiver maps redirect errors generically; the identity service's cases read better. */
function remapAuthorizeError(error: unknown): unknown {
  if (!isEsignError(error) || !['AUTH_DENIED', 'AUTH_SERVER_ERROR', 'AUTH_INVALID_REQUEST'].includes(error.code))
    return error;
  const code = error.details?.['error'];
  const description = error.details?.['error_description'];
  if (typeof code !== 'string') return error;
  return identityAuthorizeError(code, typeof description === 'string' ? description : undefined);
}

/** RFC 6749 §2.3.1: client id and secret are form-encoded before Basic. */
function formEncode(text: string): string {
  return encodeURIComponent(text).replace(/%20/g, '+');
}

function asObject(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function parseJsonBytes(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(bytes).toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}
