/**
 * The settings for documented provider behaviours (issue 29 item 4), as the pure request builders
 * take them: token request body and client authentication, the password grant, the hash encoding,
 * v0 paths, clientData, the account_token, base64 TOTP secrets, and settings that contradict.
 */
import { createHash, createHmac } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { describe, expect, it } from 'vitest';
import type { EsignError } from '../errors.js';
import { checkSettingConflicts, parseSettingValue, type PresentSecrets } from '../profile.js';
import {
  buildAccountToken,
  buildAuthorizeUrl,
  buildClientCredentialsTokenRequest,
  buildCredentialsListRequest,
  buildPasswordTokenRequest,
  buildSignHashRequest,
  buildTokenRequest,
} from './requests.js';
import { buildAuthorizeUrlV2, buildInfoRequest } from './v2.js';
import { parseTotpSecret } from './totp.js';

const endpoint = { tokenUrl: 'https://login.example/oauth2/token', clientId: 'cli', clientSecret: 's3cret' };
const hash = createHash('sha256').update('x').digest();

function errorOf(run: () => unknown): EsignError | undefined {
  try {
    run();
  } catch (error) {
    return error as EsignError;
  }
  return undefined;
}

describe('the token request (tokenRequest, clientAuth)', () => {
  it('form with HTTP Basic by default; JSON, the secret in the body, or the client id alone when the provider wants it', () => {
    const form = buildClientCredentialsTokenRequest(endpoint);
    expect(form.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(form.headers['authorization']).toMatch(/^Basic /);
    expect(Object.fromEntries(new URLSearchParams(form.body as string))).toEqual({
      grant_type: 'client_credentials',
      scope: 'service',
      client_id: 'cli',
    });

    const json = buildTokenRequest({
      ...endpoint,
      baseUrl: 'https://api.example',
      code: 'c',
      redirectUri: 'https://app.example/cb',
      encoding: 'json',
      clientAuth: 'body',
    });
    expect(json.url).toBe('https://login.example/oauth2/token');
    expect(json.headers['content-type']).toBe('application/json');
    expect(json.headers['authorization']).toBeUndefined();
    expect(JSON.parse(json.body as string)).toEqual({
      grant_type: 'authorization_code',
      code: 'c',
      redirect_uri: 'https://app.example/cb',
      client_id: 'cli',
      client_secret: 's3cret',
    });

    const none = buildClientCredentialsTokenRequest({ ...endpoint, clientAuth: 'none' });
    expect(none.headers['authorization']).toBeUndefined();
    expect(none.body).not.toContain('s3cret');
  });

  it('the password grant carries the user and scope service', () => {
    const request = buildPasswordTokenRequest(
      { ...endpoint, encoding: 'json', clientAuth: 'none' },
      { username: 'ann', password: 'pw:1' },
    );
    expect(JSON.parse(request.body as string)).toEqual({
      grant_type: 'password',
      username: 'ann',
      password: 'pw:1',
      scope: 'service',
      client_id: 'cli',
    });
  });
});

describe('the authorization URL (hashEncoding, oauthAuthorizeUrl, account_token)', () => {
  const common = {
    baseUrl: 'https://api.example',
    clientId: 'cli',
    redirectUri: 'https://app.example/cb',
    state: 's',
    scope: 'credential' as const,
    credentialID: 'a/b',
    hashes: [hash, hash],
  };
  it('base64url by default, standard base64 (padded) on request, in both dialects', () => {
    const specified = new URL(buildAuthorizeUrl(common)).searchParams.get('hash');
    expect(specified).toBe(`${hash.toString('base64url')},${hash.toString('base64url')}`);
    expect(new URL(buildAuthorizeUrl({ ...common, hashEncoding: 'base64' })).searchParams.get('hash')).toBe(
      `${hash.toString('base64')},${hash.toString('base64')}`,
    );
    expect(new URL(buildAuthorizeUrlV2({ ...common, hashEncoding: 'base64' })).searchParams.get('hashes')).toContain(
      '=',
    );
  });

  it('goes to an authorization endpoint named whole, keeping its own query', () => {
    const url = new URL(
      buildAuthorizeUrl({ ...common, authorizeUrl: 'https://login.example/authorize?tenant=7', accountToken: 'a.b.c' }),
    );
    expect(`${url.origin}${url.pathname}`).toBe('https://login.example/authorize');
    expect(url.searchParams.get('tenant')).toBe('7');
    expect(url.searchParams.get('account_token')).toBe('a.b.c');
  });

  it('account_token is the JWT of §8.3.1: HS256 keyed by SHA-256 of the client secret', () => {
    const token = buildAccountToken({
      accountId: 'acct-7',
      clientId: 'cli',
      clientSecret: 's3cret',
      issuedAtS: 1_700_000_000,
      jti: 'j-1',
      issuer: 'esign',
    });
    const [header, payload, signature] = token.split('.') as [string, string, string];
    expect(JSON.parse(Buffer.from(header, 'base64url').toString())).toEqual({ typ: 'JWT', alg: 'HS256' });
    expect(JSON.parse(Buffer.from(payload, 'base64url').toString())).toEqual({
      sub: 'acct-7',
      iat: 1_700_000_000,
      jti: 'j-1',
      iss: 'esign',
      azp: 'cli',
    });
    const key = createHash('sha256').update('s3cret').digest();
    expect(signature).toBe(createHmac('sha256', key).update(`${header}.${payload}`).digest('base64url'));
  });
});

describe('CSC v0 paths and clientData', () => {
  it('v1.0.4 field names on /csc/v0/ when asked; clientData in credentials/list', () => {
    expect(buildInfoRequest('https://cs.example', 0).url).toBe('https://cs.example/csc/v0/info');
    const list = buildCredentialsListRequest('https://cs.example', 't', { clientData: 'EVCS', pathVersion: 0 });
    expect(list.url).toBe('https://cs.example/csc/v0/credentials/list');
    expect(JSON.parse(list.body as string)).toEqual({ clientData: 'EVCS' });
    const signHash = buildSignHashRequest({
      baseUrl: 'https://cs.example',
      accessToken: 't',
      credentialID: 'c',
      sad: 's',
      hashes: [hash],
      pathVersion: 0,
    });
    expect(signHash.url).toBe('https://cs.example/csc/v0/signatures/signHash');
    expect(Object.keys(JSON.parse(signHash.body as string))).toEqual(
      expect.arrayContaining(['hash', 'hashAlgo', 'SAD']),
    );
  });
});

describe('ESIGN_TOTP_SECRET in base64', () => {
  const bytes = createHash('sha256').update('seal').digest();
  const reference = new TOTP({
    secret: new Secret({ buffer: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + 32) as ArrayBuffer }),
    digits: 6,
    period: 30,
    algorithm: 'SHA1',
  });
  it('is recognised where unambiguous (mixed case, +, /, =) and forced with base64: or base32:', () => {
    expect(parseTotpSecret(bytes.toString('base64')).codeFor(1000)).toBe(reference.generate({ timestamp: 30_000_000 }));
    expect(parseTotpSecret(`base64:${bytes.toString('base64url')}`).codeFor(1000)).toBe(
      reference.generate({ timestamp: 30_000_000 }),
    );
    const base32 = reference.secret.base32;
    expect(parseTotpSecret(`base32:${base32}`).codeFor(7)).toBe(reference.generate({ timestamp: 210_000 }));
    expect(parseTotpSecret(base32).codeFor(7)).toBe(reference.generate({ timestamp: 210_000 }));
  });

  it('refuses what is neither, naming the variable and not quoting the value', () => {
    const error = errorOf(() => parseTotpSecret('base64:not*base64'));
    expect(error?.code).toBe('CONFIG_INVALID');
    expect(error?.message).toContain('ESIGN_TOTP_SECRET');
    expect(error?.message).not.toContain('not*base64');
  });
});

