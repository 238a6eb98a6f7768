import { TOTP, Secret } from 'otpauth';
import { describe, expect, it } from 'vitest';
import { errorOf } from '../../../test/helpers/esign-error.js';
import { authorizationServerMetadataUrls, processAuthorizationServerMetadata } from './oauth-metadata.js';
import {
  buildAuthLoginRequest,
  buildClientCredentialsTokenRequest,
  buildCredentialsAuthorizeRequest,
  buildSendOtpRequest,
} from './requests.js';
import {
  authorizationV1,
  authorizationV2,
  processAuthorizeResponse,
  processSendOtpResponse,
  processServiceSignInResponse,
} from './responses.js';
import { parseTotpSecret } from './totp.js';
import { buildCredentialsAuthorizeRequestV2 } from './v2.js';

const hashes = [new Uint8Array(32).fill(1), new Uint8Array(32).fill(2)];

describe('how a credential is authorized (credentials/info)', () => {
  it('reads v1 explicit credentials with their PIN and OTP objects, and implicit and oauth2code ones', () => {
    const explicit = authorizationV1(
      {
        authMode: 'explicit',
        PIN: { presence: 'true', format: 'N', label: 'PIN' },
        OTP: { presence: 'true', type: 'offline', format: 'N', label: 'Code', ID: 'dev-1', provider: 'Authy' },
      },
      'credentials/info',
    );
    expect(explicit).toEqual({
      authMode: 'explicit',
      pin: { presence: 'true', format: 'N', label: 'PIN' },
      otp: { presence: 'true', type: 'offline', format: 'N', label: 'Code', id: 'dev-1', provider: 'Authy' },
    });
    expect(
      authorizationV1(
        { authMode: 'explicit', PIN: { presence: 'true', format: 'A' }, OTP: { presence: 'false' } },
        'x',
      ),
    ).toEqual({ authMode: 'explicit', pin: { presence: 'true', format: 'A' } });
    expect(authorizationV1({ authMode: 'implicit' }, 'x')).toEqual({ authMode: 'implicit' });
    expect(authorizationV1({ authMode: 'oauth2code' }, 'x')).toEqual({ authMode: 'oauth2code' });
  });

  it('refuses what is not the specification: an unknown mode, a presence or OTP type it does not define', () => {
    expect(errorOf(() => authorizationV1({ authMode: 'biometric' }, 'credentials/info'))?.message).toContain(
      'has the authorization mode "biometric"',
    );
    expect(
      errorOf(() => authorizationV1({ authMode: 'explicit', PIN: { presence: 'sometimes' } }, 'credentials/info'))
        ?.message,
    ).toContain('PIN/presence');
    expect(
      errorOf(() =>
        authorizationV1(
          { authMode: 'explicit', OTP: { presence: 'true', type: 'carrier-pigeon' } },
          'credentials/info',
        ),
      )?.message,
    ).toContain('OTP/type');
  });

  it('reads the v2 auth object: objects by id, an OTP with a generator is offline, without one online', () => {
    const objects = [
      { type: 'Password', id: 'PIN', format: 'N', label: 'Seal PIN' },
      { type: 'Password', id: 'OTP', format: 'N', generator: 'totp', label: 'App code' },
    ];
    expect(authorizationV2({ mode: 'explicit', expression: 'PIN AND OTP', objects }, 'x')).toEqual({
      authMode: 'explicit',
      pin: { presence: 'true', format: 'N', label: 'Seal PIN' },
      otp: { presence: 'true', format: 'N', label: 'App code', type: 'offline' },
    });
    expect(
      authorizationV2({ mode: 'explicit', objects: [{ type: 'Password', id: 'OTP', format: 'N' }] }, 'x').otp?.type,
    ).toBe('online');
    expect(errorOf(() => authorizationV2(undefined, 'credentials/list'))?.code).toBe('CSC_BAD_RESPONSE');
  });
});

