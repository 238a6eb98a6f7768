/**
 * The sandbox signing service and the CSC client against each other, over real HTTP: the rules of
 * the service document (scopes, codes, SADs, OIDs, encodings, limits) and the client's handling.
 */
import { createHash, randomBytes, X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EsignError } from '../../src/core/errors.js';
import type { BrowserLauncher } from '../../src/core/ports.js';
import { verifyDigestSignature } from '../../src/core/csc/signature.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { SANDBOX_SEAL } from '../../src/sandbox/deps.js';
import {
  ALICE_CREDENTIALS,
  CLIENT_ID,
  CLIENT_SECRET,
  hiddenFields,
  makeTestClient,
  pageBrowser,
  type TestClient,
} from '../helpers/csc-browser.js';
import { tempDirForFile } from '../helpers/tmp.js';

const REDIRECT = 'http://127.0.0.1:8765/callback';
const SHA256 = '2.16.840.1.101.3.4.2.1';
const RSA = '1.2.840.113549.1.1.1';

let sandbox: Sandbox;
let dir: { dir: string; remove: () => Promise<void> };
let base: string;

beforeAll(async () => {
  dir = await tempDirForFile('esign-signing-');
  sandbox = await startSandbox({ dataDir: join(dir.dir, 'sandbox'), autoApprove: true, s3: false });
  base = sandbox.urls.signing;
});

afterAll(async () => {
  await sandbox.close();
  await dir.remove();
});

beforeEach(() => {
  sandbox.autoApprove = true;
  sandbox.clock.reset();
  sandbox.faults.clear();
});

function digest(label: string): Uint8Array {
  return new Uint8Array(createHash('sha256').update(label).digest());
}

// ---- raw protocol helpers (a browser that stops at the redirect) -------------------------------

async function authorize(
  params: Record<string, string>,
): Promise<{ status: number; params?: URLSearchParams; location?: string; text: string }> {
  const url = `${base}/oauth2/authorize?${new URLSearchParams(params).toString()}`;
  const response = await fetch(url, { redirect: 'manual' });
  const location = response.headers.get('location') ?? undefined;
  return {
    status: response.status,
    location,
    params: location ? new URL(location).searchParams : undefined,
    text: await response.text(),
  };
}

function serviceParams(extra: Record<string, string> = {}): Record<string, string> {
  return {
    response_type: 'code',
    client_id: CLIENT_ID,
    redirect_uri: REDIRECT,
    scope: 'service',
    state: 'st-1',
    ...extra,
  };
}

function credentialParams(
  credentialID: string,
  hashes: Uint8Array[],
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    ...serviceParams({ scope: 'credential' }),
    credentialID,
    numSignatures: String(hashes.length),
    hash: hashes.map((hash) => Buffer.from(hash).toString('base64url')).join(','),
    ...extra,
  };
}

