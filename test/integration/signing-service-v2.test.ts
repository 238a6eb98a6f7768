/**
 * The sandbox signing service in its CSC API v2.0.0.2 dialect, held to the specification by raw
 * HTTP (exact bodies, parameter names and error codes of §8 and §11), and the client's choice of
 * dialect (discovery by `info`, refusals before any browser step, the settings services differ by).
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EsignError } from '../../src/core/errors.js';
import type { BrowserLauncher } from '../../src/core/ports.js';
import { verifyDigestSignature } from '../../src/core/csc/signature.js';
import { HttpClient, type HttpRequest, type HttpResponse } from '../../src/io/http.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { ALICE_CREDENTIALS, CLIENT_ID, CLIENT_SECRET, makeTestClient, pageBrowser } from '../helpers/csc-browser.js';
import { tempDirForFile } from '../helpers/tmp.js';

const REDIRECT = 'http://127.0.0.1:8765/callback';
const SHA256 = '2.16.840.1.101.3.4.2.1';
const RSA = '1.2.840.113549.1.1.1';
const SHA256_WITH_RSA = '1.2.840.113549.1.1.11';
const GENERALIZED_TIME = /^\d{14}Z$/;

let sandbox: Sandbox;
let dir: { dir: string; remove: () => Promise<void> };
let base: string;

beforeAll(async () => {
  dir = await tempDirForFile('esign-signing-v2-');
  sandbox = await startSandbox({ dataDir: join(dir.dir, 'sandbox'), autoApprove: true, s3: false });
  base = sandbox.urls.signingV2;
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

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');

async function authorize(params: Record<string, string>): Promise<URLSearchParams> {
  const response = await fetch(`${base}/oauth2/authorize?${new URLSearchParams(params).toString()}`, {
    redirect: 'manual',
  });
  expect(response.status).toBe(302);
  return new URL(response.headers.get('location') ?? '').searchParams;
}

/** PKCE is required in v2 (§8.3.2: code_challenge REQUIRED); one fixed pair serves the raw requests. */
const CODE_VERIFIER = 'raw-requests-code-verifier-'.padEnd(43, 'v');
const CODE_CHALLENGE = createHash('sha256').update(CODE_VERIFIER).digest('base64url');

function serviceParams(extra: Record<string, string> = {}): Record<string, string> {
  return {
    response_type: 'code',
    client_id: CLIENT_ID,
    redirect_uri: REDIRECT,
    scope: 'service',
    state: 'st-2',
    code_challenge: CODE_CHALLENGE,
    code_challenge_method: 'S256',
    ...extra,
  };
}

/** §8.3.2: scope credential with credentialID, numSignatures, hashes (base64url, comma-separated) and hashAlgorithmOID. */
function credentialParams(
  credentialID: string,
  hashes: Uint8Array[],
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    ...serviceParams({ scope: 'credential' }),
    credentialID,
    numSignatures: String(hashes.length),
    hashes: hashes.map(b64url).join(','),
    hashAlgorithmOID: SHA256,
    ...extra,
  };
}

/** RFC 9396 as CSC v2 profiles it: one authorization_details entry of type credential. */
function detailsParams(credentialID: string, hashes: Uint8Array[]): Record<string, string> {
  const details = [
    {
      type: 'credential',
      credentialID,
      documentDigests: hashes.map((hash, index) => ({ hash: b64(hash), label: `doc ${index}` })),
      hashAlgorithmOID: SHA256,
    },
  ];
  const { scope: _scope, ...params } = serviceParams();
  return { ...params, authorization_details: JSON.stringify(details) };
}

async function token(
  code: string,
  extra: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${base}/oauth2/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`,
    },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT,
      code_verifier: CODE_VERIFIER,
      ...extra,
    }).toString(),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function exchange(params: Record<string, string>): Promise<string> {
  const answer = await authorize(params);
  const code = answer.get('code');
  if (!code) throw new Error(`no code: ${answer.toString()}`);
  // §8.4.4: a code approved with authorization_details is exchanged with the same details.
  const details = params['authorization_details'];
  const result = await token(code, details ? { authorization_details: details } : {});
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
  const response = await fetch(`${base}/csc/v2/${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

function signHashBody(
  credentialID: string,
  sad: string | undefined,
  hashes: Uint8Array[],
  extra: Record<string, unknown> = {},
) {
  return {
    credentialID,
    ...(sad ? { SAD: sad } : {}),
    hashes: hashes.map(b64),
    hashAlgorithmOID: SHA256,
    signAlgo: RSA,
    ...extra,
  };
}

const certificateOf = (id: string) =>
  sandbox.pki.credentials.find((credential) => credential.credentialID === id)?.signer.certificate as Uint8Array;

describe('POST /csc/v2/info (§11.1)', () => {
  it('answers without a token: specs 2.0.0.2, its sign-ins (basic, oauth2code, oauth2client), its OAuth server and the methods it offers', async () => {
    const result = await csc('info', undefined, {});
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({
      specs: '2.0.0.2',
      authType: ['basic', 'oauth2code', 'oauth2client'],
      oauth2: base,
      asynchronousOperationMode: false,
      methods: [
        'auth/login',
        'credentials/list',
        'credentials/info',
        'credentials/authorize',
        'credentials/sendOTP',
        'signatures/signHash',
      ],
      lang: 'en-US',
    });
    expect(result.body['name']).toEqual(expect.any(String));
    expect((await csc('info', undefined, { lang: 'nl' })).status).toBe(200);
  });

  it('the v1.0.4 service has no v2 info, and the v2 service no v1 API', async () => {
    expect(
      (
        await fetch(`${sandbox.urls.signing}/csc/v2/info`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{}',
        })
      ).status,
    ).toBe(404);
    expect(
      (
        await fetch(`${base}/csc/v1/credentials/list`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{}',
        })
      ).status,
    ).toBe(404);
  });
});

