/**
 * Mutation fuzzing of the evidence-record readers (RFC 4998, RFC 6283 XML, and an
 * ASiCEvidenceRecordManifest beside them): damaged copies of records built here (a hash tree over two files, no tree over one,
 * a timestamp renewal) and of their manifest end in a report or a typed EsignError within a bound,
 * never another exception or a hang. A report's problems are one line each, its status one of the
 * four; a record whose archive timestamp's bytes were changed is never valid.
 * `ESIGN_FUZZ_RUNS=N` runs N times as many cases.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OID } from '../../cms/oids.js';
import { timeStampElement, xmlEvidenceRecord } from '../../../../test/helpers/xml-evidence-record.js';
import { trustedTestTsa } from '../../../../test/helpers/test-tsa.js';
import { fuzzParams, mutatedInput, mutationArb, outcomeAsync } from '../../../../test/helpers/fuzz.js';
import { concatBytes, objectIdentifier, octetString, sequence, smallInteger, tlv } from '../../cms/der.js';
import type { EvidenceRecordReport } from '../../verify/types.js';
import { buildManifest } from '../asic-e/manifest.js';
import { verifyEvidenceRecord, verifyEvidenceRecordWithManifest, type DataObject } from './evidence-record.js';

const { options, token } = trustedTestTsa('ER Fuzz');

const sha256 = (bytes: Uint8Array | string) => new Uint8Array(createHash('sha256').update(bytes).digest());
const FILES: Record<string, string> = { 'a.txt': 'first file\n', 'b.txt': 'second file\n' };
const data: DataObject[] = Object.entries(FILES).map(([name, text]) => ({
  name,
  read: async (consume) => consume(new TextEncoder().encode(text)),
}));

function archiveTimeStamp(groups: Uint8Array[][] | undefined, timeStamp: Uint8Array): Uint8Array {
  const tree = groups ? [tlv(0xa2, ...groups.map((group) => sequence(...group.map(octetString))))] : [];
  return sequence(...tree, timeStamp);
}

function record(chains: Uint8Array[][]): Uint8Array {
  return sequence(
    smallInteger(1),
    sequence(sequence(objectIdentifier(OID.sha256))),
    sequence(...chains.map((chain) => sequence(...chain))),
  );
}

const hashes = Object.values(FILES).map((text) => sha256(text));
const treeRoot = sha256(concatBytes([...hashes].sort((a, b) => Buffer.compare(a, b))));
const firstToken = token(treeRoot);
const first = archiveTimeStamp([hashes], firstToken);
/** The renewal covers the first archive timestamp's timeStamp (RFC 4998 §5.2). */
const renewed = [first, archiveTimeStamp(undefined, token(sha256(firstToken)))];
const seeds = [record([[first]]), record([[archiveTimeStamp(undefined, token(hashes[1]!))]]), record([renewed])];
const manifest = buildManifest({
  signature: 'META-INF/evidencerecord.ers',
  signatureMimeType: 'application/vnd.etsi.ers',
  references: Object.entries(FILES).map(([name, text]) => ({
    name,
    mimeType: 'text/plain',
    digest: 'sha256' as const,
    digestValue: sha256(text),
  })),
});

/** The same records in XML (RFC 6283): a tree over the two files, and a timestamp renewal over its canonical TimeStamp. */
const XML_NAME = 'META-INF/evidencerecord.xml';
const xmlFirst = { groups: [hashes], token: firstToken };
const xmlSeeds = [
  xmlEvidenceRecord([{ stamps: [xmlFirst] }]),
  xmlEvidenceRecord([{ stamps: [xmlFirst, { token: token(sha256(timeStampElement(firstToken, true))) }] }]),
].map((text) => new TextEncoder().encode(text));

const STATUSES = ['valid', 'untrusted', 'invalid', 'unverified'];
function wellFormed(report: EvidenceRecordReport): void {
  expect(STATUSES).toContain(report.status);
  for (const problem of report.problems) expect(problem).not.toMatch(/\n/);
  expect(report.reason ?? '').not.toMatch(/\n/);
  for (const name of report.covers) expect(Object.keys(FILES)).toContain(name);
}

