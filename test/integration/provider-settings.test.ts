/**
 * Settings for documented provider behaviours (issue 29 item 4), each against a sandbox that
 * behaves that way (a quirk), over real HTTP: without the setting esign fails as a user would see,
 * with it a batch needing several authorizations signs a PDF and a .p7s, judged by openssl.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_API_KEY, SANDBOX_SEAL as seal } from '../../src/sandbox/deps.js';
import type { QuirkName } from '../../src/sandbox/signing/quirks.js';
import { runCli } from '../helpers/run-cli.js';
import { sealEnv as sealEnvOf, startTestSandbox, type Dialect, type TestSandbox } from '../helpers/sandbox.js';
import { batchInputs } from '../helpers/batch-inputs.js';
import { tempDir } from '../helpers/tmp.js';
import { opensslVerifiesCms, runTool } from '../helpers/pdf-judges.js';

let shared: TestSandbox;
beforeAll(async () => {
  shared = await startTestSandbox({ autoApprove: true });
});
afterAll(async () => shared?.close());
afterEach(() => {
  shared.sandbox.quirks.set([]);
});

const DIALECTS: Dialect[] = ['v1', 'v2'];

function quirks(...names: QuirkName[]): void {
  shared.sandbox.quirks.set(names);
}

function sealEnv(dialect: Dialect, extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return sealEnvOf(shared, dialect, extra);
}

/** The built-in sandbox profile of a dialect (browser approvals, esign's --auto-approve browser). */
function browserEnv(
  dialect: Dialect,
  extra: Record<string, string | undefined> = {},
): Record<string, string | undefined> {
  return { ...shared.env, ESIGN_PROFILE: dialect === 'v2' ? 'sandbox-v2' : 'sandbox', ...extra };
}

function calls(since: number, pattern: RegExp): number {
  return shared.sandbox.requestLog.slice(since).filter((route) => pattern.test(route)).length;
}

/** Two PDFs and a text file (a detached .p7s), signed at most two per authorization; every output judged by openssl given only the root. */
async function signsBatch(env: Record<string, string | undefined>, args: string[] = []): Promise<number> {
  const files = await batchInputs();
  const before = shared.sandbox.requestLog.length;
  const run = await runCli([...args, 'sign', '--json', ...files], { env: { ESIGN_CSC_MAX_SIGNATURES: '2', ...env } });
  expect(run.code, run.stderr).toBe(0);
  const outputs = run.jsonLines<{ input: string; output: string }>();
  expect(outputs).toHaveLength(3);
  for (const { input, output } of outputs) {
    if (output.endsWith('.pdf')) {
      await opensslVerifiesCms(output, shared.rootPemPath);
      continue;
    }
    const verify = await runTool('openssl', [
      'cms',
      '-verify',
      '-binary',
      '-inform',
      'DER',
      '-in',
      output,
      '-content',
      input,
      '-CAfile',
      shared.rootPemPath,
      '-purpose',
      'any',
      '-out',
      '/dev/null',
    ]);
    expect(verify.status, verify.stderr).toBe(0);
  }
  return calls(before, /signatures\/signHash/);
}

/** credentials list and info succeed and show the seal. */
async function listsAndInfo(env: Record<string, string | undefined>): Promise<void> {
  const listed = await runCli(['credentials', 'list', '--json'], { env });
  expect(listed.code, listed.stderr).toBe(0);
  expect(listed.stdout).toContain(seal.pinOnlyCredentialID);
  const info = await runCli(['credentials', 'info', seal.pinOnlyCredentialID, '--json'], { env });
  expect(info.code, info.stderr).toBe(0);
}

