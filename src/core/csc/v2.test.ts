import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { errorOf } from '../../../test/helpers/esign-error.js';
import { issueTestCertificate } from '../cms/test-pki.js';
import {
  buildAuthorizeUrlV2,
  buildCredentialsListRequestV2,
  buildInfoRequest,
  buildSignHashRequestV2,
  checkService,
  processCredentialsListResponseV2,
  processInfoResponse,
} from './v2.js';

const hash = (label: string) => new Uint8Array(createHash('sha256').update(label).digest());
const common = {
  baseUrl: 'https://sign.example/api/',
  clientId: 'cli',
  redirectUri: 'http://127.0.0.1:8765/callback',
  state: 's',
};
const SHA256 = '2.16.840.1.101.3.4.2.1';

describe('CSC API v2 request builders', () => {
  it('asks info with no token at /csc/v2/info', () => {
    const request = buildInfoRequest('https://sign.example/api/', 2, 'nl');
    expect([request.url, request.body, request.headers['authorization']]).toEqual([
      'https://sign.example/api/csc/v2/info',
      '{"lang":"nl"}',
      undefined,
    ]);
  });

  it('puts hashes (base64url), hashAlgorithmOID and numSignatures in the approval URL, and no v1 hash parameter', () => {
    const hashes = [hash('a'), hash('b')];
    const url = new URL(buildAuthorizeUrlV2({ ...common, scope: 'credential', credentialID: 'c1', hashes }));
    expect(url.searchParams.get('hashes')).toBe(hashes.map((h) => Buffer.from(h).toString('base64url')).join(','));
    expect(url.searchParams.get('hashAlgorithmOID')).toBe(SHA256);
    expect(url.searchParams.get('numSignatures')).toBe('2');
    expect(url.searchParams.get('credentialID')).toBe('c1');
    expect(url.searchParams.get('scope')).toBe('credential');
    expect(url.searchParams.get('hash')).toBeNull();
  });

  it('or one authorization_details entry of type credential, with documentDigests in standard base64 and no scope', () => {
    const url = new URL(
      buildAuthorizeUrlV2(
        { ...common, scope: 'credential', credentialID: 'c1', hashes: [hash('a')] },
        { authorizationDetails: true },
      ),
    );
    expect(url.searchParams.get('scope')).toBeNull();
    expect(url.searchParams.get('credentialID')).toBeNull();
    expect(JSON.parse(url.searchParams.get('authorization_details') ?? '')).toEqual([
      {
        type: 'credential',
        credentialID: 'c1',
        documentDigests: [{ hash: Buffer.from(hash('a')).toString('base64'), label: 'document 1' }],
        hashAlgorithmOID: SHA256,
      },
    ]);
  });

  it('scope service is the same as in v1.0.4', () => {
    const url = new URL(buildAuthorizeUrlV2({ ...common, scope: 'service' }));
    expect(url.searchParams.get('scope')).toBe('service');
    expect(url.searchParams.get('hashes')).toBeNull();
  });

  it('refuses 51 hashes before any request', () => {
    const hashes = Array.from({ length: 51 }, (_, i) => hash(String(i)));
    expect(
      errorOf(() => buildAuthorizeUrlV2({ ...common, scope: 'credential', credentialID: 'c1', hashes }))?.code,
    ).toBe('CSC_TOO_MANY_HASHES');
  });

  it('lists with every credential info at once', () => {
    const request = buildCredentialsListRequestV2('https://sign.example/api', 'tok');
    expect(JSON.parse(request.body)).toEqual({
      credentialInfo: true,
      certificates: 'chain',
      certInfo: true,
      authInfo: true,
    });
    expect(request.headers['authorization']).toBe('Bearer tok');
  });

  it('signHash: the SAD in the body beside the service token, or as the Bearer token', () => {
    const params = {
      baseUrl: 'https://sign.example/api',
      accessToken: 'service-token',
      credentialID: 'c1',
      sad: 'the-sad',
      hashes: [hash('x')],
    };
    const inBody = buildSignHashRequestV2(params);
    expect(inBody.url).toBe('https://sign.example/api/csc/v2/signatures/signHash');
    expect(JSON.parse(inBody.body)).toEqual({
      credentialID: 'c1',
      SAD: 'the-sad',
      hashes: [Buffer.from(hash('x')).toString('base64')],
      hashAlgorithmOID: SHA256,
      signAlgo: '1.2.840.113549.1.1.1',
    });
    expect(inBody.headers['authorization']).toBe('Bearer service-token');
    const asBearer = buildSignHashRequestV2({ ...params, sadAsBearer: true });
    expect(JSON.parse(asBearer.body)['SAD']).toBeUndefined();
    expect(asBearer.headers['authorization']).toBe('Bearer the-sad');
  });
});

