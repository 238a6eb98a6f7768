/**
 * XML evidence records (RFC 6283) read by `verifyEvidenceRecord`: records written here by our own
 * writer (test/helpers/xml-evidence-record.ts) over tokens of an in-process test TSA. The expected
 * hashes are computed here by hand: an XML data object's canonical form is written out literally.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { trustedTestTsa } from '../../../../test/helpers/test-tsa.js';
import {
  C14N_URI,
  timeStampElement,
  xmlEvidenceRecord,
  type XmlChainSpec,
} from '../../../../test/helpers/xml-evidence-record.js';
import { buildManifest } from '../asic-e/manifest.js';
import { verifyEvidenceRecord, verifyEvidenceRecordWithManifest, type DataObject } from './evidence-record.js';

const { options, token } = trustedTestTsa('XML ER');
const NAME = 'META-INF/evidencerecord.xml';

const sha256 = (bytes: Uint8Array | string) => new Uint8Array(createHash('sha256').update(bytes).digest());
const node = (values: Uint8Array[]) => sha256(Buffer.concat([...values].sort(Buffer.compare)));
const enc = (text: string) => new TextEncoder().encode(text);

/** A text file, and an XML file whose canonical form (Canonical XML 1.0) differs from its bytes. */
const FILES: Record<string, string> = {
  'a.txt': 'first file\n',
  'b.xml': '<?xml version="1.0"?>\n<doc  b="2" a="1"/>\n',
};
const CANONICAL_B = '<doc a="1" b="2"></doc>';
const filesOf = (files: Record<string, string>): DataObject[] =>
  Object.entries(files).map(([name, text]) => ({ name, read: async (consume) => consume(enc(text)) }));
const data = filesOf(FILES);

const hashA = sha256(FILES['a.txt']!);
const hashB = sha256(CANONICAL_B);
/** A two-level tree: a.txt and b.xml, then a sibling hash above. */
const sibling = sha256('another branch');
const treeRoot = node([node([hashA, hashB]), sibling]);
const firstToken = token(treeRoot);
const firstStamp = { groups: [[hashA, hashB], [sibling]], token: firstToken };
const verify = (chains: XmlChainSpec[], objects = data) =>
  verifyEvidenceRecord(NAME, enc(xmlEvidenceRecord(chains)), objects, options);

