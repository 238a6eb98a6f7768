/**
 * The token endpoint's answer (seed 001 §2 "Token response", §4.2) and its error answers. Pure.
 */
import { EsignError } from '../errors.js';
import { notImplemented, permanentOAuthRefusal } from '../oauth-errors.js';
import { parseScope } from './claims.js';

export interface IdentityTokens {
  accessToken: string;
  /** Always `Bearer`: the service documents `Bearer` and sends `bearer`; compared case-insensitively. */
  tokenType: 'Bearer';
  expiresIn?: number;
  idToken: string;
  /** Granted scopes; the requested ones when the service leaves `scope` out. */
  scope: string[];
}

type Body = Uint8Array | string;

function parseObject(body: Body): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(typeof body === 'string' ? body : Buffer.from(body).toString('utf8'));
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function bad(problem: string): EsignError {
  return new EsignError('OIDC_BAD_RESPONSE', `The identity service's token response ${problem}.`, {
    hint: 'Check identityBaseUrl in the profile; if it is right, report this to the identity service.',
  });
}

/** Validates a token endpoint answer; `requested` is used when `scope` is absent (RFC 6749 §5.1). */
export function processIdentityTokenResponse(status: number, body: Body, requested: readonly string[]): IdentityTokens {
  const object = parseObject(body);
  if (status !== 200) throw tokenEndpointError(status, object);
  if (!object) throw bad('is not a JSON object');
  const { access_token: accessToken, token_type: tokenType, expires_in: expiresIn, id_token: idToken, scope } = object;
  if (typeof accessToken !== 'string' || accessToken === '') throw bad('has no access_token');
  if (typeof tokenType !== 'string') throw bad('has no token_type');
  if (tokenType.toLowerCase() !== 'bearer') throw bad(`has token_type ${JSON.stringify(tokenType)}, not Bearer`);
  if (typeof idToken !== 'string' || idToken.split('.').length !== 3) throw bad('has no id_token (a signed JWT)');
  if (expiresIn !== undefined && (typeof expiresIn !== 'number' || !Number.isSafeInteger(expiresIn) || expiresIn <= 0))
    throw bad('has an expires_in that is not a positive integer');
  if (scope !== undefined && typeof scope !== 'string') throw bad('has a scope that is not a string');
  const granted = typeof scope === 'string' ? parseScope(scope) : [...requested];
  if (!granted.includes('openid')) throw bad('grants no openid scope');
  const tokens: IdentityTokens = { accessToken, tokenType: 'Bearer', idToken, scope: granted };
  if (typeof expiresIn === 'number') tokens.expiresIn = expiresIn;
  return tokens;
}

function tokenEndpointError(status: number, object: Record<string, unknown> | undefined): EsignError {
  const error = typeof object?.['error'] === 'string' ? object['error'] : undefined;
  const description = typeof object?.['error_description'] === 'string' ? object['error_description'] : undefined;
  const said = [error, description].filter(Boolean).join(': ');
  const details = { status, error, error_description: description };
  const permanent = permanentOAuthRefusal('identity service', 'the token request', status, error, description);
  if (permanent) return permanent;
  if (status === 501) return notImplemented('identity service', 'the token request', said ? `, ${said}` : '');
  if (status === 429) {
    return new EsignError(
      'HTTP_RATE_LIMITED',
      `The identity service is rate limiting the token endpoint (HTTP 429${said ? `, ${said}` : ''}).`,
      {
        hint: 'Run esign login again in a moment.',
        details,
      },
    );
  }
  if (status >= 500) {
    return new EsignError(
      'HTTP_SERVER_ERROR',
      `The identity service failed at the token endpoint (HTTP ${status}${said ? `, ${said}` : ''}).`,
      {
        hint: 'Run esign login again in a moment.',
        details,
      },
    );
  }
  if (status === 401 || error === 'invalid_client') {
    return new EsignError(
      'AUTH_TOKEN_REJECTED',
      `The identity service did not accept the client credentials (HTTP ${status}${said ? `, ${said}` : ''}).`,
      {
        hint: 'Check clientId and the client secret (ESIGN_CLIENT_SECRET or secretsFile) of the profile.',
        details,
      },
    );
  }
  if (!error) {
    return new EsignError(
      'OIDC_BAD_RESPONSE',
      `The identity service answered the token request with HTTP ${status} and no OAuth error.`,
      {
        hint: 'Check identityBaseUrl in the profile.',
        details,
      },
    );
  }
  return new EsignError(
    'AUTH_TOKEN_REJECTED',
    `The identity service refused to exchange the authorization code (${said}).`,
    {
      hint: 'Run esign login again; an authorization code is valid once and only for a short time.',
      details,
    },
  );
}
