/**
 * Mutation fuzzing of `verifyPdf` on signed PDFs: damaged copies of files signed in the test (a
 * classic-table file and a pdf-lib file with object streams, each with one signature, one signed
 * twice) end in a report or a typed EsignError, never another exception or a hang. A report on a
 * damaged file must not call it valid unless the damage missed every signed byte and structure.
 * `ESIGN_FUZZ_RUNS=N` runs N times as many cases.
 */
import { sign } from 'node:crypto';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { concatBytes, fuzzParams, inPlaceMutationArb, mutatedInput, mutationArb, outcomeAsync } from '../../../test/helpers/fuzz.js';
import { buildClassicPdf, pdfLibBytes } from '../../../test/helpers/pdf-fixtures.js';
import { buildSignedAttributes } from '../cms/signed-attributes.js';
import { buildSignedData } from '../cms/signed-data.js';
import { issueTestCertificate } from '../cms/test-pki.js';
import { bytesSource } from '../pdf/byte-source.js';
import { readPdf } from '../pdf/document.js';
import { prepareSignature, spliceContents } from '../pdf/placeholder.js';
import { hashByteRange } from '../pdf/signatures.js';
import { verifyPdf } from './pdf.js';

const root = issueTestCertificate({ commonName: 'Fuzz Root', ca: true });
const signer = issueTestCertificate({ commonName: 'Fuzz Signer', issuer: root });
const now = new Date();
let seeds: Uint8Array[] = [];

/** Signs `pdf` with the test signer the way esign does (PAdES B-B, an incremental update). */
async function signed(pdf: Uint8Array): Promise<Uint8Array> {
  const doc = await readPdf(bytesSource(pdf));
  const pu = await prepareSignature(doc, { signingTime: now, contentsSize: 8192 });
  const withPlaceholder = concatBytes(pdf, pu.update);
  const contentDigest = await hashByteRange(bytesSource(withPlaceholder), pu.byteRange);
  const attributes = buildSignedAttributes({ contentDigest, signerCertificate: signer.der });
  const cms = buildSignedData({ signedAttributesDer: attributes.der, signatureValue: new Uint8Array(sign('sha256', attributes.der, signer.privateKey)), certificates: [signer.der, root.der] });
  return concatBytes(pdf, spliceContents(pu, cms));
}

beforeAll(async () => {
  const once = await signed(buildClassicPdf());
  seeds = [once, await signed(await pdfLibBytes({ pages: 2, objectStreams: true })), await signed(once)];
});

describe('verifyPdf under mutation', () => {
  it('the seeds verify as valid (the property below starts from good signatures)', async () => {
    for (const seed of seeds) expect((await verifyPdf(bytesSource(seed), 'seed.pdf', { trustAnchors: [root.der], now })).status).toBe('valid');
  });

  it.each([
    ['any mutation', mutationArb],
    ['in-place byte damage', inPlaceMutationArb],
  ] as const)('%s ends in a report or a typed EsignError', async (_name, mutations) => {
    const outcomes = { valid: 0, other: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(mutatedInput(seeds, mutations), async (input) => {
        const result = await outcomeAsync('verifyPdf', () => verifyPdf(bytesSource(input.bytes), 'fuzz.pdf', { trustAnchors: [root.der], now }));
        if (!result.ok) outcomes.refused++;
        else if (result.value.status === 'valid') outcomes.valid++;
        else outcomes.other++;
      }),
      fuzzParams(300),
    );
    // Most damage must be noticed; a few mutations land outside anything signed or read.
    expect(outcomes.valid).toBeLessThan((outcomes.valid + outcomes.other + outcomes.refused) / 2);
  });
});
