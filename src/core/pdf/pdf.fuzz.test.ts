/**
 * Mutation fuzzing of the streaming PDF reader and the incremental writer: damaged copies of real
 * inputs (the test builders, pdf-lib output, samples/contract.pdf) either get a complete, consistent
 * update (signature placeholder, or the B-LT DSS) or fail with a typed EsignError — never another
 * exception, a hang, or an update whose ByteRange does not describe it. `ESIGN_FUZZ_RUNS=N` runs N times as many cases.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  concatBytes,
  fuzzParams,
  inPlaceMutationArb,
  mutatedInput,
  mutationArb,
  outcome,
  outcomeAsync,
} from '../../../test/helpers/fuzz.js';
import {
  appendRevision,
  buildClassicPdf,
  buildHybridPdf,
  buildXrefStreamPdf,
  emptySignatureFieldBytes,
  minimalObjects,
  pdfLibBytes,
} from '../../../test/helpers/pdf-fixtures.js';
import { bytesSource } from './byte-source.js';
import { readPdf } from './document.js';
import { buildDssUpdate } from './dss.js';
import { prepareSignature, spliceContents } from './placeholder.js';
import { testAppearanceAssets } from '../../../test/helpers/appearance-assets.js';
import type { PreparedUpdate, SignatureOptions } from './placeholder.js';

const encryptedFixture = (file: string): Uint8Array =>
  new Uint8Array(readFileSync(new URL(`../../../test/fixtures/encrypted/${file}`, import.meta.url)));
const signingTime = new Date(Date.UTC(2025, 0, 2, 3, 4, 5));
const latin1 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('latin1');
let seeds: Uint8Array[] = [];

beforeAll(async () => {
  const classic = buildClassicPdf(minimalObjects('/Info 4 0 R', '/Contents 5 0 R'));
  seeds = [
    buildClassicPdf(),
    buildXrefStreamPdf(),
    buildHybridPdf(),
    appendRevision(classic, { 3: '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 300] >>' }, 4),
    await pdfLibBytes({ pages: 2 }),
    await pdfLibBytes({ pages: 2, objectStreams: true }),
    await emptySignatureFieldBytes('Approval'),
    new Uint8Array(readFileSync(new URL('../../../samples/contract.pdf', import.meta.url))),
    // Encrypted: mutations reach the security handler (the /Encrypt dictionary, /ID, encrypted strings and streams).
    ...['rc4-40-r2.pdf', 'aes-128-r4-object-streams.pdf', 'aes-256-r6.pdf'].map(encryptedFixture),
  ];
});

const optionsArb: fc.Arbitrary<Partial<SignatureOptions>> = fc.record(
  {
    kind: fc.constantFrom<'signature' | 'docTimeStamp'>('signature', 'docTimeStamp'),
    fieldName: fc.constantFrom('Approval', 'Missing', undefined, undefined, undefined, undefined),
    // An embedded font subset makes each drawn case a few times dearer: about one case in three draws, so the time-bound runs still reach their count.
    visible: fc.option(
      fc.record({
        page: fc.constantFrom(1, -1, 2, 7),
        rect: fc.constant<[number, number, number, number]>([10, 10, 210, 60]),
        lines: fc.constant(['Signed by Zoë', 'TEST']),
      }),
      { freq: 3, nil: undefined },
    ),
    page: fc.constantFrom(1, -1, 2, 9),
    reason: fc.string({ maxLength: 12 }),
  },
  { requiredKeys: ['fieldName'] },
);

/** What a finished update must satisfy, whatever the input looked like. */
function checkUpdate(original: Uint8Array, pu: PreparedUpdate, cms: Uint8Array): Uint8Array {
  const spliced = spliceContents(pu, cms);
  const out = concatBytes(original, spliced);
  const [zero, a, b, c] = pu.byteRange;
  expect(pu.originalSize).toBe(original.length);
  expect(zero).toBe(0);
  expect(String.fromCharCode(out[a] ?? 0, out[b - 1] ?? 0)).toBe('<>');
  expect(b - a).toBe(pu.contentsHexLength + 2);
  expect(b + c).toBe(out.length);
  expect(pu.contentsHexOffset).toBe(a + 1);
  expect(latin1(out)).toContain(`/ByteRange [0 ${a} ${b} ${c}]`);
  expect(latin1(out.subarray(a + 1, a + 1 + cms.length * 2))).toBe(Buffer.from(cms).toString('hex'));
  expect(latin1(spliced).trimEnd().endsWith('%%EOF')).toBe(true);
  return out;
}

