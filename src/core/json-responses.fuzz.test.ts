/**
 * Fuzzing of the JSON answer processors of the signing service (CSC) and the identity service
 * (OIDC token response, ID token claims, userinfo proof): valid answers with fields replaced,
 * deleted or added, damaged text, other HTTP statuses. Each ends in a complete, well-typed value or
 * a typed EsignError. `ESIGN_FUZZ_RUNS=N` runs N times as many cases.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuzzParams, jsonAnswerArb, outcome } from '../../test/helpers/fuzz.js';
import {
  cscError,
  processAuthorizeResponse,
  processCredentialsInfoResponse,
  processCredentialsListResponse,
  processSendOtpResponse,
  processServiceSignInResponse,
  processSignHashResponse,
  processTokenResponse,
} from './csc/responses.js';
import { processAuthorizationServerMetadata } from './csc/oauth-metadata.js';
import {
  checkService,
  processCredentialsInfoResponseV2,
  processCredentialsListResponseV2,
  processInfoResponse,
} from './csc/v2.js';
import { issueTestCertificate } from './cms/test-pki.js';
import { audienceList, notSharedClaims, parseProof } from './oidc/claims.js';
import { checkIdTokenClaims, checkUserinfoSubject } from './oidc/id-token.js';
import { processIdentityTokenResponse } from './oidc/token-response.js';

const certificate = Buffer.from(issueTestCertificate({ commonName: 'Fuzz Signer' }).der).toString('base64');
const now = 1_750_000_000;
const b64 = Buffer.alloc(256, 7).toString('base64');

const check = <T>(what: string, run: () => T, valid: (value: T) => void): void => {
  const result = outcome(what, run);
  if (result.ok) valid(result.value);
};

describe('JSON answer processors under mutation', () => {
  it('signing service: token, credentials/list, credentials/info, signHash and error answers', () => {
    const token = jsonAnswerArb([
      { access_token: 'tok', token_type: 'Bearer', expires_in: 3600 },
      { access_token: 'sad', token_type: 'SAD', expires_in: '300' },
    ]);
    const list = jsonAnswerArb([{ credentialIDs: ['a', 'b'], nextPageToken: 'p2' }, { credentialIDs: [] }]);
    const info = jsonAnswerArb([
      {
        key: { status: 'enabled', algo: ['1.2.840.113549.1.1.1'], len: 2048 },
        cert: { status: 'valid', certificates: [certificate, certificate] },
        authMode: 'oauth2code',
        multisign: 50,
      },
    ]);
    const signHash = jsonAnswerArb([{ signatures: [b64, b64] }]);
    const errors = jsonAnswerArb([
      { error: 'invalid_request', error_description: 'Invalid parameter SAD' },
      { error: 'expired_sad' },
      { error: 'invalid_token' },
    ]);
    fc.assert(
      fc.property(
        token,
        list,
        info,
        signHash,
        errors,
        fc.constantFrom<'Bearer' | 'SAD'>('Bearer', 'SAD'),
        (t, l, i, s, e, expected) => {
          check(
            'processTokenResponse',
            () => processTokenResponse(t.status, t.body, expected),
            (value) => {
              expect(typeof value.accessToken === 'string' && value.accessToken !== '').toBe(true);
              expect(value.tokenType).toBe(expected);
              if (value.expiresIn !== undefined) expect(Number.isSafeInteger(value.expiresIn)).toBe(true);
            },
          );
          check(
            'processCredentialsListResponse',
            () => processCredentialsListResponse(l.status, l.body),
            (value) => {
              expect(value.credentialIDs.every((id) => typeof id === 'string')).toBe(true);
            },
          );
          check(
            'processCredentialsInfoResponse',
            () => processCredentialsInfoResponse(i.status, Buffer.from(i.body), 'cred'),
            (value) => {
              expect(value.certificates.length).toBeGreaterThan(0);
              expect(Number.isSafeInteger(value.keyLengthBits) && value.keyLengthBits > 0).toBe(true);
              expect(['enabled', 'disabled']).toContain(value.status);
            },
          );
          check(
            'processSignHashResponse',
            () => processSignHashResponse(s.status, s.body, 2),
            (value) => {
              expect(value).toHaveLength(2);
              expect(value.every((signature) => signature instanceof Uint8Array && signature.length > 0)).toBe(true);
            },
          );
          // cscError maps any answer to an error; it must return one, not throw.
          const mapped = outcome('cscError', () => cscError(e.status, e.body, 'signHash'));
          expect(mapped.ok).toBe(true);
        },
      ),
      fuzzParams(1000),
    );
  });

  it('signing service, CSC API v2: info, credentials/list with credentialInfos, credentials/info', () => {
    const v2Info = {
      key: { status: 'enabled', algo: ['1.2.840.113549.1.1.1'], len: 2048 },
      cert: { status: 'valid', certificates: [certificate] },
      auth: { mode: 'oauth2code' },
      SCAL: '2',
      multisign: 50,
    };
    const info = jsonAnswerArb([
      {
        specs: '2.0.0.2',
        name: 'x',
        authType: ['oauth2code'],
        oauth2: 'https://as.example',
        methods: ['credentials/list', 'credentials/info', 'signatures/signHash'],
      },
    ]);
    const list = jsonAnswerArb([
      { credentialIDs: ['a'], credentialInfos: [{ credentialID: 'a', ...v2Info }] },
      { credentialIDs: [] },
    ]);
    const one = jsonAnswerArb([v2Info]);
    fc.assert(
      fc.property(info, list, one, (n, l, i) => {
        check(
          'processInfoResponse',
          () => processInfoResponse(n.status, n.body),
          (value) => {
            if (value === undefined) return;
            expect(value.specs).toMatch(/^\d+(\.\d+)*$/);
            expect(value.methods.every((method) => typeof method === 'string')).toBe(true);
            outcome('checkService', () => checkService(value));
          },
        );
        check(
          'processCredentialsListResponseV2',
          () => processCredentialsListResponseV2(l.status, l.body),
          (value) => {
            expect(value.credentialIDs.every((id) => typeof id === 'string')).toBe(true);
            for (const listed of value.infos.values()) expect(listed.certificates.length).toBeGreaterThan(0);
          },
        );
        check(
          'processCredentialsInfoResponseV2',
          () => processCredentialsInfoResponseV2(i.status, i.body, 'cred'),
          (value) => {
            expect(value.authMode).toBe('oauth2code');
            if (value.multisign !== undefined)
              expect(Number.isSafeInteger(value.multisign) && value.multisign >= 1).toBe(true);
          },
        );
      }),
      fuzzParams(500),
    );
  });

  it('signing service, seals: explicit credentials/info, credentials/authorize, sendOTP, auth/login and client credentials, RFC 8414 metadata', () => {
    const explicitV1 = {
      key: { status: 'enabled', algo: ['1.2.840.113549.1.1.1'], len: 2048 },
      cert: { status: 'valid', certificates: [certificate] },
      authMode: 'explicit',
      PIN: { presence: 'true', format: 'N', label: 'PIN' },
      OTP: { presence: 'true', type: 'offline', format: 'N', ID: 'app' },
      SCAL: '1',
      multisign: 1000,
    };
    const explicitV2 = {
      key: explicitV1.key,
      cert: explicitV1.cert,
      auth: {
        mode: 'explicit',
        expression: 'PIN AND OTP',
        objects: [
          { type: 'Password', id: 'PIN', format: 'N', generator: '' },
          { type: 'Password', id: 'OTP', format: 'N', generator: 'totp' },
        ],
      },
      SCAL: '2',
      multisign: 50,
    };
    const info = jsonAnswerArb([explicitV1, { ...explicitV1, authMode: 'implicit' }]);
    const infoV2 = jsonAnswerArb([explicitV2]);
    const authorize = jsonAnswerArb([
      { SAD: 'sad-value', expiresIn: 300 },
      { error: 'invalid_pin', error_description: 'The PIN is invalid, 2 attempts remaining' },
      { error: 'invalid_request', error_description: 'PIN locked' },
    ]);
    const signIn = jsonAnswerArb([
      { access_token: 'tok', refresh_token: 'ref', expires_in: 3600 },
      { access_token: 'tok', token_type: 'Bearer' },
    ]);
    const metadata = jsonAnswerArb([
      {
        issuer: 'https://as.example',
        authorization_endpoint: 'https://as.example/authorize',
        token_endpoint: 'https://as.example/token',
      },
    ]);
    fc.assert(
      fc.property(info, infoV2, authorize, signIn, metadata, (i, v, a, t, m) => {
        check(
          'processCredentialsInfoResponse (explicit)',
          () => processCredentialsInfoResponse(i.status, i.body, 'seal'),
          (value) => {
            expect(['explicit', 'implicit', 'oauth2code']).toContain(value.authMode);
            if (value.pin) expect(['true', 'optional']).toContain(value.pin.presence);
            if (value.otp) expect(['offline', 'online']).toContain(value.otp.type);
          },
        );
        check(
          'processCredentialsInfoResponseV2 (explicit)',
          () => processCredentialsInfoResponseV2(v.status, v.body, 'seal'),
          (value) => {
            if (value.otp) expect(['offline', 'online']).toContain(value.otp.type);
          },
        );
        check(
          'processAuthorizeResponse',
          () => processAuthorizeResponse(a.status, a.body),
          (value) => {
            expect(typeof value.sad === 'string' && value.sad !== '').toBe(true);
            if (value.expiresIn !== undefined) expect(Number.isSafeInteger(value.expiresIn)).toBe(true);
          },
        );
        outcome('processSendOtpResponse', () => processSendOtpResponse(a.status, a.body));
        for (const operation of ['auth/login', 'the client credentials token request'] as const) {
          check(
            'processServiceSignInResponse',
            () => processServiceSignInResponse(t.status, t.body, operation),
            (value) => {
              expect(value.accessToken).not.toBe('');
              if (value.refreshToken !== undefined) expect(value.refreshToken).not.toBe('');
            },
          );
        }
        check(
          'processAuthorizationServerMetadata',
          () => processAuthorizationServerMetadata(m.status, m.body, 'https://as.example'),
          (value) => {
            expect(value.tokenEndpoint).toMatch(/^https:\/\//);
          },
        );
      }),
      fuzzParams(1000),
    );
  });

  it('identity service: token response, ID token claims, userinfo subject and proof', () => {
    const token = jsonAnswerArb([
      { access_token: 'at', token_type: 'bearer', expires_in: 3600, id_token: 'h.p.s', scope: 'openid email' },
      { error: 'invalid_grant', error_description: 'code used' },
    ]);
    const claims = jsonAnswerArb([
      {
        iss: 'https://id.example',
        sub: 'u1',
        aud: ['client', 'other'],
        azp: 'client',
        exp: now + 300,
        iat: now - 5,
        nonce: 'n-1',
        auth_time: now - 10,
      },
    ]);
    const userinfo = jsonAnswerArb([
      {
        sub: 'u1',
        email: 'a@b.c',
        'com.vendor.proof': [
          { id: 'p1', content_type: 'application/pdf', base64_encoded_content: b64 },
          { id: 'p2', content_type: 'image/png', base64_encoded_content: 'AAAA' },
        ],
      },
    ]);
    fc.assert(
      fc.property(token, claims, userinfo, (t, c, u) => {
        check(
          'processIdentityTokenResponse',
          () => processIdentityTokenResponse(t.status, t.body, ['openid']),
          (value) => {
            expect(value.accessToken).not.toBe('');
            expect(value.scope).toContain('openid');
            expect(value.idToken.split('.')).toHaveLength(3);
            if (value.expiresIn !== undefined)
              expect(Number.isSafeInteger(value.expiresIn) && value.expiresIn > 0).toBe(true);
          },
        );
        const payload =
          c.json !== null && typeof c.json === 'object' && !Array.isArray(c.json)
            ? (c.json as Record<string, unknown>)
            : {};
        check(
          'checkIdTokenClaims',
          () => checkIdTokenClaims(payload, { issuer: 'https://id.example', clientId: 'client', nonce: 'n-1', now }),
          (value) => {
            expect(value.sub).not.toBe('');
            expect(value.aud).toContain('client');
            expect(value['nonce']).toBe('n-1');
          },
        );
        const info =
          u.json !== null && typeof u.json === 'object' && !Array.isArray(u.json)
            ? (u.json as Record<string, unknown>)
            : {};
        outcome('checkUserinfoSubject', () => checkUserinfoSubject(info, 'u1'));
        outcome('parseProof', () => parseProof(info['com.vendor.proof']));
        outcome('audienceList', () => audienceList(payload['aud']));
        outcome('notSharedClaims', () => notSharedClaims(['openid', 'email', 'com.vendor.proof'], info));
      }),
      fuzzParams(1000),
    );
  });
});
