import { describe, expect, it } from 'vitest';
import { isEsignError } from '../core/errors.js';
import { authorizeInBrowser, checkRedirect } from './loopback.js';
import { assertSecureUrl } from './http.js';

describe('checkRedirect', () => {
  it('returns the code when the state matches', () => {
    expect(checkRedirect(new URLSearchParams('code=abc&state=s1'), 's1', 'test')).toEqual({ code: 'abc', state: 's1' });
  });

  it('rejects a state it did not send, before looking at anything else', () => {
    for (const query of ['code=abc&state=other', 'code=abc', 'error=access_denied&state=other']) {
      expect(() => checkRedirect(new URLSearchParams(query), 's1', 'test')).toThrowError(
        expect.objectContaining({ code: 'AUTH_STATE_MISMATCH' }),
      );
    }
  });

  it('maps redirect errors to typed errors', () => {
    const cases: Array<[string, string]> = [
      ['access_denied', 'AUTH_DENIED'],
      ['server_error', 'AUTH_SERVER_ERROR'],
      ['invalid_request', 'AUTH_INVALID_REQUEST'],
    ];
    for (const [error, code] of cases) {
      try {
        checkRedirect(new URLSearchParams({ error, error_description: 'why', state: 's1' }), 's1', 'test');
        expect.unreachable();
      } catch (thrown) {
        expect(isEsignError(thrown)).toBe(true);
        expect((thrown as { code: string }).code).toBe(code);
        expect((thrown as { details: unknown }).details).toEqual({ error, error_description: 'why' });
      }
    }
  });
});