describe('PDF reader and incremental writer under mutation', () => {
  it('the unmutated seeds sign', async () => {
    for (const pdf of seeds) {
      const pu = await prepareSignature(await readPdf(bytesSource(pdf)), { signingTime, contentsSize: 64 });
      checkUpdate(pdf, pu, Uint8Array.of(0x30, 0x03, 0x02, 0x01, 0x01));
    }
  });

  it.each([
    ['any mutation (offsets shift: mostly broken xref)', mutationArb, 3, 2000],
    ['in-place byte damage (offsets stay valid: reaches the object parser)', inPlaceMutationArb, 4, 2000],
  ] as const)('%s ends in a complete update or a typed EsignError', async (label, mutations, max, runs) => {
    let signed = 0;
    const refused = new Map<string, number>();
    const refuse = (code: string): void => void refused.set(code, (refused.get(code) ?? 0) + 1);
    await fc.assert(
      fc.asyncProperty(
        fc.constant(null).chain(() => mutatedInput(seeds, mutations, max)),
        optionsArb,
        fc.uint8Array({ minLength: 1, maxLength: 80 }),
        async (input, options, cms) => {
          const read = await outcomeAsync('readPdf', () => readPdf(bytesSource(input.bytes)));
          if (!read.ok) return refuse(read.error.code);
          // The B-LT writer on the same damaged document: a complete update (read back) or a typed error.
          const dss = await outcomeAsync('buildDssUpdate', () =>
            buildDssUpdate(read.value, { certs: [cms], ocsps: [cms.subarray(1)], crls: [] }),
          );
          if (dss.ok) {
            const extended = await outcomeAsync('readPdf(dss)', () =>
              readPdf(bytesSource(concatBytes(input.bytes, dss.value))),
            );
            if (!extended.ok)
              throw new Error(
                `the DSS update of a readable input does not read back: ${extended.error.code} ${extended.error.message}`,
              );
          }
          const prepared = await outcomeAsync('prepareSignature', () =>
            prepareSignature(read.value, { ...options, assets: testAppearanceAssets(), signingTime, contentsSize: 64 }),
          );
          if (!prepared.ok) return refuse(prepared.error.code);
          const pu = prepared.value;
          if (cms.length > 64) {
            const spliced = outcome('spliceContents', () => spliceContents(pu, cms));
            expect(spliced.ok ? undefined : spliced.error.code).toBe('PDF_PLACEHOLDER_TOO_SMALL');
            return;
          }
          const out = checkUpdate(input.bytes, pu, cms);
          // What esign wrote must read back: the new revision is found through the new startxref.
          const reread = await outcomeAsync('readPdf(signed)', () => readPdf(bytesSource(out)));
          if (!reread.ok)
            throw new Error(
              `the signed output of a readable input does not read back: ${reread.error.code} ${reread.error.message}`,
            );
          signed++;
        },
      ),
      fuzzParams(runs),
    );
    expect(signed).toBeGreaterThan(0);
    console.info(`pdf fuzz, ${label}: ${signed} signed; refused: ${JSON.stringify(Object.fromEntries(refused))}`);
  });

  it('any password on a file that needs one opens it or ends in a typed error', async () => {
    const locked = [encryptedFixture('rc4-128-r3-user.pdf'), encryptedFixture('utf8-r6.pdf')];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...locked),
        fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('user', 'owner', 'üser', 'ówner')),
        async (pdf, password) => {
          const read = await outcomeAsync('readPdf', () => readPdf(bytesSource(pdf), { password }));
          if (!read.ok) expect(read.error.code).toMatch(/^PDF_PASSWORD_(REQUIRED|WRONG)$/);
        },
      ),
      fuzzParams(200),
    );
  });
});
