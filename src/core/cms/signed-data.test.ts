import { constants, createHash, privateEncrypt, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decode, encoded, explicitInner, integerValue, oid, sequenceItems, setItems } from './der.js';
import { OID } from './oids.js';
import { parseSignedData } from './parse.js';
import { buildSignedAttributes } from './signed-attributes.js';
import { addSignatureTimestamp, buildSignedData, signatureValueOf, verifyRsaPkcs1Sha256 } from './signed-data.js';
import { issueTestCertificate } from './test-pki.js';
import { verifySignerInfo } from './verify-signer.js';
import { isEsignError } from '../errors.js';

const root = issueTestCertificate({ commonName: 'Test Root', ca: true });
const signer = issueTestCertificate({ commonName: 'Test Signer', issuer: root });
const content = new TextEncoder().encode('The quick brown fox');
const contentDigest = new Uint8Array(createHash('sha256').update(content).digest());
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

/** What a remote signHash does: PKCS#1 v1.5 over DigestInfo(sha256, hash) — here via sign() over the attributes. */
function signAttributes(der: Uint8Array): Uint8Array {
  return new Uint8Array(sign('sha256', der, signer.privateKey));
}

function fixture(signingTime?: Date) {
  const attributes = buildSignedAttributes({ contentDigest, signerCertificate: signer.der, signingTime });
  const signatureValue = signAttributes(attributes.der);
  const cms = buildSignedData({
    signedAttributesDer: attributes.der,
    signatureValue,
    certificates: [signer.der, root.der],
  });
  return { attributes, signatureValue, cms };
}

describe('buildSignedData', () => {
  it('round-trips through parseSignedData', () => {
    const { attributes, signatureValue, cms } = fixture(new Date('2025-01-02T03:04:05Z'));
    const parsed = parseSignedData(cms);
    expect(parsed.version).toBe(1);
    expect(parsed.encapContentType).toBe(OID.data);
    expect(parsed.encapContent).toBeUndefined();
    expect(parsed.certificates.map(hex)).toEqual([hex(signer.der), hex(root.der)]);
    expect(hex(parsed.signerCertificate!)).toBe(hex(signer.der));
    expect(parsed.digestAlgorithm).toBe(OID.sha256);
    expect(parsed.signatureAlgorithm).toBe(OID.sha256WithRSAEncryption);
    expect(hex(parsed.signatureValue)).toBe(hex(signatureValue));
    expect(hex(parsed.signedAttributes!.der)).toBe(hex(attributes.der));
    expect(hex(parsed.signedAttributes!.messageDigest!)).toBe(hex(contentDigest));
    expect(parsed.signedAttributes!.contentType).toBe(OID.data);
    expect(parsed.signedAttributes!.signingTime?.toISOString()).toBe('2025-01-02T03:04:05.000Z');
    expect(parsed.signatureTimeStampToken).toBeUndefined();
    expect(verifySignerInfo(parsed, { contentDigest, requireSigningCertificate: true })).toEqual({ valid: true });
  });

  it('writes version 1, sha256 digest algorithm, detached id-data, sha256WithRSAEncryption with NULL parameters', () => {
    const { cms } = fixture();
    const [contentType, content] = sequenceItems(decode(cms, 'ci'), 'ci');
    expect(oid(contentType, 'ct')).toBe(OID.signedData);
    const [version, digestAlgorithms, encap, , signerInfos] = sequenceItems(explicitInner(content, 0, 'c'), 'sd');
    expect(integerValue(version, 'v')).toBe(1n);
    expect(hex(encoded(digestAlgorithms!))).toBe('310d300b0609608648016503040201');
    expect(sequenceItems(encap, 'encap')).toHaveLength(1);
    const [signerInfo] = setItems(signerInfos, 'sis');
    const fields = sequenceItems(signerInfo, 'si');
    expect(integerValue(fields[0], 'v')).toBe(1n);
    expect(encoded(fields[3]!)[0]).toBe(0xa0);
    expect(hex(encoded(fields[4]!))).toBe('300d06092a864886f70d01010b0500');
  });

  it('carries a signature timestamp token as unsigned attribute', () => {
    const { attributes, signatureValue } = fixture();
    const token = fixture().cms; // any ContentInfo will do for the structure
    const cms = buildSignedData({
      signedAttributesDer: attributes.der,
      signatureValue,
      certificates: [signer.der],
      unsignedAttributes: { signatureTimeStampToken: token },
    });
    const parsed = parseSignedData(cms);
    expect(hex(parsed.signatureTimeStampToken!)).toBe(hex(token));
    expect(parsed.unsignedAttributes.map((attribute) => attribute.type)).toEqual([OID.signatureTimeStampToken]);
  });
});