describe('authorizeInBrowser', () => {
  it('listens on 127.0.0.1 only, answers the exact path once, and times out cleanly', async () => {
    let opened = '';
    const pending = authorizeInBrowser({
      buildAuthorizeUrl: (redirectUri, state) =>
        `https://idp.example/authorize?redirect_uri=${encodeURIComponent(redirectUri)}&state=${state}`,
      redirectUri: 'http://127.0.0.1:0/callback',
      browser: { open: async (url) => void (opened = url) },
      timeoutMs: 1500,
      purpose: 'test step',
      terminal: { say: () => undefined, note: () => undefined },
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const redirectUri = new URL(new URL(opened).searchParams.get('redirect_uri')!);
    expect(redirectUri.hostname).toBe('127.0.0.1');
    const wrongPath = await fetch(`http://127.0.0.1:${redirectUri.port}/other`);
    expect(wrongPath.status).toBe(404);
    await expect(pending).rejects.toMatchObject({ code: 'AUTH_TIMEOUT' });
    await expect(fetch(`http://127.0.0.1:${redirectUri.port}/callback`)).rejects.toThrow();
  });

  it('refuses a redirect URI that is not loopback http on 127.0.0.1', async () => {
    for (const redirectUri of [
      'http://192.168.1.2:8765/callback',
      'https://127.0.0.1:8765/callback',
      'http://[::1]:8765/callback',
    ]) {
      await expect(
        authorizeInBrowser({
          buildAuthorizeUrl: () => 'https://idp.example',
          redirectUri,
          browser: { open: async () => undefined },
          timeoutMs: 1000,
          purpose: 'test',
          terminal: { say: () => undefined, note: () => undefined },
        }),
      ).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
    }
  });

  it('keeps a registered localhost redirect URI as it is, and shows the failure page for a wrong state', async () => {
    let opened = '';
    const pending = authorizeInBrowser({
      buildAuthorizeUrl: (redirectUri, state) =>
        `https://idp.example/authorize?redirect_uri=${encodeURIComponent(redirectUri)}&state=${state}`,
      redirectUri: 'http://localhost:0/cb',
      browser: { open: async (url) => void (opened = url) },
      timeoutMs: 5000,
      purpose: 'test step',
      terminal: { say: () => undefined, note: () => undefined },
    });
    pending.catch(() => undefined);
    while (!opened) await new Promise((resolve) => setTimeout(resolve, 10));
    const redirectUri = new URL(new URL(opened).searchParams.get('redirect_uri')!);
    expect(redirectUri.hostname).toBe('localhost');
    expect(redirectUri.pathname).toBe('/cb');
    const page = await fetch(`http://127.0.0.1:${redirectUri.port}/cb?code=abc&state=forged`);
    expect(await page.text()).toContain('Not completed');
    await expect(pending).rejects.toMatchObject({ code: 'AUTH_STATE_MISMATCH' });
  });

  it('shows the success page only for the state it sent', async () => {
    let opened = '';
    const pending = authorizeInBrowser({
      buildAuthorizeUrl: (redirectUri, state) =>
        `https://idp.example/authorize?redirect_uri=${encodeURIComponent(redirectUri)}&state=${state}`,
      redirectUri: 'http://127.0.0.1:0/callback',
      browser: { open: async (url) => void (opened = url) },
      timeoutMs: 5000,
      purpose: 'test step',
      terminal: { say: () => undefined, note: () => undefined },
    });
    while (!opened) await new Promise((resolve) => setTimeout(resolve, 10));
    const authorize = new URL(opened);
    const redirectUri = new URL(authorize.searchParams.get('redirect_uri')!);
    const page = await fetch(`${redirectUri.href}?code=abc&state=${authorize.searchParams.get('state')}`);
    expect(await page.text()).toContain('Done');
    await expect(pending).resolves.toMatchObject({ code: 'abc', redirectUri: redirectUri.href });
  });
});

describe('assertSecureUrl', () => {
  it('allows https anywhere and http on loopback only', () => {
    expect(assertSecureUrl('https://sign.example/csc', 'x').host).toBe('sign.example');
    expect(assertSecureUrl('http://127.0.0.1:8799/signing', 'x').port).toBe('8799');
    expect(assertSecureUrl('http://localhost/x', 'x').hostname).toBe('localhost');
    expect(() => assertSecureUrl('http://sign.example/csc', 'x')).toThrowError(
      expect.objectContaining({ code: 'CONFIG_INSECURE_URL' }),
    );
    expect(() => assertSecureUrl('http://10.0.0.1/csc', 'x')).toThrowError(
      expect.objectContaining({ code: 'CONFIG_INSECURE_URL' }),
    );
  });
});

describe('a redirect URI that is not loopback (an https page the provider registered)', () => {
  const base = {
    redirectUri: 'https://app.example/esign/callback',
    browser: { open: () => Promise.reject(new Error('no browser is opened for it')) },
    timeoutMs: 5_000,
    purpose: 'sign-in to the signing service',
  };

  it('prints the URL and reads the address the browser lands on, the state checked', async () => {
    const said: string[] = [];
    let sentState = '';
    const result = await authorizeInBrowser({
      ...base,
      buildAuthorizeUrl: (redirectUri, state) => {
        sentState = state;
        return `https://as.example/oauth2/authorize?redirect_uri=${encodeURIComponent(redirectUri)}&state=${state}`;
      },
      terminal: {
        say: (line) => said.push(line),
        note: () => undefined,
        readLine: () => Promise.resolve(`https://app.example/esign/callback?code=c-1&state=${sentState}`),
      },
    });
    expect(result).toEqual({ code: 'c-1', state: sentState, redirectUri: 'https://app.example/esign/callback' });
    expect(said.join('\n')).toContain(
      'https://as.example/oauth2/authorize?redirect_uri=https%3A%2F%2Fapp.example%2Fesign%2Fcallback',
    );
    expect(said.join('\n')).toContain('paste the address');
  });

  it('without a terminal to paste into, fails at once saying why', async () => {
    const error = await authorizeInBrowser({
      ...base,
      buildAuthorizeUrl: () => 'https://as.example/oauth2/authorize',
      terminal: { say: () => undefined, note: () => undefined },
    }).catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ code: 'AUTH_BROWSER_FAILED' });
    expect((error as Error).message).toContain('is not loopback');
  });

  it('a plain http redirect URI off loopback is refused', async () => {
    const error = await authorizeInBrowser({
      ...base,
      redirectUri: 'http://app.example/cb',
      buildAuthorizeUrl: () => 'https://as.example/x',
      terminal: { say: () => undefined, note: () => undefined },
    }).catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ code: 'CONFIG_INVALID' });
  });
});
