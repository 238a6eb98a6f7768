/**
 * Signatures and timestamp tokens made with the algorithms others use (ETSI TS 119 312's RSA,
 * RSASSA-PSS and ECDSA over SHA-2 and SHA-3; SHA-1 where it lingers) and with one esign does not
 * implement: an intact but weak one is weak (INDETERMINATE/CRYPTO_CONSTRAINTS_FAILURE, exit 12),
 * one esign cannot check is INDETERMINATE naming it, and neither is ever TOTAL-FAILED.
 */
import { constants, createHash, generateKeyPairSync, randomBytes, sign, X509Certificate } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { derNull, explicit, objectIdentifier, octetString, sequence, setOf, smallInteger } from '../cms/der.js';
import { OID } from '../cms/oids.js';
import { attribute, signingCertificateV2 } from '../cms/signed-attributes.js';
import { encodeSignedData } from '../cms/signed-data.js';
import { issueTestCertificate, type TestIdentity } from '../cms/test-pki.js';
import { parseSignedData as parse } from '../cms/parse.js';
import { buildTstInfo } from '../tsp/tst-info.js';
import { revocationMaterial } from './revocation.js';
import { verifyCades } from './cades.js';
import { checkTimestampOver } from './cms-check.js';
import { noFindings, verdict, type SignatureReport } from './types.js';

/** The test PKI publishes no revocation status: unknown status passes (soft-fail) here, where the verdict is about something else. */
const SOFT_FAIL = { mode: 'soft-fail' } as const;

const root = issueTestCertificate({ commonName: 'Algorithms Root', ca: true });
const rsa = issueTestCertificate({ commonName: 'RSA Signer', issuer: root });
const ec = issueTestCertificate({ commonName: 'EC P-384 Signer', issuer: root, keyPair: ecKeys('P-384') });
const tsa = issueTestCertificate({
  commonName: 'Algorithms TSA',
  issuer: root,
  extendedKeyUsage: { purposes: [OID.kpTimeStamping], critical: true },
});
const content = new TextEncoder().encode('<fattura>42</fattura>\n');
const now = new Date();

function ecKeys(namedCurve: string): { privateKey: KeyObject; publicKey: KeyObject } {
  return generateKeyPairSync('ec', { namedCurve });
}

const DIGEST_OIDS: Record<string, string> = {
  sha1: OID.sha1,
  sha256: OID.sha256,
  sha384: OID.sha384,
  sha512: OID.sha512,
  'sha512-256': '2.16.840.1.101.3.4.2.6',
  'sha3-224': '2.16.840.1.101.3.4.2.7',
  'sha3-256': '2.16.840.1.101.3.4.2.8',
  'sha3-384': '2.16.840.1.101.3.4.2.9',
  'sha3-512': '2.16.840.1.101.3.4.2.10',
};

interface Signing {
  /** node:crypto's hash, and the digestAlgorithm OID (unless `digestOid` overrides it). */
  hash: string;
  digestOid?: string;
  /** DER of the signatureAlgorithm AlgorithmIdentifier. */
  signatureAlgorithm: Uint8Array;
  pss?: { saltLength: number };
}

/** A SignerInfo over `eContent` (or detached content) as another tool would write it, from the project's DER builders. */
function signedWith(
  identity: TestIdentity,
  signing: Signing,
  options: { content: Uint8Array; eContentType?: string; encapsulate?: boolean; unsigned?: Uint8Array[] },
): Uint8Array {
  const digest = new Uint8Array(createHash(signing.hash).update(options.content).digest());
  const signedAttributesDer = setOf([
    attribute(OID.contentType, objectIdentifier(options.eContentType ?? OID.data)),
    attribute(OID.messageDigest, octetString(digest)),
    attribute(OID.signingCertificateV2, signingCertificateV2(identity.der)),
  ]);
  const key = signing.pss
    ? { key: identity.privateKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: signing.pss.saltLength }
    : identity.privateKey;
  return encodeSignedData({
    eContentType: options.eContentType ?? OID.data,
    ...(options.encapsulate ? { eContent: options.content } : {}),
    certificates: [identity.der, root.der],
    signer: {
      certificate: identity.der,
      digestAlgorithm: signing.digestOid ?? DIGEST_OIDS[signing.hash]!,
      signedAttributesDer,
      signatureAlgorithm: signing.signatureAlgorithm,
      signatureValue: new Uint8Array(sign(signing.hash, signedAttributesDer, key)),
      unsignedAttributes: options.unsigned ?? [],
    },
  });
}

