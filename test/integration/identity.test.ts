/**
 * The sandbox identity service (seed 001) and esign's identity client and commands against each
 * other over real HTTP: the authorize rules, the QR + PIN flow and every error case of the
 * document's table, the token endpoint, ID tokens, userinfo per scope, and the client's
 * validation of everything it receives (negative cases against a provider switch and against a
 * tiny OpenID provider of the test's own that signs tokens with jose).
 */
import { generateKeyPairSync, randomBytes, createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SignJWT, createRemoteJWKSet, exportJWK, jwtVerify, decodeProtectedHeader, type JWK } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EsignError } from '../../src/core/errors.js';
import { systemClock, type BrowserLauncher } from '../../src/core/ports.js';
import { HttpClient } from '../../src/io/http.js';
import { IdentityClient, type IdentityBrowserAuthorize } from '../../src/io/identity-client.js';
import { authorizeInBrowser } from '../../src/io/loopback.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { writeIdentityPageDriver } from '../helpers/browser.js';
import { runCli } from '../helpers/run-cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir, tempDirForFile } from '../helpers/tmp.js';

const CLIENT_ID = 'esign-cli';
const CLIENT_SECRET = 'sandbox-secret';
const REDIRECT = 'http://127.0.0.1:8765/callback';
const followRedirects = fileURLToPath(new URL('../helpers/follow-redirects-browser.js', import.meta.url));

/** Seed 001 §7, written out again here so that the sandbox is checked against the document. */
const SEED_CASES: ReadonlyArray<[name: string, user: string, error: string, description: string | null]> = [
  ['ChallengeExpired', 'challenge-expired', 'access_denied', 'authentication challenge expired'],
  ['EmailUnverified', 'email-unverified', 'access_denied', 'user email is unverified'],
  ['ConsentExpired', 'consent-expired', 'access_denied', 'consent request expired'],
  ['ConsentRejected', 'consent-rejected', 'access_denied', 'Resource owner rejected consent'],
  ['ProcessExpired', 'process-expired', 'access_denied', 'process expired'],
  ['NonPkioCertificate', 'non-pkio-certificate', 'server_error', 'n/a'],
  ['VerificationFailed', 'verification-failed', 'server_error', null],
  ['SystemError', 'system-error', 'server_error', null],
  ['ConsentInvalidated', 'consent-invalidated', 'server_error', null],
  ['AuthenticationFailure', 'authentication-failure', 'server_error', null],
];

/** The provider switch's spoiled answers and the error code each must give. */
const SPOILED_ANSWERS: ReadonlyArray<[fault: string, code: string]> = [
  ['wrong-iss', 'OIDC_ISSUER_MISMATCH'],
  ['wrong-aud', 'OIDC_AUDIENCE_MISMATCH'],
  ['wrong-nonce', 'OIDC_NONCE_MISMATCH'],
  ['expired', 'OIDC_ID_TOKEN_EXPIRED'],
  ['alg-none', 'OIDC_ALG_UNSUPPORTED'],
  ['bad-signature', 'OIDC_SIGNATURE_INVALID'],
  ['userinfo-sub', 'OIDC_SUB_MISMATCH'],
];

let t: TestSandbox;
let idBase: string;
let legacyBase: string;
let driverDir: { dir: string; remove: () => Promise<void> };
let driver: string;

beforeAll(async () => {
  t = await startTestSandbox({ autoApprove: false });
  idBase = t.sandbox.urls.identity;
  legacyBase = t.sandbox.urls.identityLegacy;
  driverDir = await tempDirForFile('esign-id-driver-');
  driver = await writeIdentityPageDriver(driverDir.dir);
});

afterAll(async () => {
  await t.close();
  await driverDir.remove();
});

beforeEach(async () => {
  t.sandbox.autoApprove = false;
  t.sandbox.clock.reset();
  t.sandbox.faults.clear();
  await fetch(`${idBase}/_sandbox/switches/clear`, { method: 'POST' });
});

// ---- raw protocol helpers ----------------------------------------------------------------------

function authParams(extra: Record<string, string> = {}): Record<string, string> {
  return {
    response_type: 'code',
    client_id: CLIENT_ID,
    redirect_uri: REDIRECT,
    scope: 'openid',
    state: 'st-1',
    nonce: 'n-1',
    ...extra,
  };
}

async function authorize(
  params: Record<string, string> | URLSearchParams,
): Promise<{ status: number; location?: string; params?: URLSearchParams; text: string }> {
  const response = await fetch(`${idBase}/oauth2/authorize?${new URLSearchParams(params).toString()}`, {
    redirect: 'manual',
  });
  const location = response.headers.get('location') ?? undefined;
  return {
    status: response.status,
    location,
    params: location ? new URL(location).searchParams : undefined,
    text: await response.text(),
  };
}

function processId(html: string): string {
  const id = /name="process" value="([^"]+)"/.exec(html)?.[1];
  if (!id) throw new Error(`no process id in page:\n${html.slice(0, 500)}`);
  return id;
}

async function postForm(url: string, fields: Record<string, string>): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
}

const scan = (process: string, user: string, action = 'scan') =>
  postForm(`${idBase}/oauth2/authorize/scan`, { process, user, action, lang: 'nl' });
const consent = (process: string, decision = 'approve', pin = '12345') =>
  postForm(`${idBase}/oauth2/authorize/consent`, { process, decision, pin, lang: 'nl' });

function redirected(response: Response): URLSearchParams {
  expect(response.status).toBe(302);
  return new URL(response.headers.get('location') ?? '').searchParams;
}

interface FlowHooks {
  user?: string;
  decision?: string;
  afterStart?: () => void;
  afterScan?: () => void;
}

