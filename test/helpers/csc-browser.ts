/**
 * A browser for the sandbox signing service's pages without Chromium: follows the authorization
 * URL like `curl -L`, signs in as alice and approves or refuses on the pages when they show, and
 * delivers the redirect to esign's loopback listener. Also builds a CscClient on it.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { systemClock, type BrowserLauncher } from '../../src/core/ports.js';
import type { CscVersionSetting } from '../../src/core/profile.js';
import { CscClient, type BrowserAuthorize, type CscClientOptions } from '../../src/io/csc-client.js';
import { HttpClient } from '../../src/io/http.js';
import { authorizeInBrowser } from '../../src/io/loopback.js';
import { TokenStore } from '../../src/io/token-store.js';

export const CLIENT_ID = 'esign-cli';
export const CLIENT_SECRET = 'sandbox-secret';

export interface PageBrowserOptions {
  decision?: 'approve' | 'refuse';
  tamperState?: boolean;
}

export function pageBrowser(options: PageBrowserOptions = {}): BrowserLauncher {
  return {
    async open(url: string) {
      void drive(url, options).catch(() => undefined);
    },
  };
}

async function drive(start: string, options: PageBrowserOptions): Promise<void> {
  let response = await fetch(start, { redirect: 'manual' });
  if (response.status === 200) {
    const login = await response.text();
    const action = /action="([^"]+)"/.exec(login)?.[1] ?? '';
    const form = new URLSearchParams(hiddenFields(login));
    form.set('user', 'alice');
    form.set('action', 'login');
    const consent = await (
      await fetch(decodeEntities(action), {
        method: 'POST',
        body: form,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      })
    ).text();
    const decisionAction = /action="([^"]+)"/.exec(consent)?.[1] ?? '';
    const decision = new URLSearchParams(hiddenFields(consent));
    decision.set('decision', options.decision ?? 'approve');
    response = await fetch(decodeEntities(decisionAction), {
      method: 'POST',
      body: decision,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      redirect: 'manual',
    });
  }
  const location = new URL(response.headers.get('location') ?? '');
  if (options.tamperState) location.searchParams.set('state', 'not-the-state-esign-sent');
  await fetch(location);
}

export function hiddenFields(page: string): Array<[string, string]> {
  return [...page.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)].map((m) => [
    decodeEntities(m[1] ?? ''),
    decodeEntities(m[2] ?? ''),
  ]);
}

function decodeEntities(text: string): string {
  return text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

export interface TestClient {
  client: CscClient;
  /** The purpose of each browser step, in order. */
  steps: string[];
}

export interface TestClientOptions {
  baseUrl: string;
  /** Where the client's token files go. */
  dir: string;
  browser?: BrowserLauncher;
  pageSize?: number;
  version?: CscVersionSetting;
  extra?: Partial<CscClientOptions>;
}

/** A CscClient whose browser steps go through the real loopback listener. */
export function makeTestClient(options: TestClientOptions): TestClient {
  const steps: string[] = [];
  const browser = options.browser ?? pageBrowser();
  const authorize: BrowserAuthorize = (request) => {
    steps.push(request.purpose);
    return authorizeInBrowser({
      buildAuthorizeUrl: request.buildAuthorizeUrl,
      redirectUri: 'http://127.0.0.1:0/callback',
      browser,
      timeoutMs: 20_000,
      purpose: request.purpose,
      terminal: { say: () => undefined, note: () => undefined },
    });
  };
  const client = new CscClient({
    baseUrl: options.baseUrl,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    http: new HttpClient({ maxTries: 1 }),
    tokens: new TokenStore(join(options.dir, `tokens-${randomBytes(4).toString('hex')}`)),
    tokenKey: 'test:signing',
    clock: systemClock,
    authorize,
    ...(options.pageSize ? { pageSize: options.pageSize } : {}),
    ...(options.version ? { version: options.version } : {}),
    ...options.extra,
  });
  return { client, steps };
}

/** The sandbox user's credentials, in the service's order: RSA ones, then the EC and PSS keys (issue 24). */
export const ALICE_CREDENTIALS = [
  'alice-rsa2048',
  'alice-rsa3072',
  'alice-disabled',
  'alice-expired',
  'alice-revoked',
  'alice-ec-p256',
  'alice-ec-p384',
  'alice-ec-p521',
  'alice-rsa-pss',
] as const;
