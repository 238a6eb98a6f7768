/**
 * Mutation fuzzing of `recognize` (what a file is from its first bytes) and of the layout rules for
 * a ZIP without a `mimetype`: damaged copies of a PDF header, a DER and a BER SignedData, ZIP local
 * headers (a stored mimetype, another first entry, an extra field) and XML end in one of the kinds,
 * within a bound, never an exception; a ZIP's magic kept is still a ZIP. Any list of entry names
 * ends in a type and its reason, or a one-line CONTAINER_INVALID (a plain ZIP).
 * `ESIGN_FUZZ_RUNS=N` runs N times as many cases.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuzzParams, mutatedInput, mutationArb, outcome } from '../../../../test/helpers/fuzz.js';
import { concatBytes, explicit, objectIdentifier, octetString, sequence, setOf, smallInteger } from '../../cms/der.js';
import { ASIC_E_MIMETYPE, ASIC_S_MIMETYPE, mimetypeLayout } from './asic-container-rules.js';
import { RECOGNIZE_BYTES, containerEvidence, containerTypeByLayout, recognize } from './recognize.js';

const text = (value: string) => new TextEncoder().encode(value);
const KINDS = ['pdf', 'cms', 'zip', 'xml', 'unknown'];

function localHeader(name: string, data: string, extra = 0): Uint8Array {
  const header = new Uint8Array(30);
  const view = new DataView(header.buffer);
  view.setUint32(0, 0x04034b50, true);
  view.setUint32(18, data.length, true);
  view.setUint32(22, data.length, true);
  view.setUint16(26, name.length, true);
  view.setUint16(28, extra, true);
  return concatBytes([header, text(name), new Uint8Array(extra), text(data)]);
}

const open = (tag: number) => new Uint8Array([tag, 0x80]);
const eoc = new Uint8Array([0, 0]);
const SIGNED_DATA = '1.2.840.113549.1.7.2';
const DATA = '1.2.840.113549.1.7.1';
const digests = setOf([sequence(objectIdentifier('2.16.840.1.101.3.4.2.1'))]);

const seeds = [
  text('%PDF-1.7\n%\u00e2\u00e3\u00cf\u00d3\n1 0 obj\n<<>>\nendobj\n'),
  sequence(
    objectIdentifier(SIGNED_DATA),
    explicit(
      0,
      sequence(
        smallInteger(1),
        digests,
        sequence(objectIdentifier(DATA), explicit(0, octetString(text('x')))),
        setOf([]),
      ),
    ),
  ),
  concatBytes([
    open(0x30),
    objectIdentifier(SIGNED_DATA),
    open(0xa0),
    open(0x30),
    smallInteger(1),
    digests,
    open(0x30),
    objectIdentifier(DATA),
    eoc,
    setOf([]),
    eoc,
    eoc,
    eoc,
  ]),
  localHeader('mimetype', ASIC_E_MIMETYPE),
  localHeader('mimetype', `${ASIC_S_MIMETYPE}\r\n`, 28),
  localHeader('doc.txt', 'a document'),
  text('\ufeff<?xml version="1.0"?>\n<Invoice><ds:Signature/></Invoice>'),
];

/** Entry names as containers hold them, and some that no container should. */
const nameArb = fc.oneof(
  fc.constantFrom(
    'mimetype',
    'doc.txt',
    'dir/b.pdf',
    'META-INF/',
    'META-INF/signature.p7s',
    'META-INF/signature001.p7s',
    'META-INF/signatures0.xml',
    'META-INF/timestamp.tst',
    'META-INF/evidencerecord.ers',
    'META-INF/evidencerecord001.xml',
    'META-INF/ASiCManifest.xml',
    'META-INF/manifest.xml',
    'META-INF/ASiCEvidenceRecordManifest.xml',
    'META-INF/sub/signature.p7s',
  ),
  fc.string({ maxLength: 40 }),
  fc.string({ maxLength: 20 }).map((name) => `META-INF/${name}`),
);

describe('recognize under mutation', () => {
  it('the seeds are what they are', () => {
    expect(seeds.map((seed) => recognize(seed).kind)).toEqual(['pdf', 'cms', 'cms', 'zip', 'zip', 'zip', 'xml']);
  });

  it('any damaged head ends in one of the kinds, within a bound; a ZIP magic kept is a ZIP', () => {
    fc.assert(
      fc.property(mutatedInput(seeds, mutationArb, 4), ({ bytes }) => {
        const head = bytes.subarray(0, RECOGNIZE_BYTES);
        const result = outcome('recognize', () => recognize(head));
        expect(result.ok).toBe(true);
        if (!result.ok) return;
        expect(KINDS).toContain(result.value.kind);
        const zipMagic = head[0] === 0x50 && head[1] === 0x4b && head[2] === 0x03 && head[3] === 0x04;
        expect(result.value.kind === 'zip').toBe(zipMagic);
      }),
      fuzzParams(1000),
    );
  });

  it('any list of entry names: a type from the layout, or a one-line CONTAINER_INVALID when nothing under META-INF/ signs it', () => {
    fc.assert(
      fc.property(fc.array(nameArb, { maxLength: 12 }), fc.boolean(), (names, asicE) => {
        const layout = containerTypeByLayout(names);
        expect(['asic-e', 'asic-s']).toContain(layout.type);
        const evidence = containerEvidence(names);
        for (const name of evidence) expect(name.startsWith('META-INF/')).toBe(true);
        const result = outcome('mimetype layout', () =>
          mimetypeLayout(undefined, asicE ? ASIC_E_MIMETYPE : ASIC_S_MIMETYPE, names),
        );
        if (result.ok) {
          expect(evidence.length).toBeGreaterThan(0);
          expect(result.value).toHaveLength(1);
          expect(result.value[0]).toMatch(/^the container has no "mimetype" entry/);
        } else {
          expect(evidence).toEqual([]);
          expect(result.error.code).toBe('CONTAINER_INVALID');
          expect(result.error.message).not.toMatch(/\n/);
        }
      }),
      fuzzParams(1000),
    );
  });
});
