import { createHash, sign } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuzzParams, mutatedInput, mutationArb, outcomeAsync } from '../../../test/helpers/fuzz.js';
import { bytesSource } from '../pdf/byte-source.js';
import { isEsignError } from '../errors.js';
import { concatBytes, decode, tlv, type Block } from './der.js';
import { envelopedContent, readEnveloping } from './enveloping.js';
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

  describe('BER, as much signing software writes it (indefinite lengths, the content in segments)', () => {
    const content = new Uint8Array(10_000).map((_, index) => (index * 7) % 251);
    const { parts, contentDigest } = partsFor(content);
    const der = encodeSignedData({ ...parts, eContent: content });

    async function read(bytes: Uint8Array) {
      const found = await readEnveloping(bytesSource(bytes), { ber: true });
      const chunks: Uint8Array[] = [];
      for await (const chunk of envelopedContent(bytesSource(bytes), found, 333)) chunks.push(Uint8Array.from(chunk));
      return { found, content: concatBytes(chunks) };
    }

    it.each([
      ['indefinite lengths, 1000-byte segments', { segment: 1000 }],
      ['indefinite lengths, one segment', { segment: 20_000 }],
      ['segments nested in a constructed segment', { segment: 512, nest: true }],
      ['definite lengths around definite constructed segments', { segment: 4096, definite: true }],
      ['an empty segment among them', { segment: 3000, empty: true }],
    ] as const)('%s: the content comes back byte for byte, the detached signature verifies', async (_name, form) => {
      const ber = toBer(decode(der, 'p7m'), form);
      expect(Buffer.from(ber).equals(Buffer.from(der))).toBe(false);
      const { found, content: read_ } = await read(ber);
      expect(found.length).toBe(content.length);
      expect(Buffer.from(read_).equals(Buffer.from(content))).toBe(true);
      expect(verifySignerInfo(parseSignedData(found.detached), { contentDigest }).valid).toBe(true);
      expect(found.encapsulated.end).toBeLessThan(ber.length);
    });

    it('signing keeps to DER: without { ber: true } a BER .p7m is refused in one line naming why', async () => {
      const error = await readEnveloping(bytesSource(toBer(decode(der, 'p7m'), { segment: 1000 }))).catch((e) => e);
      expect(isEsignError(error) && error.code).toBe('CMS_BAD_STRUCTURE');
      expect((error as Error).message).toMatch(/indefinite length \(BER\)/);
    });

    it('refuses a truncated BER .p7m, a missing end-of-contents, a segment that is not an OCTET STRING, deep nesting and trailing bytes', async () => {
      const ber = toBer(decode(der, 'p7m'), { segment: 1000 });
      const notOctets = Uint8Array.from(ber);
      const firstSegment = Buffer.from(ber).indexOf(Buffer.from([0x24, 0x80, 0x04]));
      notOctets[firstSegment + 2] = 0x0c;
      let deep = tlv(0x04, content);
      for (let depth = 0; depth < 10; depth++)
        deep = concatBytes([Uint8Array.of(0x24, 0x80), deep, Uint8Array.of(0, 0)]);
      const refusals = [
        ber.subarray(0, ber.length - 1),
        ber.subarray(0, firstSegment + 500),
        notOctets,
        concatBytes([ber, Uint8Array.of(0)]),
        toBer(decode(der, 'p7m'), { segment: 0, octets: deep }),
        Uint8Array.of(0x30, 0x80, 0, 0),
      ];
      for (const bytes of refusals) {
        const error = await read(bytes).catch((e: unknown) => e);
        expect(isEsignError(error) && error.code, String(error)).toBe('CMS_BAD_STRUCTURE');
      }
    });

    it('reads a damaged BER .p7m into content inside the file or a typed EsignError (fuzz)', async () => {
      const seed = toBer(
        decode(
          encodeSignedData({ ...partsFor(content.subarray(0, 600)).parts, eContent: content.subarray(0, 600) }),
          'p7m',
        ),
        { segment: 100, nest: true },
      );
      await fc.assert(
        fc.asyncProperty(mutatedInput([seed], mutationArb, 4), async ({ bytes }) => {
          const result = await outcomeAsync('readEnveloping', async () => {
            const found = await read(bytes);
            return { ...found, signers: oneSignerEach(found.found.detached) };
          });
          if (result.ok) expect(result.value.content.length).toBeLessThanOrEqual(bytes.length);
        }),
        fuzzParams(300),
      );
    });
  });
});

interface BerForm {
  segment: number;
  nest?: boolean;
  definite?: boolean;
  empty?: boolean;
  /** Stands in for the content's OCTET STRING, as it is. */
  octets?: Uint8Array;
}

/**
 * The same ContentInfo as another tool writes it in BER: ContentInfo, [0], SignedData,
 * encapContentInfo, eContent, and the SignedData's other SETs with indefinite lengths (unless
 * `definite`; certificates and SignerInfos themselves as they were), and the content as a
 * constructed OCTET STRING of `segment`-byte segments.
 */
function toBer(block: Block, form: BerForm, depth = 0): Uint8Array {
  if (depth === 5) return form.octets ?? segmented(block.content, form);
  if (!block.constructed) return block.encoded;
  // Down the path to the content: ContentInfo, [0], SignedData, encapContentInfo (a SEQUENCE among SETs), eContent.
  const down = depth < 3 || depth === 4 || (depth === 3 && block.tagClass === 1 && block.tagNumber === 16);
  const inner = block.items.map((item) => (down ? toBer(item, form, depth + 1) : item.encoded));
  return wrap(block.encoded[0]!, inner, form);
}

function wrap(identifier: number, items: Uint8Array[], form: BerForm): Uint8Array {
  return form.definite
    ? tlv(identifier, ...items)
    : concatBytes([Uint8Array.of(identifier, 0x80), ...items, Uint8Array.of(0, 0)]);
}

function segmented(content: Uint8Array, form: BerForm): Uint8Array {
  const segments: Uint8Array[] = [];
  for (let at = 0; at < content.length; at += form.segment)
    segments.push(tlv(0x04, content.subarray(at, at + form.segment)));
  if (form.empty) segments.splice(1, 0, tlv(0x04, new Uint8Array(0)));
  if (!form.nest) return wrap(0x24, segments, form);
  const half = Math.ceil(segments.length / 2);
  return wrap(0x24, [wrap(0x24, segments.slice(0, half), form), ...segments.slice(half)], form);
}
