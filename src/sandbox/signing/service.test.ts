import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyDigestSignature } from '../../core/csc/signature.js';
import { SandboxClock } from '../clock.js';
import { loadOrCreatePki, type SandboxPki } from '../pki.js';
import { SigningService, redirectUriAllowed, type AuthorizationRequest } from './service.js';

const client = { clientId: 'esign-cli', clientSecret: 'sandbox-secret', redirectUris: ['http://127.0.0.1:8765/callback'] };
let dir: string;
let pki: SandboxPki;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'esign-signing-service-'));
  pki = await loadOrCreatePki(dir, { baseUrl: 'http://127.0.0.1:1', now: new Date() });
});

afterAll(() => rm(dir, { recursive: true, force: true }));

describe('SigningService', () => {
  it('accepts the registered redirect URI on any loopback port, and nothing else', () => {
    expect(redirectUriAllowed(client, 'http://127.0.0.1:51234/callback')).toBe(true);
    expect(redirectUriAllowed(client, 'http://[::1]:51234/callback')).toBe(true);
    expect(redirectUriAllowed(client, 'http://127.0.0.1:51234/other')).toBe(false);
    expect(redirectUriAllowed(client, 'https://127.0.0.1:51234/callback')).toBe(false);
    expect(redirectUriAllowed(client, 'http://example.com:8765/callback')).toBe(false);
  });

  it('signs with the credential key, and corrupts signatures when the fault switch is on', () => {
    const clock = new SandboxClock();
    const service = new SigningService(pki, clock, [client]);
    const digest = new Uint8Array(createHash('sha256').update('x').digest());
    const base: Omit<AuthorizationRequest, 'scope'> = { clientId: client.clientId, redirectUri: client.redirectUris[0] as string, state: 's' };
    const bearer = service.exchangeCode(client, { code: service.issueCode({ ...base, scope: 'service' }, 'alice'), redirectUri: base.redirectUri });
    const holder = service.authenticate(bearer.access_token);
    const sadFor = () =>
      service.exchangeCode(client, { code: service.issueCode({ ...base, scope: 'credential', credentialID: 'alice-rsa2048', hashes: [digest] }, 'alice'), redirectUri: base.redirectUri })
        .access_token;
    const request = { credentialID: 'alice-rsa2048', hashes: [digest], hashAlgo: '2.16.840.1.101.3.4.2.1', signAlgo: '1.2.840.113549.1.1.1' };
    const certificate = pki.credentials[0]?.signer.certificate as Uint8Array;
    const [good] = service.signHash(holder, { ...request, sad: sadFor() });
    expect(verifyDigestSignature(certificate, digest, Buffer.from(good as string, 'base64'))).toBe(true);
    service.corruptSignatures = 1;
    const [bad] = service.signHash(holder, { ...request, sad: sadFor() });
    expect(verifyDigestSignature(certificate, digest, Buffer.from(bad as string, 'base64'))).toBe(false);
  });
});