describe('GET /oauth2/authorize, scope credential (§8.3.2)', () => {
  it('issues a SAD as the access token of type Bearer, for 300 s', async () => {
    const code = (await authorize(credentialParams('alice-rsa2048', [digest('a'), digest('b')]))).get('code') ?? '';
    const result = await token(code);
    expect(result.body).toMatchObject({ token_type: 'Bearer', expires_in: 300 });
  });

  it('takes the hashes from authorization_details (RFC 9396) without a scope', async () => {
    const hashes = [digest('details 1'), digest('details 2')];
    const sad = await exchange(detailsParams('alice-rsa2048', hashes));
    const bearer = await exchange(serviceParams());
    const result = await csc('signatures/signHash', bearer, signHashBody('alice-rsa2048', sad, hashes));
    expect(result.status).toBe(200);
  });

  it('exchanges a code approved with authorization_details only with the same details', async () => {
    const params = detailsParams('alice-rsa2048', [digest('repeat')]);
    const missing = await token((await authorize(params)).get('code') ?? '');
    expect([missing.status, missing.body]).toEqual([
      400,
      {
        error: 'invalid_request',
        error_description: 'Missing (or invalid type) string parameter authorization_details',
      },
    ]);
    const other = await token((await authorize(params)).get('code') ?? '', {
      authorization_details: detailsParams('alice-rsa2048', [digest('other')])['authorization_details']!,
    });
    expect([other.status, other.body['error']]).toEqual([400, 'invalid_grant']);
  });

  it.each([
    [
      'no code_challenge',
      () => {
        const {
          code_challenge: _c,
          code_challenge_method: _m,
          ...p
        } = credentialParams('alice-rsa2048', [digest('1')]);
        return p;
      },
      /Missing \(or invalid type\) string parameter code_challenge/,
    ],
    [
      'authorization_details with a scope',
      () => ({ ...detailsParams('alice-rsa2048', [digest('1')]), scope: 'credential' }),
      /scope parameter is not used with authorization_details/,
    ],
    [
      'the v1.0.4 hash parameter instead of hashes',
      () => {
        const { hashes: _h, ...p } = credentialParams('alice-rsa2048', [digest('1')]);
        return { ...p, hash: b64url(digest('1')) };
      },
      /Missing \(or invalid type\) string parameter hashes/,
    ],
    [
      'no hashAlgorithmOID',
      () => {
        const { hashAlgorithmOID: _a, ...p } = credentialParams('alice-rsa2048', [digest('1')]);
        return p;
      },
      /Missing \(or invalid type\) string parameter hashAlgorithmOID/,
    ],
    [
      'SHA-1',
      () => credentialParams('alice-rsa2048', [digest('1')], { hashAlgorithmOID: '1.3.14.3.2.26' }),
      /Invalid parameter hashAlgorithmOID/,
    ],
    [
      'numSignatures not the number of hashes',
      () => credentialParams('alice-rsa2048', [digest('1'), digest('2')], { numSignatures: '3' }),
      /Invalid parameter numSignatures/,
    ],
    [
      '51 hashes',
      () =>
        credentialParams(
          'alice-rsa2048',
          Array.from({ length: 51 }, (_, i) => digest(`h${i}`)),
        ),
      /Invalid parameter numSignatures: between 1 and 50/,
    ],
    [
      'a hash of 20 bytes',
      () => credentialParams('alice-rsa2048', [digest('1').subarray(0, 20)]),
      /Invalid digest value length/,
    ],
    ['an unknown credential', () => credentialParams('nobody-rsa', [digest('1')]), /Invalid parameter credentialID/],
    [
      'authorization_details that are not JSON',
      () => ({ ...detailsParams('alice-rsa2048', [digest('1')]), authorization_details: '[{' }),
      /authorization_details: not JSON/,
    ],
  ])('refuses %s with invalid_request on the redirect', async (_name, params, description) => {
    const answer = await authorize(params());
    expect(answer.get('error')).toBe('invalid_request');
    expect(answer.get('error_description')).toMatch(description);
    expect(answer.get('code')).toBeNull();
    expect(answer.get('state')).toBe('st-2');
  });
});

