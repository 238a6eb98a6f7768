import { createHash, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { concatBytes, decode, isContext, objectIdentifier, oid, sequence } from './der.js';
import { OID_RI_OCSP_RESPONSE, revocationInfoChoices, withValidationData } from './long-term.js';
import { parseSignedData } from './parse.js';
import { buildSignedAttributes } from './signed-attributes.js';
import {
  addedSignerAround,
  buildSignedData,
  encodeSignedData,
  oneSignerEach,
  signedDataAround,
  signedDataParts,
} from './signed-data.js';
import { readEnveloping } from './enveloping.js';
import { issueTestCertificate } from './test-pki.js';

const root = issueTestCertificate({ commonName: 'Test Root', ca: true });
const signer = issueTestCertificate({ commonName: 'Test Signer', issuer: root });
const tsa = issueTestCertificate({ commonName: 'Test TSA', issuer: root });
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
// Stand-ins: the builder puts them in place without reading them.
const crl = sequence(objectIdentifier('1.2.3.4'));
const ocsp = sequence(objectIdentifier('1.2.3.5'));

function signedInput(text: string) {
  const contentDigest = new Uint8Array(createHash('sha256').update(text).digest());
  const attributes = buildSignedAttributes({ contentDigest, signerCertificate: signer.der });
  return {
    signedAttributesDer: attributes.der,
    signatureValue: new Uint8Array(sign('sha256', attributes.der, signer.privateKey)),
    certificates: [signer.der, root.der],
  };
}

describe('CAdES B-LT SignedData', () => {
  it('puts the extra certificates in certificates (once each) and CRLs and OCSP responses in crls, version 5', () => {
    const cms = buildSignedData({
      ...signedInput('a'),
      validationData: { certificates: [root.der, tsa.der], ocsps: [ocsp], crls: [crl, crl] },
    });
    const parsed = parseSignedData(cms);
    expect(parsed.version).toBe(5);
    expect(parsed.certificates.map(hex)).toEqual([signer.der, root.der, tsa.der].map(hex));
    expect(parsed.revocationChoices.map(hex)).toEqual(revocationInfoChoices({ ocsps: [ocsp], crls: [crl] }).map(hex));
    const other = decode(parsed.revocationChoices[1]!, 'choice');
    expect(isContext(other, 1)).toBe(true);
    expect(oid(other.items![0], 'format')).toBe(OID_RI_OCSP_RESPONSE);
  });

  it('stays version 1 with CRLs only, and without validation data has no crls field', () => {
    expect(
      parseSignedData(
        buildSignedData({ ...signedInput('a'), validationData: { certificates: [], ocsps: [], crls: [crl] } }),
      ).version,
    ).toBe(1);
    expect(parseSignedData(buildSignedData(signedInput('a'))).revocationChoices).toEqual([]);
  });

  it('a parallel signer joins its revocation data to the earlier ones, which are kept first, and raises the version', async () => {
    const first = signedDataAround(
      signedDataParts({ ...signedInput('x'), validationData: { certificates: [], ocsps: [], crls: [crl] } }),
    );
    const second = signedDataParts({
      ...signedInput('x'),
      validationData: { certificates: [tsa.der], ocsps: [ocsp], crls: [crl] },
    });
    const { head, tail } = addedSignerAround(concatBytes([first.head, first.tail]), second, 1);
    const p7m = concatBytes([head, new TextEncoder().encode('x'), tail]);
    const source = { size: p7m.length, read: async (at: number, length: number) => p7m.subarray(at, at + length) };
    const signers = oneSignerEach((await readEnveloping(source)).detached).map(parseSignedData);
    expect(signers).toHaveLength(2);
    for (const parsed of signers) {
      expect(parsed.version).toBe(5);
      expect(parsed.revocationChoices.map(hex)).toEqual(revocationInfoChoices({ ocsps: [ocsp], crls: [crl] }).map(hex));
      expect(parsed.certificates.map(hex)).toContain(hex(tsa.der));
    }
  });

  it('gives a token (eContent inside) more certificates and revocation data, its content and SignerInfo kept', () => {
    const eContent = new TextEncoder().encode('tstinfo');
    const token = encodeSignedData({
      ...signedDataParts({ ...signedInput('t'), validationData: { certificates: [], ocsps: [], crls: [crl] } }),
      eContent,
    });
    const completed = parseSignedData(
      withValidationData(token, { certificates: [tsa.der, root.der], ocsps: [ocsp], crls: [crl] }),
    );
    const before = parseSignedData(token);
    expect(completed.version).toBe(5);
    expect(completed.encapContent).toEqual(eContent);
    expect(completed.signatureValue).toEqual(before.signatureValue);
    expect(completed.certificates.map(hex)).toEqual([signer.der, root.der, tsa.der].map(hex));
    expect(completed.revocationChoices.map(hex)).toEqual(
      revocationInfoChoices({ ocsps: [ocsp], crls: [crl] }).map(hex),
    );
    expect(withValidationData(token, { certificates: [root.der], ocsps: [], crls: [crl] })).toEqual(token);
  });
});