describe('credentials/authorize, sendOTP, auth/login and client credentials on the wire', () => {
  it('sends v1 numSignatures, hash (standard base64), PIN and OTP; v2 hashes with hashAlgorithmOID and authData', () => {
    const v1 = buildCredentialsAuthorizeRequest({
      baseUrl: 'https://csc.example/',
      accessToken: 'tok',
      credentialID: 'seal',
      hashes,
      pin: '1234',
      otp: '654321',
    });
    expect(v1.url).toBe('https://csc.example/csc/v1/credentials/authorize');
    expect(JSON.parse(v1.body)).toEqual({
      credentialID: 'seal',
      numSignatures: 2,
      hash: hashes.map((hash) => Buffer.from(hash).toString('base64')),
      PIN: '1234',
      OTP: '654321',
    });
    const v2 = buildCredentialsAuthorizeRequestV2({
      baseUrl: 'https://csc.example',
      accessToken: 'tok',
      credentialID: 'seal',
      hashes,
      pin: '1234',
    });
    expect(JSON.parse(v2.body)).toEqual({
      credentialID: 'seal',
      numSignatures: 2,
      hashes: hashes.map((hash) => Buffer.from(hash).toString('base64')),
      hashAlgorithmOID: '2.16.840.1.101.3.4.2.1',
      authData: [{ id: 'PIN', value: '1234' }],
    });
    expect(
      errorOf(() =>
        buildCredentialsAuthorizeRequest({
          baseUrl: 'x',
          accessToken: 't',
          credentialID: 's',
          hashes: Array.from({ length: 1001 }, () => hashes[0]!),
        }),
      )?.code,
    ).toBe('CSC_TOO_MANY_HASHES');
    expect(JSON.parse(buildSendOtpRequest('https://csc.example', 2, 'tok', 'seal').body)).toEqual({
      credentialID: 'seal',
    });
  });

  it('signs in with client credentials (HTTP Basic, scope service) and with auth/login (Basic user:password, or the refresh token)', () => {
    const token = buildClientCredentialsTokenRequest({
      tokenUrl: 'https://as.example/token',
      clientId: 'ci client',
      clientSecret: 's3:cret',
    });
    expect(Object.fromEntries(new URLSearchParams(token.body))).toEqual({
      grant_type: 'client_credentials',
      scope: 'service',
      client_id: 'ci client',
    });
    expect(Buffer.from(token.headers['authorization']!.slice(6), 'base64').toString()).toBe('ci+client:s3%3Acret');
    const login = buildAuthLoginRequest('https://csc.example', 1, { username: 'acme', password: 'pa:ss' });
    expect(login.url).toBe('https://csc.example/csc/v1/auth/login');
    expect(Buffer.from(login.headers['authorization']!.slice(6), 'base64').toString()).toBe('acme:pa:ss');
    expect(JSON.parse(login.body)).toEqual({ rememberMe: true });
    const again = buildAuthLoginRequest('https://csc.example', 2, { refreshToken: 'rt' });
    expect(again.headers['authorization']).toBeUndefined();
    expect(JSON.parse(again.body)).toEqual({ refresh_token: 'rt', rememberMe: true });
  });

  it('maps the refusals a person can act on: wrong PIN (with tries left when said), wrong OTP, locked', () => {
    const pin = errorOf(() =>
      processAuthorizeResponse(
        400,
        JSON.stringify({ error: 'invalid_pin', error_description: 'The PIN is invalid, 2 attempts remaining' }),
      ),
    );
    expect(pin?.code).toBe('AUTH_PIN_INVALID');
    expect(pin?.exitCode).toBe(4);
    expect(pin?.message).toContain('2 tries left');
    expect(
      errorOf(() =>
        processAuthorizeResponse(
          400,
          JSON.stringify({ error: 'invalid_otp', error_description: 'The OTP is invalid' }),
        ),
      )?.code,
    ).toBe('AUTH_OTP_INVALID');
    const locked = errorOf(() =>
      processAuthorizeResponse(400, JSON.stringify({ error: 'invalid_request', error_description: 'PIN locked' })),
    );
    expect(locked?.code).toBe('AUTH_CREDENTIAL_LOCKED');
    expect(locked?.hint).toContain('administrator');
    expect(errorOf(() => processAuthorizeResponse(401, '{"error":"invalid_token"}'))?.code).toBe('CSC_UNAUTHORIZED');
    expect(processAuthorizeResponse(200, '{"SAD":"s","expiresIn":300}')).toEqual({ sad: 's', expiresIn: 300 });
    expect(errorOf(() => processAuthorizeResponse(200, '{"sad":"s"}'))?.code).toBe('CSC_BAD_RESPONSE');
    expect(() => processSendOtpResponse(204, '')).not.toThrow();
    expect(
      errorOf(() => processSendOtpResponse(400, '{"error":"invalid_request","error_description":"OTP locked"}'))?.code,
    ).toBe('AUTH_CREDENTIAL_LOCKED');
  });

  it('reads the service token and a refresh token; a refused sign-in names what to check', () => {
    expect(
      processServiceSignInResponse(200, '{"access_token":"a","refresh_token":"r","expires_in":3600}', 'auth/login'),
    ).toEqual({ accessToken: 'a', refreshToken: 'r', expiresIn: 3600 });
    const refused = errorOf(() => processServiceSignInResponse(400, '{"error":"authentication_error"}', 'auth/login'));
    expect(refused?.code).toBe('AUTH_TOKEN_REJECTED');
    expect(refused?.hint).toContain('ESIGN_SIGNING_PASSWORD');
    expect(
      errorOf(() =>
        processServiceSignInResponse(401, '{"error":"invalid_client"}', 'the client credentials token request'),
      )?.hint,
    ).toContain('ESIGN_CLIENT_SECRET');
    expect(
      errorOf(() => processServiceSignInResponse(200, '{"access_token":"a","token_type":"mac"}', 'auth/login'))?.code,
    ).toBe('CSC_BAD_RESPONSE');
  });
});

