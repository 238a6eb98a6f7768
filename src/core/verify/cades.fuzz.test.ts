/**
 * Mutation fuzzing of `verifyCades` on CAdES signatures at B-LT and B-LTA: damaged copies of a
 * signature carrying validation data (SignedData.crls) and an archive timestamp in each form verify
 * reads — an archive-time-stamp-v3 whose token holds an ats-hash-index-v3 or the older
 * ats-hash-index, and an archive-time-stamp-v2. Every input must end in a report or a typed
 * EsignError (never a crash, never a hang), and damage to signed bytes must never verify.
 */
import { createHash, sign } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuzzParams, inPlaceMutationArb, mutatedInput, mutationArb, outcomeAsync } from '../../../test/helpers/fuzz.js';
import {
  archivedParts,
  archiveTimestampImprint,
  archiveTimestampRequest,
  archiveV2Coverage,
  OID_ARCHIVE_TIMESTAMP_V2,
  OID_ARCHIVE_TIMESTAMP_V3,
  OID_ATS_HASH_INDEX,
  OID_ATS_HASH_INDEX_V3,
} from '../cms/archive-timestamp.js';
import { objectIdentifier, octetString, sequence } from '../cms/der.js';
import { addUnsignedAttribute, buildSignedData } from '../cms/signed-data.js';
import { attribute, buildSignedAttributes } from '../cms/signed-attributes.js';
import { issueTestCertificate } from '../cms/test-pki.js';
import { OID } from '../cms/oids.js';
import { buildTimeStampReq } from '../tsp/request.js';
import { processTimeStampResp } from '../tsp/response.js';
import { SandboxTsa } from '../../sandbox/tsa/tsa.js';
import { verifyCades } from './cades.js';

const root = issueTestCertificate({ commonName: 'Fuzz Root', ca: true });
const signer = issueTestCertificate({ commonName: 'Fuzz Signer', issuer: root });
const content = new TextEncoder().encode('<fattura>1</fattura>\n');
const contentHash = new Uint8Array(createHash('sha256').update(content).digest());
const now = new Date();
const tsaCertificate = issueTestCertificate({
  commonName: 'Fuzz TSA',
  issuer: root,
  extendedKeyUsage: { purposes: [OID.kpTimeStamping], critical: true },
});
let serial = 1n;
const tsa = new SandboxTsa({
  certificate: tsaCertificate.der,
  privateKey: tsaCertificate.privateKey,
  clock: { now: () => now },
  serials: { next: () => ++serial },
});
/** A real timestamp token over `imprint`, so that the archive timestamp's index and imprint are checked. */
function timestampToken(imprint: Uint8Array): Uint8Array {
  const nonce = Uint8Array.from([0x7f, 1, 2, 3, 4, 5, 6, 7]);
  return processTimeStampResp(tsa.respond(buildTimeStampReq({ imprint, nonce })), { imprint, nonce, policy: null })
    .token;
}

function signedData(certificate: typeof root, unsignedAttributes = {}, crls: Uint8Array[] = []): Uint8Array {
  const attributes = buildSignedAttributes({ contentDigest: contentHash, signerCertificate: certificate.der });
  return buildSignedData({
    signedAttributesDer: attributes.der,
    signatureValue: new Uint8Array(sign('sha256', attributes.der, certificate.privateKey)),
    certificates: certificate === root ? [root.der] : [signer.der, root.der],
    unsignedAttributes,
    validationData: { certificates: [], ocsps: [], crls },
  });
}

const longTerm = signedData(signer, { signatureTimeStampToken: signedData(root) }, [
  sequence(objectIdentifier('1.2.3.4')),
]);
const archived = (() => {
  const { imprint, index } = archiveTimestampRequest(longTerm, contentHash, 'sha256');
  const token = addUnsignedAttribute(timestampToken(imprint), attribute(OID_ATS_HASH_INDEX_V3, index), 'token');
  return addUnsignedAttribute(longTerm, attribute(OID_ARCHIVE_TIMESTAMP_V3, token), 'signature');
})();
const sha256 = (...parts: Uint8Array[]) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return new Uint8Array(hash.digest());
};
/** An archive-time-stamp-v3 whose token carries the older ats-hash-index (each attribute hashed whole). */
const olderIndexed = (() => {
  const parts = archivedParts(longTerm);
  const hashes = (items: Uint8Array[]) => sequence(...items.map((item) => octetString(sha256(item))));
  const index = sequence(
    hashes(parts.certificates),
    hashes(parts.revocations),
    hashes(parts.unsignedAttributes.map((attr) => attr.encoded)),
  );
  const imprint = archiveTimestampImprint(parts, contentHash, index, 'sha256');
  const token = addUnsignedAttribute(timestampToken(imprint), attribute(OID_ATS_HASH_INDEX, index), 'token');
  return addUnsignedAttribute(longTerm, attribute(OID_ARCHIVE_TIMESTAMP_V3, token), 'signature');
})();
/** An archive-time-stamp-v2 over the encapContentInfo, the content and the rest of the SignedData. */
const archivedV2 = (() => {
  const { before, after } = archiveV2Coverage(longTerm, new Uint8Array(0), () => true);
  const token = timestampToken(sha256(before, content, after[0]));
  return addUnsignedAttribute(longTerm, attribute(OID_ARCHIVE_TIMESTAMP_V2, token), 'signature');
})();
const seeds = [longTerm, archived, olderIndexed, archivedV2];

describe('verifyCades under mutation (B-LT validation data, B-LTA archive timestamp)', () => {
  it.each([
    ['any mutation', mutationArb],
    ['in-place byte damage', inPlaceMutationArb],
  ] as const)('%s ends in a report or a typed EsignError, and is never valid', async (_name, mutations) => {
    await fc.assert(
      fc.asyncProperty(mutatedInput(seeds, mutations), async (input) => {
        const result = await outcomeAsync('verifyCades', () =>
          verifyCades(input.bytes, 'fuzz.p7m', async (consume) => consume(content), {
            trustAnchors: [root.der],
            now,
          }),
        );
        // The seeds' signature timestamps are stand-ins, not TSA tokens: no copy of them, damaged or not, is valid.
        if (result.ok) expect(result.value.status, JSON.stringify(input.mutations)).not.toBe('valid');
      }),
      fuzzParams(200),
    );
  });
});