async function token(
  form: Record<string, string>,
  auth: string | null = `${CLIENT_ID}:${CLIENT_SECRET}`,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (auth) headers['authorization'] = `Basic ${Buffer.from(auth).toString('base64')}`;
  const response = await fetch(`${base}/oauth2/token`, {
    method: 'POST',
    headers,
    body: new URLSearchParams(form).toString(),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function codeFor(params: Record<string, string>): Promise<string> {
  const result = await authorize(params);
  const code = result.params?.get('code');
  if (!code) throw new Error(`no code: ${result.location ?? result.text}`);
  return code;
}

async function exchange(params: Record<string, string>): Promise<string> {
  const code = await codeFor(params);
  const result = await token({
    grant_type: 'authorization_code',
    code,
    client_id: CLIENT_ID,
    redirect_uri: params['redirect_uri'] ?? REDIRECT,
  });
  expect(result.status).toBe(200);
  return result.body['access_token'] as string;
}

async function csc(
  path: string,
  accessToken: string | undefined,
  body: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (accessToken) headers['authorization'] = `Bearer ${accessToken}`;
  const response = await fetch(`${base}/csc/v1/${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

function signHashBody(credentialID: string, sad: string, hashes: Uint8Array[], extra: Record<string, unknown> = {}) {
  return {
    credentialID,
    SAD: sad,
    hash: hashes.map((hash) => Buffer.from(hash).toString('base64')),
    hashAlgo: SHA256,
    signAlgo: RSA,
    ...extra,
  };
}

// ---- the CSC client, with browser steps through the real loopback receiver ---------------------

/** The client against the sandbox in each CSC dialect: the same behaviour, route ids of its own. */
const DIALECTS = [
  { name: 'CSC API v1.0.4', version: '1', url: 'signing', prefix: 'signing', csc: '/csc/v1' },
  { name: 'CSC API v2', version: '2', url: 'signingV2', prefix: 'signing-v2', csc: '/csc/v2' },
] as const;

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof EsignError) return error.code;
    throw error;
  }
  return 'no error';
}

describe.each(DIALECTS)('full flow through the CSC client ($name)', (dialect) => {
  const makeClient = (browser: BrowserLauncher = pageBrowser(), pageSize?: number): TestClient =>
    makeTestClient({
      baseUrl: sandbox.urls[dialect.url],
      dir: dir.dir,
      browser,
      ...(pageSize ? { pageSize } : {}),
      version: dialect.version,
    });

  it('signs in once, follows pagination, reads info, signs and verifies', async () => {
    const { client, steps } = makeClient(pageBrowser(), 2);
    const ids = await client.listCredentialIDs();
    expect(ids).toEqual([...ALICE_CREDENTIALS]);
    const info = await client.credentialInfo('alice-rsa3072');
    // The v2 sandbox lists alice-rsa3072's key as sha256WithRSAEncryption only (the client then signs with that).
    expect(info).toMatchObject({
      status: 'enabled',
      keyLengthBits: 3072,
      algorithms: [dialect.version === '2' ? '1.2.840.113549.1.1.11' : RSA],
      authMode: 'oauth2code',
    });
    expect(info.certificates).toHaveLength(3);
    const credential = await client.signingCredential('alice-rsa3072');
    const hashes = [digest('a'), digest('b'), digest('c')];
    const signatures = await client.signHashes(credential, hashes);
    expect(signatures).toHaveLength(3);
    signatures.forEach((signature, index) => {
      expect(signature.length).toBe(384);
      expect(verifyDigestSignature(info.certificates[0] as Uint8Array, hashes[index] as Uint8Array, signature)).toBe(
        true,
      );
    });
    expect(steps).toEqual(['sign-in to the signing service', 'approval of 3 signatures with alice-rsa3072']);
  });

  it('works through the sign-in and approval pages when not auto-approving', async () => {
    sandbox.autoApprove = false;
    const { client } = makeClient(pageBrowser({ decision: 'approve' }));
    const credential = await client.signingCredential('alice-rsa2048');
    expect(await client.signHashes(credential, [digest('pages')])).toHaveLength(1);
  });

  it('a refusal by the signer is AUTH_DENIED', async () => {
    sandbox.autoApprove = false;
    const { client } = makeClient(pageBrowser({ decision: 'refuse' }));
    expect(await codeOf(client.listCredentialIDs())).toBe('AUTH_DENIED');
  });

  it('an altered state on the redirect is AUTH_STATE_MISMATCH', async () => {
    const { client } = makeClient(pageBrowser({ tamperState: true }));
    expect(await codeOf(client.listCredentialIDs())).toBe('AUTH_STATE_MISMATCH');
  });

  it('an expired service token leads to exactly one new sign-in', async () => {
    const { client, steps } = makeClient();
    await client.listCredentialIDs();
    sandbox.clock.advance(3601 * 1000);
    await client.listCredentialIDs();
    expect(steps).toEqual(['sign-in to the signing service', 'sign-in to the signing service']);
  });

  it('a signHash answer that does not verify is CSC_SIGNATURE_INVALID', async () => {
    const { client } = makeClient();
    const credential = await client.signingCredential('alice-rsa2048');
    const forged = Buffer.from(randomBytes(256)).toString('base64');
    sandbox.faults.inject({
      route: `${dialect.prefix} POST ${dialect.csc}/signatures/signHash`,
      fault: { kind: 'malformed', body: JSON.stringify({ signatures: [forged] }) },
    });
    expect(await codeOf(client.signHashes(credential, [digest('x')]))).toBe('CSC_SIGNATURE_INVALID');
  });

  it('disabled, expired and revoked credentials are CREDENTIAL_DISABLED', async () => {
    const { client } = makeClient();
    for (const id of ['alice-disabled', 'alice-expired', 'alice-revoked']) {
      expect((await client.credentialInfo(id)).status).toBe('disabled');
      expect(await codeOf(client.signingCredential(id))).toBe('CREDENTIAL_DISABLED');
    }
  });

  it('completes a credential step begun in another run (code pasted later)', async () => {
    const { client } = makeClient();
    const credential = await client.signingCredential('alice-rsa2048');
    const hashes = [digest('split')];
    const redirect = 'http://127.0.0.1:45678/callback';
    const { url, codeVerifier } = await client.credentialAuthorizationUrl('alice-rsa2048', hashes, redirect, 'later');
    const location = (await fetch(url, { redirect: 'manual' })).headers.get('location') ?? '';
    const code = new URL(location).searchParams.get('code') ?? '';
    const [signature] = await client.signWithAuthorizationCode(credential, hashes, code, redirect, codeVerifier);
    expect(
      verifyDigestSignature(credential.certificates[0] as Uint8Array, hashes[0] as Uint8Array, signature as Uint8Array),
    ).toBe(true);
  });

  it('a SAD approved for other hashes is CSC_SAD_INVALID at the client, and nothing is signed', async () => {
    const { client } = makeClient();
    const credential = await client.signingCredential('alice-rsa2048');
    const redirect = 'http://127.0.0.1:45678/callback';
    const { url, codeVerifier } = await client.credentialAuthorizationUrl(
      'alice-rsa2048',
      [digest('approved')],
      redirect,
      'other',
    );
    const code =
      new URL((await fetch(url, { redirect: 'manual' })).headers.get('location') ?? '').searchParams.get('code') ?? '';
    const error = await codeOf(
      client.signWithAuthorizationCode(credential, [digest('something else')], code, redirect, codeVerifier),
    );
    expect(error).toBe('CSC_SAD_INVALID');
  });

  it('finishes a service sign-in begun in another run, with its PKCE verifier', async () => {
    const { client } = makeClient();
    await client.forgetServiceToken();
    const redirect = 'http://127.0.0.1:45678/callback';
    const { url } = client.startServiceSignIn(redirect, 'later');
    expect(new URL(url).searchParams.get('code_challenge_method')).toBe('S256');
    const code =
      new URL((await fetch(url, { redirect: 'manual' })).headers.get('location') ?? '').searchParams.get('code') ?? '';
    expect(await codeOf(client.finishServiceSignIn(code, redirect, 'a-verifier-of-someone-else'.padEnd(43, 'x')))).toBe(
      'AUTH_TOKEN_REJECTED',
    );
    const again = client.startServiceSignIn(redirect, 'later');
    const code2 =
      new URL((await fetch(again.url, { redirect: 'manual' })).headers.get('location') ?? '').searchParams.get(
        'code',
      ) ?? '';
    await client.finishServiceSignIn(code2, redirect, again.codeVerifier);
    expect(await client.hasServiceToken()).toBe(true);
  });

  it("another user's credential is CREDENTIAL_NOT_FOUND", async () => {
    const { client } = makeClient();
    expect(await codeOf(client.credentialInfo('bob-rsa2048'))).toBe('CREDENTIAL_NOT_FOUND');
  });
});

describe('GET /oauth2/authorize', () => {
  it('redirects with code and the unchanged state, on any loopback port', async () => {
    const result = await authorize(
      serviceParams({ redirect_uri: 'http://127.0.0.1:49152/callback', state: 'x'.repeat(255) }),
    );
    expect(result.status).toBe(302);
    expect(result.location?.startsWith('http://127.0.0.1:49152/callback?')).toBe(true);
    expect(result.params?.get('code')).toBeTruthy();
    expect(result.params?.get('state')).toBe('x'.repeat(255));
  });

  it('never redirects for an unknown client_id or redirect_uri', async () => {
    for (const params of [
      serviceParams({ client_id: 'intruder' }),
      serviceParams({ redirect_uri: 'https://evil.example/callback' }),
      serviceParams({ redirect_uri: 'http://127.0.0.1:8765/other' }),
    ]) {
      const result = await authorize(params);
      expect(result.status).toBe(400);
      expect(result.location).toBeUndefined();
      expect(result.text).toContain('TEST');
    }
  });

  it.each([
    [
      'scope service credential together',
      serviceParams({ scope: 'service credential' }),
      'invalid_scope',
      /never together/,
    ],
    ['no state', { ...serviceParams(), state: '' }, 'invalid_request', /state parameter is required/],
    ['state over 255 bytes', serviceParams({ state: 'y'.repeat(256) }), 'invalid_request', /longer than 255 bytes/],
    [
      'response_type token',
      serviceParams({ response_type: 'token' }),
      'unsupported_response_type',
      /Only response_type=code/,
    ],
    [
      '51 hashes',
      credentialParams(
        'alice-rsa2048',
        Array.from({ length: 51 }, (_, i) => digest(`h${i}`)),
      ),
      'invalid_request',
      /between 1 and 50, got 51/,
    ],
    [
      'numSignatures not the hash count',
      credentialParams('alice-rsa2048', [digest('1'), digest('2')], { numSignatures: '3' }),
      'invalid_request',
      /numSignatures is 3 but 2 hashes/,
    ],
    [
      'hashes in standard base64',
      credentialParams('alice-rsa2048', [digest('1')], { hash: Buffer.from(digest('1')).toString('base64') }),
      'invalid_request',
      /base64url-encoded/,
    ],
    ['no credentialID', credentialParams('', [digest('1')]), 'invalid_request', /credentialID parameter is required/],
    [
      'a disabled credential',
      credentialParams('alice-disabled', [digest('1')]),
      'invalid_request',
      /alice-disabled is disabled \(disabled by owner\)/,
    ],
    [
      'an expired credential',
      credentialParams('alice-expired', [digest('1')]),
      'invalid_request',
      /alice-expired is disabled \(certificate expired\)/,
    ],
  ])('answers %s with error on the redirect', async (_name, params, error, description) => {
    const result = await authorize(params as Record<string, string>);
    expect(result.status).toBe(302);
    expect(result.params?.get('error')).toBe(error);
    expect(result.params?.get('error_description')).toMatch(description);
    expect(result.params?.get('code')).toBeNull();
    const state = (params as Record<string, string>)['state'];
    if (state) expect(result.params?.get('state')).toBe(state);
  });

  it('renders the approval pages in Dutch and English, listing the hashes', async () => {
    sandbox.autoApprove = false;
    const login = await authorize(credentialParams('alice-rsa2048', [digest('nl')], { lang: 'nl' }));
    expect(login.status).toBe(200);
    expect(login.text).toContain('Inloggen bij de ondertekendienst');
    const form = new URLSearchParams(hiddenFields(login.text));
    form.set('user', 'alice');
    form.set('action', 'login');
    const consent = await (
      await fetch(`${base}/oauth2/authorize/login`, {
        method: 'POST',
        body: form,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      })
    ).text();
    expect(consent).toContain('1 handtekening goedkeuren');
    expect(consent).toContain(Buffer.from(digest('nl')).toString('hex'));
    const english = await authorize(credentialParams('alice-rsa2048', [digest('en')]));
    expect(english.text).toContain('Sign in to the signing service');
  });
});

describe('POST /oauth2/token', () => {
  it('gives Bearer 3600 for scope service and SAD 300 for scope credential', async () => {
    const service = await token({
      grant_type: 'authorization_code',
      code: await codeFor(serviceParams()),
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT,
    });
    expect(service.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    const sad = await token({
      grant_type: 'authorization_code',
      code: await codeFor(credentialParams('alice-rsa2048', [digest('s')])),
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT,
    });
    expect(sad.body).toMatchObject({ token_type: 'SAD', expires_in: 300 });
  });

  it('rejects a redirect_uri other than the authorization request’s (invalid_grant)', async () => {
    const code = await codeFor(serviceParams({ redirect_uri: 'http://127.0.0.1:40000/callback' }));
    const result = await token({
      grant_type: 'authorization_code',
      code,
      client_id: CLIENT_ID,
      redirect_uri: 'http://127.0.0.1:40001/callback',
    });
    expect(result.status).toBe(400);
    expect(result.body['error']).toBe('invalid_grant');
  });

  it('accepts a code once; the second use fails and revokes the token (invalid_grant)', async () => {
    const code = await codeFor(serviceParams());
    const form = { grant_type: 'authorization_code', code, client_id: CLIENT_ID, redirect_uri: REDIRECT };
    const first = await token(form);
    expect(first.status).toBe(200);
    const second = await token(form);
    expect(second.status).toBe(400);
    expect(second.body['error']).toBe('invalid_grant');
    const list = await csc('credentials/list', first.body['access_token'] as string, {});
    expect(list.status).toBe(401);
    expect(list.body['error']).toBe('invalid_token');
  });

  it('expires codes after 60 s (invalid_grant)', async () => {
    const code = await codeFor(serviceParams());
    sandbox.clock.advance(61_000);
    const result = await token({
      grant_type: 'authorization_code',
      code,
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT,
    });
    expect(result.body['error']).toBe('invalid_grant');
  });

  it('requires HTTP Basic client authentication (invalid_client, 401)', async () => {
    const code = await codeFor(serviceParams());
    const form = {
      grant_type: 'authorization_code',
      code,
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT,
      client_secret: CLIENT_SECRET,
    };
    const none = await token(form, null);
    expect([none.status, none.body['error']]).toEqual([401, 'invalid_client']);
    const wrong = await token(form, `${CLIENT_ID}:wrong`);
    expect([wrong.status, wrong.body['error']]).toEqual([401, 'invalid_client']);
  });

  it('rejects other grant types (unsupported_grant_type), and client_credentials from a client not allowed it (unauthorized_client)', async () => {
    expect((await token({ grant_type: 'password', client_id: CLIENT_ID })).body['error']).toBe(
      'unsupported_grant_type',
    );
    expect((await token({ grant_type: 'client_credentials', client_id: CLIENT_ID })).body['error']).toBe(
      'unauthorized_client',
    );
  });
});

describe('/csc/v1', () => {
  let bearer: string;
  beforeEach(async () => {
    bearer = await exchange(serviceParams());
  });

  it('requires the Bearer service token (401 invalid_token); a SAD is not one', async () => {
    expect((await csc('credentials/list', undefined, {})).status).toBe(401);
    const sad = await exchange(credentialParams('alice-rsa2048', [digest('t')]));
    const result = await csc('credentials/list', sad, {});
    expect([result.status, result.body['error']]).toEqual([401, 'invalid_token']);
  });

  it('pages credentials/list with maxResults as a number or a string', async () => {
    const first = await csc('credentials/list', bearer, { maxResults: '2', clientData: 'x' });
    expect(first.body['credentialIDs']).toEqual(['alice-rsa2048', 'alice-rsa3072']);
    const second = await csc('credentials/list', bearer, { maxResults: 2, pageToken: first.body['nextPageToken'] });
    expect(second.body['credentialIDs']).toEqual(['alice-disabled', 'alice-expired']);
    const rest = await csc('credentials/list', bearer, { maxResults: 10, pageToken: second.body['nextPageToken'] });
    expect(rest.body).toEqual({ credentialIDs: ALICE_CREDENTIALS.slice(4) });
    expect((await csc('credentials/list', bearer, { maxResults: 0 })).body['error']).toBe('invalid_request');
    expect((await csc('credentials/list', bearer, { pageToken: 'forged' })).body['error']).toBe('invalid_request');
  });

  it('answers credentials/info with key.len as a number and the chain, signer first, only when asked for it (§11.5)', async () => {
    const result = await csc('credentials/info', bearer, { credentialID: 'alice-rsa2048', certificates: 'chain' });
    const body = result.body as {
      key: { len: unknown; status: string; algo: string[] };
      cert: { certificates: string[] };
      authMode: string;
    };
    expect(body.key).toEqual({ status: 'enabled', algo: [RSA], len: 2048 });
    expect(body.cert.certificates).toHaveLength(3);
    expect(body.authMode).toBe('oauth2code');
    const issuers = body.cert.certificates.map((text) => new X509Certificate(Buffer.from(text, 'base64')));
    expect(
      issuers[0]?.checkIssued(issuers[1]!) &&
        issuers[1]?.checkIssued(issuers[2]!) &&
        issuers[2]?.checkIssued(issuers[2]!),
    ).toBe(true);
    expect(issuers[1]?.subject).not.toBe(issuers[2]?.subject); // an issuing CA below the root
    // The defaults, to the letter: the signer alone, no certificate details, no PIN or OTP groups.
    const seal = await token(
      { grant_type: 'client_credentials', client_id: SANDBOX_SEAL.clientId, scope: 'service' },
      `${SANDBOX_SEAL.clientId}:${SANDBOX_SEAL.clientSecret}`,
    );
    const sealBearer = seal.body['access_token'] as string;
    const plain = (await csc('credentials/info', sealBearer, { credentialID: 'acme-seal-totp' })).body as {
      cert: Record<string, unknown>;
      PIN?: unknown;
      OTP?: unknown;
      authMode: string;
    };
    expect(plain.cert['certificates']).toHaveLength(1);
    expect(plain.cert['subjectDN']).toBeUndefined();
    expect(plain.authMode).toBe('explicit');
    expect(plain.PIN).toBeUndefined();
    expect(plain.OTP).toBeUndefined();
    const full = (
      await csc('credentials/info', sealBearer, {
        credentialID: 'acme-seal-totp',
        certInfo: true,
        authInfo: true,
        certificates: 'none',
      })
    ).body as { cert: Record<string, unknown>; PIN?: unknown; OTP?: unknown };
    expect(full.cert['certificates']).toBeUndefined();
    expect(full.cert['validTo']).toMatch(/^\d{14}Z$/);
    expect(full.cert['subjectDN']).toMatch(/^CN=/);
    expect(full.PIN).toMatchObject({ presence: 'true' });
    expect(full.OTP).toMatchObject({ presence: 'true', type: 'offline' });
    const expired = (await csc('credentials/info', bearer, { credentialID: 'alice-expired' })).body as {
      key: { status: string };
    };
    expect(expired.key.status).toBe('disabled');
  });

  it('signs exactly the authorized hashes, in request order', async () => {
    const hashes = [digest('one'), digest('two')];
    const sad = await exchange(credentialParams('alice-rsa2048', hashes));
    const result = await csc(
      'signatures/signHash',
      bearer,
      signHashBody('alice-rsa2048', sad, [hashes[1] as Uint8Array, hashes[0] as Uint8Array], { clientData: 'c' }),
    );
    expect(result.status).toBe(200);
    const certificate = sandbox.pki.credentials[0]?.signer.certificate as Uint8Array;
    const signatures = (result.body['signatures'] as string[]).map((s) => new Uint8Array(Buffer.from(s, 'base64')));
    expect(verifyDigestSignature(certificate, hashes[1] as Uint8Array, signatures[0] as Uint8Array)).toBe(true);
    expect(verifyDigestSignature(certificate, hashes[0] as Uint8Array, signatures[1] as Uint8Array)).toBe(true);
  });

  it('rejects a SAD used for other hashes or another credential (invalid_sad)', async () => {
    const sad = await exchange(credentialParams('alice-rsa2048', [digest('p'), digest('q')]));
    const subset = await csc('signatures/signHash', bearer, signHashBody('alice-rsa2048', sad, [digest('p')]));
    expect([subset.status, subset.body['error']]).toEqual([400, 'invalid_sad']);
    const other = await csc(
      'signatures/signHash',
      bearer,
      signHashBody('alice-rsa2048', sad, [digest('p'), digest('z')]),
    );
    expect(other.body['error']).toBe('invalid_sad');
    const credential = await csc(
      'signatures/signHash',
      bearer,
      signHashBody('alice-rsa3072', sad, [digest('p'), digest('q')]),
    );
    expect(credential.body['error']).toBe('invalid_sad');
  });

  it('rejects a SAD after 300 s (expired_sad)', async () => {
    const sad = await exchange(credentialParams('alice-rsa2048', [digest('late')]));
    sandbox.clock.advance(301_000);
    const result = await csc('signatures/signHash', bearer, signHashBody('alice-rsa2048', sad, [digest('late')]));
    expect([result.status, result.body['error']]).toEqual([400, 'expired_sad']);
  });

  it('rejects other OIDs, and base64url hashes (invalid_request)', async () => {
    const sad = await exchange(credentialParams('alice-rsa2048', [digest('oid')]));
    for (const extra of [
      { hashAlgo: '1.3.14.3.2.26' },
      { signAlgo: '1.2.840.113549.1.1.11' },
      { hash: [Buffer.from(digest('oid')).toString('base64url').replace(/=+$/, '') + '_'] },
    ]) {
      const result = await csc(
        'signatures/signHash',
        bearer,
        signHashBody('alice-rsa2048', sad, [digest('oid')], extra),
      );
      expect([result.status, result.body['error']]).toEqual([400, 'invalid_request']);
    }
    const valid = await csc('signatures/signHash', bearer, signHashBody('alice-rsa2048', sad, [digest('oid')]));
    expect(valid.status).toBe(200);
  });

  it('refuses to sign with a disabled, expired or revoked credential (credential_disabled)', async () => {
    const sad = await exchange(credentialParams('alice-rsa2048', [digest('d')]));
    for (const id of ['alice-disabled', 'alice-expired', 'alice-revoked']) {
      const result = await csc('signatures/signHash', bearer, signHashBody(id, sad, [digest('d')]));
      expect([id, result.status, result.body['error']]).toEqual([id, 400, 'credential_disabled']);
    }
  });
});