/** The whole page flow as a browser would do it; returns the query of the final redirect. */
async function pageFlow(params: Record<string, string>, hooks: FlowHooks = {}): Promise<URLSearchParams> {
  const page = await authorize(params);
  expect(page.status).toBe(200);
  const id = processId(page.text);
  hooks.afterStart?.();
  const scanned = await scan(id, hooks.user ?? 'alice');
  if (scanned.status === 302) return redirected(scanned);
  expect(scanned.status).toBe(200);
  hooks.afterScan?.();
  return redirected(await consent(id, hooks.decision ?? 'approve'));
}

async function token(
  form: Record<string, string>,
  auth: string | null = `${CLIENT_ID}:${CLIENT_SECRET}`,
  contentType = 'application/x-www-form-urlencoded',
) {
  const headers: Record<string, string> = { 'content-type': contentType };
  if (auth) headers['authorization'] = `Basic ${Buffer.from(auth).toString('base64')}`;
  const response = await fetch(`${idBase}/oauth2/token`, {
    method: 'POST',
    headers,
    body: new URLSearchParams(form).toString(),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, unknown>,
  };
}

async function codeFor(params: Record<string, string>, user = 'alice'): Promise<string> {
  const result = await pageFlow(params, { user });
  const code = result.get('code');
  expect(code, result.toString()).toBeTruthy();
  return code ?? '';
}

async function tokensFor(
  scope: string,
  user = 'alice',
  clientId = CLIENT_ID,
  secret = CLIENT_SECRET,
): Promise<Record<string, unknown>> {
  const code = await codeFor(authParams({ scope, client_id: clientId }), user);
  const result = await token(
    { grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: REDIRECT },
    `${clientId}:${secret}`,
  );
  expect(result.status, JSON.stringify(result.body)).toBe(200);
  return result.body;
}

async function userinfo(accessToken: string | undefined) {
  const response = await fetch(`${legacyBase}/userinfo`, {
    headers: accessToken ? { authorization: `Bearer ${accessToken}` } : {},
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, unknown>,
  };
}

async function arm(body: Record<string, unknown>): Promise<void> {
  const response = await fetch(`${idBase}/_sandbox/switches`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
}

// ---- the service -------------------------------------------------------------------------------

describe('sandbox identity service: metadata', () => {
  it('publishes a discovery document and a JWKS with the RS256 key', async () => {
    const discovery = (await (await fetch(`${idBase}/.well-known/openid-configuration`)).json()) as Record<
      string,
      unknown
    >;
    expect(discovery).toMatchObject({
      issuer: idBase,
      authorization_endpoint: `${idBase}/oauth2/authorize`,
      token_endpoint: `${idBase}/oauth2/token`,
      userinfo_endpoint: `${legacyBase}/userinfo`,
      jwks_uri: `${idBase}/jwks`,
      subject_types_supported: ['pairwise'],
      id_token_signing_alg_values_supported: ['RS256'],
      ui_locales_supported: ['nl', 'en'],
    });
    const jwks = (await (await fetch(`${idBase}/jwks`)).json()) as { keys: JWK[] };
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: 'RSA', use: 'sig', alg: 'RS256' });
    expect(jwks.keys[0]).not.toHaveProperty('d');
  });

  it('keeps its signing key and pairwise secret in the data dir across restarts', async () => {
    const dir = await tempDir('esign-id-key-');
    const first = await startSandbox({ dataDir: dir, s3: false });
    const kid1 = ((await (await fetch(`${first.urls.identity}/jwks`)).json()) as { keys: JWK[] }).keys[0]?.kid;
    await first.close();
    const second = await startSandbox({ dataDir: dir, s3: false });
    const kid2 = ((await (await fetch(`${second.urls.identity}/jwks`)).json()) as { keys: JWK[] }).keys[0]?.kid;
    await second.close();
    expect(kid1).toBeTruthy();
    expect(kid2).toBe(kid1);
    expect((await stat(join(dir, 'identity', 'signing-key.json'))).mode & 0o777).toBe(0o600);
  });
});

describe('sandbox identity service: GET /oauth2/authorize', () => {
  it('shows the QR challenge in Dutch by default, English with ui_locales or lang', async () => {
    const dutch = await authorize(authParams());
    expect(dutch.status).toBe(200);
    expect(dutch.text).toContain('<html lang="nl">');
    expect(dutch.text).toContain('Scan deze QR-code');
    expect(dutch.text).toContain('10 minuten geldig');
    expect(dutch.text).toMatch(/<img id="qr" src="data:image\/png;base64,[A-Za-z0-9+/=]{200,}"/);
    const variants: Record<string, string>[] = [
      { ui_locales: 'en' },
      { ui_locales: 'en-GB nl' },
      { lang: 'en' },
      { ui_locales: 'fr', lang: 'en' },
    ];
    for (const extra of variants) {
      const english = await authorize(authParams(extra));
      expect(english.text, JSON.stringify(extra)).toContain('<html lang="en">');
      expect(english.text).toContain('Scan this QR code');
      expect(english.text).toContain('valid for 10 minutes');
    }
    expect((await authorize(authParams({ ui_locales: 'fr de' }))).text).toContain('<html lang="nl">');
  });

  it('serves the page the QR code encodes (the phone view of the same challenge)', async () => {
    const page = await authorize(authParams());
    const id = processId(page.text);
    const phone = await fetch(`${idBase}/oauth2/authorize/scan?process=${encodeURIComponent(id)}&ui_locales=en`);
    expect(phone.status).toBe(200);
    expect(await phone.text()).toContain(`value="${id}"`);
    expect((await fetch(`${idBase}/oauth2/authorize/scan?process=nope`)).status).toBe(400);
  });

  it.each([
    ['scope without openid', { scope: 'email' }, 'invalid_scope'],
    ['unknown scope', { scope: 'openid profile' }, 'invalid_scope'],
    ['missing scope', { scope: '' }, 'invalid_request'],
    ['response_type token', { response_type: 'token' }, 'unsupported_response_type'],
    ['missing response_type', { response_type: '' }, 'invalid_request'],
    ['state of 256 bytes', { state: 'x'.repeat(256) }, 'invalid_request'],
    ['PKCE plain', { code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }, 'invalid_request'],
    ['empty nonce', { nonce: '' }, 'invalid_request'],
  ])('redirects %s with error %s', async (_name, extra: Record<string, string>, error) => {
    const params = Object.fromEntries(
      Object.entries(authParams(extra)).filter(([name, value]) => value !== '' || name === 'nonce'),
    );
    const result = await authorize(params);
    expect(result.status).toBe(302);
    expect(result.location?.startsWith(REDIRECT)).toBe(true);
    expect(result.params?.get('error')).toBe(error);
    expect(result.params?.get('code')).toBeNull();
  });

  it('accepts a state of exactly 255 bytes and returns it unchanged', async () => {
    const state = 'é'.repeat(127) + 's';
    expect(Buffer.byteLength(state)).toBe(255);
    expect((await pageFlow(authParams({ state }))).get('state')).toBe(state);
  });

  it('requires state; a missing state comes back as invalid_request without state', async () => {
    const { state, ...rest } = authParams();
    void state;
    const result = await authorize(rest);
    expect(result.params?.get('error')).toBe('invalid_request');
    expect(result.params?.has('state')).toBe(false);
  });

  it('rejects a repeated parameter', async () => {
    const query = new URLSearchParams(authParams());
    query.append('scope', 'openid email');
    expect((await authorize(query)).params?.get('error')).toBe('invalid_request');
  });

  it('never redirects for an unknown client or an unregistered redirect URI', async () => {
    const variants: Record<string, string>[] = [
      { client_id: 'nobody' },
      { redirect_uri: 'https://evil.example/callback' },
      { redirect_uri: 'http://127.0.0.1:8765/other' },
    ];
    for (const extra of variants) {
      const result = await authorize(authParams(extra));
      expect(result.status, JSON.stringify(extra)).toBe(400);
      expect(result.location).toBeUndefined();
      expect(result.text).toContain('Inlogverzoek afgewezen');
    }
  });

  it('defaults redirect_uri to the registered one and accepts any loopback port (RFC 8252)', async () => {
    const { redirect_uri: _omit, ...rest } = authParams();
    void _omit;
    t.sandbox.autoApprove = true;
    expect((await authorize(rest)).location?.startsWith(`${REDIRECT}?code=`)).toBe(true);
    expect(
      (await authorize(authParams({ redirect_uri: 'http://127.0.0.1:49152/callback' }))).location?.startsWith(
        'http://127.0.0.1:49152/callback?code=',
      ),
    ).toBe(true);
  });
});

describe('sandbox identity service: QR + PIN flow and the error cases of §7', () => {
  it('goes QR → simulated scan → PIN page (listing the data asked) → code with the state', async () => {
    const page = await authorize(authParams({ scope: 'openid email com.vendor.personal_info', ui_locales: 'en' }));
    const id = processId(page.text);
    const pin = await postForm(`${idBase}/oauth2/authorize/scan`, {
      process: id,
      user: 'alice',
      action: 'scan',
      lang: 'en',
    });
    const html = await pin.text();
    expect(html).toContain('Give consent with your PIN');
    expect(html).toContain('Your e-mail address');
    expect(html).toContain('Enter your PIN within 10 minutes');
    const result = redirected(await consent(id));
    expect(result.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(result.get('state')).toBe('st-1');
    // A process is used once.
    expect((await consent(id)).status).toBe(400);
  });

  it('re-asks for a PIN that is not 5 digits, without ending the process', async () => {
    const page = await authorize(authParams());
    const id = processId(page.text);
    await scan(id, 'alice');
    const again = await consent(id, 'approve', '12a');
    expect(again.status).toBe(200);
    expect(await again.text()).toContain('De pincode moet uit precies 5 cijfers bestaan.');
    expect(redirected(await consent(id)).get('code')).toBeTruthy();
  });

  it.each(SEED_CASES)('%s: designated user %s ends in %s / %s', async (_name, user, error, description) => {
    const result = await pageFlow(authParams(), { user });
    expect(result.get('error')).toBe(error);
    expect(result.get('error_description')).toBe(description);
    expect(result.get('state')).toBe('st-1');
    expect(result.get('code')).toBeNull();
  });

  it.each(SEED_CASES)(
    '%s: reachable through the switch with --auto-approve',
    async (name, _user, error, description) => {
      t.sandbox.autoApprove = true;
      await arm({ case: name });
      const result = await authorize(authParams());
      expect(result.params?.get('error')).toBe(error);
      expect(result.params?.get('error_description')).toBe(description);
      // The switch is used up: the next login succeeds.
      expect((await authorize(authParams())).params?.get('code')).toBeTruthy();
    },
  );

  it('ChallengeExpired when the QR code is scanned after 10 minutes', async () => {
    const result = await pageFlow(authParams(), { afterStart: () => t.sandbox.clock.advance(600_000) });
    expect(result.get('error_description')).toBe('authentication challenge expired');
  });

  it('ConsentExpired when the PIN comes more than 10 minutes after the scan', async () => {
    const result = await pageFlow(authParams(), { afterScan: () => t.sandbox.clock.advance(600_000) });
    expect(result.get('error_description')).toBe('consent request expired');
  });

  it('ProcessExpired when the whole process outlives its time limit', async () => {
    const result = await pageFlow(authParams(), {
      afterStart: () => t.sandbox.clock.advance(540_000),
      afterScan: () => t.sandbox.clock.advance(661_000),
    });
    expect(result.get('error_description')).toBe('process expired');
  });

  it('ConsentRejected from the refuse buttons of both pages', async () => {
    expect((await pageFlow(authParams(), { decision: 'refuse' })).get('error_description')).toBe(
      'Resource owner rejected consent',
    );
    const page = await authorize(authParams());
    expect(redirected(await scan(processId(page.text), 'alice', 'cancel')).get('error_description')).toBe(
      'Resource owner rejected consent',
    );
  });
});

describe('sandbox identity service: POST /oauth2/token', () => {
  it('answers bearer (lower case), 3600 s, scope and an RS256 ID token that verifies with the JWKS', async () => {
    const code = await codeFor(authParams({ scope: 'openid email' }));
    const result = await token({
      grant_type: 'authorization_code',
      code,
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT,
    });
    expect(result.status).toBe(200);
    expect(result.headers.get('cache-control')).toBe('no-store');
    expect(result.body).toMatchObject({ token_type: 'bearer', expires_in: 3600, scope: 'openid email' });
    const idToken = String(result.body['id_token']);
    expect(decodeProtectedHeader(idToken)).toMatchObject({ alg: 'RS256' });
    const { payload } = await jwtVerify(idToken, createRemoteJWKSet(new URL(`${idBase}/jwks`)), {
      issuer: idBase,
      audience: CLIENT_ID,
      algorithms: ['RS256'],
    });
    expect(payload).toMatchObject({ nonce: 'n-1' });
    for (const claim of ['sub', 'iat', 'exp', 'auth_time', 'rat']) expect(payload, claim).toHaveProperty(claim);
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBeGreaterThan(0);
  });

  it('gives pairwise subjects: stable per client, different between clients and users', async () => {
    const sub = async (user: string, clientId = CLIENT_ID, secret = CLIENT_SECRET) => {
      const body = await tokensFor('openid', user, clientId, secret);
      return JSON.parse(Buffer.from(String(body['id_token']).split('.')[1] ?? '', 'base64url').toString())
        .sub as string;
    };
    const alice = await sub('alice');
    expect(await sub('alice')).toBe(alice);
    expect(await sub('bob')).not.toBe(alice);
    expect(await sub('alice', 'sandbox-relying-party', 'sandbox-rp-secret')).not.toBe(alice);
  });

  it('requires HTTP Basic and tolerates the secret repeated in the form', async () => {
    const form = () =>
      codeFor(authParams()).then((code) => ({
        grant_type: 'authorization_code',
        code,
        client_id: CLIENT_ID,
        redirect_uri: REDIRECT,
      }));
    const none = await token(await form(), null);
    expect(none.status).toBe(401);
    expect(none.body['error']).toBe('invalid_client');
    expect(none.headers.get('www-authenticate')).toMatch(/^Basic/);
    expect((await token(await form(), `${CLIENT_ID}:wrong`)).status).toBe(401);
    expect((await token({ ...(await form()), client_secret: CLIENT_SECRET })).status).toBe(200);
    expect((await token({ ...(await form()), client_secret: 'wrong' })).status).toBe(401);
    // The secret in the form alone is not enough: Basic is required.
    expect((await token({ ...(await form()), client_secret: CLIENT_SECRET }, null)).status).toBe(401);
  });

  it('answers invalid_request for an invalid, reused or expired code, and revokes on reuse', async () => {
    const base = { grant_type: 'authorization_code', client_id: CLIENT_ID, redirect_uri: REDIRECT };
    const unknown = await token({ ...base, code: 'not-a-code' });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({ error: 'invalid_request', error_description: 'Invalid authorization code.' });
    const code = await codeFor(authParams());
    const first = await token({ ...base, code });
    expect(first.status).toBe(200);
    expect((await token({ ...base, code })).body['error']).toBe('invalid_request');
    expect((await userinfo(String(first.body['access_token']))).status).toBe(401);
    const late = await codeFor(authParams());
    t.sandbox.clock.advance(61_000);
    expect((await token({ ...base, code: late })).body['error_description']).toBe('Invalid authorization code.');
  });

  it('checks redirect_uri, client_id, grant_type, content type, repeats and PKCE', async () => {
    const base = { grant_type: 'authorization_code', client_id: CLIENT_ID, redirect_uri: REDIRECT };
    expect(
      (await token({ ...base, code: await codeFor(authParams()), redirect_uri: 'http://127.0.0.1:1/callback' })).body[
        'error'
      ],
    ).toBe('invalid_request');
    expect((await token({ ...base, code: await codeFor(authParams()), client_id: '' })).body['error']).toBe(
      'invalid_request',
    );
    expect(
      (await token({ ...base, code: await codeFor(authParams()), client_id: 'sandbox-relying-party' })).status,
    ).toBe(401);
    expect(
      (await token({ ...base, code: await codeFor(authParams()), grant_type: 'client_credentials' })).body['error'],
    ).toBe('unsupported_grant_type');
    expect(
      (await token({ ...base, code: await codeFor(authParams()) }, `${CLIENT_ID}:${CLIENT_SECRET}`, 'application/json'))
        .body['error'],
    ).toBe('invalid_request');
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const pkce = authParams({ code_challenge: challenge, code_challenge_method: 'S256' });
    expect(
      (await token({ ...base, code: await codeFor(pkce), code_verifier: randomBytes(32).toString('base64url') })).body[
        'error'
      ],
    ).toBe('invalid_grant');
    expect((await token({ ...base, code: await codeFor(pkce) })).body['error']).toBe('invalid_grant');
    expect((await token({ ...base, code: await codeFor(pkce), code_verifier: verifier })).status).toBe(200);
  });
});

describe('sandbox identity service: GET /userinfo on the legacy host', () => {
  it('with openid only: sub and the token claims, aud as an array, application/json;charset=UTF-8', async () => {
    const tokens = await tokensFor('openid');
    const result = await userinfo(String(tokens['access_token']));
    expect(result.status).toBe(200);
    expect(result.headers.get('content-type')).toBe('application/json;charset=UTF-8');
    expect(Object.keys(result.body).sort()).toEqual(['aud', 'auth_time', 'iat', 'iss', 'rat', 'sub']);
    expect(result.body['aud']).toEqual([CLIENT_ID]);
    expect(result.body['iss']).toBe(idBase);
    const idToken = JSON.parse(
      Buffer.from(String(tokens['id_token']).split('.')[1] ?? '', 'base64url').toString(),
    ) as Record<string, unknown>;
    expect(result.body['sub']).toBe(idToken['sub']);
  });

  it('releases the claims of each scope (DESIGN §4) and the proof items with id, content_type, base64_encoded_content', async () => {
    const tokens = await tokensFor('openid email com.vendor.personal_info com.vendor.id_number com.vendor.proof');
    const { body } = await userinfo(String(tokens['access_token']));
    expect(body).toMatchObject({
      email: 'alice@example.test',
      email_verified: true,
      given_name: 'Alice Maria',
      'com.vendor.last_name': 'van den Berg',
      'com.vendor.nl_brp_voorvoegsel': 'van den',
    });
    for (const claim of [
      'birthdate',
      'com.vendor.birthplace',
      'com.vendor.nationality',
      'com.vendor.nl_brp_voornaam',
      'com.vendor.nl_brp_geslachtsnaam',
      'com.vendor.nl_brp_geslachtsnaam_zonder_voorvoegsel',
      'com.vendor.id_number',
      'com.vendor.document.type',
      'com.vendor.id_document_issuance_date',
      'com.vendor.id_document_issuance_place',
      'com.vendor.id_document_expiration_date',
    ]) {
      expect(body, claim).toHaveProperty([claim]);
    }
    expect(body['com.vendor.id_document_expiration_date']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const proof = body['com.vendor.proof'] as Array<Record<string, unknown>>;
    expect(proof.length).toBeGreaterThan(0);
    for (const item of proof)
      expect(Object.keys(item).sort()).toEqual(['base64_encoded_content', 'content_type', 'id']);
    expect(Buffer.from(String(proof[0]?.['base64_encoded_content']), 'base64').subarray(0, 5).toString()).toBe('%PDF-');
  });

  it('releases only what the scopes ask, and omits what the user cannot share', async () => {
    const emailOnly = await userinfo(String((await tokensFor('openid email'))['access_token']));
    expect(emailOnly.body).toHaveProperty('email');
    expect(emailOnly.body).not.toHaveProperty('given_name');
    const bob = await userinfo(
      String(
        (await tokensFor('openid email com.vendor.personal_info com.vendor.id_number com.vendor.proof', 'bob'))[
          'access_token'
        ],
      ),
    );
    expect(bob.body['given_name']).toBe('Bob');
    for (const claim of [
      'email',
      'email_verified',
      'com.vendor.birthplace',
      'com.vendor.nl_brp_voorvoegsel',
      'com.vendor.proof',
      'com.vendor.id_document_expiration_date',
    ]) {
      expect(bob.body, claim).not.toHaveProperty([claim]);
      expect(Object.values(bob.body)).not.toContain(null);
    }
  });

  it('requires a valid Bearer token; expires after 3600 s; lives only on the legacy host', async () => {
    const none = await userinfo(undefined);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
    expect((await userinfo('made-up')).status).toBe(401);
    const accessToken = String((await tokensFor('openid'))['access_token']);
    expect((await fetch(`${idBase}/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } })).status).toBe(
      404,
    );
    t.sandbox.clock.advance(3_600_000);
    expect((await userinfo(accessToken)).status).toBe(401);
  });

  it('tells the storage service about its access tokens (introspection)', async () => {
    const introspect = t.sandbox.shared.introspectIdentityToken;
    expect(introspect).toBeTypeOf('function');
    const tokens = await tokensFor('openid com.vendor.storage');
    const info = introspect?.(String(tokens['access_token']));
    expect(info).toMatchObject({ active: true, client_id: CLIENT_ID, scope: ['openid', 'com.vendor.storage'] });
    expect(info?.sub).toBeTruthy();
    expect(introspect?.('made-up')).toMatchObject({ active: false });
    t.sandbox.clock.advance(3_600_000);
    expect(introspect?.(String(tokens['access_token']))?.active).toBe(false);
  });
});

// ---- the client --------------------------------------------------------------------------------

/** A "browser" that walks the sandbox pages with fetch as `user` and lands on the loopback receiver. */
function pageBrowser(user = 'alice', decision = 'approve'): BrowserLauncher {
  return {
    async open(url: string) {
      void (async () => {
        const page = await fetch(url, { redirect: 'manual' });
        if (page.status === 302) return void (await fetch(page.headers.get('location') ?? ''));
        const id = processId(await page.text());
        const scanned = await scan(id, user);
        if (scanned.status === 302) return void (await fetch(scanned.headers.get('location') ?? ''));
        const done = await consent(id, decision);
        await fetch(done.headers.get('location') ?? '');
      })().catch(() => undefined);
    },
  };
}

const followBrowser: BrowserLauncher = {
  async open(url: string) {
    void fetch(url).catch(() => undefined);
  },
};

function loopbackAuthorize(browser: BrowserLauncher): IdentityBrowserAuthorize {
  return (request) =>
    authorizeInBrowser({
      buildAuthorizeUrl: request.buildAuthorizeUrl,
      redirectUri: 'http://127.0.0.1:0/callback',
      browser,
      timeoutMs: 20_000,
      purpose: request.purpose,
      terminal: { say: () => undefined, note: () => undefined },
    });
}

function sandboxClient(
  browser: BrowserLauncher = pageBrowser(),
  extra: Partial<ConstructorParameters<typeof IdentityClient>[0]> = {},
): IdentityClient {
  return new IdentityClient({
    baseUrl: idBase,
    legacyBaseUrl: legacyBase,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    http: new HttpClient({ maxTries: 1 }),
    clock: systemClock,
    authorize: loopbackAuthorize(browser),
    ...extra,
  });
}

async function errorOf(promise: Promise<unknown>): Promise<EsignError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof EsignError) return error;
    throw error;
  }
  throw new Error('expected an EsignError');
}

describe('identity client against the sandbox', () => {
  it('logs in through the pages: PKCE, nonce, validated ID token, userinfo with the same sub', async () => {
    const result = await sandboxClient(pageBrowser('alice')).login({
      scopes: ['email', 'com.vendor.personal_info'],
      lang: 'en',
    });
    const { session } = result;
    expect(session.tokenType).toBe('Bearer');
    expect(session.extra.scope).toEqual(['openid', 'email', 'com.vendor.personal_info']);
    expect(session.extra.idToken.iss).toBe(idBase);
    expect(session.extra.idToken.aud).toEqual([CLIENT_ID]);
    expect(session.extra.claims['sub']).toBe(session.extra.sub);
    expect(session.extra.claims['given_name']).toBe('Alice Maria');
    expect(session.expiresAt - Date.now()).toBeGreaterThan(3500_000);
  });

  it('keeps proof contents out of the session but hands them back once', async () => {
    const result = await sandboxClient(pageBrowser('alice')).login({ scopes: ['com.vendor.proof'] });
    expect(result.proof?.map((item) => item.id)).toEqual(['identity-report', 'portrait']);
    expect(JSON.stringify(result.session)).not.toContain(result.proof?.[0]?.base64_encoded_content.slice(0, 40));
    expect(result.session.extra.proof?.[0]).toMatchObject({ id: 'identity-report', content_type: 'application/pdf' });
  });

  it.each(SEED_CASES)('maps %s to its English case with exit code 4', async (name, user) => {
    const error = await errorOf(sandboxClient(pageBrowser(user)).login({ scopes: [] }));
    expect(error.exitCode).toBe(4);
    if (name === 'ConsentRejected' || SEED_CASES.find(([n]) => n === name)?.[2] === 'access_denied') {
      expect(error.code).toBe('AUTH_DENIED');
      expect(error.details?.['case']).toBe(name);
      expect(error.message).toContain(name);
    } else {
      expect(error.code).toBe('AUTH_SERVER_ERROR');
      expect(error.message).toMatch(/generic technical problem/);
      expect(error.hint).toMatch(/Retry/);
    }
  });

  it.each(SPOILED_ANSWERS)('rejects a spoiled answer (%s) with %s', async (fault, code) => {
    t.sandbox.autoApprove = true;
    await arm({ idToken: fault });
    const error = await errorOf(sandboxClient(followBrowser).login({ scopes: [] }));
    expect(error.code).toBe(code);
    expect(error.exitCode).toBe(4);
  });
});

// ---- a tiny OpenID provider of the test's own --------------------------------------------------

interface FakeOp {
  base: string;
  /** What the next token response holds; gets the nonce of the authorization request. */
  tokenResponse: (nonce: string) => Promise<Record<string, unknown>>;
  userinfo: Record<string, unknown>;
  redirectState?: (state: string) => string;
  discovery: boolean | number;
  close(): Promise<void>;
}

async function startFakeOp(): Promise<
  FakeOp & {
    key: { sign(claims: Record<string, unknown>, header?: Record<string, unknown>): Promise<string> };
    otherKey: { sign(claims: Record<string, unknown>): Promise<string> };
  }
> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  let nonce = '';
  const op = {
    base: '',
    discovery: true,
    userinfo: {} as Record<string, unknown>,
    redirectState: undefined as ((state: string) => string) | undefined,
    tokenResponse: async (_nonce: string): Promise<Record<string, unknown>> => ({}),
    key: {
      sign: (claims: Record<string, unknown>, header: Record<string, unknown> = {}) =>
        new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'k1', ...header }).sign(privateKey),
    },
    otherKey: {
      sign: (claims: Record<string, unknown>) =>
        new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).sign(other.privateKey),
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', op.base);
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    };
    if (url.pathname === '/.well-known/openid-configuration') {
      if (op.discovery !== true) return send(op.discovery === false ? 404 : op.discovery, { error: 'not_found' });
      return send(200, {
        issuer: op.base,
        authorization_endpoint: `${op.base}/authorize`,
        token_endpoint: `${op.base}/token`,
        jwks_uri: `${op.base}/jwks`,
        id_token_signing_alg_values_supported: ['RS256'],
      });
    }
    if (url.pathname === '/jwks') return send(200, { keys: [jwk] });
    if (url.pathname === '/authorize' || url.pathname === '/oauth2/authorize') {
      nonce = url.searchParams.get('nonce') ?? '';
      const target = new URL(url.searchParams.get('redirect_uri') ?? '');
      const state = url.searchParams.get('state') ?? '';
      target.searchParams.set('code', 'fake-code');
      target.searchParams.set('state', op.redirectState ? op.redirectState(state) : state);
      response.writeHead(302, { location: target.toString() }).end();
      return;
    }
    if (url.pathname === '/token' || url.pathname === '/oauth2/token') {
      void op.tokenResponse(nonce).then((body) => send(200, body));
      return;
    }
    if (url.pathname === '/userinfo')
      return send(200, op.userinfo, { 'content-type': 'application/json;charset=UTF-8' });
    send(404, {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  op.base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return op;
}

describe('identity client against a provider of the test (ID tokens built with jose)', () => {
  let op: Awaited<ReturnType<typeof startFakeOp>>;
  beforeAll(async () => {
    op = await startFakeOp();
  });
  afterAll(() => op.close());
  beforeEach(() => {
    op.discovery = true;
    op.redirectState = undefined;
    op.userinfo = { sub: 'user-1' };
  });

  const now = () => Math.floor(Date.now() / 1000);
  const good = (nonce: string) => ({
    iss: op.base,
    sub: 'user-1',
    aud: CLIENT_ID,
    iat: now(),
    exp: now() + 300,
    nonce,
    auth_time: now(),
  });
  const respond = (idToken: (nonce: string) => Promise<string>, extra: Record<string, unknown> = {}) => {
    op.tokenResponse = async (nonce) => ({
      access_token: 'opaque-access',
      token_type: 'Bearer',
      expires_in: 600,
      scope: 'openid',
      id_token: await idToken(nonce),
      ...extra,
    });
  };
  const client = (extra: Partial<ConstructorParameters<typeof IdentityClient>[0]> = {}) =>
    new IdentityClient({
      baseUrl: op.base,
      legacyBaseUrl: op.base,
      clientId: CLIENT_ID,
      clientSecret: 'x',
      http: new HttpClient({ maxTries: 1 }),
      clock: systemClock,
      authorize: loopbackAuthorize(followBrowser),
      ...extra,
    });

  it('accepts a good token, token_type in capitals, aud as an array with azp', async () => {
    respond((nonce) => op.key.sign({ ...good(nonce), aud: [CLIENT_ID, 'other-rp'], azp: CLIENT_ID }), {
      token_type: 'BEARER',
    });
    const result = await client().login({ scopes: [] });
    expect(result.session.extra.sub).toBe('user-1');
    expect(result.session.expiresAt - Date.now()).toBeLessThanOrEqual(600_000);
  });

  it.each([
    [
      'wrong iss',
      (nonce: string) => op.key.sign({ ...good(nonce), iss: 'https://evil.example' }),
      'OIDC_ISSUER_MISMATCH',
    ],
    ['wrong aud', (nonce: string) => op.key.sign({ ...good(nonce), aud: 'other-rp' }), 'OIDC_AUDIENCE_MISMATCH'],
    [
      'several aud without azp',
      (nonce: string) => op.key.sign({ ...good(nonce), aud: [CLIENT_ID, 'other-rp'] }),
      'OIDC_AUDIENCE_MISMATCH',
    ],
    [
      'azp of another client',
      (nonce: string) => op.key.sign({ ...good(nonce), aud: [CLIENT_ID, 'other-rp'], azp: 'other-rp' }),
      'OIDC_AUDIENCE_MISMATCH',
    ],
    [
      'wrong nonce',
      (nonce: string) => op.key.sign({ ...good(nonce), nonce: `${nonce}-replayed` }),
      'OIDC_NONCE_MISMATCH',
    ],
    ['missing nonce', (nonce: string) => op.key.sign({ ...good(nonce), nonce: undefined }), 'OIDC_NONCE_MISMATCH'],
    [
      'expired',
      (nonce: string) => op.key.sign({ ...good(nonce), iat: now() - 1200, exp: now() - 600 }),
      'OIDC_ID_TOKEN_EXPIRED',
    ],
    [
      'iat in the future',
      (nonce: string) => op.key.sign({ ...good(nonce), iat: now() + 3600, exp: now() + 7200 }),
      'OIDC_ID_TOKEN_INVALID',
    ],
    [
      'alg none',
      async (nonce: string) =>
        `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify(good(nonce))).toString('base64url')}.`,
      'OIDC_ALG_UNSUPPORTED',
    ],
    [
      'HS256 with the public key as secret',
      (nonce: string) =>
        new SignJWT(good(nonce))
          .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
          .sign(new TextEncoder().encode('k1-secret-but-not-really-32-bytes!')),
      'OIDC_ALG_UNSUPPORTED',
    ],
    [
      'bad signature (another key, same kid)',
      (nonce: string) => op.otherKey.sign(good(nonce)),
      'OIDC_SIGNATURE_INVALID',
    ],
    ['unknown kid', (nonce: string) => op.key.sign(good(nonce), { kid: 'k2' }), 'OIDC_SIGNATURE_INVALID'],
    [
      'tampered payload',
      async (nonce: string) => {
        const [header, , signature] = (await op.key.sign(good(nonce))).split('.');
        return `${header}.${Buffer.from(JSON.stringify({ ...good(nonce), sub: 'someone-else' })).toString('base64url')}.${signature}`;
      },
      'OIDC_SIGNATURE_INVALID',
    ],
  ])('rejects an ID token with %s', async (_name, idToken, code) => {
    respond(idToken);
    const error = await errorOf(client().login({ scopes: [] }));
    expect(error.code).toBe(code);
    expect(error.exitCode).toBe(4);
  });

  it('rejects a redirect whose state esign did not send', async () => {
    respond((nonce) => op.key.sign(good(nonce)));
    op.redirectState = (state) => `${state}x`;
    expect((await errorOf(client().login({ scopes: [] }))).code).toBe('AUTH_STATE_MISMATCH');
  });

  it('rejects userinfo about another subject', async () => {
    respond((nonce) => op.key.sign(good(nonce)));
    op.userinfo = { sub: 'user-2' };
    expect((await errorOf(client().login({ scopes: [] }))).code).toBe('OIDC_SUB_MISMATCH');
  });

  it('rejects a token_type other than Bearer', async () => {
    respond((nonce) => op.key.sign(good(nonce)), { token_type: 'mac' });
    expect((await errorOf(client().login({ scopes: [] }))).code).toBe('OIDC_BAD_RESPONSE');
  });

  it('without discovery, uses the profile issuer and JWKS URL, and says what is missing otherwise', async () => {
    op.discovery = false;
    respond((nonce) => op.key.sign(good(nonce)));
    const result = await client({ issuer: op.base, jwksUri: `${op.base}/jwks` }).login({ scopes: [] });
    expect(result.session.extra.issuer).toBe(op.base);
    expect((await errorOf(client().login({ scopes: [] }))).code).toBe('OIDC_DISCOVERY_FAILED');
  });

  it('answers a discovery 500 with the profile issuer and JWKS URL when it has them; otherwise it is an outage (exit 5)', async () => {
    op.discovery = 500;
    respond((nonce) => op.key.sign(good(nonce)));
    const result = await client({ issuer: op.base, jwksUri: `${op.base}/jwks` }).login({ scopes: [] });
    expect(result.session.extra.issuer).toBe(op.base);
    const error = await errorOf(client().login({ scopes: [] }));
    expect([error.code, error.exitCode]).toEqual(['HTTP_SERVER_ERROR', 5]);
  });

  it('refuses a discovery document for another issuer', async () => {
    respond((nonce) => op.key.sign(good(nonce)));
    expect((await errorOf(client({ issuer: 'https://expected.example' }).login({ scopes: [] }))).code).toBe(
      'OIDC_DISCOVERY_FAILED',
    );
  });
});

// ---- the commands ------------------------------------------------------------------------------

describe('esign login / whoami / logout (built CLI)', () => {
  const cli = (args: string[]) => runCli(args, { env: t.env });
  const follow = ['--browser', `node ${followRedirects}`];
  const as = (user: string, decision = 'approve') => ['--browser', `node ${driver} ${user} ${decision}`];

  it('logs in with --scope com.vendor.storage, stores the session 0600, prints no secret', async () => {
    t.sandbox.autoApprove = true;
    const result = await cli(['login', ...follow, '--scope', 'com.vendor.storage', '--json']);
    expect(result.code, result.stderr).toBe(0);
    const out = result.json<{ sub: string; scope: string[]; expiresAt: string; sessionFile: string }>();
    expect(out.scope).toEqual(['openid', 'com.vendor.storage']);
    const file = join(t.configDir, 'tokens.json');
    expect(out.sessionFile).toBe(file);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(await readFile(file, 'utf8')) as Record<
      string,
      { accessToken: string; extra: { scope: string[]; sub: string } }
    >;
    const session = stored['sandbox:identity'];
    expect(session?.extra.scope).toContain('com.vendor.storage');
    expect(t.sandbox.shared.introspectIdentityToken?.(session?.accessToken ?? '')).toMatchObject({
      active: true,
      scope: ['openid', 'com.vendor.storage'],
      sub: out.sub,
    });
    for (const secret of [session?.accessToken ?? '', CLIENT_SECRET]) {
      expect(result.stdout).not.toContain(secret);
      expect(result.stderr).not.toContain(secret);
    }
    expect(result.stderr).not.toMatch(/code=/);
  });

  it('whoami shows the claims as a table with "not shared", then logout forgets the session', async () => {
    const login = await cli(['login', ...as('bob'), '--scope', 'email', '--scope', 'com.vendor.personal_info']);
    expect(login.code, login.stderr).toBe(0);
    expect(login.stdout).toMatch(/Signed in at the identity service as Bob Jansen/);
    expect(login.stdout).toMatch(/Not shared: E-mail, E-mail verified, Birthplace, Prefix \(BRP\)/);
    const human = await cli(['whoami']);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^Given name\(s\)\s+Bob$/m);
    expect(human.stdout).toMatch(/^E-mail\s+not shared$/m);
    expect(human.stdout).toMatch(/^Birthplace\s+not shared$/m);
    expect(human.stdout).toMatch(/Session valid until \d{4}-/);
    const json = (await cli(['whoami', '--json'])).json<{
      expired: boolean;
      notShared: string[];
      claims: Record<string, unknown>;
    }>();
    expect(json.expired).toBe(false);
    expect(json.notShared).toEqual([
      'email',
      'email_verified',
      'com.vendor.birthplace',
      'com.vendor.nl_brp_voorvoegsel',
    ]);
    expect(json.claims['com.vendor.last_name']).toBe('Jansen');
    const logout = await cli(['logout', '--json']);
    expect(logout.json()).toEqual({ schemaVersion: 2, profile: 'sandbox', signedOut: true });
    const after = await cli(['whoami', '--json']);
    expect(after.code).toBe(4);
    expect(after.json<{ error: { code: string } }>().error.code).toBe('AUTH_LOGIN_REQUIRED');
    expect((await cli(['logout'])).stdout).toMatch(/nothing to forget/);
  });

  it('--save-proof writes each item named by id with its extension, and an index with size and SHA-256', async () => {
    const dir = await tempDir('esign-proof-');
    t.sandbox.autoApprove = true;
    const result = await cli(['login', ...follow, '--save-proof', dir, '--json']);
    expect(result.code, result.stderr).toBe(0);
    const index = JSON.parse(await readFile(join(dir, 'index.json'), 'utf8')) as {
      items: Array<{ id: string; content_type: string; file: string; size: number; sha256: string }>;
    };
    expect(index.items.map((item) => item.file)).toEqual(['identity-report.pdf', 'portrait.png']);
    for (const item of index.items) {
      const bytes = await readFile(join(dir, item.file));
      expect(bytes.length).toBe(item.size);
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(item.sha256);
    }
    expect((await readFile(join(dir, 'identity-report.pdf'))).subarray(0, 5).toString()).toBe('%PDF-');
    // A second login with the same proof leaves the archive as it is.
    expect((await cli(['login', ...follow, '--save-proof', dir])).code).toBe(0);
  });

  it.each(SEED_CASES)('prints an English line for %s and exits 4', async (name, user, error) => {
    const result = await cli(['login', ...as(user)]);
    expect(result.code).toBe(4);
    const line =
      result.stderr
        .split('\n')
        .filter((text) => text.startsWith('esign: '))
        .pop() ?? '';
    if (error === 'access_denied') expect(line).toContain(`(${name})`);
    else expect(line).toMatch(/generic technical problem \(server_error\)\. Retry/);
    expect(line).not.toMatch(/[àéë]|verlopen|pincode/i);
  });

  it.each(SPOILED_ANSWERS)('refuses a spoiled login (%s) with %s, storing nothing', async (fault, code) => {
    await cli(['logout']);
    t.sandbox.autoApprove = true;
    await arm({ idToken: fault });
    const result = await cli(['login', ...follow, '--json']);
    expect(result.code).toBe(4);
    expect(result.json<{ error: { code: string } }>().error.code).toBe(code);
    expect((await cli(['whoami'])).code).toBe(4);
  });

  it('rejects an unknown scope before any browser step', async () => {
    const result = await cli(['login', '--scope', 'profile', '--json']);
    expect(result.code).toBe(2);
    expect(result.json<{ error: { code: string } }>().error.code).toBe('USAGE');
  });
});
