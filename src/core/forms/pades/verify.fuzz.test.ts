/**
 * Mutation fuzzing of `verifyPdf` on signed PDFs: damaged copies of files signed in the test (a
 * classic-table file and a pdf-lib file with object streams, each with one signature, one signed
 * twice) end in a report or a typed EsignError, never another exception or a hang. A file whose
 * signed bytes were changed in place is never reported valid. The same for signatures other tools made
 * (test/fixtures/foreign: NSS-style BER, no signed attributes, ECDSA, EdDSA, adbe.pkcs7.sha1).
 * `ESIGN_FUZZ_RUNS=N` runs N times as many cases.
 */
import { sign, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  concatBytes,
  fuzzParams,
  inPlaceMutationArb,
  mutatedInput,
  mutationArb,
  outcomeAsync,
} from '../../../../test/helpers/fuzz.js';
import { buildClassicPdf, pdfLibBytes } from '../../../../test/helpers/pdf-fixtures.js';
import { buildSignedAttributes } from '../../cms/signed-attributes.js';
import { buildSignedData } from '../../cms/signed-data.js';
import { issueTestCertificate } from '../../cms/test-pki.js';
import { bytesSource } from '../../pdf/byte-source.js';
import { readPdf } from '../../pdf/document.js';
import { prepareSignature, spliceContents } from '../../pdf/placeholder.js';
import { hashByteRange } from '../../pdf/signatures.js';
import { verifyPdf } from './verify.js';

/** The test PKI publishes no revocation status: unknown status passes (soft-fail) here, where the verdict is about something else. */
const SOFT_FAIL = { mode: 'soft-fail' } as const;

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
  const cms = buildSignedData({
    signedAttributesDer: attributes.der,
    signatureValue: new Uint8Array(sign('sha256', attributes.der, signer.privateKey)),
    certificates: [signer.der, root.der],
  });
  return concatBytes(pdf, spliceContents(pu, cms));
}

/** Per seed, the `/Contents` hex string of the last signature: the only bytes no signature covers. */
let unsignedGaps: Array<[number, number]> = [];

beforeAll(async () => {
  const once = await signed(buildClassicPdf());
  seeds = [once, await signed(await pdfLibBytes({ pages: 2, objectStreams: true })), await signed(once)];
  unsignedGaps = seeds.map((seed) => {
    const ranges = [
      ...Buffer.from(seed)
        .toString('latin1')
        .matchAll(/\/ByteRange \[0 (\d+) (\d+) \d+\]/g),
    ];
    const [, a, b] = ranges.at(-1)!;
    return [Number(a), Number(b)];
  });
});

describe('verifyPdf under mutation', () => {
  it('the seeds verify as valid (the property below starts from good signatures)', async () => {
    for (const seed of seeds)
      expect(
        (await verifyPdf(bytesSource(seed), 'seed.pdf', { trustAnchors: [root.der], now, revocation: SOFT_FAIL }))
          .status,
      ).toBe('valid');
  });

  it('regression: a file signed twice whose last `startxref` keyword is damaged is not valid (found by this fuzzer)', async () => {
    // "rtartxref": the reader falls back to the first revision's startxref and sees one signature.
    const twice = Buffer.from(seeds[2]!);
    const at = twice.lastIndexOf('startxref');
    twice[at] = twice[at]! ^ 1;
    const report = await verifyPdf(bytesSource(twice), 'damaged.pdf', {
      trustAnchors: [root.der],
      now,
      revocation: SOFT_FAIL,
    });
    expect(report.status).not.toBe('valid');
    expect(JSON.stringify(report)).toMatch(/belong to no revision esign could read/);
  });

  it.each([
    ['any mutation', mutationArb],
    ['in-place byte damage', inPlaceMutationArb],
  ] as const)('%s ends in a report or a typed EsignError', async (_name, mutations) => {
    const outcomes = { valid: 0, other: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(mutatedInput(seeds, mutations), async (input) => {
        const result = await outcomeAsync('verifyPdf', () =>
          verifyPdf(bytesSource(input.bytes), 'fuzz.pdf', { trustAnchors: [root.der], now, revocation: SOFT_FAIL }),
        );
        if (!result.ok) outcomes.refused++;
        else if (result.value.status === 'valid') outcomes.valid++;
        else outcomes.other++;
        // Bytes changed in place outside the last signature's /Contents are signed bytes: never valid.
        const seed = seeds[input.seedIndex]!;
        const [gapStart, gapEnd] = unsignedGaps[input.seedIndex]!;
        const signedByteChanged =
          seed.length === input.bytes.length &&
          seed.some((byte, at) => byte !== input.bytes[at] && (at < gapStart || at >= gapEnd));
        if (signedByteChanged && result.ok)
          expect(result.value.status, JSON.stringify(input.mutations)).not.toBe('valid');
      }),
      fuzzParams(300),
    );
    // Most damage must be noticed; a few mutations land outside anything signed or read.
    expect(outcomes.valid).toBeLessThan((outcomes.valid + outcomes.other + outcomes.refused) / 2);
  });
});

describe('verifyPdf under mutation, on signatures other tools made', () => {
  const fixture = (name: string): Uint8Array =>
    new Uint8Array(readFileSync(new URL(`../../../../test/fixtures/foreign/${name}`, import.meta.url)));
  const foreign = ['ber', 'noattr', 'p384', 'ed25519', 'adbe-pkcs7-sha1'].map((name) => fixture(`pdf/${name}.pdf`));
  const anchor = new X509Certificate(fixture('root.pem')).raw;

  it('in-place damage of signed bytes is never valid (nor weak); everything else ends in a report or a typed EsignError', async () => {
    const undamaged = await Promise.all(
      foreign.map((seed) =>
        verifyPdf(bytesSource(seed), 'seed.pdf', { trustAnchors: [anchor], now, revocation: SOFT_FAIL }),
      ),
    );
    expect(undamaged.map((report) => report.status)).toEqual(['valid', 'valid', 'valid', 'valid', 'weak']);
    await fc.assert(
      fc.asyncProperty(mutatedInput(foreign, inPlaceMutationArb), async (input) => {
        const result = await outcomeAsync('verifyPdf', () =>
          verifyPdf(bytesSource(input.bytes), 'fuzz.pdf', { trustAnchors: [anchor], now, revocation: SOFT_FAIL }),
        );
        const seed = foreign[input.seedIndex]!;
        const text = Buffer.from(seed).toString('latin1');
        const match = /\/ByteRange \[0 (\d+) (\d+) \d+\s*\]/.exec(text)!;
        const [gapStart, gapEnd] = [Number(match[1]), Number(match[2])];
        const signedByteChanged = seed.some((byte, at) => byte !== input.bytes[at] && (at < gapStart || at >= gapEnd));
        if (signedByteChanged && result.ok)
          expect(['valid', 'weak'], JSON.stringify(input.mutations)).not.toContain(result.value.status);
      }),
      fuzzParams(150),
    );
  });
});