const algorithm = (oid: string, ...parameters: Uint8Array[]) => sequence(objectIdentifier(oid), ...parameters);
const RSA_SHA256: Signing = { hash: 'sha256', signatureAlgorithm: algorithm(OID.sha256WithRSAEncryption, derNull) };
const RSA_SHA1: Signing = { hash: 'sha1', signatureAlgorithm: algorithm('1.2.840.113549.1.1.5', derNull) };

/** A timestamp token over `imprint`, signed by the TSA as `signing` says. */
function token(imprint: { hash: string; oid?: string; of: Uint8Array }, signing: Signing = RSA_SHA256): Uint8Array {
  const tstInfo = buildTstInfo({
    policy: '0.4.0.2023.1.1',
    hashAlgorithm: imprint.oid ?? DIGEST_OIDS[imprint.hash]!,
    hashedMessage: new Uint8Array(createHash(imprint.hash).update(imprint.of).digest()),
    serialNumber: randomBytes(8),
    genTime: now,
  });
  return signedWith(tsa, signing, {
    content: tstInfo,
    eContentType: OID.tstInfo,
    encapsulate: true,
  });
}

/** A B-T CAdES: `signer` signs as `signing`, and a token signed as `tokenSigning` stamps its signature value. */
function withTimestamp(signing: Signing, tokenSigning: Signing, imprintHash = 'sha256'): Uint8Array {
  const bare = signedWith(rsa, signing, { content });
  const stamp = token({ hash: imprintHash, of: parse(bare).signatureValue }, tokenSigning);
  return signedWith(rsa, signing, { content, unsigned: [attribute(OID.signatureTimeStampToken, stamp)] });
}

async function verify(p7s: Uint8Array, over = content): Promise<SignatureReport> {
  const report = await verifyCades(p7s, 'x.p7s', async (consume) => consume(over), {
    trustAnchors: [root.der],
    now,
    revocation: SOFT_FAIL,
  });
  return report.signatures[0]!;
}

