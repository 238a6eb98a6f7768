/**
 * Provider presets (issue 29 item 5): `esign config init NAME --provider ID` fills in a provider's
 * public settings; `--provider list` lists them. The SSL.com sandbox preset is then run against
 * the esign sandbox with the quirks that emulate it, its URLs pointed at the sandbox, and so is
 * every other preset (a PDF and a .p7s, judged by openssl given only the root): emulated by the
 * sandbox is as far as a preset is proven.
 */
import { spawnSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_API_KEY, SANDBOX_SEAL as seal, SANDBOX_SECRETS } from '../../src/sandbox/deps.js';
import { PROVIDER_IDS, PROVIDER_PRESETS } from '../../src/core/provider-presets.js';
import { runCli } from '../helpers/run-cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/tmp.js';
import { opensslVerifiesCms } from '../helpers/pdf-judges.js';

let shared: TestSandbox;
beforeAll(async () => {
  shared = await startTestSandbox({ autoApprove: true });
});
afterAll(async () => shared?.close());

describe('esign config init --provider', () => {
  it('--provider list names every preset with its settings', async () => {
    const run = await runCli(['config', 'init', '--provider', 'list', '--json'], {
      env: { ESIGN_CONFIG_DIR: await tempDir() },
    });
    expect(run.code, run.stderr).toBe(0);
    const { presets } = JSON.parse(run.stdout) as { presets: Array<{ id: string; settings: Record<string, string> }> };
    expect(presets.map((preset) => preset.id)).toEqual(PROVIDER_IDS);
    expect(presets.find((preset) => preset.id === 'sslcom')?.settings).toMatchObject({
      cscVersion: '0',
      oauthTokenUrl: 'https://login.ssl.com/oauth2/token',
      serviceAuth: 'password',
      tokenRequest: 'json',
    });
    const text = await runCli(['config', 'init', '--provider', 'list'], { env: { ESIGN_CONFIG_DIR: await tempDir() } });
    expect(text.stdout).toContain('atrust-test');
  });

  it('fills in the preset, --set on top; an unknown preset is a usage error naming the known ones', async () => {
    const env = { ESIGN_CONFIG_DIR: await tempDir() };
    const init = await runCli(['config', 'init', 'qtsp', '--provider', 'atrust-test', '--set', 'clientId=mine'], {
      env,
    });
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain('From the A-Trust');
    const oauth = await runCli(['config', 'get', 'oauthUrl'], { env });
    expect(oauth.stdout.trim()).toBe(PROVIDER_PRESETS['atrust-test']!.settings.oauthUrl!.value);
    expect((await runCli(['config', 'get', 'clientId'], { env })).stdout.trim()).toBe('mine');
    const unknown = await runCli(['config', 'init', 'x', '--provider', 'nope'], { env });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('sslcom-sandbox');
  });

  it('sslcom-sandbox, pointed at the esign sandbox that emulates it (v0 paths, token on another path, password grant as JSON), signs', async () => {
    const env = {
      ESIGN_CONFIG_DIR: await tempDir(),
      DISPLAY: undefined,
      WAYLAND_DISPLAY: undefined,
      ESIGN_SANDBOX_DIR: undefined,
    };
    const signing = shared.sandbox.urls.signing;
    const init = await runCli(
      [
        'config',
        'init',
        'ssl',
        '--provider',
        'sslcom-sandbox',
        '--set',
        `signingBaseUrl=${signing}`,
        '--set',
        `oauthTokenUrl=${signing}/login/oauth2/token`,
        '--set',
        `clientId=${seal.clientId}`,
        '--set',
        `tsaUrls=${shared.sandbox.urls.tsaEndpoint}`,
        '--set',
        `trustAnchors=${shared.rootPemPath}`,
        '--set',
        `credential=${seal.pinOnlyCredentialID}`,
        '--set',
        'cscClientData=EVCS',
      ],
      { env },
    );
    expect(init.code, init.stderr).toBe(0);
    shared.sandbox.quirks.set(PROVIDER_PRESETS['sslcom-sandbox']!.emulatedBy as never);
    try {
      const secrets = {
        ...env,
        ESIGN_SIGNING_USERNAME: seal.username,
        ESIGN_SIGNING_PASSWORD: seal.password,
        ESIGN_CREDENTIAL_PIN: seal.pin,
        ESIGN_TSA_PASSWORD: 'sandbox-tsa',
        ESIGN_TSA_USERNAME: 'esign',
      };
      const listed = await runCli(['credentials', 'list', '--json'], { env: secrets });
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout).toContain(seal.pinOnlyCredentialID);
      const dir = await tempDir();
      const pdf = join(dir, 'a.pdf');
      await writeFile(pdf, await readFile(new URL('../../samples/contract.pdf', import.meta.url)));
      const before = shared.sandbox.requestLog.length;
      const signed = await runCli(['sign', '--json', pdf], { env: secrets });
      expect(signed.code, signed.stderr).toBe(0);
      await opensslVerifiesCms(signed.jsonLines<{ output: string }>()[0]!.output, shared.rootPemPath);
      expect(
        shared.sandbox.requestLog.slice(before).filter((route) => route.includes('/csc/v0/signatures/signHash')),
      ).toHaveLength(1);
    } finally {
      shared.sandbox.quirks.set([]);
    }
  });
});

const FOLLOWING_BROWSER = `node ${fileURLToPath(new URL('../helpers/follow-redirects-browser.js', import.meta.url))}`;

