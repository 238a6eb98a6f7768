import { describe, expect, it } from 'vitest';
import { processServiceSignInResponse, processTokenResponse } from './csc/responses.js';
import { exitCodeFor } from './errors.js';
import { PERMANENT_OAUTH_ERRORS } from './oauth-errors.js';

const body = (error: string, description: string) =>
  new TextEncoder().encode(JSON.stringify({ error, error_description: description }));

describe('OAuth refusals classified by their error code, not by status', () => {
  for (const error of PERMANENT_OAUTH_ERRORS) {
    for (const status of [400, 401, 501, 503]) {
      it(`${error} with HTTP ${status} is permanent: exit 4 with the service's description`, () => {
        for (const run of [
          () => processTokenResponse(status, body(error, 'said by the service'), 'Bearer'),
          () =>
            processServiceSignInResponse(
              status,
              body(error, 'said by the service'),
              'the client credentials token request',
            ),
        ]) {
          let thrown: unknown;
          try {
            run();
          } catch (caught) {
            thrown = caught;
          }
          expect(thrown).toMatchObject({ code: 'AUTH_TOKEN_REJECTED', exitCode: 4 });
          expect((thrown as Error).message).toContain(`${error} (said by the service), HTTP ${status}`);
          expect((thrown as { hint: string }).hint).not.toMatch(/again in a moment/i);
        }
      });
    }
  }

  it('a 501 without an OAuth error is "does not implement" (exit 6), not "try again"', () => {
    expect(() => processTokenResponse(501, new Uint8Array(), 'Bearer')).toThrow(
      /does not implement the token exchange/,
    );
    expect(exitCodeFor('CSC_UNSUPPORTED_SERVICE')).toBe(6);
  });
});
