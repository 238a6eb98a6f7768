/** Found by test/integration/security.test.ts: the browser was sent to a plain-http authorization page of a remote service. */
import { describe, expect, it } from 'vitest';
import { isEsignError } from '../core/errors.js';
import { authorizeInBrowser } from './loopback.js';

describe('authorizeInBrowser and insecure authorization pages', () => {
  it('refuses to open a plain http:// authorization URL of a remote host (CONFIG_INSECURE_URL), before any browser step', async () => {
    let opened = false;
    const error = await authorizeInBrowser({
      buildAuthorizeUrl: (redirectUri, state) =>
        `http://sign.example/oauth2/authorize?redirect_uri=${encodeURIComponent(redirectUri)}&state=${state}`,
      redirectUri: 'http://127.0.0.1:0/callback',
      browser: { open: async () => void (opened = true) },
      timeoutMs: 2_000,
      purpose: 'sign-in to the signing service',
      terminal: { say: () => undefined, note: () => undefined },
    }).catch((e: unknown) => e);
    expect(isEsignError(error, 'CONFIG_INSECURE_URL')).toBe(true);
    expect(opened).toBe(false);
  });
});
