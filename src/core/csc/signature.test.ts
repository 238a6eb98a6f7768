import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { OID } from '../cms/oids.js';
import { readPssParameters } from '../cms/algorithms.js';
import { issueTestCertificate } from '../cms/test-pki.js';
import { EsignError } from '../errors.js';
import { buildSignHashRequest } from './requests.js';
import { signingTerms } from './signature.js';
import type { CredentialInfo } from './shapes.js';
import { buildSignHashRequestV2 } from './v2.js';

const rsa = issueTestCertificate({ commonName: 'RSA', keyType: 'rsa' }).der;
const ec = (namedCurve: string) =>
  issueTestCertificate({ commonName: namedCurve, keyPair: generateKeyPairSync('ec', { namedCurve }) }).der;
const p256 = ec('prime256v1');
const p384 = ec('secp384r1');
const p521 = ec('secp521r1');

const info = (certificate: Uint8Array, algorithms: string[]): CredentialInfo => ({
  credentialID: 'c1',
  status: 'enabled',
  algorithms,
  keyLengthBits: 2048,
  certificates: [certificate],
  authMode: 'oauth2code',
});

function refusal(run: () => unknown): EsignError {
  try {
    run();
  } catch (error) {
    if (error instanceof EsignError) return error;
    throw error;
  }
  throw new Error('no error');
}

describe('signingTerms', () => {
  it('takes the scheme from key/algo, and the digest from the key', () => {
    expect(signingTerms(info(rsa, [OID.rsaEncryption]))).toMatchObject({
      signAlgorithm: OID.rsaEncryption,
      scheme: { kind: 'rsa-pkcs1', digest: 'sha256' },
    });
    expect(signingTerms(info(rsa, [OID.sha256WithRSAEncryption]))).toMatchObject({
      signAlgorithm: OID.sha256WithRSAEncryption,
      scheme: { kind: 'rsa-pkcs1', digest: 'sha256' },
    });
    expect(signingTerms(info(p256, [OID.ecdsaWithSHA256]))).toMatchObject({
      signAlgorithm: OID.ecdsaWithSHA256,
      scheme: { kind: 'ecdsa', digest: 'sha256', curve: 'P-256' },
    });
    expect(signingTerms(info(p384, [OID.ecPublicKey]))).toMatchObject({
      signAlgorithm: OID.ecPublicKey,
      scheme: { kind: 'ecdsa', digest: 'sha384', curve: 'P-384' },
    });
    expect(signingTerms(info(p521, [OID.ecdsaWithSHA512]))).toMatchObject({
      scheme: { kind: 'ecdsa', digest: 'sha512', curve: 'P-521' },
    });
    const pss = signingTerms(info(rsa, [OID.rsassaPss]));
    expect(pss).toMatchObject({
      signAlgorithm: OID.rsassaPss,
      scheme: { kind: 'rsa-pss', digest: 'sha256', saltLength: 32 },
    });
    expect(readPssParameters(new Uint8Array(Buffer.from(pss.signAlgorithmParams ?? '', 'base64')))).toEqual({
      digest: 'sha256',
      saltLength: 32,
    });
    // PKCS#1 v1.5 stays first where a credential offers both, as esign signed before.
    expect(signingTerms(info(rsa, [OID.rsassaPss, OID.rsaEncryption])).scheme.kind).toBe('rsa-pkcs1');
  });

  it('takes --digest when the credential accepts it, and names what it accepts when not (exit 2)', () => {
    expect(signingTerms(info(p256, [OID.ecPublicKey]), 50, 'sha512').scheme).toEqual({
      kind: 'ecdsa',
      digest: 'sha512',
      curve: 'P-256',
    });
    expect(signingTerms(info(rsa, [OID.rsassaPss]), 50, 'sha384').scheme).toEqual({
      kind: 'rsa-pss',
      digest: 'sha384',
      saltLength: 48,
    });
    expect(signingTerms(info(p256, [OID.ecdsaWithSHA256, OID.ecdsaWithSHA384]), 50, 'sha384').signAlgorithm).toBe(
      OID.ecdsaWithSHA384,
    );
    const refused = refusal(() => signingTerms(info(p384, [OID.ecdsaWithSHA384]), 50, 'sha256'));
    expect(refused.code).toBe('USAGE');
    expect(refused.exitCode).toBe(2);
    expect(refused.message).toMatch(/does not sign SHA-256 hashes; it accepts SHA-384/);
  });

  it('refuses, naming what it lists, a credential with nothing esign can sign with', () => {
    for (const [certificate, algorithms] of [
      [rsa, ['1.2.840.113549.1.1.5']], // sha1WithRSAEncryption
      [rsa, ['1.2.840.10040.4.3']], // DSA with SHA-1
      [rsa, ['2.16.840.1.101.3.4.3.18']], // ML-DSA-65
      [rsa, [OID.ecdsaWithSHA256]], // an EC algorithm for an RSA key
      [p256, [OID.rsaEncryption]],
      [rsa, []],
    ] as const) {
      const refused = refusal(() => signingTerms(info(certificate, [...algorithms])));
      expect(refused.code).toBe('CREDENTIAL_UNSUPPORTED_KEY');
      for (const listed of algorithms) expect(refused.message).toContain(listed);
    }
  });
});

describe('signHash requests per scheme', () => {
  const common = { baseUrl: 'https://sign.example', accessToken: 't', credentialID: 'c1', sad: 's' };
  const body = (request: { body: string }) => JSON.parse(request.body) as Record<string, unknown>;

  it('v1: hashAlgo names the digest; signAlgo and signAlgoParams as the terms say', () => {
    const terms = signingTerms(info(rsa, [OID.rsassaPss]));
    const sent = body(
      buildSignHashRequest({
        ...common,
        hashes: [new Uint8Array(32)],
        signAlgo: terms.signAlgorithm,
        signAlgoParams: terms.signAlgorithmParams!,
      }),
    );
    expect(sent).toMatchObject({
      hashAlgo: OID.sha256,
      signAlgo: OID.rsassaPss,
      signAlgoParams: terms.signAlgorithmParams,
    });
    expect(
      body(buildSignHashRequest({ ...common, hashes: [new Uint8Array(48)], signAlgo: OID.ecdsaWithSHA384 })),
    ).toMatchObject({ hashAlgo: OID.sha384, signAlgo: OID.ecdsaWithSHA384 });
  });

  it('v2: hashAlgorithmOID only where signAlgo does not name the hash', () => {
    expect(
      body(buildSignHashRequestV2({ ...common, hashes: [new Uint8Array(64)], signAlgo: OID.ecdsaWithSHA512 })),
    ).not.toHaveProperty('hashAlgorithmOID');
    expect(
      body(buildSignHashRequestV2({ ...common, hashes: [new Uint8Array(64)], signAlgo: OID.ecPublicKey })),
    ).toMatchObject({ hashAlgorithmOID: OID.sha512 });
    expect(
      body(
        buildSignHashRequestV2({
          ...common,
          hashes: [new Uint8Array(48)],
          signAlgo: OID.rsassaPss,
          signAlgoParams: 'AA==',
        }),
      ),
    ).toMatchObject({ hashAlgorithmOID: OID.sha384, signAlgoParams: 'AA==' });
  });

  it('refuses hashes of no SHA-2 length, or of two digests in one request', () => {
    expect(() => buildSignHashRequest({ ...common, hashes: [new Uint8Array(20)] })).toThrow(/20 bytes long/);
    expect(() => buildSignHashRequest({ ...common, hashes: [new Uint8Array(32), new Uint8Array(48)] })).toThrow(
      /different digest algorithms/,
    );
  });
});
