/**
 * Security properties of esign against the sandbox, over real HTTP (issue 9 item 4):
 * - state, nonce and PKCE misuse: an altered state on the redirect, an ID token with another
 *   nonce, an intercepted code redeemed without (or with a wrong) PKCE verifier, a code replayed;
 * - redirects only to loopback: a non-loopback redirect URI is refused by client and services;
 * - the loopback receiver listens on 127.0.0.1 only (not on the machine's other addresses);
 * - token and session files are mode 0600;
 * - plain http:// is refused for a non-loopback service URL before any request;
 * - no token, SAD, code, client secret or TSA password in any output, even with --verbose: every
 *   secret the in-process sandbox issues is recorded at its HTTP responses and searched for in the
 *   captured stdout/stderr of representative commands (and their failures); the same scan runs
 *   over the output of the whole suite at its end (test/helpers/secret-scan.global.ts);
 * - the SAD is never written to disk (config dir, working dir, outputs; and every test's temp dirs,
 *   checked as they are removed).
 */
import { createHash, randomBytes } from 'node:crypto';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isEsignError } from '../../src/core/errors.js';
import type { BrowserLauncher } from '../../src/core/ports.js';
import { authorizeInBrowser } from '../../src/io/loopback.js';
import { buildClassicPdf } from '../helpers/pdf-fixtures.js';
import { runCli, type CliResult } from '../helpers/run-cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import {
  authorizeRequests,
  CONFIGURED_SECRETS,
  issuedSecrets as issued,
  recordSandboxResponses,
} from '../helpers/secret-ledger.js';
import { tempDirForFile } from '../helpers/tmp.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';

// ---- fixture ----------------------------------------------------------------------------------

let t: TestSandbox;
let work: { dir: string; remove: () => Promise<void> };
const outputs: Array<{ args: string[]; result: CliResult }> = [];

async function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const result = await runCli(args, { env: { ...t.env, ...env }, cwd: work.dir, timeoutMs: 120_000 });
  outputs.push({ args, result });
  return result;
}

beforeAll(async () => {
  recordSandboxResponses();
  t = await startTestSandbox({ autoApprove: true, s3: true });
  work = await tempDirForFile('esign-security-');
  await writeFile(join(work.dir, 'contract.pdf'), buildClassicPdf());
  await writeFile(join(work.dir, 'notes.txt'), 'not a pdf\n');
  await writeFile(join(work.dir, 'broken.pdf'), '%PDF-1.7\nnothing else\n');
}, 120_000);

afterAll(async () => {
  await t?.close();
  await work?.remove();
});

function allFiles(dir: string): Promise<string[]> {
  return readdir(dir, { recursive: true, withFileTypes: true }).then((entries) =>
    entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name)),
  );
}

// ---- state, nonce, PKCE, code replay ---------------------------------------------------------

const silent = { say: () => undefined, note: () => undefined };

/** A browser that fetches the authorization URL (sandbox auto-approve) and hands back the redirect, maybe altered. */
function interceptingBrowser(deliver: (redirect: URL) => Promise<void>): BrowserLauncher & { seen: URL[] } {
  const seen: URL[] = [];
  return {
    seen,
    async open(url: string) {
      seen.push(new URL(url));
      const response = await fetch(url, { redirect: 'manual' });
      const location = response.headers.get('location');
      if (!location) throw new Error(`no redirect from ${url}: ${response.status}`);
      await deliver(new URL(location));
    },
  };
}

function signingAuthorizeUrl(redirectUri: string, state: string, extra: Record<string, string> = {}): string {
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: 'esign-cli',
    redirect_uri: redirectUri,
    scope: 'service',
    state,
    ...extra,
  });
  return `${t.sandbox.urls.signing}/oauth2/authorize?${query.toString()}`;
}