describe('algorithms others sign with (ETSI TS 119 312: RSA, RSASSA-PSS, ECDSA over SHA-2 and SHA-3)', () => {
  const pss = (hash: string, saltLength: number) => {
    const hashId = algorithm(DIGEST_OIDS[hash]!);
    return algorithm(
      OID.rsassaPss,
      sequence(explicit(0, hashId), explicit(1, algorithm(OID.mgf1, hashId)), explicit(2, smallInteger(saltLength))),
    );
  };
  const CASES: Array<[string, TestIdentity, Signing]> = [
    [
      'RSA PKCS#1 v1.5 with SHA3-256 (2.16.840.1.101.3.4.3.14)',
      rsa,
      { hash: 'sha3-256', signatureAlgorithm: algorithm('2.16.840.1.101.3.4.3.14', derNull) },
    ],
    [
      'RSA PKCS#1 v1.5 with SHA3-224',
      rsa,
      { hash: 'sha3-224', signatureAlgorithm: algorithm('2.16.840.1.101.3.4.3.13', derNull) },
    ],
    [
      'RSA PKCS#1 v1.5 with SHA3-512',
      rsa,
      { hash: 'sha3-512', signatureAlgorithm: algorithm('2.16.840.1.101.3.4.3.16', derNull) },
    ],
    [
      'rsaEncryption under a SHA3-384 digest',
      rsa,
      { hash: 'sha3-384', signatureAlgorithm: algorithm(OID.rsaEncryption, derNull) },
    ],
    [
      'sha512-256WithRSAEncryption',
      rsa,
      { hash: 'sha512-256', signatureAlgorithm: algorithm('1.2.840.113549.1.1.16', derNull) },
    ],
    [
      'RSASSA-PSS with SHA3-256',
      rsa,
      { hash: 'sha3-256', signatureAlgorithm: pss('sha3-256', 32), pss: { saltLength: 32 } },
    ],
    [
      'RSASSA-PSS with SHA-512',
      rsa,
      { hash: 'sha512', signatureAlgorithm: pss('sha512', 64), pss: { saltLength: 64 } },
    ],
    ['ECDSA P-384 with SHA3-384', ec, { hash: 'sha3-384', signatureAlgorithm: algorithm('2.16.840.1.101.3.4.3.11') }],
    ['ECDSA P-384 with SHA3-256', ec, { hash: 'sha3-256', signatureAlgorithm: algorithm('2.16.840.1.101.3.4.3.10') }],
    [
      'id-ecPublicKey under a SHA3-512 digest',
      ec,
      { hash: 'sha3-512', signatureAlgorithm: algorithm(OID.ecPublicKey) },
    ],
  ];
  it.each(CASES)('%s: valid, TOTAL-PASSED; the content changed: TOTAL-FAILED', async (_name, identity, signing) => {
    const p7s = signedWith(identity, signing, { content });
    const signature = await verify(p7s);
    expect(signature, JSON.stringify(signature.problems)).toMatchObject({
      status: 'valid',
      indication: 'TOTAL-PASSED',
      integrity: { valid: true },
      signatureValue: { valid: true },
    });
    const changed = await verify(p7s, new TextEncoder().encode('<fattura>43</fattura>\n'));
    expect(changed).toMatchObject({ status: 'invalid', indication: 'TOTAL-FAILED', subIndication: 'HASH_FAILURE' });
  });

  it('brainpool curves (TS 119 312) verify as well', async () => {
    const brainpool = issueTestCertificate({
      commonName: 'Brainpool Signer',
      issuer: root,
      keyPair: ecKeys('brainpoolP256r1'),
    });
    const signature = await verify(
      signedWith(brainpool, { hash: 'sha256', signatureAlgorithm: algorithm(OID.ecdsaWithSHA256) }, { content }),
    );
    expect(signature).toMatchObject({ status: 'valid', signatureValue: { key: 'EC brainpoolP256r1' } });
  });
});

