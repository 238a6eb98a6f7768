import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptedSignatureValue, pssParameters } from '../../core/cms/algorithms.js';
import { OID } from '../../core/cms/oids.js';
import { verifyDigestSignature } from '../../core/csc/signature.js';
import { SandboxClock } from '../clock.js';
import { loadOrCreatePki, type SandboxPki } from '../pki.js';
import { SigningService, redirectUriAllowed, type AuthorizationRequest } from './service.js';

const client = {
  clientId: 'esign-cli',
  clientSecret: 'sandbox-secret',
  redirectUris: ['http://127.0.0.1:8765/callback'],
};
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
    const base: Omit<AuthorizationRequest, 'scope'> = {
      clientId: client.clientId,
      redirectUri: client.redirectUris[0] as string,
      state: 's',
    };
    const bearer = service.exchangeCode(client, {
      code: service.issueCode({ ...base, scope: 'service' }, 'alice'),
      redirectUri: base.redirectUri,
    });
    const holder = service.authenticate(bearer.access_token);
    const sadFor = () =>
      service.exchangeCode(client, {
        code: service.issueCode(
          { ...base, scope: 'credential', credentialID: 'alice-rsa2048', hashes: [digest] },
          'alice',
        ),
        redirectUri: base.redirectUri,
      }).access_token;
    const request = {
      credentialID: 'alice-rsa2048',
      hashes: [digest],
      hashAlgo: '2.16.840.1.101.3.4.2.1',
      signAlgo: '1.2.840.113549.1.1.1',
    };
    const certificate = pki.credentials[0]?.signer.certificate as Uint8Array;
    const [good] = service.signHash(holder, { ...request, sad: sadFor() });
    expect(verifyDigestSignature(certificate, digest, Buffer.from(good as string, 'base64'))).toBe(true);
    service.corruptSignatures = 1;
    const [bad] = service.signHash(holder, { ...request, sad: sadFor() });
    expect(verifyDigestSignature(certificate, digest, Buffer.from(bad as string, 'base64'))).toBe(false);
  });

  it('signs with EC and PSS keys as their key/algo says: DER on v1.0.4, raw r||s on v2; refuses what key/algo or the hashes do not allow', () => {
    const sign = (
      version: 1 | 2,
      credentialID: string,
      hashes: Uint8Array[],
      request: { signAlgo: string; hashAlgo?: string; signAlgoParams?: string },
    ) => {
      const service = new SigningService(pki, new SandboxClock(), [client], version);
      const base: Omit<AuthorizationRequest, 'scope'> = {
        clientId: client.clientId,
        redirectUri: client.redirectUris[0] as string,
        state: 's',
      };
      const issue = (extra: Partial<AuthorizationRequest>) =>
        service.exchangeCode(client, {
          code: service.issueCode({ ...base, scope: 'service', ...extra }, 'alice'),
          redirectUri: base.redirectUri,
        }).access_token;
      const bearer = issue({});
      const sad = issue({ scope: 'credential', credentialID, hashes });
      const signatures =
        version === 1
          ? service.signHash(service.authenticate(bearer), {
              credentialID,
              sad,
              hashes,
              signAlgo: request.signAlgo,
              ...(request.hashAlgo ? { hashAlgo: request.hashAlgo } : {}),
              ...(request.signAlgoParams ? { signAlgoParams: request.signAlgoParams } : {}),
            })
          : service.signHashV2(bearer, {
              credentialID,
              sad,
              hashes,
              signAlgo: request.signAlgo,
              ...(request.hashAlgo ? { hashAlgorithmOID: request.hashAlgo } : {}),
              ...(request.signAlgoParams ? { signAlgoParams: request.signAlgoParams } : {}),
            });
      return new Uint8Array(Buffer.from(signatures[0]!, 'base64'));
    };
    const sha384 = [new Uint8Array(createHash('sha384').update('x').digest())];
    const certificate = pki.credentials.find((credential) => credential.credentialID === 'alice-ec-p384')!.signer
      .certificate;
    const scheme = { kind: 'ecdsa', digest: 'sha384', curve: 'P-384' } as const;
    const der = sign(1, 'alice-ec-p384', sha384, { signAlgo: OID.ecdsaWithSHA384 });
    expect([der[0], acceptedSignatureValue(certificate, scheme, sha384[0]!, der)]).toEqual([0x30, der]);
    const raw = sign(2, 'alice-ec-p384', sha384, { signAlgo: OID.ecdsaWithSHA384 });
    expect(raw).toHaveLength(96);
    expect(acceptedSignatureValue(certificate, scheme, sha384[0]!, raw)).toBeDefined();

    const refusal = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        return (error as Error).message;
      }
      return 'signed';
    };
    const sha256 = [new Uint8Array(32)];
    expect(refusal(() => sign(1, 'alice-ec-p384', sha256, { signAlgo: OID.ecdsaWithSHA384 }))).toBe(
      'Invalid digest value length',
    );
    expect(refusal(() => sign(1, 'alice-ec-p384', sha384, { signAlgo: OID.ecdsaWithSHA256 }))).toBe(
      'Invalid parameter signAlgo',
    );
    expect(refusal(() => sign(2, 'alice-rsa-pss', sha256, { signAlgo: OID.rsaEncryption, hashAlgo: OID.sha256 }))).toBe(
      'Invalid parameter signAlgo',
    );
    expect(refusal(() => sign(1, 'alice-rsa-pss', sha256, { signAlgo: OID.rsassaPss, hashAlgo: OID.sha256 }))).toBe(
      'Missing (or invalid type) string parameter signAlgoParams',
    );
    expect(refusal(() => sign(2, 'alice-rsa-pss', sha256, { signAlgo: OID.rsassaPss }))).toBe(
      'Missing (or invalid type) string parameter hashAlgorithmOID',
    );
    const params = Buffer.from(pssParameters('sha384', 48)).toString('base64');
    expect(
      refusal(() =>
        sign(1, 'alice-rsa-pss', sha256, { signAlgo: OID.rsassaPss, hashAlgo: OID.sha256, signAlgoParams: params }),
      ),
    ).toBe('Invalid parameter signAlgoParams');
    const pss = sign(1, 'alice-rsa-pss', sha384, {
      signAlgo: OID.rsassaPss,
      hashAlgo: OID.sha384,
      signAlgoParams: params,
    });
    const pssCertificate = pki.credentials.find((credential) => credential.credentialID === 'alice-rsa-pss')!.signer
      .certificate;
    expect(
      acceptedSignatureValue(pssCertificate, { kind: 'rsa-pss', digest: 'sha384', saltLength: 48 }, sha384[0]!, pss),
    ).toEqual(pss);
  });
});