async function tokenRequest(
  base: string,
  form: Record<string, string>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${base}/oauth2/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from('esign-cli:sandbox-secret').toString('base64')}`,
    },
    body: new URLSearchParams(form).toString(),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('state, nonce and PKCE misuse', () => {
  it('a redirect whose state was altered is AUTH_STATE_MISMATCH, and the receiver then answers nothing more', async () => {
    let second: number | undefined;
    const browser = interceptingBrowser(async (redirect) => {
      const forged = new URL(redirect);
      forged.searchParams.set('state', `${redirect.searchParams.get('state') ?? ''}x`);
      await fetch(forged);
      second = (await fetch(redirect)).status; // the genuine redirect, too late: the receiver answers once
    });
    const error = await authorizeInBrowser({
      buildAuthorizeUrl: signingAuthorizeUrl,
      redirectUri: 'http://127.0.0.1:0/callback',
      browser,
      timeoutMs: 10_000,
      purpose: 'test',
      terminal: silent,
    }).catch((e: unknown) => e);
    expect(isEsignError(error, 'AUTH_STATE_MISMATCH')).toBe(true);
    expect(second === undefined || second === 404).toBe(true);
  });

  it('a redirect without state (an injected code) is AUTH_STATE_MISMATCH', async () => {
    const browser = interceptingBrowser(async (redirect) => {
      const forged = new URL(redirect);
      forged.searchParams.delete('state');
      await fetch(forged);
    });
    const error = await authorizeInBrowser({
      buildAuthorizeUrl: signingAuthorizeUrl,
      redirectUri: 'http://127.0.0.1:0/callback',
      browser,
      timeoutMs: 10_000,
      purpose: 'test',
      terminal: silent,
    }).catch((e: unknown) => e);
    expect(isEsignError(error, 'AUTH_STATE_MISMATCH')).toBe(true);
  });

  it('each state is fresh and 256 bits', async () => {
    const states = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const browser = interceptingBrowser(async (redirect) => void (await fetch(redirect)));
      const result = await authorizeInBrowser({
        buildAuthorizeUrl: signingAuthorizeUrl,
        redirectUri: 'http://127.0.0.1:0/callback',
        browser,
        timeoutMs: 10_000,
        purpose: 'test',
        terminal: silent,
      });
      expect(Buffer.from(result.state, 'base64url').length).toBeGreaterThanOrEqual(32);
      states.add(result.state);
    }
    expect(states.size).toBe(3);
  });

  it.each([
    ['signing', () => t.sandbox.urls.signing, 'service'],
    ['identity', () => t.sandbox.urls.identity, 'openid'],
  ])(
    '%s service: an intercepted code cannot be redeemed without the PKCE verifier, with a wrong one, or twice',
    async (_, base, scope) => {
      const verifier = randomBytes(32).toString('base64url');
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      const redirectUri = 'http://127.0.0.1:8765/callback';
      const codeFor = async (): Promise<string> => {
        const query = new URLSearchParams({
          response_type: 'code',
          client_id: 'esign-cli',
          redirect_uri: redirectUri,
          scope,
          state: 's',
          nonce: 'n',
          code_challenge: challenge,
          code_challenge_method: 'S256',
        });
        const response = await fetch(`${base()}/oauth2/authorize?${query.toString()}`, { redirect: 'manual' });
        const code = new URL(response.headers.get('location') ?? 'http://x/').searchParams.get('code');
        expect(code).toBeTruthy();
        return code ?? '';
      };
      const form = { grant_type: 'authorization_code', client_id: 'esign-cli', redirect_uri: redirectUri };
      const without = await tokenRequest(base(), { ...form, code: await codeFor() });
      expect(without.status).toBe(400);
      const wrong = await tokenRequest(base(), {
        ...form,
        code: await codeFor(),
        code_verifier: randomBytes(32).toString('base64url'),
      });
      expect(wrong.status).toBe(400);
      const code = await codeFor();
      const good = await tokenRequest(base(), { ...form, code, code_verifier: verifier });
      expect(good.status, JSON.stringify(good.body)).toBe(200);
      const replay = await tokenRequest(base(), { ...form, code, code_verifier: verifier });
      expect(replay.status).toBe(400);
    },
  );

  it('the CLI sends S256 PKCE, a fresh nonce and a fresh 256-bit state on every browser step', async () => {
    const from = authorizeRequests.length;
    for (const args of [
      ['login', '--auto-approve'],
      ['login', '--auto-approve'],
      ['--auto-approve', 'credentials', 'list'],
    ]) {
      const result = await cli(['--verbose', ...args], { ESIGN_CONFIG_DIR: join(work.dir, 'pkce-config') });
      expect(result.code, result.stderr).toBe(0);
    }
    const requests = authorizeRequests.slice(from);
    expect(requests.length).toBeGreaterThanOrEqual(3);
    for (const query of requests) {
      expect(query.get('code_challenge_method')).toBe('S256');
      expect(query.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(query.get('state') ?? '', 'base64url').length).toBeGreaterThanOrEqual(16);
      expect(query.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    }
    const identity = requests.filter((query) => query.get('scope')?.includes('openid'));
    expect(identity.length).toBe(2);
    for (const query of identity) expect((query.get('nonce') ?? '').length).toBeGreaterThanOrEqual(22);
    const distinct = (name: string) => new Set(requests.map((query) => query.get(name))).size;
    expect(distinct('state')).toBe(requests.length);
    expect(distinct('code_challenge')).toBe(requests.length);
    expect(new Set(identity.map((query) => query.get('nonce'))).size).toBe(identity.length);
  });

  it('an ID token with another nonce is refused (OIDC_NONCE_MISMATCH, exit 4) and no session is stored', async () => {
    const configDir = join(work.dir, 'nonce-config');
    const armed = await fetch(`${t.sandbox.urls.identity}/_sandbox/switches`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ idToken: 'wrong-nonce' }),
    });
    expect(armed.status).toBe(200);
    const result = await cli(['--verbose', '--json', 'login', '--auto-approve'], { ESIGN_CONFIG_DIR: configDir });
    expect(result.code).toBe(4);
    expect(result.stdout + result.stderr).toContain('OIDC_NONCE_MISMATCH');
    const files = await allFiles(configDir).catch(() => []);
    for (const file of files) expect(await readFile(file, 'utf8')).not.toMatch(/access_token|idToken|accessToken/);
  });
});

// ---- redirects and the loopback receiver -------------------------------------------------------

describe('redirects stay on this machine', () => {
  it.each([
    'http://evil.example/callback',
    'https://127.0.0.1.evil.example/cb',
    'http://0.0.0.0:8765/callback',
    'http://192.168.1.10:8765/callback',
  ])('the client refuses the redirect URI %s before opening anything', async (redirectUri) => {
    let opened = false;
    const error = await authorizeInBrowser({
      buildAuthorizeUrl: signingAuthorizeUrl,
      redirectUri,
      browser: { open: async () => void (opened = true) },
      timeoutMs: 5_000,
      purpose: 'test',
      terminal: silent,
    }).catch((e: unknown) => e);
    expect(isEsignError(error)).toBe(true);
    expect(opened).toBe(false);
  });

  it('the CLI refuses a non-loopback redirectUri (exit 3) without a browser step', async () => {
    const result = await cli(['--verbose', 'login', '--auto-approve'], {
      ESIGN_REDIRECT_URI: 'http://evil.example/callback',
    });
    expect(result.code).toBe(3);
  });

  it.each([
    ['signing', () => t.sandbox.urls.signing, 'service'],
    ['identity', () => t.sandbox.urls.identity, 'openid'],
  ])('the %s service never redirects to a non-loopback redirect_uri', async (_, base, scope) => {
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: 'esign-cli',
      redirect_uri: 'http://evil.example/callback',
      scope,
      state: 's',
      nonce: 'n',
    });
    const response = await fetch(`${base()}/oauth2/authorize?${query.toString()}`, { redirect: 'manual' });
    expect(response.headers.get('location') ?? '').not.toContain('evil.example');
  });

  it('the loopback receiver is reachable on 127.0.0.1 only, not on the other local addresses', async () => {
    const others = Object.values(networkInterfaces())
      .flat()
      .filter((address) => address !== undefined && !address.internal)
      .map((address) => address!.address)
      .concat(['::1']);
    const attempts: Array<{ address: string; connected: boolean }> = [];
    const tryConnect = (host: string, port: number): Promise<boolean> =>
      new Promise((resolve) => {
        const socket = connect({ host, port, timeout: 1_000 });
        socket.once('connect', () => (socket.destroy(), resolve(true)));
        socket.once('error', () => resolve(false));
        socket.once('timeout', () => (socket.destroy(), resolve(false)));
      });
    const browser = interceptingBrowser(async (redirect) => {
      const port = Number(redirect.port);
      expect(redirect.hostname).toBe('127.0.0.1');
      for (const address of others) attempts.push({ address, connected: await tryConnect(address, port) });
      expect(await tryConnect('127.0.0.1', port)).toBe(true);
      await fetch(redirect);
    });
    const result = await authorizeInBrowser({
      buildAuthorizeUrl: signingAuthorizeUrl,
      redirectUri: 'http://127.0.0.1:0/callback',
      browser,
      timeoutMs: 10_000,
      purpose: 'test',
      terminal: silent,
    });
    expect(result.code).toBeTruthy();
    expect(attempts.length).toBeGreaterThan(0);
    expect(attempts.filter((attempt) => attempt.connected)).toEqual([]);
    console.info(`receiver probed on ${attempts.map((attempt) => attempt.address).join(', ')}: refused on all`);
  });
});

// ---- files, URLs, and what is printed ------------------------------------------------------------

describe('secrets at rest and in transit', () => {
  it('refuses plain http:// for a non-loopback service URL (exit 3) before any request', async () => {
    const logged = t.sandbox.requestLog.length;
    for (const [variable, args] of [
      ['ESIGN_SIGNING_URL', ['credentials', 'list']],
      ['ESIGN_IDENTITY_URL', ['login']],
      ['ESIGN_TSA_URL', ['timestamp', join(work.dir, 'notes.txt')]],
    ] as const) {
      const configDir = join(work.dir, `insecure-${variable}`);
      expect(
        (
          await cli(
            [
              'config',
              'init',
              'remote',
              '--set',
              'signingBaseUrl=https://sign.example/api',
              '--set',
              'clientId=esign-cli',
            ],
            { ESIGN_CONFIG_DIR: configDir },
          )
        ).code,
      ).toBe(0);
      const result = await cli(['--verbose', '--profile', 'remote', ...args], {
        ESIGN_CONFIG_DIR: configDir,
        [variable]: 'http://example.com/api',
        ESIGN_CLIENT_SECRET: 'remote-secret-value',
      });
      expect(result.code, `${variable}: ${result.stderr}`).toBe(3);
      expect(result.stderr).toMatch(/Refusing plain http:\/\/ for the .* at example\.com/);
    }
    expect(t.sandbox.requestLog.length).toBe(logged);
  });

  it('runs representative commands with --verbose (the outputs are scanned below)', async () => {
    const pdf = join(work.dir, 'contract.pdf');
    const steps: Array<[string[], number | 'any']> = [
      [['--verbose', 'login', '--auto-approve', '--scope', 'openid', '--scope', 'com.vendor.storage'], 0],
      [['--verbose', 'whoami'], 0],
      [['--verbose', '--auto-approve', 'credentials', 'list'], 0],
      [['--verbose', '--auto-approve', '--json', 'credentials', 'info', 'alice-rsa3072'], 0],
      [['--verbose', '--auto-approve', 'sign', '--level', 'B-T', pdf, join(work.dir, 'notes.txt')], 0],
      [['--verbose', '--json', 'timestamp', join(work.dir, 'notes.txt')], 0],
      [['--verbose', 'upload', pdf], 0],
      [['--verbose', '--auto-approve', 'sign', '--credential', 'alice-disabled', pdf], 'any'],
      [['--verbose', '--auto-approve', 'sign', join(work.dir, 'broken.pdf')], 'any'],
    ];
    for (const [args, expected] of steps) {
      const result = await cli(args);
      if (expected !== 'any') expect(result.code, `${args.join(' ')}\n${result.stderr}`).toBe(expected);
      else expect(result.code).not.toBe(0);
    }
    // A signHash failure and a TSA failure, with the SAD already issued.
    t.sandbox.faults.inject({
      route: 'signing POST /csc/v1/signatures/signHash',
      fault: { kind: 'status', status: 500, body: '{"error":"server_error"}' },
    });
    expect((await cli(['--verbose', '--auto-approve', 'sign', '--force', pdf])).code).not.toBe(0);
    t.sandbox.faults.inject({ route: 'tsa POST /tss03', fault: { kind: 'status', status: 401 }, times: 5 });
    expect((await cli(['--verbose', '--auto-approve', 'sign', '--force', '--level', 'B-T', pdf])).code).not.toBe(0);
    t.sandbox.faults.clear();
  });

  it('the sandbox issued every kind of secret during these runs (the scan below is not vacuous)', () => {
    const kinds = new Set(issued.values());
    for (const kind of ['service token', 'SAD', 'identity access token', 'ID token', 'code', 'storage secret'] as const)
      expect(kinds, kind).toContain(kind);
  });

  it('the recorded values are the ones the client holds (the token store has them)', async () => {
    const stored = (
      await Promise.all(
        (await allFiles(t.configDir)).filter((file) => /token/i.test(file)).map((file) => readFile(file, 'utf8')),
      )
    ).join('\n');
    const held = [...issued].filter(([value, kind]) => kind !== 'SAD' && kind !== 'code' && stored.includes(value));
    expect(held.length).toBeGreaterThan(0);
  });

  it('no token, SAD, code, client secret or TSA password appears in any output, even with --verbose', () => {
    const secrets = [
      ...[...issued.keys()].map((value) => [value, issued.get(value) as string] as const),
      ...CONFIGURED_SECRETS.map((value) => [value, 'configured secret'] as const),
    ];
    expect(outputs.length).toBeGreaterThan(10);
    const leaks: string[] = [];
    for (const { args, result } of outputs) {
      const text = `${result.stdout}\n${result.stderr}`;
      for (const [secret, kind] of secrets)
        if (text.includes(secret)) leaks.push(`${kind} in the output of esign ${args.join(' ')}`);
    }
    expect(leaks).toEqual([]);
  });

  it('token and session files are mode 0600', async () => {
    const files = await allFiles(t.configDir);
    const sensitive = files.filter((file) => /token|session|secret/i.test(file));
    expect(sensitive.length).toBeGreaterThan(0);
    for (const file of sensitive) expect(((await stat(file)).mode & 0o777).toString(8), file).toBe('600');
  });

  it('no SAD is written to disk: not in the config dir, the working dir or the outputs', async () => {
    const sads = [...issued].filter(([, kind]) => kind === 'SAD').map(([value]) => value);
    expect(sads.length).toBeGreaterThan(0);
    const found: string[] = [];
    for (const file of [...(await allFiles(t.configDir)), ...(await allFiles(work.dir))]) {
      const bytes = await readFile(file);
      const text = bytes.toString('latin1');
      for (const sad of sads) if (text.includes(sad) || bytes.includes(Buffer.from(sad, 'utf8'))) found.push(file);
    }
    expect(found).toEqual([]);
  });
});