describe('weak is weak, and what esign does not implement is INDETERMINATE', () => {
  it('a signature timestamp token signed over SHA-1: intact, weak (exit 12), INDETERMINATE/CRYPTO_CONSTRAINTS_FAILURE, never "not validly signed"', async () => {
    const signature = await verify(withTimestamp(RSA_SHA256, RSA_SHA1));
    expect(signature.timestamp).toMatchObject({ valid: true, weak: [expect.stringMatching(/sha1.*SHA-1/)] });
    expect(signature).toMatchObject({
      status: 'weak',
      code: 'VERIFY_WEAK_ALGORITHM',
      indication: 'INDETERMINATE',
      subIndication: 'CRYPTO_CONSTRAINTS_FAILURE',
      level: 'B-T',
    });
    expect(signature.problems.join('\n')).not.toMatch(/not validly signed/);
  });

  it('a signature timestamp token with a SHA-1 imprint and a SHA-1 signature, and a SHA-1 signature: weak', async () => {
    const signature = await verify(withTimestamp(RSA_SHA1, RSA_SHA1, 'sha1'));
    expect(signature).toMatchObject({ status: 'weak', subIndication: 'CRYPTO_CONSTRAINTS_FAILURE' });
    expect(signature.integrity.valid && signature.signatureValue.valid && signature.timestamp?.valid).toBe(true);
  });

  it('a token whose signature is forged is still not validly signed (TOTAL-FAILED is kept for what is broken)', async () => {
    const good = withTimestamp(RSA_SHA256, RSA_SHA1);
    const stamp = parse(good).signatureTimeStampToken!;
    const forged = Uint8Array.from(stamp);
    forged[forged.length - 1]! ^= 1;
    const p7s = signedWith(rsa, RSA_SHA256, { content, unsigned: [attribute(OID.signatureTimeStampToken, forged)] });
    const signature = await verify(p7s);
    expect(signature.status).toBe('invalid');
    expect(signature.problems.join('\n')).toMatch(/not validly signed/);
  });

  it('a signature algorithm esign does not implement (GOST R 34.10-2012): INDETERMINATE/CRYPTO_CONSTRAINTS_FAILURE naming it, never TOTAL-FAILED', async () => {
    const p7s = signedWith(rsa, { hash: 'sha256', signatureAlgorithm: algorithm('1.2.643.7.1.1.3.2') }, { content });
    const signature = await verify(p7s);
    expect(signature).toMatchObject({
      indication: 'INDETERMINATE',
      subIndication: 'CRYPTO_CONSTRAINTS_FAILURE',
      integrity: { valid: true },
      signatureValue: { valid: false, reason: expect.stringMatching(/does not implement.*1\.2\.643\.7\.1\.1\.3\.2/) },
    });
  });

  it('a digest algorithm esign does not implement (Streebog): INDETERMINATE naming it', async () => {
    const p7s = signedWith(rsa, { ...RSA_SHA256, digestOid: '1.2.643.7.1.1.2.2' }, { content });
    expect(await verify(p7s)).toMatchObject({
      indication: 'INDETERMINATE',
      subIndication: 'CRYPTO_CONSTRAINTS_FAILURE',
      problems: [expect.stringMatching(/does not implement the digest algorithm 1\.2\.643\.7\.1\.1\.2\.2/)],
    });
  });

  it('a signature timestamp token under a signature algorithm esign does not implement: INDETERMINATE, the signature itself intact', async () => {
    const signature = await verify(
      withTimestamp(RSA_SHA256, { hash: 'sha256', signatureAlgorithm: algorithm('1.2.643.7.1.1.3.2') }),
    );
    expect(signature).toMatchObject({
      indication: 'INDETERMINATE',
      subIndication: 'CRYPTO_CONSTRAINTS_FAILURE',
      integrity: { valid: true },
      signatureValue: { valid: true },
      timestamp: {
        valid: false,
        problems: [expect.stringMatching(/does not implement the signature algorithm 1\.2\.643/)],
      },
    });
  });

  it('a timestamp token as the whole evidence (ASiC-S timestamp.tst, document timestamp): SHA-1 weak, an imprint hash esign does not implement INDETERMINATE', async () => {
    const over = async (tokenDer: Uint8Array) => {
      const report = { problems: [] as string[], warnings: [] } as unknown as SignatureReport;
      const findings = { ...noFindings(), problems: report.problems };
      await checkTimestampOver(
        tokenDer,
        async (consume) => consume(content),
        {
          anchors: [new X509Certificate(root.der)],
          extraCerts: [],
          revocation: revocationMaterial([], []),
          now,
          revocationPolicy: SOFT_FAIL,
        },
        report,
        findings,
      );
      return { report, ...verdict(findings) };
    };
    const weak = await over(token({ hash: 'sha1', of: content }, RSA_SHA1));
    expect(weak).toMatchObject({
      status: 'weak',
      indication: 'INDETERMINATE',
      subIndication: 'CRYPTO_CONSTRAINTS_FAILURE',
    });
    expect(weak.report.integrity.valid && weak.report.signatureValue.valid).toBe(true);
    const unknown = await over(token({ hash: 'sha256', oid: '1.2.643.7.1.1.2.2', of: content }));
    expect(unknown).toMatchObject({ indication: 'INDETERMINATE', subIndication: 'CRYPTO_CONSTRAINTS_FAILURE' });
    expect(unknown.report.integrity.reason).toMatch(/does not implement the imprint hash algorithm 1\.2\.643/);
  });

  it('a signer certificate its CA signed with SHA-1: weak, not invalid', async () => {
    const sha1Signer = issueTestCertificate({ commonName: 'SHA-1 Signer', issuer: root, signatureHash: 'sha1' });
    const signature = await verify(signedWith(sha1Signer, RSA_SHA256, { content }));
    expect(signature).toMatchObject({ status: 'weak', subIndication: 'CRYPTO_CONSTRAINTS_FAILURE' });
  });
});
