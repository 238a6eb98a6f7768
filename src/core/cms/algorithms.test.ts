import { constants, createHash, generateKeyPairSync, sign, verify } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  acceptedSignatureValue,
  maxSignatureLength,
  pssParameters,
  readPssParameters,
  signatureAlgorithmIdentifier,
  type DigestName,
  type SignatureScheme,
} from './algorithms.js';
import { decode, oid, sequenceItems } from './der.js';
import { maxDerSignatureLength, p1363ToDer, signEcdsaHash, verifyEcdsaHash, type CurveName } from './ecdsa.js';
import { OID } from './oids.js';
import { signPssHash, verifyPssHash } from './rsa-pss.js';
import { issueTestCertificate } from './test-pki.js';

const data = Buffer.from('the signed attributes');
const hashOf = (digest: DigestName) => new Uint8Array(createHash(digest).update(data).digest());
const NODE_CURVE: Record<CurveName, string> = { 'P-256': 'prime256v1', 'P-384': 'secp384r1', 'P-521': 'secp521r1' };
const ecKeys = Object.fromEntries(
  (Object.keys(NODE_CURVE) as CurveName[]).map((curve) => [
    curve,
    generateKeyPairSync('ec', { namedCurve: NODE_CURVE[curve] }),
  ]),
) as Record<CurveName, { privateKey: KeyObject; publicKey: KeyObject }>;
const rsaKeys = generateKeyPairSync('rsa', { modulusLength: 2048 });

describe('ECDSA over a hash', () => {
  it.each([
    ['P-256', 'sha256'],
    ['P-384', 'sha384'],
    ['P-521', 'sha512'],
    ['P-256', 'sha512'],
    ['P-521', 'sha256'],
  ] as const)(
    'on %s with %s: node:crypto accepts what it signs, and it accepts what node:crypto signs',
    (curve, digest) => {
      const { privateKey, publicKey } = ecKeys[curve];
      const hash = hashOf(digest);
      const ours = signEcdsaHash(privateKey, hash);
      expect(verify(digest, data, publicKey, ours)).toBe(true);
      expect(ours.length).toBeLessThanOrEqual(maxDerSignatureLength(curve));
      const theirs = new Uint8Array(sign(digest, data, privateKey));
      expect(verifyEcdsaHash(publicKey, hash, theirs)).toEqual(theirs);
      const raw = new Uint8Array(sign(digest, data, { key: privateKey, dsaEncoding: 'ieee-p1363' }));
      // A raw r||s answer is converted to the DER the CMS carries.
      const converted = verifyEcdsaHash(publicKey, hash, raw);
      expect(converted).toEqual(p1363ToDer(raw, curve));
      expect(verify(digest, data, publicKey, converted as Uint8Array)).toBe(true);
    },
  );

  it('refuses another hash, a changed value, a wrong length, BER and values out of range', () => {
    const { privateKey, publicKey } = ecKeys['P-256'];
    const hash = hashOf('sha256');
    const der = signEcdsaHash(privateKey, hash);
    expect(verifyEcdsaHash(publicKey, hashOf('sha384'), der)).toBeUndefined();
    const changed = Uint8Array.from(der);
    changed[changed.length - 1] = (changed[changed.length - 1] as number) ^ 1;
    expect(verifyEcdsaHash(publicKey, hash, changed)).toBeUndefined();
    const raw = signEcdsaHash(privateKey, hash, 'ieee-p1363');
    expect(verifyEcdsaHash(publicKey, hash, raw.subarray(0, 63))).toBeUndefined();
    expect(verifyEcdsaHash(publicKey, hash, Uint8Array.from([...raw, 0]))).toBeUndefined();
    // The same (r, s) with a long-form length: valid BER, not DER.
    const ber = Uint8Array.from([0x30, 0x81, der[1] as number, ...der.subarray(2)]);
    expect(verifyEcdsaHash(publicKey, hash, ber)).toBeUndefined();
    expect(verifyEcdsaHash(publicKey, hash, new Uint8Array(64))).toBeUndefined();
    expect(verifyEcdsaHash(publicKey, hash, new Uint8Array(64).fill(0xff))).toBeUndefined();
    expect(verifyEcdsaHash(ecKeys['P-384'].publicKey, hash, der)).toBeUndefined();
  });
});

describe('RSASSA-PSS over a hash', () => {
  it.each(['sha256', 'sha384', 'sha512'] as const)(
    '%s: agrees with node:crypto both ways, and checks the salt length',
    (digest) => {
      const saltLength = hashOf(digest).length;
      const options = { padding: constants.RSA_PKCS1_PSS_PADDING, saltLength };
      const ours = signPssHash(rsaKeys.privateKey, hashOf(digest), { hash: digest, saltLength });
      expect(verify(digest, data, { key: rsaKeys.publicKey, ...options }, ours)).toBe(true);
      const theirs = sign(digest, data, { key: rsaKeys.privateKey, ...options });
      expect(verifyPssHash(rsaKeys.publicKey, hashOf(digest), theirs, { hash: digest, saltLength })).toBe(true);
      expect(
        verifyPssHash(rsaKeys.publicKey, hashOf(digest), theirs, { hash: digest, saltLength: saltLength - 1 }),
      ).toBe(false);
      expect(verifyPssHash(rsaKeys.publicKey, hashOf(digest), theirs.subarray(1), { hash: digest, saltLength })).toBe(
        false,
      );
    },
  );
});

