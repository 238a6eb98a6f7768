/**
 * A real browser (Debian's Chromium through playwright-core) through the sandbox's login pages —
 * the QR challenge, the simulated phone scan, the PIN step — in Dutch and English, and through the
 * signing service's sign-in and approval pages, while the built `esign` waits on its loopback
 * receiver for each redirect. Screenshots go to test/artifacts/ (git-ignored).
 */
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, spawnCliStreaming } from '../helpers/browser.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

const ARTIFACTS = fileURLToPath(new URL('../artifacts/', import.meta.url));
/** The line `esign … --no-browser` prints for the browser step. */
const AUTHORIZE_URL = /^(http:\/\/127\.0\.0\.1:\d+\/(?:identity|signing)\/oauth2\/authorize\?\S+)$/m;

const TEXT = {
  nl: {
    qrTitle: 'Inloggen met de app',
    qrLead: 'Scan deze QR-code met de app op uw telefoon.',
    scan: 'Scannen met telefoon (gesimuleerd)',
    pinTitle: 'Toestemming geven met uw pincode',
    pinClaim: 'Uw e-mailadres',
    approve: 'Toestemming geven',
    refuse: 'Weigeren',
  },
  en: {
    qrTitle: 'Log in with the app',
    qrLead: 'Scan this QR code with the app on your phone.',
    scan: 'Scan with phone (simulated)',
    pinTitle: 'Give consent with your PIN',
    pinClaim: 'Your e-mail address',
    approve: 'Give consent',
    refuse: 'Refuse',
  },
} as const;

let t: TestSandbox;
let browser: Browser;

beforeAll(async () => {
  await mkdir(ARTIFACTS, { recursive: true });
  t = await startTestSandbox({ autoApprove: false });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: `${ARTIFACTS}${name}.png`, fullPage: true });
}

/** Starts `esign ARGS --no-browser`, waits for the URL it prints, opens it in a fresh page. */
async function startBrowserStep(args: string[], env: Record<string, string> = {}) {
  const cli = spawnCliStreaming([...args, '--no-browser', '--timeout', '120'], { ...t.env, ...env });
  const [, url] = await cli.waitForStderr(AUTHORIZE_URL);
  const context = await browser.newContext({ locale: 'en-US' });
  const page = await context.newPage();
  await page.goto(url ?? '');
  return { cli, page, close: () => context.close() };
}

describe('esign login in Chromium', () => {
  it.each(['nl', 'en'] as const)(
    'goes through the QR and PIN pages in %s and esign catches the redirect',
    async (lang) => {
      const text = TEXT[lang];
      const { cli, page, close } = await startBrowserStep([
        'login',
        '--lang',
        lang,
        '--scope',
        'email',
        '--scope',
        'com.vendor.personal_info',
        '--json',
      ]);
      try {
        expect(await page.getAttribute('html', 'lang')).toBe(lang);
        await expect.poll(() => page.textContent('h1')).toBe(text.qrTitle);
        expect(await page.textContent('main')).toContain(text.qrLead);
        const qrWidth = await page.$eval('#qr', (image) => (image as unknown as { naturalWidth: number }).naturalWidth);
        expect(qrWidth).toBeGreaterThanOrEqual(200);
        await shot(page, `identity-1-qr-${lang}`);

        await page.selectOption('#user', 'alice');
        await page.getByRole('button', { name: text.scan }).click();
        await page.waitForSelector('#pin');
        expect(await page.textContent('h1')).toBe(text.pinTitle);
        expect(await page.textContent('#claims')).toContain(text.pinClaim);
        await shot(page, `identity-2-pin-${lang}`);

        await page.fill('#pin', '12345');
        await page.getByRole('button', { name: text.approve, exact: true }).click();
        await page.waitForURL(/^http:\/\/127\.0\.0\.1:\d+\/callback\?/);
        expect(await page.textContent('h1')).toBe('Done');
        await shot(page, `identity-3-done-${lang}`);
      } finally {
        await close();
      }
      const result = await cli.done;
      expect(result.code, result.stderr).toBe(0);
      const out = JSON.parse(result.stdout) as { sub: string; scope: string[]; claims: Record<string, unknown> };
      expect(out.scope).toEqual(['openid', 'email', 'com.vendor.personal_info']);
      expect(out.claims['given_name']).toBe('Alice Maria');
    },
  );

  it('refusing on the PIN page ends the login with ConsentRejected', async () => {
    const text = TEXT.nl;
    const { cli, page, close } = await startBrowserStep(['login', '--lang', 'nl']);
    try {
      await page.getByRole('button', { name: text.scan }).click();
      await page.waitForSelector('#pin');
      await page.getByRole('button', { name: text.refuse }).click();
      await page.waitForURL(/\/callback\?/);
      expect(await page.textContent('h1')).toBe('Not completed');
      await shot(page, 'identity-4-refused-nl');
    } finally {
      await close();
    }
    const result = await cli.done;
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(
      /esign: Login failed: you did not agree to share the requested data \(ConsentRejected\)\./,
    );
  });
});

describe('the signing service approval page in Chromium', () => {
  it.each([
    ['en', 'Sign in to the signing service', 'Continue', 'Allow access to your signing credentials', 'Approve'],
    ['nl', 'Inloggen bij de ondertekendienst', 'Doorgaan', 'Toegang geven tot uw ondertekensleutels', 'Goedkeuren'],
  ] as const)(
    'signs in and approves in %s while esign credentials list waits',
    async (lang, signInTitle, next, consentTitle, approve) => {
      const { cli, page, close } = await startBrowserStep(['credentials', 'list', '--json'], {
        ESIGN_LANG: lang,
        ESIGN_CONFIG_DIR: `${t.configDir}-signing-${lang}`,
      });
      try {
        expect(await page.textContent('h1')).toBe(signInTitle);
        await shot(page, `signing-1-sign-in-${lang}`);
        await page.getByRole('button', { name: next }).click();
        await page.waitForSelector('button[value="approve"]');
        expect(await page.textContent('h1')).toBe(consentTitle);
        await shot(page, `signing-2-approve-${lang}`);
        await page.getByRole('button', { name: approve }).click();
        await page.waitForURL(/\/callback\?/);
        expect(await page.textContent('h1')).toBe('Done');
      } finally {
        await close();
      }
      const result = await cli.done;
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain('alice-rsa2048');
    },
  );
});
