/**
 * The claim checks of OpenID Connect Core 3.1.3.7 on an ID token whose signature was already
 * verified (steps 2–3 and 9–11: iss, aud/azp, exp, iat, nonce), each failure with its own code.
 * Pure: the time comes in as a number.
 */
import { createHash } from 'node:crypto';
import { EsignError, type EsignErrorCode } from '../errors.js';
import { audienceList } from './claims.js';

/** Asymmetric algorithms accepted for ID tokens; `none` and HMAC never. */
export const ID_TOKEN_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
] as const;

export interface IdTokenExpectations {
  issuer: string;
  clientId: string;
  nonce: string;
  /** Seconds since the epoch. */
  now: number;
  /** Allowed clock skew in seconds (default 120). */
  skewSeconds?: number;
  /** How old `iat` may be, in seconds (default 600). */
  maxAgeSeconds?: number;
  /** The access token issued with it, to check `at_hash` when present. */
  accessToken?: string;
  alg?: string;
}

export interface IdTokenClaims {
  iss: string;
  sub: string;
  aud: string[];
  exp: number;
  iat: number;
  auth_time?: number;
  nonce?: string;
  azp?: string;
  [claim: string]: unknown;
}

function fail(code: EsignErrorCode, message: string, details?: Record<string, unknown>): EsignError {
  return new EsignError(code, `The ID token from the identity service was rejected: ${message}.`, {
    hint: 'Nothing was stored. Run esign login again; if it repeats, check identityIssuer/jwksUri of the profile or report it to the identity service.',
    details,
  });
}

/** Checks the payload of a signature-verified ID token; returns it typed. */
export function checkIdTokenClaims(payload: Record<string, unknown>, expected: IdTokenExpectations): IdTokenClaims {
  const skew = expected.skewSeconds ?? 120;
  const maxAge = expected.maxAgeSeconds ?? 600;
  const { iss, sub, aud, exp, iat, nonce, azp } = payload;
  if (iss !== expected.issuer) {
    throw fail(
      'OIDC_ISSUER_MISMATCH',
      `its issuer ${JSON.stringify(iss)} is not the expected ${JSON.stringify(expected.issuer)}`,
      { iss, expected: expected.issuer },
    );
  }
  if (typeof sub !== 'string' || sub === '') throw fail('OIDC_ID_TOKEN_INVALID', 'it has no sub claim');
  const audience = audienceList(aud);
  if (!audience) throw fail('OIDC_AUDIENCE_MISMATCH', 'its aud claim is missing or malformed');
  if (!audience.includes(expected.clientId)) {
    throw fail(
      'OIDC_AUDIENCE_MISMATCH',
      `it is meant for ${audience.map((item) => JSON.stringify(item)).join(', ')}, not for this client`,
      { aud: audience },
    );
  }
  if (audience.length > 1 && azp === undefined)
    throw fail('OIDC_AUDIENCE_MISMATCH', 'it names several audiences but no authorized party (azp)', { aud: audience });
  if (azp !== undefined && azp !== expected.clientId)
    throw fail('OIDC_AUDIENCE_MISMATCH', `its authorized party (azp) ${JSON.stringify(azp)} is not this client`, {
      azp,
    });
  if (typeof exp !== 'number' || !Number.isFinite(exp))
    throw fail('OIDC_ID_TOKEN_INVALID', 'it has no numeric exp claim');
  if (exp + skew <= expected.now) throw fail('OIDC_ID_TOKEN_EXPIRED', `it expired at ${isoTime(exp)}`, { exp });
  if (typeof iat !== 'number' || !Number.isFinite(iat))
    throw fail('OIDC_ID_TOKEN_INVALID', 'it has no numeric iat claim');
  if (iat > expected.now + skew)
    throw fail('OIDC_ID_TOKEN_INVALID', `it was issued in the future (iat ${isoTime(iat)})`, { iat });
  if (iat < expected.now - maxAge - skew)
    throw fail('OIDC_ID_TOKEN_EXPIRED', `it was issued too long ago (iat ${isoTime(iat)})`, { iat });
  if (nonce !== expected.nonce) {
    throw fail(
      'OIDC_NONCE_MISMATCH',
      nonce === undefined
        ? 'it carries no nonce although one was sent'
        : 'its nonce is not the one esign sent (possible replay)',
    );
  }
  const authTime = payload['auth_time'];
  if (authTime !== undefined && (typeof authTime !== 'number' || !Number.isFinite(authTime)))
    throw fail('OIDC_ID_TOKEN_INVALID', 'its auth_time is not a number');
  const atHash = payload['at_hash'];
  if (atHash !== undefined && expected.accessToken !== undefined && expected.alg) {
    if (typeof atHash !== 'string' || atHash !== accessTokenHash(expected.accessToken, expected.alg)) {
      throw fail('OIDC_ID_TOKEN_INVALID', 'its at_hash does not match the access token');
    }
  }
  return { ...payload, iss: iss as string, sub, aud: audience, exp, iat } as IdTokenClaims;
}

/** A claim's time for a message; a number beyond the range of Date (1e300) is shown as it is. */
function isoTime(seconds: number): string {
  const date = new Date(seconds * 1000);
  return Number.isNaN(date.getTime()) ? String(seconds) : date.toISOString();
}

/** `at_hash` (OIDC Core 3.1.3.6): left half of the hash of the access token, base64url. */
export function accessTokenHash(accessToken: string, alg: string): string | undefined {
  const bits = /(\d{3})$/.exec(alg)?.[1];
  const hash = bits === '384' ? 'sha384' : bits === '512' ? 'sha512' : alg === 'EdDSA' ? 'sha512' : 'sha256';
  const digest = createHash(hash).update(accessToken, 'ascii').digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

/** Userinfo must be about the same person as the ID token (OIDC Core 5.3.2). */
export function checkUserinfoSubject(userinfo: Record<string, unknown>, idTokenSub: string): void {
  if (userinfo['sub'] !== idTokenSub) {
    throw new EsignError(
      'OIDC_SUB_MISMATCH',
      'The user information from the identity service is about another subject than the ID token; it was discarded.',
      {
        hint: 'Nothing was stored. Run esign login again; if it repeats, report it to the identity service.',
      },
    );
  }
}