describe('settings checked on input, and settings that contradict', () => {
  it('refuses a value outside a choice, naming the setting', () => {
    for (const [key, bad] of [
      ['tokenRequest', 'xml'],
      ['clientAuth', 'mtls'],
      ['hashEncoding', 'hex'],
      ['cscVersion', '3'],
      ['serviceAuth', 'magic'],
      ['apiKeyHeader', 'x api key'],
    ] as const) {
      const error = errorOf(() => parseSettingValue(key, bad));
      expect(error?.exitCode, key).toBe(3);
      expect(error?.message).toContain(key);
    }
    expect(parseSettingValue('cscVersion', '0')).toBe('0');
    expect(parseSettingValue('serviceAuth', 'password')).toBe('password');
  });

  const none: PresentSecrets = { clientSecret: true, apiKey: false, signingUsername: false, signingPassword: false };
  const name = (key: string) => `ESIGN_${key}`;
  it.each([
    [{ serviceAuth: 'password' as const }, none, ['ESIGN_serviceAuth', 'ESIGN_SIGNING_USERNAME']],
    [
      { serviceAuth: 'password' as const },
      { ...none, signingUsername: true },
      ['ESIGN_serviceAuth', 'ESIGN_SIGNING_PASSWORD'],
    ],
    [{ apiKeyHeader: 'x-api-key' }, none, ['ESIGN_apiKeyHeader', 'ESIGN_API_KEY']],
    [{}, { ...none, apiKey: true }, ['ESIGN_API_KEY', 'ESIGN_apiKeyHeader']],
    [{ accountToken: true }, none, ['ESIGN_accountToken', 'ESIGN_accountId']],
    [
      { accountToken: true, accountId: 'a' },
      { ...none, clientSecret: false },
      ['ESIGN_accountToken', 'ESIGN_CLIENT_SECRET'],
    ],
    [{ clientAuth: 'none' as const, clientSecretInBody: true }, none, ['ESIGN_clientAuth', 'ESIGN_clientSecretInBody']],
    [{ cscVersion: '0' as const, cscSadAsBearer: true }, none, ['ESIGN_cscSadAsBearer', 'ESIGN_cscVersion']],
  ])('%j: exit 3, one line naming both', (settings, secrets, named) => {
    const error = errorOf(() => checkSettingConflicts(settings, secrets, name));
    expect(error?.exitCode).toBe(3);
    for (const word of named) expect(error?.message).toContain(word);
    expect(error?.message.split('\n')).toHaveLength(1);
  });

  it('consistent settings pass', () => {
    expect(() =>
      checkSettingConflicts(
        { serviceAuth: 'password', apiKeyHeader: 'x-api-key', accountToken: true, accountId: 'a' },
        { clientSecret: true, apiKey: true, signingUsername: true, signingPassword: true },
        name,
      ),
    ).not.toThrow();
  });
});
