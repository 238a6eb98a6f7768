/**
 * Parts of a CAdES signature others put in: counter-signatures (RFC 5652 §11.4: a SignerInfo over
 * the signature value, in an unsigned attribute), each verified and reported nested under the
 * signature it signs, and several SignerInfos in one file, each a signature of its own.
 */
import { createHash, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { bytesSource } from '../pdf/byte-source.js';
import { decode, octetString, sequence, setOf } from '../cms/der.js';
import { readEnveloping } from '../cms/enveloping.js';
import { OID } from '../cms/oids.js';
import { parseSignedData } from '../cms/parse.js';
import { attribute, buildSignedAttributes, signingCertificateV2 } from '../cms/signed-attributes.js';
import { addedSignerAround, addUnsignedAttribute, encodeSignedData, signedDataParts } from '../cms/signed-data.js';
import { issueTestCertificate, type TestIdentity } from '../cms/test-pki.js';
import { verifyCades } from './cades.js';
import type { VerificationReport } from './types.js';

/** The test PKI publishes no revocation status: unknown status passes (soft-fail) here, where the verdict is about something else. */
const SOFT_FAIL = { mode: 'soft-fail' } as const;

const root = issueTestCertificate({ commonName: 'Counter Root', ca: true });
const alice = issueTestCertificate({ commonName: 'Alice', issuer: root });
const bob = issueTestCertificate({ commonName: 'Bob', issuer: root });
const carol = issueTestCertificate({ commonName: 'Carol', issuer: root });
const content = new TextEncoder().encode('<contratto>firmato</contratto>\n');
const COUNTER_SIGNATURE = '1.2.840.113549.1.9.6';

function parts(signer: TestIdentity) {
  const attributes = buildSignedAttributes({
    contentDigest: new Uint8Array(createHash('sha256').update(content).digest()),
    signerCertificate: signer.der,
  });
  return signedDataParts({
    signedAttributesDer: attributes.der,
    signatureValue: new Uint8Array(sign('sha256', attributes.der, signer.privateKey)),
    certificates: [signer.der, root.der, bob.der, carol.der],
  });
}

/** `signer`'s SignerInfo over `signatureValue`: signed attributes without content-type, as §11.4 has them. */
function counterSignerInfo(signer: TestIdentity, signatureValue: Uint8Array): Uint8Array {
  const signedAttributesDer = setOf([
    attribute(OID.messageDigest, octetString(new Uint8Array(createHash('sha256').update(signatureValue).digest()))),
    attribute(OID.signingCertificateV2, signingCertificateV2(signer.der)),
  ]);
  const cms = encodeSignedData({
    eContentType: OID.data,
    certificates: [signer.der],
    signer: {
      certificate: signer.der,
      digestAlgorithm: OID.sha256,
      signedAttributesDer,
      signatureAlgorithm: decode(parts(signer).signer.signatureAlgorithm, 'alg').encoded,
      signatureValue: new Uint8Array(sign('sha256', signedAttributesDer, signer.privateKey)),
    },
  });
  const signedData = decode(cms, 'cms').items[1]!.items[0]!;
  return signedData.items[signedData.items.length - 1]!.items[0]!.encoded;
}

async function verify(cms: Uint8Array): Promise<VerificationReport> {
  return verifyCades(cms, 'x.p7s', async (consume) => consume(content), {
    trustAnchors: [root.der],
    now: new Date(),
    revocation: SOFT_FAIL,
  });
}

describe('counter-signatures', () => {
  const signed = encodeSignedData(parts(alice));
  const aliceValue = parseSignedData(signed).signatureValue;

  it('each is verified over the signature value and reported nested under its signature', async () => {
    const bobs = counterSignerInfo(bob, aliceValue);
    const report = await verify(addUnsignedAttribute(signed, attribute(COUNTER_SIGNATURE, bobs), 'signature'));
    expect(report.signatures).toHaveLength(1);
    expect(report.signatures[0]).toMatchObject({
      status: 'valid',
      signer: { subject: 'CN=Alice' },
      counterSignatures: [{ index: 1, status: 'valid', indication: 'TOTAL-PASSED', signer: { subject: 'CN=Bob' } }],
    });
    expect(report.status).toBe('valid');
  });

  it('a counter-signature of a counter-signature is nested under it', async () => {
    const bobs = counterSignerInfo(bob, aliceValue);
    const bobValue = Uint8Array.from(decode(bobs, 'si').items[5]!.content);
    const carols = counterSignerInfo(carol, bobValue);
    // Carol's SignerInfo goes into Bob's unsigned attributes, Bob's into Alice's.
    const bobsWithCarol = sequence(
      ...decode(bobs, 'si').items.map((item) => item.encoded),
      setOf([attribute(COUNTER_SIGNATURE, carols)], 0xa1),
    );
    const report = await verify(addUnsignedAttribute(signed, attribute(COUNTER_SIGNATURE, bobsWithCarol), 'signature'));
    expect(report.signatures[0]!.counterSignatures![0]).toMatchObject({
      status: 'valid',
      signer: { subject: 'CN=Bob' },
      counterSignatures: [{ status: 'valid', signer: { subject: 'CN=Carol' } }],
    });
  });

  it('a forged counter-signature is invalid under a valid signature, and the file is not valid', async () => {
    const forged = Uint8Array.from(counterSignerInfo(bob, aliceValue));
    forged[forged.length - 1]! ^= 1;
    const report = await verify(addUnsignedAttribute(signed, attribute(COUNTER_SIGNATURE, forged), 'signature'));
    expect(report.signatures[0]).toMatchObject({
      status: 'valid',
      counterSignatures: [{ status: 'invalid', indication: 'TOTAL-FAILED', subIndication: 'SIG_CRYPTO_FAILURE' }],
    });
    expect(report).toMatchObject({ status: 'invalid', code: 'VERIFY_FAILED' });
    // Over another signature value (moved from elsewhere): the message digest does not match.
    const moved = counterSignerInfo(bob, new Uint8Array(256));
    const misplaced = await verify(addUnsignedAttribute(signed, attribute(COUNTER_SIGNATURE, moved), 'signature'));
    expect(misplaced.signatures[0]!.counterSignatures![0]).toMatchObject({
      status: 'invalid',
      subIndication: 'HASH_FAILURE',
    });
  });
});

describe('several SignerInfos in one .p7s', () => {
  it('are each a signature (before: "expected one SignerInfo, found 2"); a forged one fails alone', async () => {
    // A two-signer detached SignedData, as a .p7m's readEnveloping gives it for a parallel signature.
    const { head, tail } = addedSignerAround(
      (await readEnveloping(bytesSource(encodeSignedData({ ...parts(alice), eContent: content })))).detached,
      parts(bob),
      content.length,
    );
    const twoSigners = (await readEnveloping(bytesSource(Uint8Array.from([...head, ...content, ...tail])))).detached;
    const report = await verify(twoSigners);
    expect(
      report.signatures.map((signature) => [signature.index, signature.signer?.subject, signature.status]),
    ).toEqual([
      [1, 'CN=Alice', 'valid'],
      [2, 'CN=Bob', 'valid'],
    ]);
    const forged = Uint8Array.from(twoSigners);
    forged[forged.length - 1]! ^= 1;
    const broken = await verify(forged);
    expect(broken.signatures.map((signature) => signature.status).sort()).toEqual(['invalid', 'valid']);
    expect(broken.status).toBe('invalid');
  });
});
