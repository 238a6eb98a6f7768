import { describe, expect, it } from 'vitest';
import { basicCredentials, type SandboxRequest } from './http.js';

function withAuthorization(authorization: string): SandboxRequest {
  return {
    method: 'POST',
    path: '/oauth2/token',
    query: new URLSearchParams(),
    headers: { authorization },
    body: Buffer.alloc(0),
    baseUrl: 'http://127.0.0.1/signing',
  };
}

const basic = (raw: string) => withAuthorization(`Basic ${Buffer.from(raw).toString('base64')}`);

describe('basicCredentials', () => {
  it('undoes the form encoding of client credentials (RFC 6749 §2.3.1)', () => {
    expect(basicCredentials(basic('esign-cli:a+b%3Ac%25'))).toEqual({ user: 'esign-cli', password: 'a b:c%' });
  });

  it('treats malformed credentials as absent, so the service answers 401 rather than 500', () => {
    expect(basicCredentials(basic('esign-cli:%E0%A4%A'))).toBeUndefined();
    expect(basicCredentials(basic('no-colon'))).toBeUndefined();
    expect(basicCredentials(withAuthorization('Bearer abc'))).toBeUndefined();
  });
});
