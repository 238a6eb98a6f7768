import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  archiveTimestampRequest,
  archivedParts,
  atsHashIndexV3,
  expectedArchiveImprint,
  OID_ATS_HASH_INDEX_V3,
} from './archive-timestamp.js';
import { decode, objectIdentifier, octetString, sequence, sequenceItems } from './der.js';
import { parseSignedData } from './parse.js';
import { addUnsignedAttribute, buildSignedData } from './signed-data.js';
import { attribute, buildSignedAttributes } from './signed-attributes.js';
import { issueTestCertificate } from './test-pki.js';
import { sign } from 'node:crypto';

const root = issueTestCertificate({ commonName: 'Test Root', ca: true });
const signer = issueTestCertificate({ commonName: 'Test Signer', issuer: root });
const contentHash = new Uint8Array(createHash('sha256').update('content').digest());
const crl = sequence(objectIdentifier('1.2.3.4'));
/** A stand-in for a TSA's token: any one-signer SignedData (the index goes among its unsigned attributes). */
const token = (() => {
  const attributes = buildSignedAttributes({ contentDigest: contentHash, signerCertificate: root.der });
  return buildSignedData({
    signedAttributesDer: attributes.der,
    signatureValue: new Uint8Array(sign('sha256', attributes.der, root.privateKey)),
    certificates: [root.der],
  });
})();

function signature(crls: Uint8Array[]) {
  const attributes = buildSignedAttributes({ contentDigest: contentHash, signerCertificate: signer.der });
  return buildSignedData({
    signedAttributesDer: attributes.der,
    signatureValue: new Uint8Array(sign('sha256', attributes.der, signer.privateKey)),
    certificates: [signer.der, root.der],
    unsignedAttributes: { signatureTimeStampToken: token },
    validationData: { certificates: [], ocsps: [], crls },
  });
}

describe('archive-time-stamp-v3', () => {
  it('indexes each certificate, revocation choice and unsigned attribute value (SHA-256 left at its DEFAULT)', () => {
    const parts = archivedParts(signature([crl]));
    const [certificates, revocations, unsigned, extra] = sequenceItems(
      decode(atsHashIndexV3(parts, 'sha256'), 'i'),
      'i',
    );
    expect(extra).toBeUndefined();
    expect(certificates!.items).toHaveLength(2);
    expect(revocations!.items.map((item) => Buffer.from(item.content).toString('hex'))).toEqual([
      createHash('sha256').update(crl).digest('hex'),
    ]);
    expect(unsigned!.items).toHaveLength(1);
    expect(sequenceItems(decode(atsHashIndexV3(parts, 'sha384'), 'i'), 'i')).toHaveLength(4);
  });

  it('the imprint asked for is the one a verifier recomputes, with the index read back from the token', () => {
    const cms = signature([crl]);
    const { imprint, index } = archiveTimestampRequest(cms, contentHash, 'sha256');
    const archived = addUnsignedAttribute(token, attribute(OID_ATS_HASH_INDEX_V3, index), 'token');
    expect(parseSignedData(archived).signatureValue).toEqual(parseSignedData(token).signatureValue);
    expect(expectedArchiveImprint(cms, archived, contentHash, 'sha256')).toEqual({ imprint });
    // Another content: another imprint.
    const other = new Uint8Array(32);
    expect(expectedArchiveImprint(cms, archived, other, 'sha256').imprint).not.toEqual(imprint);
    // A CRL it indexed, gone: refused.
    expect(expectedArchiveImprint(signature([]), archived, contentHash, 'sha256').problem).toBe(
      'a revocation data it archived is no longer in the signature',
    );
    // A CRL added after it: still the same imprint.
    expect(
      expectedArchiveImprint(signature([crl, octetString(new Uint8Array(3))]), archived, contentHash, 'sha256'),
    ).toEqual({ imprint });
    expect(expectedArchiveImprint(cms, token, contentHash, 'sha256').problem).toBe(
      'it has neither an ats-hash-index-v3 nor an ats-hash-index attribute',
    );
  });
});