describe('addSignatureTimestamp', () => {
  it('adds the unsigned attribute and keeps everything else byte for byte', () => {
    const { cms, attributes, signatureValue } = fixture();
    const token = fixture().cms;
    const stamped = addSignatureTimestamp(cms, token);
    const direct = buildSignedData({
      signedAttributesDer: attributes.der,
      signatureValue,
      certificates: [signer.der, root.der],
      unsignedAttributes: { signatureTimeStampToken: token },
    });
    expect(hex(stamped)).toBe(hex(direct));
    expect(hex(signatureValueOf(stamped))).toBe(hex(signatureValue));
  });

  it('adds a second timestamp beside an existing one', () => {
    const { cms } = fixture();
    const first = fixture().cms;
    const second = fixture().cms;
    const parsed = parseSignedData(addSignatureTimestamp(addSignatureTimestamp(cms, first), second));
    expect(parsed.unsignedAttributes).toHaveLength(2);
  });

  it('reports malformed CMS as CMS_BAD_STRUCTURE', () => {
    expect(() => addSignatureTimestamp(Uint8Array.of(1, 2, 3), fixture().cms)).toThrow(
      expect.objectContaining({ code: 'CMS_BAD_STRUCTURE' }),
    );
  });
});

describe('verifyRsaPkcs1Sha256', () => {
  const hash = new Uint8Array(createHash('sha256').update('to be signed').digest());
  const signature = new Uint8Array(sign('sha256', Buffer.from('to be signed'), signer.privateKey));

  it('accepts a PKCS#1 v1.5 signature over the precomputed digest', () => {
    expect(verifyRsaPkcs1Sha256(signature, hash, signer.der)).toBe(true);
  });

  it('rejects a different digest, a tampered signature, another key, and a re-hashed digest', () => {
    const otherHash = new Uint8Array(createHash('sha256').update('something else').digest());
    expect(verifyRsaPkcs1Sha256(signature, otherHash, signer.der)).toBe(false);
    const tampered = Uint8Array.from(signature);
    tampered[10] = (tampered[10] as number) ^ 1;
    expect(verifyRsaPkcs1Sha256(tampered, hash, signer.der)).toBe(false);
    expect(verifyRsaPkcs1Sha256(signature, hash, root.der)).toBe(false);
    const overHash = new Uint8Array(sign('sha256', hash, signer.privateKey));
    expect(verifyRsaPkcs1Sha256(overHash, hash, signer.der)).toBe(false);
  });

  it('returns false for garbage instead of throwing', () => {
    expect(verifyRsaPkcs1Sha256(new Uint8Array(256), hash, signer.der)).toBe(false);
    expect(verifyRsaPkcs1Sha256(signature, hash, Uint8Array.of(0x30, 0))).toBe(false);
    expect(verifyRsaPkcs1Sha256(signature, new Uint8Array(31), signer.der)).toBe(false);
    const ec = issueTestCertificate({ commonName: 'EC', keyType: 'ec' });
    expect(verifyRsaPkcs1Sha256(signature, hash, ec.der)).toBe(false);
  });

  it('agrees with a raw RSA private-key operation on DigestInfo', () => {
    const digestInfo = Buffer.concat([Buffer.from('3031300d060960864801650304020105000420', 'hex'), hash]);
    const raw = privateEncrypt({ key: signer.privateKey, padding: constants.RSA_PKCS1_PADDING }, digestInfo);
    expect(verifyRsaPkcs1Sha256(new Uint8Array(raw), hash, signer.der)).toBe(true);
  });
});

describe('parseSignedData', () => {
  it('reports malformed input as CMS_BAD_STRUCTURE, never a raw exception', () => {
    const { cms } = fixture();
    const inputs = [
      new Uint8Array(0),
      Uint8Array.of(0x30, 0x80),
      cms.subarray(0, cms.length - 1),
      Uint8Array.of(0x30, 0x03, 0x06, 0x01, 0x00),
    ];
    for (let cut = 1; cut < cms.length; cut += 97) inputs.push(cms.subarray(0, cut));
    for (const input of inputs)
      expect(() => parseSignedData(input)).toThrow(expect.objectContaining({ code: 'CMS_BAD_STRUCTURE' }));
  });

  it('survives random byte flips with either a result or CMS_BAD_STRUCTURE', () => {
    const { cms } = fixture();
    for (let i = 0; i < 300; i++) {
      const copy = Uint8Array.from(cms);
      const at = (i * 7919) % copy.length;
      copy[at] = (copy[at] as number) ^ (1 << (i % 8));
      try {
        parseSignedData(copy);
      } catch (error) {
        expect(isEsignError(error, 'CMS_BAD_STRUCTURE'), String(error)).toBe(true);
      }
    }
  });
});

describe('verifySignerInfo', () => {
  it('reports a content digest mismatch and a bad signature', () => {
    const { attributes, cms } = fixture();
    const parsed = parseSignedData(cms);
    expect(verifySignerInfo(parsed, { contentDigest: new Uint8Array(32) })).toMatchObject({
      valid: false,
      reason: expect.stringMatching(/message-digest/),
    });
    const forged = buildSignedData({
      signedAttributesDer: attributes.der,
      signatureValue: new Uint8Array(256).fill(1),
      certificates: [signer.der],
    });
    expect(verifySignerInfo(parseSignedData(forged), { contentDigest })).toMatchObject({
      valid: false,
      reason: expect.stringMatching(/signature/),
    });
  });
});