describe('SignerInfo algorithm identifiers', () => {
  const algorithmOf = (scheme: SignatureScheme) =>
    sequenceItems(decode(signatureAlgorithmIdentifier(scheme), 'alg'), 'alg');

  it('ecdsa-with-SHAx without parameters; sha256WithRSAEncryption with NULL; id-RSASSA-PSS with its parameters', () => {
    const ecdsa = algorithmOf({ kind: 'ecdsa', digest: 'sha384', curve: 'P-384' });
    expect(ecdsa.map((item, index) => (index === 0 ? oid(item, 'oid') : 'params'))).toEqual([OID.ecdsaWithSHA384]);
    const rsa = algorithmOf({ kind: 'rsa-pkcs1', digest: 'sha256' });
    expect(oid(rsa[0], 'oid')).toBe(OID.sha256WithRSAEncryption);
    expect(Buffer.from(rsa[1]!.encoded).toString('hex')).toBe('0500');
    const pss = algorithmOf({ kind: 'rsa-pss', digest: 'sha256', saltLength: 32 });
    expect(oid(pss[0], 'oid')).toBe(OID.rsassaPss);
    expect(readPssParameters(pss[1]!.encoded)).toEqual({ digest: 'sha256', saltLength: 32 });
  });

  it('reads RSASSA-PSS-params as OpenSSL writes them, and refuses the SHA-1 defaults and mixed hashes', () => {
    // openssl: -sigopt rsa_padding_mode:pss -sigopt rsa_pss_saltlen:32 with SHA-256.
    const openssl = Buffer.from(
      '3034a00f300d06096086480165030402010500a11c301a06092a864886f70d010108300d06096086480165030402010500a203020120',
      'hex',
    );
    expect(Buffer.from(pssParameters('sha256', 32)).equals(openssl)).toBe(true);
    expect(readPssParameters(new Uint8Array(openssl))).toEqual({ digest: 'sha256', saltLength: 32 });
    expect(readPssParameters(Uint8Array.of(0x30, 0x00))).toBeUndefined();
    const mixed = Uint8Array.from(pssParameters('sha256', 32));
    mixed.set(pssParameters('sha384', 32).subarray(4, 19), 4);
    expect(readPssParameters(mixed)).toBeUndefined();
  });

  it('reserves room for the longest value of each scheme', () => {
    expect(maxSignatureLength({ kind: 'ecdsa', digest: 'sha512', curve: 'P-521' }, 521)).toBe(139);
    expect(maxSignatureLength({ kind: 'ecdsa', digest: 'sha256', curve: 'P-256' }, 256)).toBe(72);
    expect(maxSignatureLength({ kind: 'rsa-pss', digest: 'sha256', saltLength: 32 }, 4096)).toBe(512);
  });
});

describe('acceptedSignatureValue', () => {
  it('checks each value against the certificate under the scheme, converting ECDSA to DER', () => {
    const ec = issueTestCertificate({ commonName: 'EC signer', keyPair: ecKeys['P-384'] });
    const scheme: SignatureScheme = { kind: 'ecdsa', digest: 'sha384', curve: 'P-384' };
    const raw = signEcdsaHash(ecKeys['P-384'].privateKey, hashOf('sha384'), 'ieee-p1363');
    expect(acceptedSignatureValue(ec.der, scheme, hashOf('sha384'), raw)).toEqual(p1363ToDer(raw, 'P-384'));
    expect(acceptedSignatureValue(ec.der, { ...scheme, curve: 'P-256' }, hashOf('sha384'), raw)).toBeUndefined();
    expect(acceptedSignatureValue(ec.der, scheme, hashOf('sha256'), raw)).toBeUndefined();

    const rsa = issueTestCertificate({ commonName: 'RSA signer', keyPair: rsaKeys });
    const pss: SignatureScheme = { kind: 'rsa-pss', digest: 'sha256', saltLength: 32 };
    const pssValue = signPssHash(rsaKeys.privateKey, hashOf('sha256'), { hash: 'sha256', saltLength: 32 });
    expect(acceptedSignatureValue(rsa.der, pss, hashOf('sha256'), pssValue)).toEqual(pssValue);
    expect(
      acceptedSignatureValue(rsa.der, { kind: 'rsa-pkcs1', digest: 'sha256' }, hashOf('sha256'), pssValue),
    ).toBeUndefined();
    const pkcs1 = new Uint8Array(sign('sha384', data, rsaKeys.privateKey));
    expect(acceptedSignatureValue(rsa.der, { kind: 'rsa-pkcs1', digest: 'sha384' }, hashOf('sha384'), pkcs1)).toEqual(
      pkcs1,
    );
    expect(
      acceptedSignatureValue(rsa.der, { kind: 'rsa-pkcs1', digest: 'sha256' }, hashOf('sha256'), pkcs1),
    ).toBeUndefined();
    expect(acceptedSignatureValue(ec.der, pss, hashOf('sha256'), pssValue)).toBeUndefined();
  });
});