describe('CSC API v2 info', () => {
  const info = {
    specs: '2.0.0.2',
    authType: ['oauth2code'],
    methods: ['credentials/list', 'credentials/info', 'signatures/signHash'],
  };

  it('reads specs, methods, authType and oauth2', () => {
    expect(
      processInfoResponse(200, JSON.stringify({ ...info, name: 'QTSP', oauth2: 'https://as.example' })),
    ).toStrictEqual({
      specs: '2.0.0.2',
      methods: info.methods,
      authTypes: ['oauth2code'],
      name: 'QTSP',
      oauth2: 'https://as.example',
    });
  });

  it('takes any 4xx but 429, and 501, as "no info here"; a 5xx or 429 is an error, and so is a specs that is no version', () => {
    for (const status of [400, 401, 403, 404, 405, 501])
      expect(processInfoResponse(status, '{"error":"not_found"}')).toBeUndefined();
    expect(errorOf(() => processInfoResponse(503, ''))?.code).toBe('HTTP_SERVER_ERROR');
    expect(errorOf(() => processInfoResponse(429, ''))?.code).toBe('HTTP_RATE_LIMITED');
    expect(errorOf(() => processInfoResponse(200, '{"specs":"two"}'))?.code).toBe('CSC_BAD_RESPONSE');
  });

  it('refuses a service without signHash or without oauth2code, naming what is missing', () => {
    const noSignHash = errorOf(() =>
      checkService({
        specs: '2.0.0.2',
        authTypes: ['oauth2code'],
        methods: ['credentials/list', 'signatures/signDoc'],
      }),
    );
    expect(noSignHash?.code).toBe('CSC_UNSUPPORTED_SERVICE');
    expect(noSignHash?.message).toContain('does not offer credentials/info, signatures/signHash');
    expect(
      errorOf(() => checkService({ specs: '2.0.0.2', authTypes: ['basic'], methods: info.methods }))?.message,
    ).toContain('offers no oauth2code');
    expect(
      errorOf(() => checkService({ specs: '2.0.0.2', authTypes: info.authType, methods: info.methods })),
    ).toBeUndefined();
    // A service naming its OAuth server by its RFC 8414 issuer alone is read through its metadata now.
    expect(
      errorOf(() =>
        checkService({
          specs: '2.0.0.2',
          authTypes: info.authType,
          methods: info.methods,
          oauth2Issuer: 'https://as.example',
        }),
      ),
    ).toBeUndefined();
  });

  it('asks for the sign-in the serviceAuth setting uses: oauth2client for client credentials, basic and auth/login for basic', () => {
    const offered = { specs: '2.0.0.2', authTypes: ['oauth2code'], methods: [...info.methods] };
    expect(errorOf(() => checkService(offered, 'client-credentials'))?.message).toContain(
      'offers no oauth2client sign-in (it offers oauth2code), which serviceAuth client-credentials needs',
    );
    expect(
      errorOf(() => checkService({ ...offered, authTypes: ['oauth2client'] }, 'client-credentials')),
    ).toBeUndefined();
    const noLogin = errorOf(() =>
      checkService(
        { ...offered, authTypes: ['basic'], methods: info.methods.filter((method: string) => method !== 'auth/login') },
        'basic',
      ),
    );
    expect(noLogin?.message).toContain('does not offer auth/login');
    expect(
      errorOf(() =>
        checkService({ ...offered, authTypes: ['basic'], methods: [...info.methods, 'auth/login'] }, 'basic'),
      ),
    ).toBeUndefined();
  });
});

describe('CSC API v2 credentials/list', () => {
  it('keeps the listed info it can use, and leaves an entry without certificates to credentials/info', () => {
    const certificate = Buffer.from(issueTestCertificate({ commonName: 'Listed' }).der).toString('base64');
    const key = { status: 'enabled', algo: ['1.2.840.113549.1.1.1'], len: 2048 };
    const body = JSON.stringify({
      credentialIDs: ['full', 'bare'],
      credentialInfos: [
        {
          credentialID: 'full',
          key,
          cert: { certificates: [certificate] },
          auth: { mode: 'oauth2code' },
          multisign: 10,
        },
        { credentialID: 'bare', key, cert: { status: 'valid' }, auth: { mode: 'oauth2code' } },
      ],
    });
    const listed = processCredentialsListResponseV2(200, body);
    expect(listed.credentialIDs).toEqual(['full', 'bare']);
    expect([...listed.infos.keys()]).toEqual(['full']);
    expect(listed.infos.get('full')).toMatchObject({ authMode: 'oauth2code', multisign: 10, keyLengthBits: 2048 });
  });
});