describe.each(DIALECTS)('the OAuth server apart from the API (quirk oauth-elsewhere; CSC %s)', (dialect) => {
  it('fails without the setting; ESIGN_OAUTH_URL, or ESIGN_OAUTH_TOKEN_URL alone, finds it', async () => {
    quirks('oauth-elsewhere');
    const failed = await runCli(['credentials', 'list'], {
      env: sealEnv(dialect, { ESIGN_CONFIG_DIR: await tempDir() }),
    });
    expect(failed.code).toBe(4);
    expect(failed.stderr).toContain('refused the client credentials token request with HTTP 404');
    const base = dialect === 'v2' ? shared.sandbox.urls.signingV2 : shared.sandbox.urls.signing;
    const env = sealEnv(dialect, { ESIGN_CONFIG_DIR: await tempDir(), ESIGN_OAUTH_URL: `${base}/login` });
    await listsAndInfo(env);
    expect(await signsBatch(env)).toBe(2);
    await listsAndInfo(
      sealEnv(dialect, { ESIGN_CONFIG_DIR: await tempDir(), ESIGN_OAUTH_TOKEN_URL: `${base}/login/oauth2/token` }),
    );
  });

  it('browser sign-in and approvals go to ESIGN_OAUTH_AUTHORIZE_URL and ESIGN_OAUTH_TOKEN_URL', async () => {
    quirks('oauth-elsewhere');
    const base = dialect === 'v2' ? shared.sandbox.urls.signingV2 : shared.sandbox.urls.signing;
    const before = shared.sandbox.requestLog.length;
    await signsBatch(
      browserEnv(dialect, {
        ESIGN_OAUTH_AUTHORIZE_URL: `${base}/login/oauth2/authorize`,
        ESIGN_OAUTH_TOKEN_URL: `${base}/login/oauth2/token`,
      }),
      ['--auto-approve'],
    );
    expect(calls(before, /GET \/login\/oauth2\/authorize/)).toBeGreaterThanOrEqual(2);
  });
});

describe.each(DIALECTS)('token request and client authentication (CSC %s)', (dialect) => {
  it('json-token-request: refused as a form; ESIGN_TOKEN_REQUEST=json signs', async () => {
    quirks('json-token-request');
    const failed = await runCli(['credentials', 'list'], {
      env: sealEnv(dialect, { ESIGN_CONFIG_DIR: await tempDir() }),
    });
    expect(failed.code).not.toBe(0);
    expect(failed.stderr).toContain('must be a JSON object');
    const env = sealEnv(dialect, { ESIGN_CONFIG_DIR: await tempDir(), ESIGN_TOKEN_REQUEST: 'json' });
    await listsAndInfo(env);
    expect(await signsBatch(env)).toBe(2);
  });

  it('client-auth-body: HTTP Basic refused; ESIGN_CLIENT_AUTH=body signs', async () => {
    quirks('client-auth-body');
    const failed = await runCli(['credentials', 'list'], {
      env: sealEnv(dialect, { ESIGN_CONFIG_DIR: await tempDir() }),
    });
    expect(failed.code).not.toBe(0);
    const env = sealEnv(dialect, { ESIGN_CONFIG_DIR: await tempDir(), ESIGN_CLIENT_AUTH: 'body' });
    await listsAndInfo(env);
    expect(await signsBatch(env)).toBe(2);
  });

  it('password grant only, JSON, client_id alone (SSL.com as jsign records it): ESIGN_SERVICE_AUTH=password signs', async () => {
    quirks('password-grant', 'json-token-request');
    const refused = await runCli(['credentials', 'list'], {
      env: sealEnv(dialect, { ESIGN_CONFIG_DIR: await tempDir(), ESIGN_TOKEN_REQUEST: 'json' }),
    });
    expect(refused.stderr).toContain('unsupported_grant_type');
    const env = sealEnv(dialect, {
      ESIGN_CONFIG_DIR: await tempDir(),
      ESIGN_SERVICE_AUTH: 'password',
      ESIGN_SIGNING_USERNAME: seal.username,
      ESIGN_SIGNING_PASSWORD: seal.password,
      ESIGN_TOKEN_REQUEST: 'json',
      ESIGN_CLIENT_AUTH: 'none',
      ESIGN_CLIENT_SECRET: undefined,
    });
    await listsAndInfo(env);
    expect(await signsBatch(env)).toBe(2);
  });
});

