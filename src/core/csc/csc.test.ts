import { generateKeyPairSync, createHash, constants, privateEncrypt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EsignError } from '../errors.js';
import { buildAuthorizeUrl, buildSignHashRequest, buildTokenRequest } from './requests.js';
import {
  cscError,
  integerField,
  processCredentialsInfoResponse,
  processCredentialsListResponse,
  processSignHashResponse,
  processTokenResponse,
} from './responses.js';
import { sha256DigestInfo } from './signature.js';

const hash = (label: string) => new Uint8Array(createHash('sha256').update(label).digest());
const common = {
  baseUrl: 'https://sign.example/api/',
  clientId: 'cli',
  redirectUri: 'http://127.0.0.1:8765/callback',
  state: 's',
};

function codeOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    return error instanceof EsignError ? error.code : 'not an EsignError';
  }
  return 'no error';
}

describe('request builders', () => {
  it('puts base64url hashes, numSignatures and the credential in the authorize URL', () => {
    const hashes = [hash('a'), hash('b')];
    const url = new URL(
      buildAuthorizeUrl({
        ...common,
        scope: 'credential',
        credentialID: 'c1',
        hashes,
        lang: 'nl',
        codeChallenge: 'x'.repeat(43),
      }),
    );
    expect(url.origin + url.pathname).toBe('https://sign.example/api/oauth2/authorize');
    expect(url.searchParams.get('hash')).toBe(hashes.map((h) => Buffer.from(h).toString('base64url')).join(','));
    expect(url.searchParams.get('numSignatures')).toBe('2');
    expect(url.searchParams.get('scope')).toBe('credential');
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
  });

  it('refuses 51 hashes, hashes that are not SHA-256, and a state over 255 bytes', () => {
    const many = Array.from({ length: 51 }, (_, i) => hash(String(i)));
    expect(codeOf(() => buildAuthorizeUrl({ ...common, scope: 'credential', credentialID: 'c', hashes: many }))).toBe(
      'CSC_TOO_MANY_HASHES',
    );
    expect(
      codeOf(() =>
        buildAuthorizeUrl({ ...common, scope: 'credential', credentialID: 'c', hashes: [new Uint8Array(20)] }),
      ),
    ).toBe('CSC_INVALID_REQUEST');
    expect(codeOf(() => buildAuthorizeUrl({ ...common, scope: 'service', state: 'x'.repeat(256) }))).toBe('INTERNAL');
  });

  it('authenticates the token request with HTTP Basic and a form body', () => {
    const request = buildTokenRequest({
      baseUrl: common.baseUrl,
      code: 'c',
      redirectUri: common.redirectUri,
      clientId: 'cli',
      clientSecret: 's:e cret',
    });
    expect(request.headers['authorization']).toBe(`Basic ${Buffer.from('cli:s%3Ae+cret').toString('base64')}`);
    expect(new URLSearchParams(request.body).get('grant_type')).toBe('authorization_code');
    expect(new URLSearchParams(request.body).has('client_secret')).toBe(false);
  });

  it('sends standard base64 hashes and the two OIDs in signHash', () => {
    const request = buildSignHashRequest({
      baseUrl: 'https://s',
      accessToken: 't',
      credentialID: 'c',
      sad: 'sad',
      hashes: [hash('a')],
    });
    expect(JSON.parse(request.body)).toEqual({
      credentialID: 'c',
      SAD: 'sad',
      hash: [Buffer.from(hash('a')).toString('base64')],
      hashAlgo: '2.16.840.1.101.3.4.2.1',
      signAlgo: '1.2.840.113549.1.1.1',
    });
  });
});

describe('response processors', () => {
  it('reads key/len and maxResults-like numbers as numbers or strings', () => {
    expect(integerField(2048)).toBe(2048);
    expect(integerField('3072')).toBe(3072);
    expect(integerField('x')).toBeUndefined();
    const body = JSON.stringify({
      key: { status: 'enabled', algo: ['1.2.840.113549.1.1.1'], len: '2048' },
      cert: { certificates: ['AAAA'] },
      authMode: 'oauth2code',
    });
    expect(processCredentialsInfoResponse(200, body, 'c').keyLengthBits).toBe(2048);
  });

  it('follows nextPageToken and rejects bodies without credentialIDs', () => {
    expect(processCredentialsListResponse(200, '{"credentialIDs":["a"],"nextPageToken":"n"}')).toEqual({
      credentialIDs: ['a'],
      nextPageToken: 'n',
    });
    expect(codeOf(() => processCredentialsListResponse(200, '{}'))).toBe('CSC_BAD_RESPONSE');
    expect(codeOf(() => processCredentialsListResponse(200, '<html>'))).toBe('CSC_BAD_RESPONSE');
  });

  it('compares token_type case-insensitively and insists on the expected kind', () => {
    expect(processTokenResponse(200, '{"access_token":"t","token_type":"bearer","expires_in":3600}', 'Bearer')).toEqual(
      { accessToken: 't', tokenType: 'Bearer', expiresIn: 3600 },
    );
    expect(codeOf(() => processTokenResponse(200, '{"access_token":"t","token_type":"Bearer"}', 'SAD'))).toBe(
      'CSC_BAD_RESPONSE',
    );
    expect(codeOf(() => processTokenResponse(400, '{"error":"invalid_grant"}', 'SAD'))).toBe('AUTH_TOKEN_REJECTED');
  });

  it('maps /csc/v1 errors to codes, also for non-JSON bodies', () => {
    expect(cscError(401, '', 'x').code).toBe('CSC_UNAUTHORIZED');
    expect(cscError(400, '{"error":"expired_sad"}', 'x').code).toBe('CSC_SAD_EXPIRED');
    expect(cscError(400, '{"error":"invalid_request","error_description":"SAD expired"}', 'x').code).toBe(
      'CSC_SAD_EXPIRED',
    );
    expect(cscError(400, '{"error":"invalid_sad"}', 'x').code).toBe('CSC_SAD_INVALID');
    expect(cscError(400, '{"error":"credential_disabled"}', 'x').code).toBe('CREDENTIAL_DISABLED');
    expect(cscError(400, '{"error":"unknown_credential"}', 'x').code).toBe('CREDENTIAL_NOT_FOUND');
    expect(cscError(400, 'Bad Request', 'x').code).toBe('CSC_INVALID_REQUEST');
    expect(cscError(503, '<html>', 'x').code).toBe('HTTP_SERVER_ERROR');
  });

  it('wants one standard-base64 signature per hash', () => {
    expect(processSignHashResponse(200, '{"signatures":["AQID"]}', 1)).toEqual([new Uint8Array([1, 2, 3])]);
    expect(codeOf(() => processSignHashResponse(200, '{"signatures":["AQID"]}', 2))).toBe('CSC_BAD_RESPONSE');
    expect(codeOf(() => processSignHashResponse(200, '{"signatures":["A-_D"]}', 1))).toBe('CSC_BAD_RESPONSE');
  });
});

describe('sha256DigestInfo', () => {
  it('is what an RSA PKCS#1 v1.5 SHA-256 signature encodes', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const data = Buffer.from('hello');
    const raw = privateEncrypt(
      { key: privateKey, padding: constants.RSA_PKCS1_PADDING },
      sha256DigestInfo(hash('hello')),
    );
    const { verify } = await import('node:crypto');
    expect(verify('sha256', data, publicKey, raw)).toBe(true);
  });
});