describe('POST /csc/v2/credentials/list and credentials/info (§11.4, §11.5)', () => {
  let bearer: string;
  beforeEach(async () => {
    bearer = await exchange(serviceParams());
  });

  it('lists the ids only, unless credentialInfo is asked for', async () => {
    const result = await csc('credentials/list', bearer, {});
    expect(result.body).toEqual({ credentialIDs: [...ALICE_CREDENTIALS] });
  });

  it('with credentialInfo, certificates chain, certInfo and authInfo: every credential described in the same answer', async () => {
    const result = await csc('credentials/list', bearer, {
      credentialInfo: true,
      certificates: 'chain',
      certInfo: true,
      authInfo: true,
    });
    const infos = result.body['credentialInfos'] as Array<Record<string, unknown>>;
    expect(infos.map((info) => info['credentialID'])).toEqual(result.body['credentialIDs']);
    const first = infos[0] as {
      key: unknown;
      cert: Record<string, unknown>;
      auth: unknown;
      SCAL: unknown;
      multisign: unknown;
    };
    expect(Object.keys(first).sort()).toEqual(['SCAL', 'auth', 'cert', 'credentialID', 'key', 'multisign']);
    expect(first.key).toEqual({ status: 'enabled', algo: [RSA], len: 2048 });
    expect(first.auth).toEqual({ mode: 'oauth2code' });
    expect(first.multisign).toBe(50);
    expect(first.cert['status']).toBe('valid');
    expect(first.cert['certificates']).toHaveLength(3);
    expect(first.cert['validFrom']).toMatch(GENERALIZED_TIME);
    expect(first.cert['validTo']).toMatch(GENERALIZED_TIME);
    expect(first.cert['subjectDN']).toMatch(/CN=Alice Test/);
    expect(first.cert['serialNumber']).toMatch(/^[0-9a-f]+$/);
  });

  it('gives the signer certificate only by default, none with certificates none; no DNs without certInfo, no auth without authInfo', async () => {
    const single = await csc('credentials/info', bearer, { credentialID: 'alice-rsa2048' });
    expect(single.body).toEqual({
      key: { status: 'enabled', algo: [RSA], len: 2048 },
      cert: { status: 'valid', certificates: [b64(certificateOf('alice-rsa2048'))] },
      SCAL: '2',
      multisign: 50,
    });
    const none = await csc('credentials/info', bearer, { credentialID: 'alice-rsa2048', certificates: 'none' });
    expect(none.body['cert']).toEqual({ status: 'valid' });
    const wrong = await csc('credentials/info', bearer, { credentialID: 'alice-rsa2048', certificates: 'all' });
    expect([wrong.status, wrong.body]).toEqual([
      400,
      { error: 'invalid_request', error_description: 'Invalid parameter certificates' },
    ]);
  });

  it('onlyValid leaves out the disabled, expired and revoked credentials', async () => {
    const result = await csc('credentials/list', bearer, { onlyValid: true });
    expect(result.body).toEqual({
      credentialIDs: ALICE_CREDENTIALS.filter((id) => !/disabled|expired|revoked/.test(id)),
      onlyValid: true,
    });
  });

  it('reports a disabled credential with key/status disabled and cert/status', async () => {
    const expired = await csc('credentials/info', bearer, { credentialID: 'alice-expired' });
    expect(expired.body).toMatchObject({ key: { status: 'disabled' }, cert: { status: 'expired' } });
    const revoked = await csc('credentials/info', bearer, { credentialID: 'alice-revoked' });
    expect(revoked.body).toMatchObject({ key: { status: 'disabled' }, cert: { status: 'revoked' } });
  });

  it.each([
    ['no credentialID', {}, 'Missing (or invalid type) string parameter credentialID'],
    ['a credentialID of another user', { credentialID: 'bob-rsa2048' }, 'Invalid parameter credentialID'],
  ])('answers credentials/info with %s: 400 invalid_request', async (_name, body, description) => {
    const result = await csc('credentials/info', bearer, body);
    expect([result.status, result.body]).toEqual([400, { error: 'invalid_request', error_description: description }]);
  });

  it('requires an access token (401 invalid_token); a v1.0.4 token is not one', async () => {
    const none = await csc('credentials/list', undefined, {});
    expect([none.status, none.body['error']]).toEqual([401, 'invalid_token']);
    base = sandbox.urls.signing;
    const v1Token = await exchange(serviceParams()).finally(() => (base = sandbox.urls.signingV2));
    const other = await csc('credentials/list', v1Token, {});
    expect([other.status, other.body['error']]).toEqual([401, 'invalid_token']);
  });
});