describe('RFC 8414 metadata of an oauth2Issuer', () => {
  it('lives under /.well-known/oauth-authorization-server before the issuer path (then after it), and must name the same issuer', () => {
    expect(authorizationServerMetadataUrls('https://as.example/tenant/1/')).toEqual([
      'https://as.example/.well-known/oauth-authorization-server/tenant/1',
      'https://as.example/tenant/1/.well-known/oauth-authorization-server',
    ]);
    expect(authorizationServerMetadataUrls('https://as.example')).toEqual([
      'https://as.example/.well-known/oauth-authorization-server',
    ]);
    const body = {
      issuer: 'https://as.example',
      authorization_endpoint: 'https://as.example/authorize',
      token_endpoint: 'https://as.example/token',
    };
    expect(processAuthorizationServerMetadata(200, JSON.stringify(body), 'https://as.example')).toEqual({
      issuer: 'https://as.example',
      authorizationEndpoint: 'https://as.example/authorize',
      tokenEndpoint: 'https://as.example/token',
    });
    expect(
      errorOf(() =>
        processAuthorizationServerMetadata(
          200,
          JSON.stringify({ ...body, issuer: 'https://evil.example' }),
          'https://as.example',
        ),
      )?.code,
    ).toBe('CSC_BAD_RESPONSE');
    expect(
      errorOf(() =>
        processAuthorizationServerMetadata(
          200,
          JSON.stringify({ ...body, token_endpoint: 'http://as.example/token' }),
          'https://as.example',
        ),
      )?.message,
    ).toContain('token_endpoint');
  });
});

describe('ESIGN_TOTP_SECRET', () => {
  const secret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
  it('computes RFC 6238 codes from base32 (6 digits, 30 s, SHA-1) as an authenticator app does', () => {
    const totp = parseTotpSecret(secret.toLowerCase().replace(/(.{4})/g, '$1 '));
    const reference = new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' });
    const at = Date.UTC(2026, 10, 25, 12, 0, 7);
    expect(totp.stepAt(at)).toBe(Math.floor(at / 30_000));
    expect(totp.codeFor(totp.stepAt(at))).toBe(reference.generate({ timestamp: at }));
  });

  it('takes digits, period and algorithm from an otpauth:// URI', () => {
    const totp = parseTotpSecret(`otpauth://totp/ACME:seal?secret=${secret}&digits=8&period=60&algorithm=SHA256`);
    expect(totp.period).toBe(60);
    const reference = new TOTP({ secret: Secret.fromBase32(secret), digits: 8, period: 60, algorithm: 'SHA256' });
    expect(totp.codeFor(1000)).toBe(reference.generate({ timestamp: 60_000_000 }));
    expect(totp.codeFor(1000)).toHaveLength(8);
  });

  it('refuses a malformed value naming the variable and never quoting it', () => {
    for (const bad of [
      'not base32!',
      'JBSWY3DP',
      'otpauth://hotp/x?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&counter=1',
      'otpauth://totp/x',
    ]) {
      const error = errorOf(() => parseTotpSecret(bad));
      expect(error?.code).toBe('CONFIG_INVALID');
      expect(error?.exitCode).toBe(3);
      expect(error?.message).toContain('ESIGN_TOTP_SECRET');
      expect(error?.message).not.toContain(bad);
    }
  });
});