describe('XML evidence records (RFC 6283)', () => {
  it('a hash tree over a text file and an XML file (hashed canonical, as DSS does): valid, covering both', async () => {
    const report = await verify([{ stamps: [firstStamp] }]);
    expect(report).toMatchObject({
      name: NAME,
      status: 'valid',
      covers: ['a.txt', 'b.xml'],
      archiveTimestamps: 1,
      checked: 1,
      problems: [],
    });
    expect(report.timestamp).toBeDefined();
  });

  it('a changed file: invalid, its hash in no tree; a changed hash-tree value: invalid', async () => {
    const one = filesOf({ 'a.txt': FILES['a.txt']! });
    const oneStamp = { groups: [[hashA, sibling]], token: token(node([hashA, sibling])) };
    expect(await verify([{ stamps: [oneStamp] }], one)).toMatchObject({ status: 'valid', covers: ['a.txt'] });
    const changed = await verify([{ stamps: [oneStamp] }], filesOf({ 'a.txt': 'first file, changed\n' }));
    expect(changed).toMatchObject({ status: 'invalid', covers: [] });
    const bothChanged = await verify([{ stamps: [firstStamp] }], filesOf({ 'a.txt': 'x', 'b.xml': '<doc a="2"/>' }));
    expect(bothChanged).toMatchObject({ status: 'invalid', covers: [] });
    expect(bothChanged.problems).toContain('its hash tree holds the hash of no file of the container');
    const tree = await verify([{ stamps: [{ ...firstStamp, groups: [[hashA, hashB], [sha256('another')]] }] }]);
    expect(tree.status).toBe('invalid');
    expect(tree.problems.join('\n')).toMatch(/^archive timestamp 1: /m);
  });

  it("an XML file's canonical form is what counts, not a change of its bytes alone", async () => {
    const reformatted = await verify(
      [{ stamps: [firstStamp] }],
      filesOf({ ...FILES, 'b.xml': '<doc a="1"   b="2"></doc>' }),
    );
    expect(reformatted).toMatchObject({ status: 'valid', covers: ['a.txt', 'b.xml'] });
  });

  it('a timestamp renewal covering the canonical TimeStamp before it: valid; over another: invalid', async () => {
    const renewal = { token: token(sha256(timeStampElement(firstToken, true))) };
    const report = await verify([{ stamps: [firstStamp, renewal] }]);
    expect(report).toMatchObject({ status: 'valid', archiveTimestamps: 2, checked: 2 });
    const wrong = await verify([{ stamps: [firstStamp, { token: token(sha256(timeStampElement(firstToken))) }] }]);
    expect(wrong.status).toBe('invalid');
    expect(wrong.problems.join('\n')).toMatch(/^archive timestamp 2: /m);
  });

  it('a later chain (hash-tree renewal): unverified, saying why; an unknown digest method: unverified', async () => {
    const renewed = await verify([{ stamps: [firstStamp] }, { stamps: [{ token: token(sha256('later')) }] }]);
    expect(renewed).toMatchObject({ status: 'unverified', archiveTimestamps: 2, checked: 1 });
    expect(renewed.reason).toMatch(/1 later chain\(s\) \(hash-tree renewal\) are not verified/);
    const unknown = await verify([{ digest: 'urn:example:digest', stamps: [firstStamp] }]);
    expect(unknown).toMatchObject({
      status: 'unverified',
      reason: 'its digest method urn:example:digest is not one esign implements',
    });
  });

  it('without a hash tree the token covers the one file; a DTD or a foreign root: invalid, in one line', async () => {
    const one = filesOf({ 'a.txt': FILES['a.txt']! });
    expect(await verify([{ stamps: [{ token: token(hashA) }] }], one)).toMatchObject({
      status: 'valid',
      covers: ['a.txt'],
    });
    expect(await verify([{ stamps: [{ token: token(sha256('other')) }] }], one)).toMatchObject({ status: 'invalid' });
    const dtd = enc(
      `<!DOCTYPE x [<!ENTITY e "e">]>${xmlEvidenceRecord([{ stamps: [firstStamp] }]).replace(/^<\?xml[^>]*>\n/, '')}`,
    );
    const refused = await verifyEvidenceRecord(NAME, dtd, data, options);
    expect(refused).toMatchObject({ status: 'invalid' });
    expect(refused.problems).toEqual([
      'not an XML evidence record esign reads: a DOCTYPE (DTDs and entities are refused)',
    ]);
    const foreign = await verifyEvidenceRecord(NAME, enc('<EvidenceRecord/>'), data, options);
    expect(foreign.problems[0]).toMatch(/its root is not an EvidenceRecord in urn:ietf:params:xml:ns:ers/);
  });

  it('with an ASiCEvidenceRecordManifest: covers what it names; a digest the record does not hash with: invalid', async () => {
    const manifest = (digest: 'sha256' | 'sha512', files = FILES) =>
      buildManifest({
        signature: NAME,
        signatureMimeType: 'text/xml',
        references: Object.entries(files).map(([name, text]) => ({
          name,
          mimeType: 'text/plain',
          digest,
          digestValue: new Uint8Array(createHash(digest).update(text).digest()),
        })),
      });
    const record = enc(xmlEvidenceRecord([{ c14n: C14N_URI, stamps: [firstStamp] }]));
    const manifests = (digest: 'sha256' | 'sha512') => [
      { name: 'META-INF/ASiCEvidenceRecordManifest.xml', bytes: manifest(digest) },
    ];
    const good = await verifyEvidenceRecordWithManifest(NAME, record, data, manifests('sha256'), options, 'asic-e');
    expect(good).toMatchObject({ status: 'valid', covers: ['a.txt', 'b.xml'] });
    const other = await verifyEvidenceRecordWithManifest(NAME, record, data, manifests('sha512'), options, 'asic-e');
    expect(other.status).toBe('invalid');
    expect(other.problems.join('\n')).toMatch(/a sha512 digest, an algorithm the record does not hash with \(sha256\)/);
    // A file changed and the manifest written anew over it: the record's tree still tells.
    const tampered = { ...FILES, 'a.txt': 'first file, changed\n' };
    const rewritten = [{ name: 'META-INF/ASiCEvidenceRecordManifest.xml', bytes: manifest('sha256', tampered) }];
    const changed = await verifyEvidenceRecordWithManifest(
      NAME,
      record,
      filesOf(tampered),
      rewritten,
      options,
      'asic-e',
    );
    expect(changed).toMatchObject({ status: 'invalid', covers: ['b.xml'] });
    expect(changed.problems).toContain(
      'a.txt, which META-INF/ASiCEvidenceRecordManifest.xml names, has its hash in no hash tree of the record',
    );
  });
});