/** A preset's URLs moved onto the sandbox: the API to the dialect it speaks, an OAuth server apart to the quirk oauth-elsewhere's. */
function pointedAtSandbox(id: string): { args: string[]; dialect: 'v1' | 'v2' } {
  const settings = Object.fromEntries(
    Object.entries(PROVIDER_PRESETS[id]!.settings).map(([key, setting]) => [key, setting!.value]),
  );
  const dialect = settings['cscVersion'] === '2' ? 'v2' : 'v1';
  const signing = dialect === 'v2' ? shared.sandbox.urls.signingV2 : shared.sandbox.urls.signing;
  const moved: Record<string, string> = { signingBaseUrl: signing };
  if (settings['oauthUrl']) moved['oauthUrl'] = `${signing}/login`;
  if (settings['oauthAuthorizeUrl']) moved['oauthAuthorizeUrl'] = `${signing}/login/oauth2/authorize`;
  if (settings['oauthTokenUrl']) moved['oauthTokenUrl'] = `${signing}/login/oauth2/token`;
  return { args: Object.entries(moved).flatMap(([key, value]) => ['--set', `${key}=${value}`]), dialect };
}

/** Who signs under a preset's sign-in: the organization's seal for password and auth/login, a person in the browser otherwise. */
function signerOf(id: string): { set: string[]; env: Record<string, string>; global: string[] } {
  const serviceAuth = PROVIDER_PRESETS[id]!.settings.serviceAuth?.value;
  if (serviceAuth === 'password' || serviceAuth === 'basic') {
    return {
      set: ['--set', `clientId=${seal.clientId}`, '--set', `credential=${seal.pinOnlyCredentialID}`],
      env: {
        ESIGN_CLIENT_SECRET: seal.clientSecret,
        ESIGN_SIGNING_USERNAME: seal.username,
        ESIGN_SIGNING_PASSWORD: seal.password,
        ESIGN_CREDENTIAL_PIN: seal.pin,
      },
      global: [],
    };
  }
  // The sandbox approves at once: a browser that follows its redirects to esign's loopback listener.
  return {
    set: ['--set', `clientId=${SANDBOX_SECRETS.clientId}`, '--set', 'credential=alice-rsa2048'],
    env: { ESIGN_CLIENT_SECRET: SANDBOX_SECRETS.clientSecret },
    global: ['--browser', FOLLOWING_BROWSER],
  };
}

describe('every preset, pointed at the esign sandbox with the quirks that emulate it', () => {
  it.each(PROVIDER_IDS.filter((id) => id !== 'sslcom-sandbox'))(
    '%s: lists, signs a PDF and a .p7s, and openssl verifies both given only the root',
    async (id) => {
      const env: Record<string, string | undefined> = {
        ESIGN_CONFIG_DIR: await tempDir(),
        DISPLAY: undefined,
        WAYLAND_DISPLAY: undefined,
        ESIGN_SANDBOX_DIR: undefined,
      };
      const { args, dialect } = pointedAtSandbox(id);
      const signer = signerOf(id);
      const preset = PROVIDER_PRESETS[id]!;
      const extra = [
        ...(preset.emulatedBy.includes('client-data-filter') ? ['--set', 'cscClientData=EVCS'] : []),
        ...(preset.settings.accountToken ? ['--set', 'accountId=acct-29'] : []),
      ];
      const init = await runCli(
        [
          'config',
          'init',
          'provider',
          '--provider',
          id,
          ...args,
          ...signer.set,
          ...extra,
          '--set',
          `tsaUrls=${shared.sandbox.urls.tsaEndpoint}`,
          '--set',
          `trustAnchors=${shared.rootPemPath}`,
        ],
        { env },
      );
      expect(init.code, init.stderr).toBe(0);
      shared.sandbox.quirks.set(preset.emulatedBy as never);
      try {
        const secrets = {
          ...env,
          ...signer.env,
          ...(preset.settings.apiKeyHeader ? { ESIGN_API_KEY: SANDBOX_API_KEY } : {}),
          ESIGN_TSA_PASSWORD: 'sandbox-tsa',
          ESIGN_TSA_USERNAME: 'esign',
        };
        const listed = await runCli([...signer.global, 'credentials', 'list', '--json'], { env: secrets });
        expect(listed.code, listed.stderr).toBe(0);
        expect(listed.stdout).toContain(signer.set[3]!.slice('credential='.length));
        const dir = await tempDir();
        const pdf = join(dir, 'a.pdf');
        const text = join(dir, 'notes.txt');
        await writeFile(pdf, await readFile(new URL('../../samples/contract.pdf', import.meta.url)));
        await writeFile(text, `signed under the ${id} preset (CSC ${dialect})\n`);
        const signed = await runCli([...signer.global, 'sign', '--json', pdf, text], { env: secrets });
        expect(signed.code, signed.stderr).toBe(0);
        const outputs = signed.jsonLines<{ output: string }>().map((line) => line.output);
        await opensslVerifiesCms(
          outputs.find((output) => output.endsWith('.pdf'))!,
          shared.rootPemPath,
        );
        const cms = spawnSync(
          'openssl',
          [
            'cms',
            '-verify',
            '-binary',
            '-inform',
            'DER',
            '-in',
            `${text}.p7s`,
            '-content',
            text,
            '-CAfile',
            shared.rootPemPath,
            '-purpose',
            'any',
            '-out',
            '/dev/null',
          ],
          { encoding: 'utf8' },
        );
        expect(cms.status, cms.stderr).toBe(0);
      } finally {
        shared.sandbox.quirks.set([]);
      }
    },
  );
});