describe('settings that contradict each other', () => {
  it.each<[string, Record<string, string | undefined>, string[]]>([
    ['password without a user', { ESIGN_SERVICE_AUTH: 'password' }, ['ESIGN_SERVICE_AUTH', 'ESIGN_SIGNING_USERNAME']],
    [
      'an API-key header without the key',
      { ESIGN_API_KEY_HEADER: 'x-api-key' },
      ['ESIGN_API_KEY_HEADER', 'ESIGN_API_KEY'],
    ],
    ['an API key without its header', { ESIGN_API_KEY: 'k-123' }, ['ESIGN_API_KEY', 'ESIGN_API_KEY_HEADER']],
    ['an account token without an account', { ESIGN_ACCOUNT_TOKEN: 'on' }, ['ESIGN_ACCOUNT_TOKEN', 'ESIGN_ACCOUNT_ID']],
    [
      'a client certificate without its key',
      { ESIGN_CLIENT_CERT: '/nonexistent/cert.pem' },
      ['ESIGN_CLIENT_CERT', 'ESIGN_CLIENT_KEY'],
    ],
  ])('%s: exit 3, one line naming both, before any request', async (_case, extra, named) => {
    const before = shared.sandbox.requestLog.length;
    const run = await runCli(['credentials', 'list'], {
      env: sealEnv('v1', { ESIGN_CONFIG_DIR: await tempDir(), ESIGN_SIGNING_USERNAME: undefined, ...extra }),
    });
    expect(run.code, run.stderr).toBe(3);
    const lines = run.stderr
      .trim()
      .split('\n')
      .filter((line) => line.startsWith('esign:'));
    expect(lines).toHaveLength(1);
    for (const word of named) expect(lines[0]).toContain(word);
    expect(shared.sandbox.requestLog.length).toBe(before);
  });

  it.each([
    ['ESIGN_TOKEN_REQUEST', 'xml'],
    ['ESIGN_CLIENT_AUTH', 'mtls'],
    ['ESIGN_HASH_ENCODING', 'hex'],
    ['ESIGN_CSC_VERSION', '3'],
    ['ESIGN_OAUTH_URL', 'ftp://x'],
    ['ESIGN_API_KEY_HEADER', 'x api'],
    ['ESIGN_TSA_POLICY', 'freetsa'],
  ])('%s=%s: exit 3 naming it', async (variable, value) => {
    const run = await runCli(['credentials', 'list'], {
      env: sealEnv('v1', { ESIGN_CONFIG_DIR: await tempDir(), [variable]: value }),
    });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain(variable);
  });

  it('ESIGN_TSA_POLICY=any asks the TSA for no policy and takes its own; an OID it does not issue under is refused naming the setting', async () => {
    expect(await signsBatch(sealEnv('v1', { ESIGN_CONFIG_DIR: await tempDir(), ESIGN_TSA_POLICY: 'any' }))).toBe(2);
    const dir = await tempDir();
    const pdf = join(dir, 'a.pdf');
    await writeFile(pdf, await readFile(new URL('../../samples/contract.pdf', import.meta.url)));
    const refused = await runCli(['sign', pdf], {
      env: sealEnv('v1', { ESIGN_CONFIG_DIR: await tempDir(), ESIGN_TSA_POLICY: '1.2.3.4.1' }),
    });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('ESIGN_TSA_POLICY');
    expect(await readdir(dir)).toEqual(['a.pdf']);
  });
});

describe.each(DIALECTS)('the authorization URL (CSC %s)', (dialect) => {
  it('base64-authorize-hash: base64url refused; ESIGN_HASH_ENCODING=base64 signs', async () => {
    quirks('base64-authorize-hash');
    const dir = await tempDir();
    const pdf = join(dir, 'c.pdf');
    await writeFile(pdf, await readFile(new URL('../../samples/contract.pdf', import.meta.url)));
    const failed = await runCli(['--auto-approve', 'sign', pdf], { env: browserEnv(dialect) });
    expect(failed.code).not.toBe(0);
    expect(await signsBatch(browserEnv(dialect, { ESIGN_HASH_ENCODING: 'base64' }), ['--auto-approve'])).toBe(2);
  });

  it('account-token: refused without; ESIGN_ACCOUNT_TOKEN=on with ESIGN_ACCOUNT_ID signs, every authorization carrying a fresh token', async () => {
    quirks('account-token');
    const failed = await runCli(['--auto-approve', 'credentials', 'list'], {
      env: browserEnv(dialect, { ESIGN_CONFIG_DIR: await tempDir() }),
    });
    expect(failed.code).not.toBe(0);
    expect(
      await signsBatch(
        browserEnv(dialect, {
          ESIGN_CONFIG_DIR: await tempDir(),
          ESIGN_ACCOUNT_TOKEN: 'on',
          ESIGN_ACCOUNT_ID: 'acct-29',
        }),
        ['--auto-approve'],
      ),
    ).toBe(2);
  });
});

