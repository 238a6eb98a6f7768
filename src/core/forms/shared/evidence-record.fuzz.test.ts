/**
 * Mutation fuzzing of the evidence-record reader (RFC 4998, and an ASiCEvidenceRecordManifest
 * beside it): damaged copies of records built here (a hash tree over two files, no tree over one,
 * a timestamp renewal) and of their manifest end in a report or a typed EsignError within a bound,
 * never another exception or a hang. A report's problems are one line each, its status one of the
 * four; a record whose archive timestamp's bytes were changed is never valid.
 * `ESIGN_FUZZ_RUNS=N` runs N times as many cases.
 */
import { createHash, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuzzParams, mutatedInput, mutationArb, outcomeAsync } from '../../../../test/helpers/fuzz.js';
import { concatBytes, objectIdentifier, octetString, sequence, smallInteger, tlv } from '../../cms/der.js';
import { OID } from '../../cms/oids.js';
import { issueTestCertificate } from '../../cms/test-pki.js';
import { buildTimeStampToken } from '../../tsp/token.js';
import { buildTstInfo } from '../../tsp/tst-info.js';
import type { EvidenceRecordReport } from '../../verify/types.js';
import { buildManifest } from '../asic-e/manifest.js';
import type { ContainerVerifyOptions } from './timestamp-report.js';
import { verifyEvidenceRecord, verifyEvidenceRecordWithManifest, type DataObject } from './evidence-record.js';

const root = issueTestCertificate({ commonName: 'ER Fuzz Root', ca: true });
const tsa = issueTestCertificate({
  commonName: 'ER Fuzz TSA',
  issuer: root,
  extendedKeyUsage: { purposes: [OID.kpTimeStamping], critical: true },
});
const now = new Date();
const options: ContainerVerifyOptions = { trustAnchors: [root.der], now, revocation: { mode: 'soft-fail' } };

const sha256 = (bytes: Uint8Array | string) => new Uint8Array(createHash('sha256').update(bytes).digest());
const FILES: Record<string, string> = { 'a.txt': 'first file\n', 'b.txt': 'second file\n' };
const data: DataObject[] = Object.entries(FILES).map(([name, text]) => ({
  name,
  read: async (consume) => consume(new TextEncoder().encode(text)),
}));

function token(imprint: Uint8Array): Uint8Array {
  const tstInfo = buildTstInfo({
    policy: '0.4.0.2023.1.1',
    hashAlgorithm: OID.sha256,
    hashedMessage: imprint,
    serialNumber: randomBytes(8),
    genTime: now,
  });
  return buildTimeStampToken({
    tstInfo,
    signerCertificate: tsa.der,
    privateKey: tsa.privateKey,
    certificates: [tsa.der, root.der],
  });
}

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
