import { createHash, generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { maxSignatureLength, type DigestName, type SignatureScheme } from './cms/algorithms.js';
import { OID } from './cms/oids.js';
import { buildSignedAttributes } from './cms/signed-attributes.js';
import { buildSignedData } from './cms/signed-data.js';
import { issueTestCertificate } from './cms/test-pki.js';
import { EsignError } from './errors.js';
import type { TimestampAuthority } from './ports.js';
import { contentsSizeFor } from './forms/pades/sign.js';
import { timestampSignatures } from './sign-workflow.js';
import { buildTimeStampToken } from './tsp/token.js';
import { buildTstInfo } from './tsp/tst-info.js';

const signature = Uint8Array.of(1, 2, 3);
const stamp = { response: new Uint8Array(0), token: Uint8Array.of(9), genTime: new Date(0), serialNumber: '1' };

/** A TSA that records what it was asked, and accepts only the given hash algorithms (badAlg otherwise). */
function tsaAccepting(...accepted: DigestName[]): TimestampAuthority & { asked: Array<[string, DigestName]> } {
  const asked: Array<[string, DigestName]> = [];
  return {
    asked,
    timestamp: async (imprint, digest = 'sha256') => {
      asked.push([Buffer.from(imprint).toString('hex'), digest]);
      if (!accepted.includes(digest))
        throw new EsignError('TSA_REJECTED', 'rejected', { details: { failInfo: ['badAlg'] } });
      return stamp;
    },
  };
}

const hex = (digest: DigestName) => createHash(digest).update(signature).digest('hex');

describe('timestampSignatures', () => {
  it("asks for an imprint of the signature's digest", async () => {
    const tsa = tsaAccepting('sha256', 'sha384');
    const [result] = await timestampSignatures([signature], tsa, 'B-T', {}, { digest: 'sha384' });
    expect(result?.status).toBe('fulfilled');
    expect(tsa.asked).toEqual([[hex('sha384'), 'sha384']]);
  });

  it('asks again with SHA-256 when the TSA refuses that hash algorithm (badAlg), and only then', async () => {
    const tsa = tsaAccepting('sha256');
    const [result] = await timestampSignatures([signature], tsa, 'B-T', {}, { digest: 'sha512' });
    expect(result?.status).toBe('fulfilled');
    expect(tsa.asked).toEqual([
      [hex('sha512'), 'sha512'],
      [hex('sha256'), 'sha256'],
    ]);
    const strict = tsaAccepting();
    const [refused] = await timestampSignatures([signature], strict, 'B-T');
    expect(refused?.status).toBe('rejected');
    expect(strict.asked).toHaveLength(1);
  });
});

describe('contentsSizeFor', () => {
  // A full chain of 4096-bit certificates for the signer and for the TSA: the largest esign expects.
  const rsa4096 = generateKeyPairSync('rsa', { modulusLength: 4096 });
  const root = issueTestCertificate({
    commonName: 'Root CA with a long enough name for a real one',
    ca: true,
    keyPair: rsa4096,
  });
  const issuing = issueTestCertificate({
    commonName: 'Issuing CA with a long enough name for a real one',
    ca: true,
    issuer: root,
    keyPair: rsa4096,
  });
  const p521 = generateKeyPairSync('ec', { namedCurve: 'secp521r1' });
  const tsa = issueTestCertificate({
    commonName: 'TSA',
    issuer: issuing,
    keyPair: rsa4096,
    extendedKeyUsage: { purposes: [OID.kpTimeStamping], critical: true },
  });

  it.each([
    ['RSA 4096', rsa4096, { kind: 'rsa-pkcs1', digest: 'sha256' }, 4096],
    ['ECDSA P-521', p521, { kind: 'ecdsa', digest: 'sha512', curve: 'P-521' }, 521],
  ] as const)(
    'leaves room for %s with a full chain and a SHA-512 timestamp token',
    (_label, keyPair, scheme: SignatureScheme, keyLengthBits) => {
      const signer = issueTestCertificate({ commonName: 'Signer', issuer: issuing, keyPair });
      const certificates = [signer.der, issuing.der, root.der];
      const credential = {
        credentialID: 'c',
        certificates,
        keyLengthBits,
        signaturesPerApproval: 50,
        signAlgorithm: '',
        scheme,
        authMode: 'oauth2code' as const,
      };
      const attributes = buildSignedAttributes({
        contentDigest: new Uint8Array(createHash(scheme.digest).digest()),
        digest: scheme.digest,
        signerCertificate: signer.der,
      });
      const tstInfo = buildTstInfo({
        policy: OID.etsiBaselineTsaPolicy,
        hashAlgorithm: OID.sha512,
        hashedMessage: new Uint8Array(64),
        serialNumber: new Uint8Array(16).fill(0x7f),
        genTime: new Date(),
        nonce: new Uint8Array(9).fill(0x7f),
      });
      const token = buildTimeStampToken({
        tstInfo,
        signerCertificate: tsa.der,
        privateKey: rsa4096.privateKey,
        certificates: [tsa.der, issuing.der, root.der],
      });
      const cms = buildSignedData({
        signedAttributesDer: attributes.der,
        signatureValue: new Uint8Array(maxSignatureLength(scheme, keyLengthBits)).fill(0xff),
        scheme,
        certificates,
        unsignedAttributes: { signatureTimeStampToken: token },
      });
      expect(cms.length).toBeLessThan(contentsSizeFor(credential, 'B-T'));
    },
  );
});
