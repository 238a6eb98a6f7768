import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { explicit, objectIdentifier, sequence, smallInteger } from '../cms/der.js';
import {
  certificateSignatureWeakness,
  describeKey,
  digestAlgorithm,
  keyWeakness,
  signatureScheme,
  streamingVerifier,
  verifyWith,
} from './algorithms.js';
import { verdict, noFindings } from './types.js';
import { generateTestKeyPair, issueTestCertificate } from '../cms/test-pki.js';

const SHA256 = '2.16.840.1.101.3.4.2.1';
const sha256 = digestAlgorithm(SHA256)!;
const hashId = (oid: string): Uint8Array => sequence(objectIdentifier(oid));

describe('digest algorithms', () => {
  it('names SHA-2, SHA-3 and SHAKE256 (RFC 8702 32 bytes; id-shake256-len its parameter), and flags SHA-1 and MD5 as weak', () => {
    expect(sha256).toMatchObject({ name: 'sha256', hash: 'sha256' });
    expect(sha256.weakness).toBeUndefined();
    expect(digestAlgorithm('2.16.840.1.101.3.4.2.12')).toMatchObject({ name: 'shake256', outputLength: 32 });
    expect(digestAlgorithm('2.16.840.1.101.3.4.2.18', smallInteger(512))).toMatchObject({
      name: 'shake256-512',
      outputLength: 64,
    });
    expect(digestAlgorithm('2.16.840.1.101.3.4.2.18', smallInteger(7))).toBeUndefined();
    // RFC 8419 §2.3: beside Ed448, id-shake256 without parameters has 512 bits of output.
    expect(digestAlgorithm('2.16.840.1.101.3.4.2.12', undefined, '1.3.101.113')).toMatchObject({
      name: 'shake256-512',
      outputLength: 64,
    });
    expect(digestAlgorithm('2.16.840.1.101.3.4.2.12', undefined, '1.3.101.112')).toMatchObject({ outputLength: 32 });
    expect(digestAlgorithm('1.3.14.3.2.26')?.weakness).toMatch(/SHA-1/);
    expect(digestAlgorithm('1.2.840.113549.2.5')?.weakness).toMatch(/MD5/);
    expect(digestAlgorithm('1.2.643.7.1.1.2.2')).toBeUndefined();
  });
});

describe('signature schemes', () => {
  it('RSASSA-PSS: parameters read, absent ones defaulted (SHA-1, MGF1 SHA-1, salt 20: weak), MGF1 over another hash refused', () => {
    const params = sequence(
      explicit(0, hashId(SHA256)),
      explicit(1, sequence(objectIdentifier('1.2.840.113549.1.1.8'), hashId(SHA256))),
      explicit(2, smallInteger(32)),
    );
    expect(signatureScheme('1.2.840.113549.1.1.10', params, sha256)).toEqual({
      name: 'RSASSA-PSS (sha256, MGF1 sha256, salt 32)',
      keyTypes: ['rsa', 'rsa-pss'],
      hash: 'sha256',
      pss: { saltLength: 32 },
    });
    expect(signatureScheme('1.2.840.113549.1.1.10', sequence(), sha256)).toMatchObject({
      hash: 'sha1',
      pss: { saltLength: 20 },
      weakness: expect.stringMatching(/SHA-1/),
    });
    const mixed = sequence(
      explicit(0, hashId(SHA256)),
      explicit(1, sequence(objectIdentifier('1.2.840.113549.1.1.8'), hashId('2.16.840.1.101.3.4.2.2'))),
    );
    expect(signatureScheme('1.2.840.113549.1.1.10', mixed, sha256)).toMatchObject({
      unsupported: expect.stringMatching(/MGF1/),
    });
  });

  it('rsaEncryption and id-ecPublicKey sign under the digest algorithm; unknown algorithms are named as such', () => {
    expect(signatureScheme('1.2.840.113549.1.1.1', undefined, sha256)).toMatchObject({
      name: 'rsaEncryption with sha256',
      hash: 'sha256',
    });
    expect(signatureScheme('1.2.840.10045.2.1', undefined, digestAlgorithm('1.3.14.3.2.26')!)).toMatchObject({
      hash: 'sha1',
      weakness: expect.stringMatching(/SHA-1/),
    });
    expect(signatureScheme('1.2.840.10040.4.3', undefined, sha256)).toMatchObject({
      unsupported: expect.stringMatching(/1\.2\.840\.10040\.4\.3/),
    });
  });

  it('verifies ECDSA P-384, PSS and Ed448 (one-shot and streaming) and refuses a key of the wrong type', () => {
    const data = Buffer.from('the signed attributes');
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-384' });
    const ecdsa = signatureScheme('1.2.840.10045.4.3.3', undefined, sha256) as Exclude<
      ReturnType<typeof signatureScheme>,
      { unsupported: string }
    >;
    const ecSignature = sign('sha384', data, ec.privateKey);
    expect(verifyWith(ecdsa, data, ec.publicKey, ecSignature)).toBe(true);
    const streaming = streamingVerifier(ecdsa, ec.publicKey)!;
    streaming.update(data.subarray(0, 5));
    streaming.update(data.subarray(5));
    expect(streaming.verify(ecSignature)).toBe(true);
    expect(describeKey(ec.publicKey)).toBe('EC P-384');

    const ed = generateKeyPairSync('ed448');
    const eddsa = signatureScheme('1.3.101.113', undefined, sha256) as typeof ecdsa;
    expect(verifyWith(eddsa, data, ed.publicKey, sign(null, data, ed.privateKey))).toBe(true);
    expect(streamingVerifier(eddsa, ed.publicKey)).toBeUndefined();
    expect(verifyWith(ecdsa, data, ed.publicKey, ecSignature)).toBe(false);

    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const pss = signatureScheme(
      '1.2.840.113549.1.1.10',
      sequence(
        explicit(0, hashId(SHA256)),
        explicit(1, sequence(objectIdentifier('1.2.840.113549.1.1.8'), hashId(SHA256))),
        explicit(2, smallInteger(32)),
      ),
      sha256,
    ) as typeof ecdsa;
    const pssSignature = sign('sha256', data, { key: rsa.privateKey, padding: 6, saltLength: 32 });
    expect(verifyWith(pss, data, rsa.publicKey, pssSignature)).toBe(true);
    expect(verifyWith(pss, Buffer.from('changed'), rsa.publicKey, pssSignature)).toBe(false);
    expect(keyWeakness(rsa.publicKey)).toMatch(/1024 bits/);
    expect(keyWeakness(ec.publicKey)).toBeUndefined();
  });
});

