/**
 * Mutation fuzzing of the trusted-list reader: damaged signed lists through readTrustedList (XML
 * checks, signature, then the parse), and damaged canonical content straight into snapshotOf, the
 * parser alone. Each case ends in a snapshot or a typed EsignError, never another exception or a
 * hang. `ESIGN_FUZZ_RUNS=N` runs N times as many cases.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuzzParams, mutatedInput, outcome } from '../../../test/helpers/fuzz.js';
import { trustedListXml } from './build.js';
import { readTrustedList, snapshotOf } from './parse.js';
import { nationalListDescription, signedList, testSigner } from './test-lists.js';

const operator = testSigner('Fuzz operator');
const ca = testSigner('Fuzz CA');
const encode = (text: string) => new TextEncoder().encode(text);
const lotl = {
  territory: 'EU',
  operator: 'Fuzz Commission',
  sequenceNumber: 7,
  issueDate: new Date('2026-01-01T00:00:00Z'),
  nextUpdate: new Date('2026-07-01T00:00:00Z'),
  pivots: ['https://lotl.example/pivot-1.xml'],
  pointers: [
    {
      territory: 'BE',
      location: 'https://tl.example/be.xml',
      mimeType: 'application/vnd.etsi.tsl+xml',
      signingCertificates: [operator.certificate],
    },
  ],
};
const signedSeeds = [signedList(nationalListDescription(ca.certificate), operator), signedList(lotl, operator)].map(
  encode,
);
const contentSeeds = [trustedListXml(nationalListDescription(ca.certificate)), trustedListXml(lotl)].map(encode);

describe('trusted lists under mutation', () => {
  it('readTrustedList: a snapshot only when the signature still holds, else a typed EsignError', () => {
    fc.assert(
      fc.property(mutatedInput(signedSeeds), ({ bytes }) => {
        const result = outcome('readTrustedList', () => readTrustedList(bytes, [operator.certificate], 'fuzz'));
        if (!result.ok) {
          expect(result.error.code).toMatch(/^TRUST_LIST_/);
          expect(result.error.message).not.toContain('\n');
          return;
        }
        expect(result.value.signerCertificate).toBe(operator.certificate);
      }),
      fuzzParams(150),
    );
  });

  it('snapshotOf: the parser alone on damaged content ends in a snapshot or a typed EsignError', () => {
    fc.assert(
      fc.property(mutatedInput(contentSeeds), ({ bytes }) => {
        const text = new TextDecoder().decode(bytes);
        const result = outcome('snapshotOf', () =>
          snapshotOf({ signedXml: text, signerCertificate: '', sha256: '' }, 'fuzz', 'fuzz'),
        );
        if (!result.ok) {
          expect(result.error.code).toMatch(/^TRUST_LIST_/);
          return;
        }
        expect(typeof result.value.sequenceNumber).toBe('number');
        expect(Number.isNaN(Date.parse(result.value.issueDate))).toBe(false);
      }),
      fuzzParams(400),
    );
  });
});
