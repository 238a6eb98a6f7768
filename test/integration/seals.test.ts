/**
 * Organization seals and explicit credentials (issue 21), against the sandbox over real HTTP: the
 * environment alone signs (no terminal, no display, no browser), on both CSC dialects, with the
 * sign-in by client credentials or auth/login, and the sandbox holds to what real services hold to.
 */
import { stat, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOTP, Secret } from 'otpauth';
import { SANDBOX_SEAL as seal } from '../../src/sandbox/deps.js';
import { runCli } from '../helpers/run-cli.js';
import { sealEnv, startTestSandbox, type Dialect, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/tmp.js';

let shared: TestSandbox;
beforeAll(async () => {
  shared = await startTestSandbox({ autoApprove: false });
});
afterAll(async () => shared?.close());

const DIALECTS: Dialect[] = ['v1', 'v2'];

async function inputs(count: number, dir?: string): Promise<string[]> {
  const where = dir ?? (await tempDir());
  const sample = await readFile(new URL('../../samples/contract.pdf', import.meta.url));
  const files: string[] = [];
  for (let index = 0; index < count; index++) {
    const path = join(where, index === 0 ? 'release.txt' : `invoice-${index}.pdf`);
    await writeFile(path, index === 0 ? 'release artifact\n' : sample);
    files.push(path);
  }
  return files;
}

function calls(sandbox: TestSandbox, since: number, pattern: RegExp): number {
  return sandbox.sandbox.requestLog.slice(since).filter((route) => pattern.test(route)).length;
}

describe.each(DIALECTS)('a seal signs from the environment alone (CSC %s)', (dialect) => {
  it('client credentials + the PIN-only bulk seal: one credentials/authorize and one signHash for the batch, no browser', async () => {
    const files = await inputs(3);
    const before = shared.sandbox.requestLog.length;
    const run = await runCli(['sign', '--json', ...files], { env: sealEnv(shared, dialect) });
    expect(run.stderr).not.toContain('TEST signatures'); // the env profile, not the sandbox profile
    expect(run.code, run.stderr).toBe(0);
    const lines = run.jsonLines<{ input: string; output: string; credential: string; level: string }>();
    expect(lines.map((line) => line.credential)).toEqual([
      seal.pinOnlyCredentialID,
      seal.pinOnlyCredentialID,
      seal.pinOnlyCredentialID,
    ]);
    expect(lines.map((line) => line.level)).toEqual(
      ['CAdES B-T', 'PAdES B-T', 'PAdES B-T'].map((level) => expect.stringContaining(level.split(' ')[1]!)),
    );
    expect(calls(shared, before, /credentials\/authorize/)).toBe(1);
    expect(calls(shared, before, /signatures\/signHash/)).toBe(1);
    expect(calls(shared, before, /oauth2\/authorize/)).toBe(0);
    const signedPdf = lines.find((line) => line.input === files[1])!.output;
    const verified = await runCli(['verify', '--json', signedPdf], { env: sealEnv(shared, dialect) });
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
  });

  it('auth/login with a user name and password; the refresh token it returns is kept 0600 and never printed', async () => {
    const configDir = await tempDir();
    const env = sealEnv(shared, dialect, {
      ESIGN_CONFIG_DIR: configDir,
      ESIGN_SERVICE_AUTH: 'basic',
      ESIGN_CLIENT_SECRET: undefined,
      ESIGN_SIGNING_USERNAME: seal.username,
      ESIGN_SIGNING_PASSWORD: seal.password,
      ESIGN_CLIENT_ID: 'esign-cli',
    });
    const [file] = await inputs(1);
    const before = shared.sandbox.requestLog.length;
    const run = await runCli(['sign', '--level', 'B-B', file!], { env });
    expect(run.code, run.stderr).toBe(0);
    expect(calls(shared, before, /auth\/login/)).toBe(1);
    const stored = (await readdir(configDir, { recursive: true })).filter((name) => /token/i.test(name));
    expect(stored.length).toBeGreaterThan(0);
    for (const name of stored) {
      const path = join(configDir, name);
      if (!(await stat(path)).isFile()) continue;
      expect((await stat(path)).mode & 0o777).toBe(0o600);
      expect(await readFile(path, 'utf8')).not.toContain(seal.password);
    }
  });

  it('an implicit credential is authorized by the service itself: credentials/authorize with no PIN or OTP', async () => {
    const [file] = await inputs(1);
    const run = await runCli(['sign', '--level', 'B-B', '--json', file!], {
      env: sealEnv(shared, dialect, { ESIGN_CREDENTIAL: 'acme-seal-implicit', ESIGN_CREDENTIAL_PIN: undefined }),
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.json<{ credential: string }>().credential).toBe('acme-seal-implicit');
  });
});

describe.each(DIALECTS)('esign credentials on the organization account (CSC %s)', (dialect) => {
  it('lists each seal with how it is authorized and what it asks for, in text and --json', async () => {
    const listed = await runCli(['credentials', 'list', '--json'], { env: sealEnv(shared, dialect) });
    expect(listed.code, listed.stderr).toBe(0);
    const byId = new Map(
      listed
        .json<{ credentials: Array<{ credentialID: string; authorization: Record<string, unknown> }> }>()
        .credentials.map((entry) => [entry.credentialID, entry.authorization]),
    );
    expect(byId.get(seal.credentialID)).toMatchObject({
      mode: 'explicit',
      pin: { required: true, format: 'N', label: 'Seal PIN' },
      otp: { required: true, type: 'offline' },
      scal: '2',
    });
    expect(byId.get(seal.onlineOtpCredentialID)).toMatchObject({ mode: 'explicit', otp: { type: 'online' } });
    expect(byId.get(seal.pinOnlyCredentialID)).toMatchObject({
      mode: 'explicit',
      pin: { required: true },
      multisign: 1000,
      scal: '1',
    });
    expect(byId.get(seal.pinOnlyCredentialID)).not.toHaveProperty('otp');
    expect(byId.get('acme-seal-implicit')).toMatchObject({ mode: 'implicit' });
    const text = await runCli(['credentials', 'info', seal.onlineOtpCredentialID], { env: sealEnv(shared, dialect) });
    expect(text.stdout).toContain('PIN + OTP (sent by the service), up to 50 signatures each, SCAL 2');
    expect(text.stdout).toContain('SMS code');
  });
});

describe('a v2 service that names its OAuth server only by oauth2Issuer (RFC 8414)', () => {
  const infoNaming = (issuer: string) =>
    JSON.stringify({
      specs: '2.0.0.2',
      name: 'issuer only',
      authType: ['oauth2code', 'oauth2client'],
      oauth2Issuer: issuer,
      methods: ['credentials/list', 'credentials/info', 'credentials/authorize', 'signatures/signHash'],
    });

  it('is read through its metadata: the token endpoint it names signs the seal in', async () => {
    shared.sandbox.faults.inject({
      route: 'signing-v2 POST /csc/v2/info',
      fault: { kind: 'malformed', body: infoNaming(shared.sandbox.urls.signingV2) },
      times: 1,
    });
    const before = shared.sandbox.requestLog.length;
    const listed = await runCli(['credentials', 'list', '--json'], {
      env: sealEnv(shared, 'v2', { ESIGN_CONFIG_DIR: await tempDir() }),
    });
    shared.sandbox.faults.clear();
    expect(listed.code, listed.stderr).toBe(0);
    expect(calls(shared, before, /^\.well-known GET \/oauth-authorization-server\/signing-v2$/)).toBe(1);
    expect(calls(shared, before, /^signing-v2 POST \/oauth2\/token$/)).toBe(1);
  });

  it('whose metadata names another issuer is refused before any sign-in', async () => {
    shared.sandbox.faults.inject({
      route: 'signing-v2 POST /csc/v2/info',
      fault: { kind: 'malformed', body: infoNaming(`${shared.sandbox.urls.base}/signing-v2/`) },
      times: 1,
    });
    const before = shared.sandbox.requestLog.length;
    const listed = await runCli(['credentials', 'list', '--json'], {
      env: sealEnv(shared, 'v2', { ESIGN_CONFIG_DIR: await tempDir() }),
    });
    shared.sandbox.faults.clear();
    expect(listed.code).toBe(6);
    expect(listed.stderr).toContain('names the issuer');
    expect(calls(shared, before, /oauth2\/token/)).toBe(0);
  });
});

describe('the split flow with a seal', () => {
  it('--prepare saves the hashes (never the PIN) with no browser step; --complete authorizes with credentials/authorize and writes the outputs', async () => {
    const dir = await tempDir();
    const files = await inputs(2, dir);
    const state = join(dir, 'state.json');
    const prepared = await runCli(['sign', '--prepare', '--json', '--state', state, ...files], {
      env: sealEnv(shared, 'v2'),
    });
    expect(prepared.code, prepared.stderr).toBe(0);
    expect(prepared.json()).toMatchObject({
      credential: seal.pinOnlyCredentialID,
      authorizedWith: 'credentials/authorize',
      steps: [{ hashes: [{ input: files[0] }, { input: files[1] }] }],
    });
    const saved = await readFile(state, 'utf8');
    expect(saved).not.toContain(seal.pin);
    expect(saved).not.toContain(seal.clientSecret);
    expect((await stat(state)).mode & 0o777).toBe(0o600);
    const before = shared.sandbox.requestLog.length;
    const completed = await runCli(['sign', '--complete', '--json', '--state', state], { env: sealEnv(shared, 'v2') });
    expect(completed.code, completed.stderr).toBe(0);
    expect(completed.jsonLines()).toHaveLength(2);
    expect(calls(shared, before, /credentials\/authorize/)).toBe(1);
    expect(calls(shared, before, /oauth2\/authorize/)).toBe(0);
    expect((await readdir(dir)).sort()).toEqual([
      'invoice-1-signed.pdf',
      'invoice-1.pdf',
      'release.txt',
      'release.txt.p7s',
    ]);
  });
});

describe('PIN and OTP', () => {
  it('a TOTP seal computes its code from ESIGN_TOTP_SECRET and waits for a fresh time step for each further authorization', async () => {
    const files = await inputs(3);
    const before = shared.sandbox.requestLog.length;
    const run = await runCli(['sign', '--level', 'B-B', files[1]!, files[2]!], {
      env: sealEnv(shared, 'v1', {
        ESIGN_CREDENTIAL: seal.credentialID,
        ESIGN_TOTP_SECRET: `otpauth://totp/ACME:seal?secret=${seal.totpSecret}&issuer=ACME`,
        ESIGN_CSC_MAX_SIGNATURES: '1',
      }),
      timeoutMs: 90_000,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(calls(shared, before, /credentials\/authorize/)).toBe(2);
    expect(run.stderr).toMatch(/Waiting \d+ s for the next one-time password/);
  }, 90_000);

  it('the PIN from --pin-file (- for standard input)', async () => {
    const [file] = await inputs(1);
    const run = await runCli(['sign', '--level', 'B-B', '--pin-file', '-', file!], {
      env: sealEnv(shared, 'v2', { ESIGN_CREDENTIAL_PIN: undefined }),
      input: `${seal.pin}\n`,
    });
    expect(run.code, run.stderr).toBe(0);
  });

  it('no PIN and no terminal: exit 4 at once, naming ESIGN_CREDENTIAL_PIN and --pin-file, before any file is prepared', async () => {
    const dir = await tempDir();
    const [file] = await inputs(1, dir);
    const run = await runCli(['sign', file!], { env: sealEnv(shared, 'v1', { ESIGN_CREDENTIAL_PIN: undefined }) });
    expect(run.code).toBe(4);
    expect(run.stderr).toContain('ESIGN_CREDENTIAL_PIN');
    expect(run.stderr).toContain('--pin-file');
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(await readdir(dir)).toEqual(['release.txt']);
  });

  it('an OTP with no ESIGN_TOTP_SECRET and no terminal, or an online OTP with no terminal: exit 4 naming what to do', async () => {
    const [file] = await inputs(1);
    const totp = await runCli(['sign', file!], { env: sealEnv(shared, 'v1', { ESIGN_CREDENTIAL: seal.credentialID }) });
    expect(totp.code).toBe(4);
    expect(totp.stderr).toContain('ESIGN_TOTP_SECRET');
    const online = await runCli(['sign', file!], {
      env: sealEnv(shared, 'v2', { ESIGN_CREDENTIAL: seal.onlineOtpCredentialID }),
    });
    expect(online.code).toBe(4);
    expect(online.stderr).toContain('no terminal');
  });

  it('a malformed ESIGN_TOTP_SECRET or ESIGN_SERVICE_AUTH: exit 3 naming the variable, before any request', async () => {
    const [file] = await inputs(1);
    const before = shared.sandbox.requestLog.length;
    const totp = await runCli(['sign', file!], { env: sealEnv(shared, 'v1', { ESIGN_TOTP_SECRET: 'not-a-secret!' }) });
    expect(totp.code).toBe(3);
    expect(totp.stderr).toContain('Invalid ESIGN_TOTP_SECRET');
    expect(totp.stderr).not.toContain('not-a-secret!');
    const auth = await runCli(['sign', file!], { env: sealEnv(shared, 'v1', { ESIGN_SERVICE_AUTH: 'saml' }) });
    expect(auth.code).toBe(3);
    expect(auth.stderr).toContain('Invalid ESIGN_SERVICE_AUTH');
    expect(shared.sandbox.requestLog.length).toBe(before);
  });
});

describe('a wrong PIN, and the lock after three', () => {
  let own: TestSandbox;
  beforeAll(async () => {
    own = await startTestSandbox({ autoApprove: false });
  });
  afterAll(async () => own?.close());

  it('a wrong PIN: exit 4 with the service description, one authorize only, nothing written; the third in a row locks the credential', async () => {
    const dir = await tempDir();
    const [file] = await inputs(1, dir);
    for (let attempt = 1; attempt <= 3; attempt++) {
      const before = own.sandbox.requestLog.length;
      const run = await runCli(['sign', file!], { env: sealEnv(own, 'v1', { ESIGN_CREDENTIAL_PIN: '000000' }) });
      expect(run.code).toBe(4);
      expect(run.stderr).toContain('The signing service refused the PIN (The PIN is invalid)');
      expect(calls(own, before, /credentials\/authorize/)).toBe(1);
      expect(calls(own, before, /signHash/)).toBe(0);
    }
    const locked = await runCli(['sign', '--json', file!], { env: sealEnv(own, 'v1') });
    expect(locked.code).toBe(4);
    expect(locked.json<{ error: { code: string; hint: string } }>().error).toMatchObject({
      code: 'AUTH_CREDENTIAL_LOCKED',
      hint: expect.stringContaining('administrator'),
    });
    expect(await readdir(dir)).toEqual(['release.txt']);
  });
});

describe('the sandbox holds to what real services hold to', () => {
  async function serviceToken(dialect: Dialect): Promise<string> {
    const base = dialect === 'v2' ? shared.sandbox.urls.signingV2 : shared.sandbox.urls.signing;
    const response = await fetch(`${base}/oauth2/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${seal.clientId}:${seal.clientSecret}`).toString('base64')}`,
      },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        scope: 'service',
        client_id: seal.clientId,
      }).toString(),
    });
    expect(response.status).toBe(200);
    return ((await response.json()) as { access_token: string }).access_token;
  }

  async function post(
    path: string,
    token: string,
    body: object,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const response = await fetch(`${shared.sandbox.urls.signing}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  }

  const hash = Buffer.alloc(32, 7).toString('base64');

  it('a TOTP code is taken once; an oauth2code credential refuses credentials/authorize; a SAD signs once, only its hashes', async () => {
    const token = await serviceToken('v1');
    // Far from any code this suite's runs used: the next-but-one step's code is within ±1 only later, so use the current step's.
    const code = new TOTP({ secret: Secret.fromBase32(seal.totpSecret) }).generate({ timestamp: Date.now() + 30_000 });
    const first = await post('/csc/v1/credentials/authorize', token, {
      credentialID: seal.credentialID,
      numSignatures: 1,
      hash: [hash],
      PIN: seal.pin,
      OTP: code,
    });
    expect(first.status).toBe(200);
    const again = await post('/csc/v1/credentials/authorize', token, {
      credentialID: seal.credentialID,
      numSignatures: 1,
      hash: [hash],
      PIN: seal.pin,
      OTP: code,
    });
    expect(again).toEqual({ status: 400, body: { error: 'invalid_otp', error_description: 'The OTP is invalid' } });
    const sad = first.body['SAD'] as string;
    const other = await post('/csc/v1/signatures/signHash', token, {
      credentialID: seal.credentialID,
      SAD: sad,
      hash: [Buffer.alloc(32, 8).toString('base64')],
      hashAlgo: '2.16.840.1.101.3.4.2.1',
      signAlgo: '1.2.840.113549.1.1.1',
    });
    expect(other.status).toBe(400);
    const signed = await post('/csc/v1/signatures/signHash', token, {
      credentialID: seal.credentialID,
      SAD: sad,
      hash: [hash],
      hashAlgo: '2.16.840.1.101.3.4.2.1',
      signAlgo: '1.2.840.113549.1.1.1',
    });
    expect(signed.status).toBe(200);
    const twice = await post('/csc/v1/signatures/signHash', token, {
      credentialID: seal.credentialID,
      SAD: sad,
      hash: [hash],
      hashAlgo: '2.16.840.1.101.3.4.2.1',
      signAlgo: '1.2.840.113549.1.1.1',
    });
    expect(twice.status).toBe(400);
    const tooMany = await post('/csc/v1/credentials/authorize', token, {
      credentialID: seal.pinOnlyCredentialID,
      numSignatures: 1001,
      PIN: seal.pin,
    });
    expect(tooMany.body['error_description']).toBe('Numbers of signatures is too high');
    const scal2WithoutHashes = await post('/csc/v1/credentials/authorize', token, {
      credentialID: 'acme-seal-implicit',
      numSignatures: 1,
    });
    expect(scal2WithoutHashes.status).toBe(400);
  });

  it('an online OTP is sent, shown on the outbox page, single-use; sendOTP answers 204', async () => {
    const token = await serviceToken('v1');
    const sent = await fetch(`${shared.sandbox.urls.signing}/csc/v1/credentials/sendOTP`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ credentialID: seal.onlineOtpCredentialID }),
    });
    expect(sent.status).toBe(204);
    const page = await (await fetch(`${shared.sandbox.urls.signing}/otp`)).text();
    const code = /class="otp">(\d{6})</.exec(page)?.[1];
    expect(code).toMatch(/^\d{6}$/);
    const body = { credentialID: seal.onlineOtpCredentialID, numSignatures: 1, hash: [hash], PIN: seal.pin, OTP: code };
    expect((await post('/csc/v1/credentials/authorize', token, body)).status).toBe(200);
    expect((await post('/csc/v1/credentials/authorize', token, body)).body['error']).toBe('invalid_otp');
  });

  it('explicit credentials refuse the browser approval; the browser client may not use client_credentials', async () => {
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: 'esign-cli',
      redirect_uri: 'http://127.0.0.1:8765/callback',
      scope: 'credential',
      state: 'x',
      credentialID: seal.credentialID,
      numSignatures: '1',
      hash: Buffer.alloc(32, 7).toString('base64url'),
    });
    const refused = await fetch(`${shared.sandbox.urls.signing}/oauth2/authorize?${query}`, { redirect: 'manual' });
    expect(new URL(refused.headers.get('location') ?? 'http://x/').searchParams.get('error_description')).toContain(
      'is authorized with credentials/authorize',
    );
    const response = await fetch(`${shared.sandbox.urls.signing}/oauth2/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from('esign-cli:sandbox-secret').toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'esign-cli' }).toString(),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toBe('unauthorized_client');
    const token = await serviceToken('v2');
    const oauth2code = await fetch(`${shared.sandbox.urls.signingV2}/csc/v2/credentials/authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({
        credentialID: 'alice-rsa2048',
        numSignatures: 1,
        hashes: [hash],
        hashAlgorithmOID: '2.16.840.1.101.3.4.2.1',
      }),
    });
    expect(oauth2code.status).toBe(400); // not the organization's, and oauth2code besides
  });
});
