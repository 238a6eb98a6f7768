import { createHash, sign } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuzzParams, mutatedInput, mutationArb, outcomeAsync } from '../../../test/helpers/fuzz.js';
import { bytesSource } from '../pdf/byte-source.js';
import { isEsignError } from '../errors.js';
import { readEnveloping } from './enveloping.js';
import { parseSignedData } from './parse.js';
import { buildSignedAttributes } from './signed-attributes.js';
import {
  addedSignerAround,
  encodeSignedData,
  oneSignerEach,
  signedDataAround,
  signedDataParts,
} from './signed-data.js';
import { issueTestCertificate } from './test-pki.js';
import { verifySignerInfo } from './verify-signer.js';

const root = issueTestCertificate({ commonName: 'Test Root', ca: true });
const signer = issueTestCertificate({ commonName: 'Test Signer', issuer: root });

function partsFor(content: Uint8Array) {
  const contentDigest = new Uint8Array(createHash('sha256').update(content).digest());
  const attributes = buildSignedAttributes({ contentDigest, signerCertificate: signer.der });
  return {
    contentDigest,
    parts: signedDataParts({
      signedAttributesDer: attributes.der,
      signatureValue: new Uint8Array(sign('sha256', attributes.der, signer.privateKey)),
      certificates: [signer.der, root.der],
    }),
  };
}

describe('signedDataAround and readEnveloping', () => {
  // Around the DER length thresholds: short form, one, two and three length octets.
  it.each([0, 1, 100, 127, 128, 255, 256, 65_535, 65_536, 70_000])(
    'puts %i content bytes between head and tail as encodeSignedData would, and finds them again',
    async (size) => {
      const content = new Uint8Array(size).map((_, index) => index % 253);
      const { parts, contentDigest } = partsFor(content);
      const { head, tail } = signedDataAround(parts, size);
      const whole = Buffer.concat([head, content, tail]);
      expect(whole.equals(encodeSignedData({ ...parts, eContent: content }))).toBe(true);
      const parsed = parseSignedData(whole);
      expect(Buffer.from(parsed.encapContent!).equals(Buffer.from(content))).toBe(true);
      expect(verifySignerInfo(parsed, { contentDigest }).valid).toBe(true);

      const found = await readEnveloping(bytesSource(whole));
      expect([found.offset, found.length]).toEqual([head.length, size]);
      const detached = parseSignedData(found.detached);
      expect(detached.encapContent).toBeUndefined();
      expect(verifySignerInfo(detached, { contentDigest }).valid).toBe(true);
    },
  );

  it('without a content length, is the detached signature buildSignedData makes', () => {
    const { parts } = partsFor(new Uint8Array(3));
    const { head, tail } = signedDataAround(parts);
    expect(Buffer.concat([head, tail]).equals(encodeSignedData(parts))).toBe(true);
  });

  it('refuses a detached signature, a truncated file and trailing bytes, each as CMS_BAD_STRUCTURE', async () => {
    const { parts } = partsFor(new Uint8Array(10));
    const detached = encodeSignedData(parts);
    const enveloping = encodeSignedData({ ...parts, eContent: new Uint8Array(10) });
    const refusals = await Promise.all(
      [
        detached,
        enveloping.subarray(0, enveloping.length - 1),
        Buffer.concat([enveloping, Buffer.of(0)]),
        new Uint8Array(0),
        Uint8Array.of(0x30, 0x80, 0, 0),
      ].map((bytes) =>
        readEnveloping(bytesSource(bytes)).then(
          () => undefined,
          (error: unknown) => error,
        ),
      ),
    );
    for (const error of refusals) expect(isEsignError(error) && error.code).toBe('CMS_BAD_STRUCTURE');
    expect((refusals[0] as Error).message).toMatch(/detached signature/);
  });

  it('adds a parallel SignerInfo, keeping the first byte for byte, and splits them again for checking', async () => {
    const content = new TextEncoder().encode('co-signed content');
    const first = partsFor(content);
    const second = partsFor(content);
    const once = encodeSignedData({ ...first.parts, eContent: content });
    const { detached } = await readEnveloping(bytesSource(once));
    const { head, tail } = addedSignerAround(detached, second.parts, content.length);
    const twice = Buffer.concat([head, content, tail]);
    const found = await readEnveloping(bytesSource(twice));
    const signers = oneSignerEach(found.detached);
    expect(signers).toHaveLength(2);
    for (const signer of signers)
      expect(verifySignerInfo(parseSignedData(signer), { contentDigest: first.contentDigest }).valid).toBe(true);
    const firstSignerInfo = oneSignerEach(detached)[0]!;
    const signerInfoOf = (der: Uint8Array) => Buffer.from(der).subarray(der.length - 200);
    expect(twice.includes(signerInfoOf(firstSignerInfo))).toBe(true);
  });

  it('reads a damaged .p7m into a content range inside the file or a typed EsignError (fuzz)', async () => {
    const content = new TextEncoder().encode('<Fattura>fuzz</Fattura>'.repeat(20));
    const { parts } = partsFor(content);
    const seed = encodeSignedData({ ...parts, eContent: content });
    await fc.assert(
      fc.asyncProperty(mutatedInput([seed], mutationArb, 4), async ({ bytes }) => {
        const result = await outcomeAsync('readEnveloping', async () => {
          const found = await readEnveloping(bytesSource(bytes));
          return { found, signers: oneSignerEach(found.detached) };
        });
        if (!result.ok) return;
        const { offset, length } = result.value.found;
        expect(offset + length).toBeLessThanOrEqual(bytes.length);
      }),
      fuzzParams(300),
    );
  });
});