describe('POST /csc/v2/signatures/signHash (§11.10)', () => {
  let bearer: string;
  beforeEach(async () => {
    bearer = await exchange(serviceParams());
  });

  it('signs with the SAD in the body beside the service token, in the order of the hashes', async () => {
    const hashes = [digest('one'), digest('two')];
    const sad = await exchange(credentialParams('alice-rsa2048', hashes));
    const result = await csc(
      'signatures/signHash',
      bearer,
      signHashBody('alice-rsa2048', sad, [hashes[1] as Uint8Array, hashes[0] as Uint8Array], {
        operationMode: 'S',
        clientData: 'c',
      }),
    );
    expect(result.status).toBe(200);
    expect(Object.keys(result.body)).toEqual(['signatures']);
    const signatures = (result.body['signatures'] as string[]).map(
      (text) => new Uint8Array(Buffer.from(text, 'base64')),
    );
    expect(
      verifyDigestSignature(certificateOf('alice-rsa2048'), hashes[1] as Uint8Array, signatures[0] as Uint8Array),
    ).toBe(true);
    expect(
      verifyDigestSignature(certificateOf('alice-rsa2048'), hashes[0] as Uint8Array, signatures[1] as Uint8Array),
    ).toBe(true);
  });

  it('signs with the credential-scoped token (the SAD) as the Bearer token and no SAD parameter', async () => {
    const hashes = [digest('bearer')];
    const sad = await exchange(credentialParams('alice-rsa2048', hashes));
    const result = await csc('signatures/signHash', sad, signHashBody('alice-rsa2048', undefined, hashes));
    expect(result.status).toBe(200);
  });

  it("takes only a signAlgo of the credential's key/algo; sha256WithRSAEncryption needs no hashAlgorithmOID and ignores one", async () => {
    const rsa2048 = [digest('rsaEncryption')];
    const sad2048 = await exchange(credentialParams('alice-rsa2048', rsa2048));
    const missing = await csc(
      'signatures/signHash',
      bearer,
      signHashBody('alice-rsa2048', sad2048, rsa2048, { hashAlgorithmOID: undefined }),
    );
    expect([missing.status, missing.body]).toEqual([
      400,
      { error: 'invalid_request', error_description: 'Missing (or invalid type) string parameter hashAlgorithmOID' },
    ]);
    const notListed = await csc(
      'signatures/signHash',
      bearer,
      signHashBody('alice-rsa2048', sad2048, rsa2048, { signAlgo: SHA256_WITH_RSA }),
    );
    expect(notListed.body).toEqual({ error: 'invalid_request', error_description: 'Invalid parameter signAlgo' });
    const listed = (await csc('credentials/info', bearer, { credentialID: 'alice-rsa3072' })).body as {
      key: { algo: string[] };
    };
    expect(listed.key.algo).toEqual([SHA256_WITH_RSA]);
    const rsa3072 = [digest('sha256WithRSAEncryption')];
    const sad3072 = await exchange(credentialParams('alice-rsa3072', rsa3072));
    const plain = await csc(
      'signatures/signHash',
      bearer,
      signHashBody('alice-rsa3072', sad3072, rsa3072, { signAlgo: RSA }),
    );
    expect(plain.body).toEqual({ error: 'invalid_request', error_description: 'Invalid parameter signAlgo' });
    const combined = await csc(
      'signatures/signHash',
      bearer,
      signHashBody('alice-rsa3072', sad3072, rsa3072, { hashAlgorithmOID: '1.3.14.3.2.26', signAlgo: SHA256_WITH_RSA }),
    );
    expect(combined.status).toBe(200);
    const signature = new Uint8Array(Buffer.from((combined.body['signatures'] as string[])[0]!, 'base64'));
    expect(verifyDigestSignature(certificateOf('alice-rsa3072'), rsa3072[0]!, signature)).toBe(true);
  });

  it('spends a SAD on the hashes it authorizes: the same SAD again is refused', async () => {
    const hashes = [digest('once')];
    const sad = await exchange(credentialParams('alice-rsa2048', hashes));
    expect((await csc('signatures/signHash', bearer, signHashBody('alice-rsa2048', sad, hashes))).status).toBe(200);
    const again = await csc('signatures/signHash', bearer, signHashBody('alice-rsa2048', sad, hashes));
    expect(again.body).toEqual({ error: 'invalid_request', error_description: 'Invalid parameter SAD' });
  });

  it('needs a SAD beside a service token: 400 Missing (or invalid type) string parameter SAD', async () => {
    const result = await csc(
      'signatures/signHash',
      bearer,
      signHashBody('alice-rsa2048', undefined, [digest('no sad')]),
    );
    expect([result.status, result.body]).toEqual([
      400,
      { error: 'invalid_request', error_description: 'Missing (or invalid type) string parameter SAD' },
    ]);
  });

  it.each([
    ['an unknown signAlgo (ECDSA)', { signAlgo: '1.2.840.10045.4.3.2' }, 'Invalid parameter signAlgo'],
    ['SHA-1', { hashAlgorithmOID: '1.3.14.3.2.26' }, 'Invalid parameter hashAlgorithmOID'],
    ['no credentialID', { credentialID: undefined }, 'Missing (or invalid type) string parameter credentialID'],
    ['no signAlgo', { signAlgo: undefined }, 'Missing (or invalid type) string parameter signAlgo'],
    ['asynchronous operation', { operationMode: 'A' }, 'Invalid parameter operationMode'],
    [
      'the v1.0.4 hash and hashAlgo',
      { hashes: undefined, hash: [b64(digest('refused'))], hashAlgo: SHA256 },
      'Missing (or invalid type) array parameter hashes',
    ],
    ['an empty hash array', { hashes: [] }, 'Empty hash array'],
    ['a hash in base64url', { hashes: [b64url(digest('refused')) + '_'] }, 'Invalid Base64 hash string parameter'],
    ['a hash of 20 bytes', { hashes: [b64(digest('refused').subarray(0, 20))] }, 'Invalid digest value length'],
    ['a SAD that is not a string', { SAD: 42 }, 'Invalid parameter SAD: a string is expected.'],
    [
      'signAlgoParams that are not a string',
      { signAlgoParams: { saltLength: 32 } },
      'Missing (or invalid type) string parameter signAlgoParams',
    ],
  ])('refuses %s: 400 invalid_request', async (_name, extra, description) => {
    const hashes = [digest('refused')];
    const sad = await exchange(credentialParams('alice-rsa2048', hashes));
    const result = await csc('signatures/signHash', bearer, signHashBody('alice-rsa2048', sad, hashes, extra));
    expect([result.status, result.body]).toEqual([400, { error: 'invalid_request', error_description: description }]);
  });

  it('refuses hashes other than the SAD authorizes, and a SAD of another credential', async () => {
    const sad = await exchange(credentialParams('alice-rsa2048', [digest('p'), digest('q')]));
    const subset = await csc('signatures/signHash', bearer, signHashBody('alice-rsa2048', sad, [digest('p')]));
    expect([subset.status, subset.body['error']]).toEqual([400, 'invalid_request']);
    expect(subset.body['error_description']).toBe('Hash is not authorized by the SAD');
    const other = await csc(
      'signatures/signHash',
      bearer,
      signHashBody('alice-rsa3072', sad, [digest('p'), digest('q')], { signAlgo: SHA256_WITH_RSA }),
    );
    expect(other.body).toEqual({ error: 'invalid_request', error_description: 'Invalid parameter SAD' });
  });

  it('refuses a SAD after 300 s: SAD expired', async () => {
    const sad = await exchange(credentialParams('alice-rsa2048', [digest('late')]));
    sandbox.clock.advance(301_000);
    const fresh = await exchange(serviceParams());
    const result = await csc('signatures/signHash', fresh, signHashBody('alice-rsa2048', sad, [digest('late')]));
    expect([result.status, result.body]).toEqual([400, { error: 'invalid_request', error_description: 'SAD expired' }]);
  });

  it('refuses a disabled, expired or revoked credential', async () => {
    const sad = await exchange(credentialParams('alice-rsa2048', [digest('d')]));
    for (const [id, description] of [
      ['alice-disabled', 'Credential is disabled'],
      ['alice-expired', 'Signing certificate is expired'],
      ['alice-revoked', 'Signing certificate is revoked'],
    ] as const) {
      const result = await csc('signatures/signHash', bearer, signHashBody(id, sad, [digest('d')]));
      expect(result.body).toEqual({ error: 'invalid_request', error_description: description });
    }
  });

  it('refuses a signHash without any token (401 invalid_token)', async () => {
    const result = await csc(
      'signatures/signHash',
      undefined,
      signHashBody('alice-rsa2048', 'not-a-sad', [digest('x')]),
    );
    expect([result.status, result.body['error']]).toEqual([401, 'invalid_token']);
  });
});

