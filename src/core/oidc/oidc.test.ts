import { describe, expect, it } from 'vitest';
import { EsignError } from '../errors.js';
import { buildIdentityAuthorizeUrl, identityAuthorizeError } from './authorize.js';
import {
  audienceList,
  extensionFor,
  normalizeScopes,
  notSharedClaims,
  parseProof,
  proofFileName,
  requestedClaims,
} from './claims.js';
import { accessTokenHash, checkIdTokenClaims, checkUserinfoSubject } from './id-token.js';
import { codeChallengeS256, isValidVerifier, verifierFromBytes } from './pkce.js';
import { processIdentityTokenResponse } from './token-response.js';

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    if (error instanceof EsignError) return error.code;
    throw error;
  }
  return undefined;
}

describe('PKCE S256', () => {
  it('matches the RFC 7636 appendix B example', () => {
    expect(codeChallengeS256('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe(
      'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    );
  });

  it('makes 43-character verifiers from 32 bytes and refuses short ones', () => {
    const verifier = verifierFromBytes(new Uint8Array(32).fill(7));
    expect(verifier).toHaveLength(43);
    expect(isValidVerifier(verifier)).toBe(true);
    expect(() => verifierFromBytes(new Uint8Array(16))).toThrow(RangeError);
    expect(() => codeChallengeS256('short')).toThrow(RangeError);
  });
});

describe('identity authorize URL', () => {
  const base = {
    authorizationEndpoint: 'https://id.example/oauth2/authorize',
    clientId: 'c',
    redirectUri: 'http://127.0.0.1:1/cb',
    state: 's',
    nonce: 'n',
    codeChallenge: 'x'.repeat(43),
  };

  it('carries every parameter, openid first, and the language twice', () => {
    const url = new URL(
      buildIdentityAuthorizeUrl({
        ...base,
        scopes: normalizeScopes(['email', 'openid', 'email,com.vendor.proof']),
        lang: 'en',
      }),
    );
    const q = url.searchParams;
    expect(q.get('response_type')).toBe('code');
    expect(q.get('scope')).toBe('openid email com.vendor.proof');
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('nonce')).toBe('n');
    expect(q.get('ui_locales')).toBe('en');
    expect(q.get('lang')).toBe('en');
  });

  it('refuses a state over 255 bytes and scopes without openid', () => {
    expect(codeOf(() => buildIdentityAuthorizeUrl({ ...base, scopes: ['openid'], state: 'é'.repeat(128) }))).toBe(
      'INTERNAL',
    );
    expect(codeOf(() => buildIdentityAuthorizeUrl({ ...base, scopes: ['email'] }))).toBe('INTERNAL');
  });
});

describe('authorize errors (seed §7)', () => {
  it.each([
    ['authentication challenge expired', 'ChallengeExpired', /QR code has expired/],
    ['user email is unverified', 'EmailUnverified', /e-mail address is not verified/],
    ['consent request expired', 'ConsentExpired', /PIN was not entered in time/],
    ['Resource owner rejected consent', 'ConsentRejected', /did not agree to share/],
    ['process expired', 'ProcessExpired', /time limit/],
  ])('access_denied %j is %s', (description, errorCase, message) => {
    const error = identityAuthorizeError('access_denied', description);
    expect(error.code).toBe('AUTH_DENIED');
    expect(error.message).toMatch(message);
    expect(error.message).toContain(errorCase);
    expect(error.details?.['case']).toBe(errorCase);
    expect(error.exitCode).toBe(4);
  });

  it('server_error with n/a or no description is a generic technical problem to retry', () => {
    for (const description of ['n/a', undefined]) {
      const error = identityAuthorizeError('server_error', description);
      expect(error.code).toBe('AUTH_SERVER_ERROR');
      expect(error.message).toMatch(/generic technical problem/);
      expect(error.message).not.toContain('n/a');
      expect(error.hint).toMatch(/Retry/);
    }
  });

  it('other errors are invalid requests', () => {
    expect(identityAuthorizeError('invalid_scope', 'nope').code).toBe('AUTH_INVALID_REQUEST');
    expect(identityAuthorizeError('access_denied', 'something new').details?.['case']).toBe('AccessDenied');
  });
});

describe('token response', () => {
  const good = { access_token: 'at', token_type: 'bearer', expires_in: 3600, id_token: 'a.b.c', scope: 'openid email' };

  it('accepts token_type in any case and reads the granted scopes', () => {
    for (const tokenType of ['bearer', 'Bearer', 'BEARER']) {
      const tokens = processIdentityTokenResponse(200, JSON.stringify({ ...good, token_type: tokenType }), ['openid']);
      expect(tokens.tokenType).toBe('Bearer');
      expect(tokens.scope).toEqual(['openid', 'email']);
      expect(tokens.expiresIn).toBe(3600);
    }
  });

  it('uses the requested scopes when scope is absent', () => {
    const { scope, ...rest } = good;
    void scope;
    expect(processIdentityTokenResponse(200, JSON.stringify(rest), ['openid', 'x']).scope).toEqual(['openid', 'x']);
  });

  it.each([
    [{ ...good, token_type: 'mac' }],
    [{ ...good, id_token: undefined }],
    [{ ...good, access_token: '' }],
    [{ ...good, expires_in: '3600' }],
    [{ ...good, scope: 'email' }],
  ])('rejects a malformed answer %#', (body) => {
    expect(codeOf(() => processIdentityTokenResponse(200, JSON.stringify(body), ['openid']))).toBe('OIDC_BAD_RESPONSE');
  });

  it('maps error answers', () => {
    expect(
      codeOf(() =>
        processIdentityTokenResponse(
          400,
          JSON.stringify({ error: 'invalid_request', error_description: 'Invalid authorization code.' }),
          [],
        ),
      ),
    ).toBe('AUTH_TOKEN_REJECTED');
    expect(codeOf(() => processIdentityTokenResponse(401, JSON.stringify({ error: 'invalid_client' }), []))).toBe(
      'AUTH_TOKEN_REJECTED',
    );
    expect(codeOf(() => processIdentityTokenResponse(503, 'down', []))).toBe('HTTP_SERVER_ERROR');
    expect(codeOf(() => processIdentityTokenResponse(200, 'not json', []))).toBe('OIDC_BAD_RESPONSE');
  });
});

describe('ID token claims (OIDC Core 3.1.3.7)', () => {
  const now = 1_700_000_000;
  const expected = { issuer: 'https://id.example', clientId: 'esign-cli', nonce: 'n-1', now };
  const claims = {
    iss: 'https://id.example',
    sub: 'pairwise',
    aud: 'esign-cli',
    exp: now + 600,
    iat: now,
    nonce: 'n-1',
    auth_time: now,
  };

  it('accepts a good token with aud as string or array', () => {
    expect(checkIdTokenClaims(claims, expected).aud).toEqual(['esign-cli']);
    expect(checkIdTokenClaims({ ...claims, aud: ['esign-cli'] }, expected).sub).toBe('pairwise');
    expect(checkIdTokenClaims({ ...claims, aud: ['esign-cli', 'other'], azp: 'esign-cli' }, expected).aud).toHaveLength(
      2,
    );
  });

  it.each([
    ['wrong iss', { iss: 'https://evil.example' }, 'OIDC_ISSUER_MISMATCH'],
    ['wrong aud', { aud: 'other' }, 'OIDC_AUDIENCE_MISMATCH'],
    ['aud array without us', { aud: ['a', 'b'] }, 'OIDC_AUDIENCE_MISMATCH'],
    ['several aud, no azp', { aud: ['esign-cli', 'b'] }, 'OIDC_AUDIENCE_MISMATCH'],
    ['wrong azp', { azp: 'b' }, 'OIDC_AUDIENCE_MISMATCH'],
    ['expired', { exp: now - 300 }, 'OIDC_ID_TOKEN_EXPIRED'],
    ['issued long ago', { iat: now - 3600 }, 'OIDC_ID_TOKEN_EXPIRED'],
    ['issued in the future', { iat: now + 3600 }, 'OIDC_ID_TOKEN_INVALID'],
    ['no iat', { iat: undefined }, 'OIDC_ID_TOKEN_INVALID'],
    ['no sub', { sub: undefined }, 'OIDC_ID_TOKEN_INVALID'],
    ['wrong nonce', { nonce: 'n-2' }, 'OIDC_NONCE_MISMATCH'],
    ['no nonce', { nonce: undefined }, 'OIDC_NONCE_MISMATCH'],
  ])('rejects %s', (_name, change, code) => {
    expect(codeOf(() => checkIdTokenClaims({ ...claims, ...change }, expected))).toBe(code);
  });

  it('checks at_hash when present', () => {
    const atHash = accessTokenHash('token-1', 'RS256');
    expect(
      checkIdTokenClaims({ ...claims, at_hash: atHash }, { ...expected, accessToken: 'token-1', alg: 'RS256' }).sub,
    ).toBe('pairwise');
    expect(
      codeOf(() =>
        checkIdTokenClaims({ ...claims, at_hash: atHash }, { ...expected, accessToken: 'token-2', alg: 'RS256' }),
      ),
    ).toBe('OIDC_ID_TOKEN_INVALID');
  });

  it('requires the userinfo sub to be the ID token sub', () => {
    expect(codeOf(() => checkUserinfoSubject({ sub: 'a' }, 'a'))).toBeUndefined();
    expect(codeOf(() => checkUserinfoSubject({ sub: 'b' }, 'a'))).toBe('OIDC_SUB_MISMATCH');
    expect(codeOf(() => checkUserinfoSubject({}, 'a'))).toBe('OIDC_SUB_MISMATCH');
  });
});

describe('claims helpers', () => {
  it('maps scopes to claims and finds the ones not shared', () => {
    expect(requestedClaims(['openid', 'email'])).toEqual(['email', 'email_verified']);
    expect(notSharedClaims(['openid', 'email', 'com.vendor.proof'], { email: 'a@b', email_verified: true })).toEqual([
      'com.vendor.proof',
    ]);
    expect(notSharedClaims(['openid'], {})).toEqual([]);
  });

  it('reads aud as string or array', () => {
    expect(audienceList('a')).toEqual(['a']);
    expect(audienceList(['a', 'b'])).toEqual(['a', 'b']);
    expect(audienceList([])).toBeUndefined();
    expect(audienceList(3)).toBeUndefined();
  });

  it('validates proof items', () => {
    expect(parseProof([{ id: 'p', content_type: 'application/pdf', base64_encoded_content: 'AAAA' }])).toEqual({
      items: [{ id: 'p', content_type: 'application/pdf', base64_encoded_content: 'AAAA' }],
    });
    expect(parseProof({})).toHaveProperty('problem');
    expect(parseProof([{ id: 'p', content_type: 'pdf', base64_encoded_content: 'AAAA' }])).toHaveProperty('problem');
    expect(parseProof([{ id: 'p', content_type: 'image/png', base64_encoded_content: '***' }])).toHaveProperty(
      'problem',
    );
    expect(
      parseProof([
        { id: 'p', content_type: 'image/png', base64_encoded_content: '' },
        { id: 'p', content_type: 'image/png', base64_encoded_content: '' },
      ]),
    ).toHaveProperty('problem');
  });

  it('names proof files safely', () => {
    expect(proofFileName('identity-report', 'application/pdf')).toBe('identity-report.pdf');
    expect(proofFileName('../../etc/passwd', 'text/plain')).toBe('__.._etc_passwd.txt');
    expect(proofFileName('.hidden', 'image/png; q=1')).toBe('_hidden.png');
    expect(extensionFor('application/x-unknown')).toBe('bin');
  });
});