describe('evidence-record reader under mutation', () => {
  it('the seeds verify (the property below starts from good records)', async () => {
    const [tree, noTree, renewal] = await Promise.all(
      seeds.map((seed) => verifyEvidenceRecord('META-INF/evidencerecord.ers', seed, data, options)),
    );
    expect(tree).toMatchObject({ status: 'valid', covers: ['a.txt', 'b.txt'] });
    expect(noTree).toMatchObject({ status: 'valid', covers: ['b.txt'] });
    expect(renewal).toMatchObject({ status: 'valid', archiveTimestamps: 2, checked: 2 });
    const withManifest = await verifyEvidenceRecordWithManifest(
      'META-INF/evidencerecord.ers',
      seeds[0]!,
      data,
      [{ name: 'META-INF/ASiCEvidenceRecordManifest.xml', bytes: manifest }],
      options,
    );
    expect(withManifest).toMatchObject({ status: 'valid', covers: ['a.txt', 'b.txt'] });
    const [xmlTree, xmlRenewal] = await Promise.all(
      xmlSeeds.map((seed) => verifyEvidenceRecord(XML_NAME, seed, data, options)),
    );
    expect(xmlTree).toMatchObject({ status: 'valid', covers: ['a.txt', 'b.txt'] });
    expect(xmlRenewal).toMatchObject({ status: 'valid', archiveTimestamps: 2, checked: 2 });
  });

  it('a damaged XML record ends in a report of one-line problems or a typed EsignError, within a bound', async () => {
    await fc.assert(
      fc.asyncProperty(mutatedInput(xmlSeeds, mutationArb, 4), async ({ bytes }) => {
        const result = await outcomeAsync('XML evidence-record reader', () =>
          verifyEvidenceRecord(XML_NAME, bytes, data, options),
        );
        if (result.ok) wellFormed(result.value);
      }),
      fuzzParams(200),
    );
  });

  it("one character of an XML record's DigestValue or TimeStampToken changed: never valid", async () => {
    const seed = Buffer.from(xmlSeeds[1]!).toString('latin1');
    // A DigestValue anywhere; a token in its last 200 characters, its signature (the certificates it carries are not signed over).
    const spans = [...seed.matchAll(/<(DigestValue|TimeStampToken)[^>]*>([^<]+)</g)].map((m) => {
      const end = m.index + m[0].indexOf('>') + 1 + m[2]!.length;
      const length = m[1] === 'DigestValue' ? m[2]!.length : 200;
      return { start: end - length, length };
    });
    const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: spans.length - 1 }),
        fc.nat({ max: 1_000_000 }),
        fc.integer({ min: 1, max: 63 }),
        async (span, offset, shift) => {
          const { start, length } = spans[span]!;
          // Not the last four characters (padding): a changed character there may decode to the same bytes.
          const at = start + (offset % Math.max(1, length - 4));
          const old = BASE64.indexOf(seed[at]!);
          const bytes = Buffer.from(seed, 'latin1');
          bytes[at] = BASE64.charCodeAt((old + shift) % 64);
          const result = await outcomeAsync('XML evidence-record reader', () =>
            verifyEvidenceRecord(XML_NAME, new Uint8Array(bytes), data, options),
          );
          if (result.ok) expect(result.value.status).not.toBe('valid');
        },
      ),
      fuzzParams(100),
    );
  });

  it('a damaged record ends in a report of one-line problems or a typed EsignError, within a bound', async () => {
    await fc.assert(
      fc.asyncProperty(mutatedInput(seeds, mutationArb, 4), async ({ bytes }) => {
        const result = await outcomeAsync('evidence-record reader', () =>
          verifyEvidenceRecord('META-INF/evidencerecord.ers', bytes, data, options),
        );
        if (result.ok) wellFormed(result.value);
      }),
      fuzzParams(200),
    );
  });

  it('one byte of an archive timestamp token changed: never valid', async () => {
    const seed = seeds[0]!;
    const at = Buffer.from(seed).indexOf(Buffer.from(first.subarray(first.length - 200)));
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: 199 }), fc.integer({ min: 1, max: 255 }), async (offset, xor) => {
        const bytes = new Uint8Array(seed);
        bytes[at + offset] = bytes[at + offset]! ^ xor;
        const result = await outcomeAsync('evidence-record reader', () =>
          verifyEvidenceRecord('META-INF/evidencerecord.ers', bytes, data, options),
        );
        if (result.ok) expect(result.value.status).not.toBe('valid');
      }),
      fuzzParams(100),
    );
  });

  it('a damaged ASiCEvidenceRecordManifest beside a good record: a report of one-line problems or a typed EsignError', async () => {
    await fc.assert(
      fc.asyncProperty(mutatedInput([manifest], mutationArb, 4), async ({ bytes }) => {
        const result = await outcomeAsync('evidence-record manifest reader', () =>
          verifyEvidenceRecordWithManifest(
            'META-INF/evidencerecord.ers',
            seeds[0]!,
            data,
            [{ name: 'META-INF/ASiCEvidenceRecordManifest.xml', bytes }],
            options,
          ),
        );
        if (result.ok) wellFormed(result.value);
      }),
      fuzzParams(200),
    );
  });
});