// ---- the client: which dialect, and what it sends ---------------------------------------------

/** An HttpClient that keeps what it sent, so that a test can read the wire. */
class RecordingHttp extends HttpClient {
  readonly sent: HttpRequest[] = [];
  override async request(request: HttpRequest): Promise<HttpResponse> {
    this.sent.push(request);
    return super.request(request);
  }
}

/** A page browser that also keeps the authorization URLs it was sent to. */
function recordingBrowser(urls: string[]): BrowserLauncher {
  const inner = pageBrowser();
  return {
    open: async (url: string) => {
      urls.push(url);
      await inner.open(url);
    },
  };
}

async function codeOf(promise: Promise<unknown>): Promise<EsignError | 'no error'> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof EsignError) return error;
    throw error;
  }
  return 'no error';
}

describe('the client chooses the dialect', () => {
  it('auto: a service whose info says 2.0.0.2 is spoken to in v2; 1.0.4.0, or no info at all, in v1.0.4', async () => {
    const v2 = makeTestClient({ baseUrl: base, dir: dir.dir });
    expect(await v2.client.protocol()).toEqual({ version: '2', specs: '2.0.0.2', chosenBy: 'info' });
    const v1 = makeTestClient({ baseUrl: sandbox.urls.signing, dir: dir.dir });
    expect(await v1.client.protocol()).toEqual({ version: '1', specs: '1.0.4.0', chosenBy: 'info' });
    expect(await v1.client.listCredentialIDs()).toHaveLength(ALICE_CREDENTIALS.length);
    sandbox.faults.inject({ route: 'signing POST /csc/v1/info', fault: { kind: 'status', status: 404 } });
    const noInfo = makeTestClient({ baseUrl: sandbox.urls.signing, dir: dir.dir });
    expect(await noInfo.client.protocol()).toEqual({ version: '1', chosenBy: 'info' });
  });

  it('refuses a v2 service that does not offer signatures/signHash, naming it, before any browser step', async () => {
    const info = {
      specs: '2.0.0.2',
      authType: ['oauth2code'],
      methods: ['credentials/list', 'credentials/info', 'signatures/signDoc'],
    };
    sandbox.faults.inject({
      route: 'signing-v2 POST /csc/v2/info',
      fault: { kind: 'malformed', body: JSON.stringify(info), contentType: 'application/json' },
    });
    const { client, steps } = makeTestClient({ baseUrl: base, dir: dir.dir });
    const error = await codeOf(client.listCredentialIDs());
    expect(error).toBeInstanceOf(EsignError);
    expect((error as EsignError).code).toBe('CSC_UNSUPPORTED_SERVICE');
    expect((error as EsignError).message).toBe(
      'The signing service (CSC API 2.0.0.2) does not offer signatures/signHash, which esign needs to sign.',
    );
    expect(steps).toEqual([]);
  });

  it('refuses a v2 service without oauth2code authorization, also when cscVersion 2 is set', async () => {
    const info = {
      specs: '2.0.0.2',
      authType: ['basic', 'oauth2client'],
      methods: ['credentials/list', 'credentials/info', 'signatures/signHash'],
    };
    sandbox.faults.inject({
      route: 'signing-v2 POST /csc/v2/info',
      fault: { kind: 'malformed', body: JSON.stringify(info), contentType: 'application/json' },
    });
    const { client, steps } = makeTestClient({ baseUrl: base, dir: dir.dir, version: '2' });
    const error = await codeOf(client.listCredentialIDs());
    expect((error as EsignError).code).toBe('CSC_UNSUPPORTED_SERVICE');
    expect((error as EsignError).message).toMatch(/offers no oauth2code sign-in \(it offers basic, oauth2client\)/);
    expect(steps).toEqual([]);
  });

  it('does not guess the dialect from an outage: info answering 503 is an error', async () => {
    sandbox.faults.inject({
      route: 'signing-v2 POST /csc/v2/info',
      fault: { kind: 'status', status: 503, body: '{"error":"temporarily_unavailable"}' },
    });
    const { client } = makeTestClient({ baseUrl: base, dir: dir.dir });
    expect(((await codeOf(client.protocol())) as EsignError).code).toBe('HTTP_SERVER_ERROR');
  });

  it('refuses an OAuth server in info on plain http:// that is not loopback', async () => {
    const info = {
      specs: '2.0.0.2',
      authType: ['oauth2code'],
      oauth2: 'http://oauth.example.com',
      methods: ['credentials/list', 'credentials/info', 'signatures/signHash'],
    };
    sandbox.faults.inject({
      route: 'signing-v2 POST /csc/v2/info',
      fault: { kind: 'malformed', body: JSON.stringify(info), contentType: 'application/json' },
    });
    const { client, steps } = makeTestClient({ baseUrl: base, dir: dir.dir });
    const error = (await codeOf(client.listCredentialIDs())) as EsignError;
    expect(error.code).toBe('CSC_BAD_RESPONSE');
    expect(error.message).toMatch(
      /info names an OAuth 2.0 server esign will not use \(Refusing plain http:\/\/ for the OAuth 2.0 server at oauth.example.com/,
    );
    expect(steps).toEqual([]);
  });

  it("cscVersion 1 asks the v1 info only (for its sign-ins, methods and OAuth server), never v2's", async () => {
    const http = new RecordingHttp({ maxTries: 1 });
    const { client } = makeTestClient({ baseUrl: sandbox.urls.signing, dir: dir.dir, version: '1', extra: { http } });
    expect(await client.protocol()).toEqual({ version: '1', specs: '1.0.4.0', chosenBy: 'setting' });
    await client.listCredentialIDs();
    expect(http.sent.map((request) => new URL(request.url).pathname)).toEqual([
      '/signing/csc/v1/info',
      '/signing/oauth2/token',
      '/signing/csc/v1/credentials/list',
    ]);
  });
});

describe('the client on v2: what goes on the wire', () => {
  it('lists with credentialInfo once and asks no credentials/info after; signHash carries hashes, hashAlgorithmOID, signAlgo and the SAD', async () => {
    const http = new RecordingHttp({ maxTries: 1 });
    const urls: string[] = [];
    const { client } = makeTestClient({
      baseUrl: base,
      dir: dir.dir,
      browser: recordingBrowser(urls),
      extra: { http },
    });
    const { infos, unreadable } = await client.listCredentials();
    expect(infos).toHaveLength(ALICE_CREDENTIALS.length);
    expect(unreadable).toEqual([]);
    const credential = await client.signingCredential('alice-rsa3072');
    const hashes = [digest('wire 1'), digest('wire 2')];
    const signatures = await client.signHashes(credential, hashes);
    expect(
      verifyDigestSignature(
        credential.certificates[0] as Uint8Array,
        hashes[1] as Uint8Array,
        signatures[1] as Uint8Array,
      ),
    ).toBe(true);

    const paths = http.sent.map((request) => new URL(request.url).pathname);
    expect(paths).toEqual([
      '/signing-v2/csc/v2/info',
      '/signing-v2/oauth2/token',
      '/signing-v2/csc/v2/credentials/list',
      '/signing-v2/oauth2/token',
      '/signing-v2/csc/v2/signatures/signHash',
    ]);
    expect(JSON.parse(String(http.sent[2]?.body))).toEqual({
      credentialInfo: true,
      certificates: 'chain',
      certInfo: true,
      authInfo: true,
    });
    const signHash = http.sent[4] as HttpRequest;
    const body = JSON.parse(String(signHash.body)) as Record<string, unknown>;
    // alice-rsa3072 lists only sha256WithRSAEncryption: signAlgo is that, and hashAlgorithmOID is left out.
    expect(Object.keys(body).sort()).toEqual(['SAD', 'credentialID', 'hashes', 'signAlgo']);
    expect(body).toMatchObject({ credentialID: 'alice-rsa3072', hashes: hashes.map(b64), signAlgo: SHA256_WITH_RSA });

    const approval = new URL(urls[1] ?? '').searchParams;
    expect(approval.get('scope')).toBe('credential');
    expect(approval.get('hashes')).toBe(hashes.map(b64url).join(','));
    expect(approval.get('hashAlgorithmOID')).toBe(SHA256);
    expect(approval.get('numSignatures')).toBe('2');
    expect(approval.get('hash')).toBeNull();
  });

  it('cscAuthorizationDetails asks with authorization_details; cscSadAsBearer sends the SAD as the Bearer token', async () => {
    const http = new RecordingHttp({ maxTries: 1 });
    const urls: string[] = [];
    const { client } = makeTestClient({
      baseUrl: base,
      dir: dir.dir,
      browser: recordingBrowser(urls),
      extra: { http, authorizationDetails: true, sadAsBearer: true },
    });
    const credential = await client.signingCredential('alice-rsa2048');
    const hashes = [digest('details')];
    await client.signHashes(credential, hashes);
    const approval = new URL(urls.at(-1) ?? '').searchParams;
    expect(approval.get('scope')).toBeNull();
    expect(approval.get('hashes')).toBeNull();
    expect(JSON.parse(approval.get('authorization_details') ?? '')).toEqual([
      {
        type: 'credential',
        credentialID: 'alice-rsa2048',
        documentDigests: [{ hash: b64(hashes[0] as Uint8Array), label: 'document 1' }],
        hashAlgorithmOID: SHA256,
      },
    ]);
    const signHash = http.sent.at(-1) as HttpRequest;
    expect(new URL(signHash.url).pathname).toBe('/signing-v2/csc/v2/signatures/signHash');
    expect(JSON.parse(String(signHash.body))).toMatchObject({ hashAlgorithmOID: SHA256, signAlgo: RSA });
    expect(JSON.parse(String(signHash.body))['SAD']).toBeUndefined();
    const sadToken = http.sent.at(-2) as HttpRequest;
    expect(new URL(sadToken.url).pathname).toBe('/signing-v2/oauth2/token');
    expect(new URLSearchParams(String(sadToken.body)).get('authorization_details')).toBe(
      approval.get('authorization_details'),
    );
    expect(signHash.headers?.['authorization']).toMatch(/^Bearer .+/);
  });

  it("takes a credential's multisign as the most hashes one approval covers", async () => {
    const bearer = await exchange(serviceParams());
    const listed = (
      await csc('credentials/list', bearer, {
        credentialInfo: true,
        certificates: 'chain',
        certInfo: true,
        authInfo: true,
      })
    ).body;
    const infos = (listed['credentialInfos'] as Array<Record<string, unknown>>).map((info) => ({
      ...info,
      multisign: 2,
    }));
    sandbox.faults.inject({
      route: 'signing-v2 POST /csc/v2/credentials/list',
      fault: {
        kind: 'malformed',
        body: JSON.stringify({ ...listed, credentialInfos: infos }),
        contentType: 'application/json',
      },
    });
    const { client, steps } = makeTestClient({ baseUrl: base, dir: dir.dir });
    await client.listCredentialIDs();
    const credential = await client.signingCredential('alice-rsa2048');
    expect(credential.signaturesPerApproval).toBe(2);
    const hashes = ['m1', 'm2', 'm3', 'm4', 'm5'].map(digest);
    expect(await client.signHashes(credential, hashes)).toHaveLength(5);
    expect(steps.slice(1)).toEqual([
      'approval of 2 signatures with alice-rsa2048',
      'approval of 2 signatures with alice-rsa2048',
      'approval of 1 signature with alice-rsa2048',
    ]);
  });

  it.each([
    ['SAD expired', 'CSC_SAD_EXPIRED'],
    ['Invalid parameter SAD', 'CSC_SAD_INVALID'],
    ['Invalid parameter credentialID: the credential is disabled (certificate revoked)', 'CREDENTIAL_DISABLED'],
    ['Invalid parameter signAlgo', 'CSC_INVALID_REQUEST'],
    ['Hash is not authorized by the SAD', 'CSC_SAD_INVALID'],
    ['Signing certificate is expired', 'CREDENTIAL_DISABLED'],
  ])('a v2 refusal "%s" is %s, with the service’s words in the message', async (description, code) => {
    const { client } = makeTestClient({ baseUrl: base, dir: dir.dir });
    const credential = await client.signingCredential('alice-rsa2048');
    // An expired SAD gets one new approval and signHash once more: expired twice, it is reported.
    const times = code === 'CSC_SAD_EXPIRED' ? 2 : 1;
    sandbox.faults.inject({
      route: 'signing-v2 POST /csc/v2/signatures/signHash',
      fault: {
        kind: 'status',
        status: 400,
        body: JSON.stringify({ error: 'invalid_request', error_description: description }),
      },
      times,
    });
    const error = (await codeOf(client.signHashes(credential, [digest('refused')]))) as EsignError;
    expect(error.code).toBe(code);
    expect(error.message).toContain(description);
  });

  it('with the SAD as the Bearer token, a 401 is the SAD refused: CSC_SAD_EXPIRED, approved once more, and no new sign-in', async () => {
    const { client, steps } = makeTestClient({ baseUrl: base, dir: dir.dir, extra: { sadAsBearer: true } });
    const credential = await client.signingCredential('alice-rsa2048');
    sandbox.faults.inject({
      route: 'signing-v2 POST /csc/v2/signatures/signHash',
      fault: {
        kind: 'status',
        status: 401,
        body: JSON.stringify({ error: 'invalid_token', error_description: 'SAD expired' }),
      },
      times: 2,
    });
    const error = (await codeOf(client.signHashes(credential, [digest('bearer sad')]))) as EsignError;
    expect(error.code).toBe('CSC_SAD_EXPIRED');
    expect(steps).toEqual([
      'sign-in to the signing service',
      'approval of 1 signature with alice-rsa2048',
      'approval of 1 signature with alice-rsa2048',
    ]);
  });

  it('refuses a credential that names no RSA PKCS#1 v1.5 algorithm before any approval', async () => {
    const bearer = await exchange(serviceParams());
    const listed = (
      await csc('credentials/list', bearer, {
        credentialInfo: true,
        certificates: 'chain',
        certInfo: true,
        authInfo: true,
      })
    ).body;
    const infos = (listed['credentialInfos'] as Array<{ key: Record<string, unknown> }>).map((info) => ({
      ...info,
      key: { ...info.key, algo: ['1.2.840.10045.2.1'] },
    }));
    sandbox.faults.inject({
      route: 'signing-v2 POST /csc/v2/credentials/list',
      fault: {
        kind: 'malformed',
        body: JSON.stringify({ ...listed, credentialInfos: infos }),
        contentType: 'application/json',
      },
    });
    const { client, steps } = makeTestClient({ baseUrl: base, dir: dir.dir });
    await client.listCredentialIDs();
    const error = (await codeOf(client.signingCredential('alice-rsa2048'))) as EsignError;
    expect(error.code).toBe('CREDENTIAL_UNSUPPORTED_KEY');
    expect(error.message).toContain('signs with 1.2.840.10045.2.1; esign signs with RSA');
    expect(steps).toEqual(['sign-in to the signing service']);
  });
});