describe('verdict: esign status and ETSI EN 319 102-1 indication', () => {
  it('changed bytes are TOTAL-FAILED whatever else is wrong; weak alone is INDETERMINATE/CRYPTO_CONSTRAINTS_FAILURE', () => {
    const tamperedAndWeak = {
      ...noFindings(),
      problems: ['changed'],
      weak: ['SHA-1'],
      failures: new Set(['CRYPTO_CONSTRAINTS_FAILURE', 'HASH_FAILURE'] as const),
    };
    expect(verdict(tamperedAndWeak)).toEqual({
      status: 'invalid',
      code: 'VERIFY_FAILED',
      indication: 'TOTAL-FAILED',
      subIndication: 'HASH_FAILURE',
    });
    expect(verdict({ ...noFindings(), weak: ['SHA-1'] })).toEqual({
      status: 'weak',
      code: 'VERIFY_WEAK_ALGORITHM',
      indication: 'INDETERMINATE',
      subIndication: 'CRYPTO_CONSTRAINTS_FAILURE',
    });
    expect(verdict({ ...noFindings(), untrusted: ['no anchor'], weak: ['SHA-1'] })).toMatchObject({
      status: 'untrusted',
      indication: 'INDETERMINATE',
      subIndication: 'NO_CERTIFICATE_CHAIN_FOUND',
    });
    expect(verdict({ ...noFindings(), modified: true })).toMatchObject({
      status: 'modified',
      subIndication: 'SIG_CONSTRAINTS_FAILURE',
    });
    expect(
      verdict({ ...noFindings(), problems: ['revoked'], failures: new Set(['REVOKED_NO_POE'] as const) }),
    ).toMatchObject({ status: 'invalid', indication: 'INDETERMINATE', subIndication: 'REVOKED_NO_POE' });
    expect(verdict(noFindings())).toEqual({ status: 'valid', code: null, indication: 'TOTAL-PASSED' });
  });
});

describe('certificate signatures', () => {
  it('a certificate its issuer signed with SHA-1 is weak; with SHA-256 it is not; an unreadable one is left to the chain', () => {
    const keyPair = generateTestKeyPair();
    const ca = issueTestCertificate({ commonName: 'CA', ca: true, keyPair });
    expect(
      certificateSignatureWeakness(
        issueTestCertificate({ commonName: 'old', issuer: ca, keyPair, signatureHash: 'sha1' }).der,
      ),
    ).toMatch(/sha1WithRSAEncryption: SHA-1/);
    expect(
      certificateSignatureWeakness(issueTestCertificate({ commonName: 'new', issuer: ca, keyPair }).der),
    ).toBeUndefined();
    expect(certificateSignatureWeakness(Uint8Array.of(0x30, 0x00))).toBeUndefined();
  });
});
