/**
 * Mutation fuzzing of `verifyCades` on CAdES signatures at B-LT and B-LTA: damaged copies of a
 * signature carrying validation data (SignedData.crls) and an archive timestamp in each form verify
 * reads — an archive-time-stamp-v3 whose token holds an ats-hash-index-v3 or the older
 * ats-hash-index, and an archive-time-stamp-v2 — and one with a counter-signature. Every input must end in a report or a typed
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
import { decode, objectIdentifier, octetString, sequence } from '../cms/der.js';
import { parseSignedData } from '../cms/parse.js';
import { addUnsignedAttribute, buildSignedData } from '../cms/signed-data.js';
import { attribute, buildSignedAttributes } from '../cms/signed-attributes.js';
import { issueTestCertificate } from '../cms/test-pki.js';
import { OID } from '../cms/oids.js';
import { buildTimeStampReq } from '../tsp/request.js';
import { processTimeStampResp } from '../tsp/response.js';
import { SandboxTsa } from '../../sandbox/tsa/tsa.js';
import { verifyCades } from './cades.js';

/** The test PKI publishes no revocation status: unknown status passes (soft-fail) here, where the verdict is about something else. */
const SOFT_FAIL = { mode: 'soft-fail' } as const;

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

function signedData(
  certificate: typeof root,
  unsignedAttributes = {},
  crls: Uint8Array[] = [],
  digest = contentHash,
): Uint8Array {
  const attributes = buildSignedAttributes({ contentDigest: digest, signerCertificate: certificate.der });
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
/** A counter-signature (RFC 5652 §11.4): the signer's SignerInfo over the signature value, as an unsigned attribute. */
const counterSigned = (() => {
  const value = parseSignedData(longTerm).signatureValue;
  const counter = signedData(signer, {}, [], sha256(value));
  const signedDataBlock = decode(counter, 'cms').items[1]!.items[0]!;
  const signerInfo = signedDataBlock.items[signedDataBlock.items.length - 1]!.items[0]!.encoded;
  return addUnsignedAttribute(longTerm, attribute('1.2.840.113549.1.9.6', signerInfo), 'signature');
})();
const seeds = [longTerm, archived, olderIndexed, archivedV2, counterSigned];

describe('verifyCades under mutation (B-LT validation data, B-LTA archive timestamp)', () => {
  it('the seeds are what they say: each archive form holds, the counter-signature verifies', async () => {
    const verified = async (cms: Uint8Array) =>
      (
        await verifyCades(cms, 'seed.p7s', async (consume) => consume(content), {
          trustAnchors: [root.der],
          now,
          revocation: SOFT_FAIL,
        })
      ).signatures[0]!;
    for (const seed of [archived, olderIndexed, archivedV2])
      expect((await verified(seed)).problems.filter((p) => p.startsWith('archive timestamp'))).toEqual([]);
    expect((await verified(counterSigned)).counterSignatures).toMatchObject([
      { integrity: { valid: true }, signatureValue: { valid: true } },
    ]);
  });

  it.each([
    ['any mutation', mutationArb],
    ['in-place byte damage', inPlaceMutationArb],
  ] as const)(
    '%s ends in a report or a typed EsignError, valid only with what is signed intact',
    async (_name, mutations) => {
      await fc.assert(
        fc.asyncProperty(mutatedInput(seeds, mutations), async (input) => {
          const result = await outcomeAsync('verifyCades', () =>
            verifyCades(input.bytes, 'fuzz.p7m', async (consume) => consume(content), {
              trustAnchors: [root.der],
              now,
              revocation: SOFT_FAIL,
            }),
          );
          // The seeds' signature timestamps are stand-ins, not TSA tokens, so a copy is valid only where damage
          // took one away (an unsigned attribute's type changed): then what is signed is still the seed's, byte for byte.
          if (result.ok && result.value.status === 'valid') {
            const [seed, copy] = [seeds[input.seedIndex]!, input.bytes].map((bytes) => parseSignedData(bytes));
            expect(copy!.signatureTimeStampToken, JSON.stringify(input.mutations)).toBeUndefined();
            expect(copy!.signatureValue).toEqual(seed!.signatureValue);
            expect(copy!.signedAttributes?.der).toEqual(seed!.signedAttributes?.der);
          }
        }),
        fuzzParams(200),
      );
    },
  );
});
