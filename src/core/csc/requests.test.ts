import { describe, expect, it } from 'vitest';
import { buildCredentialsInfoRequest } from './requests.js';

describe('v1.0.4 credentials/info (§11.5)', () => {
  it('asks for the chain, the certificate details and the PIN and OTP groups, which the defaults leave out', () => {
    const request = buildCredentialsInfoRequest('https://csc.example/', 'token', 'testing-ca/signer1');
    expect(request.url).toBe('https://csc.example/csc/v1/credentials/info');
    expect(JSON.parse(request.body as string)).toEqual({
      credentialID: 'testing-ca/signer1',
      certificates: 'chain',
      certInfo: true,
      authInfo: true,
    });
    expect(request.headers['authorization']).toBe('Bearer token');
  });

  it('sends no Authorization header for a service authorized externally, and can leave certInfo out', () => {
    const request = buildCredentialsInfoRequest('https://csc.example', undefined, 'id', { certInfo: false });
    expect(request.headers['authorization']).toBeUndefined();
    expect(JSON.parse(request.body as string)).toEqual({
      credentialID: 'id',
      certificates: 'chain',
      certInfo: false,
      authInfo: true,
    });
  });
});