describe.each(DIALECTS)('listing (CSC %s)', (dialect) => {
  it('client-data-filter: an empty list says a filter may hide credentials; ESIGN_CSC_CLIENT_DATA=EVCS lists them', async () => {
    quirks('client-data-filter');
    const empty = await runCli(['credentials', 'list'], { env: sealEnv(dialect) });
    expect(empty.code, empty.stderr).toBe(0);
    expect(empty.stdout).toContain('A filter may be hiding them');
    expect(empty.stdout).toContain('ESIGN_CSC_CLIENT_DATA');
    await listsAndInfo(sealEnv(dialect, { ESIGN_CSC_CLIENT_DATA: 'EVCS' }));
  });
});

describe.each(DIALECTS)('service authentication by an API key (quirk api-key; CSC %s)', (dialect) => {
  it('refused without; ESIGN_API_KEY_HEADER and ESIGN_API_KEY sign, and the key is never printed', async () => {
    quirks('api-key');
    const failed = await runCli(['credentials', 'list'], {
      env: sealEnv(dialect, { ESIGN_CONFIG_DIR: await tempDir() }),
    });
    expect(failed.code).toBe(4);
    expect(failed.stderr).toContain('A valid API key is required');
    const env = sealEnv(dialect, {
      ESIGN_CONFIG_DIR: await tempDir(),
      ESIGN_API_KEY_HEADER: 'X-Api-Key',
      ESIGN_API_KEY: SANDBOX_API_KEY,
    });
    await listsAndInfo(env);
    expect(await signsBatch(env)).toBe(2);
    const verbose = await runCli(['--verbose', 'credentials', 'list'], { env });
    expect(verbose.code, verbose.stderr).toBe(0);
    expect(verbose.stdout + verbose.stderr).not.toContain(SANDBOX_API_KEY);
  });
});

describe('CSC v0 paths (quirk v0-paths)', () => {
  it('/csc/v1/ answers 404; ESIGN_CSC_VERSION=0 lists and signs on /csc/v0/', async () => {
    quirks('v0-paths');
    const failed = await runCli(['credentials', 'list'], {
      env: sealEnv('v1', { ESIGN_CSC_VERSION: '1', ESIGN_CONFIG_DIR: await tempDir() }),
    });
    expect(failed.code).not.toBe(0);
    const env = sealEnv('v1', { ESIGN_CSC_VERSION: '0', ESIGN_CONFIG_DIR: await tempDir() });
    const before = shared.sandbox.requestLog.length;
    await listsAndInfo(env);
    expect(await signsBatch(env)).toBe(2);
    expect(
      calls(
        before,
        /POST \/csc\/v0\/(info|credentials\/list|credentials\/info|credentials\/authorize|signatures\/signHash)/,
      ),
    ).toBeGreaterThanOrEqual(5);
    expect(calls(before, /\/csc\/v1\//)).toBe(0);
  });
});

describe('a TOTP secret in base64 (SSL.com hands them out so)', () => {
  it('signs with the TOTP seal given its secret in base64', async () => {
    const bytes = Buffer.from((await import('otpauth')).Secret.fromBase32(seal.totpSecret).bytes);
    const dir = await tempDir();
    const pdf = join(dir, 'c.pdf');
    await writeFile(pdf, await readFile(new URL('../../samples/contract.pdf', import.meta.url)));
    const run = await runCli(['sign', pdf], {
      env: sealEnv('v1', {
        ESIGN_CREDENTIAL: seal.credentialID,
        ESIGN_TOTP_SECRET: `base64:${bytes.toString('base64')}`,
      }),
    });
    expect(run.code, run.stderr).toBe(0);
  });
});
