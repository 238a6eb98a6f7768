/**
 * Minimized cases found by `json-responses.fuzz.test.ts`: each once escaped as a raw RangeError or
 * produced an unusable value, and must now be a typed EsignError.
 */
import { describe, expect, it } from 'vitest';
import { processTokenResponse } from './csc/responses.js';
import { isEsignError } from './errors.js';
import { checkIdTokenClaims } from './oidc/id-token.js';
import { processIdentityTokenResponse } from './oidc/token-response.js';

const now = 1_750_000_000;
const expected = { issuer: 'https://id.example', clientId: 'client', nonce: 'n-1', now };

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    if (!isEsignError(error)) throw error;
    return error.code;
  }
}

describe('JSON answers: fuzz regressions', () => {
  it.each([
    ['exp far in the past (-1e308)', { exp: -1e308, iat: now }, 'OIDC_ID_TOKEN_EXPIRED'],
    ['iat far in the future (1e308)', { exp: now + 60, iat: 1e308 }, 'OIDC_ID_TOKEN_INVALID'],
    ['iat far in the past (-1e308)', { exp: now + 60, iat: -1e308 }, 'OIDC_ID_TOKEN_EXPIRED'],
  ])('an ID token with %s is refused with a typed error, not "RangeError: Invalid time value"', (_, times, code) => {
    expect(
      codeOf(() =>
        checkIdTokenClaims({ iss: expected.issuer, sub: 'u1', aud: 'client', nonce: 'n-1', ...times }, expected),
      ),
    ).toBe(code);
  });

  it('a signing-service token whose expires_in is beyond 2^53 seconds is CSC_BAD_RESPONSE', () => {
    expect(
      codeOf(() =>
        processTokenResponse(
          200,
          '{"access_token":"t","token_type":"Bearer","expires_in":"99999999999999999999"}',
          'Bearer',
        ),
      ),
    ).toBe('CSC_BAD_RESPONSE');
    expect(
      codeOf(() => processTokenResponse(200, '{"access_token":"t","token_type":"Bearer","expires_in":1e20}', 'Bearer')),
    ).toBe('CSC_BAD_RESPONSE');
  });

  it('an identity token response whose expires_in is beyond 2^53 is OIDC_BAD_RESPONSE', () => {
    const body =
      '{"access_token":"at","token_type":"bearer","expires_in":9007199254740993,"id_token":"h.p.s","scope":"openid"}';
    expect(codeOf(() => processIdentityTokenResponse(200, body, ['openid']))).toBe('OIDC_BAD_RESPONSE');
  });
});
