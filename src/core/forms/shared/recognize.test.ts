/** `recognize`: what a file is from its first bytes, whatever its name (issue 49, item 5). */
import { describe, expect, it } from 'vitest';
import { concatBytes, explicit, objectIdentifier, octetString, sequence, setOf, smallInteger } from '../../cms/der.js';
import { containerEvidence, containerTypeByLayout, recognize } from './recognize.js';

const text = (value: string) => new TextEncoder().encode(value);
const DATA = '1.2.840.113549.1.7.1';
const SIGNED_DATA = '1.2.840.113549.1.7.2';
const digestAlgorithms = setOf([sequence(objectIdentifier('2.16.840.1.101.3.4.2.1'))]);

/** A DER ContentInfo of SignedData with `encap` as its encapContentInfo, and a stand-in for the rest. */
function signedData(encap: Uint8Array): Uint8Array {
  return sequence(
    objectIdentifier(SIGNED_DATA),
    explicit(0, sequence(smallInteger(1), digestAlgorithms, encap, setOf([]))),
  );
}

/** The same in BER: every constructed element of indefinite length, closed by end-of-contents octets. */
function berSignedData(withContent: boolean): Uint8Array {
  const open = (tag: number) => new Uint8Array([tag, 0x80]);
  const eoc = new Uint8Array([0, 0]);
  return concatBytes([
    open(0x30),
    objectIdentifier(SIGNED_DATA),
    open(0xa0),
    open(0x30),
    smallInteger(1),
    open(0x31),
    sequence(objectIdentifier('2.16.840.1.101.3.4.2.1')),
    eoc,
    open(0x30),
    objectIdentifier(DATA),
    ...(withContent ? [open(0xa0), octetString(text('content')), eoc] : []),
    eoc,
    setOf([]),
    eoc,
    eoc,
    eoc,
  ]);
}

/** A ZIP's first local header: `name`, stored or deflated, its data and an extra field. */
function localHeader(name: string, data: string, method = 0, extra = new Uint8Array(0)): Uint8Array {
  const header = new Uint8Array(30);
  const view = new DataView(header.buffer);
  view.setUint32(0, 0x04034b50, true);
  view.setUint16(8, method, true);
  view.setUint32(18, data.length, true);
  view.setUint32(22, data.length, true);
  view.setUint16(26, name.length, true);
  view.setUint16(28, extra.length, true);
  return concatBytes([header, text(name), extra, text(data)]);
}

describe('recognize', () => {
  it('a PDF, its header at the start or after junk within 1024 bytes', () => {
    expect(recognize(text('%PDF-1.7\n%âãÏÓ\n'))).toEqual({ kind: 'pdf' });
    expect(recognize(concatBytes([new Uint8Array(500).fill(0x20), text('%PDF-1.4\n')]))).toEqual({ kind: 'pdf' });
    expect(recognize(concatBytes([new Uint8Array(2000).fill(0x20), text('%PDF-1.4\n')]))).toEqual({ kind: 'unknown' });
  });

  it('a CMS SignedData: enveloping with eContent, detached without, in DER and in BER', () => {
    const content = sequence(objectIdentifier(DATA), explicit(0, octetString(text('content'))));
    expect(recognize(signedData(content))).toEqual({ kind: 'cms', enveloping: true });
    expect(recognize(signedData(sequence(objectIdentifier(DATA))))).toEqual({ kind: 'cms', enveloping: false });
    expect(recognize(berSignedData(true))).toEqual({ kind: 'cms', enveloping: true });
    expect(recognize(berSignedData(false))).toEqual({ kind: 'cms', enveloping: false });
  });

  it('a SignedData cut short is taken as enveloping (its reader then says what is wrong); other DER is unknown', () => {
    expect(recognize(signedData(sequence(objectIdentifier(DATA))).subarray(0, 20))).toEqual({
      kind: 'cms',
      enveloping: true,
    });
    expect(recognize(sequence(objectIdentifier(DATA)))).toEqual({ kind: 'unknown' });
    expect(recognize(sequence(smallInteger(0), sequence()))).toEqual({ kind: 'unknown' });
  });

  it('a ZIP: its first stored mimetype read (trimmed), else none', () => {
    const type = 'application/vnd.etsi.asic-e+zip';
    expect(recognize(localHeader('mimetype', type))).toEqual({ kind: 'zip', mimetype: type });
    expect(recognize(localHeader('mimetype', `${type}\r\n`, 0, new Uint8Array(4)))).toEqual({
      kind: 'zip',
      mimetype: type,
    });
    expect(recognize(localHeader('mimetype', type, 8))).toEqual({ kind: 'zip' });
    expect(recognize(localHeader('doc.txt', 'hello'))).toEqual({ kind: 'zip' });
  });

  it('XML after a byte order mark and white space, or in UTF-16; text is unknown', () => {
    expect(recognize(text('\uFEFF \n<?xml version="1.0"?><a/>'))).toEqual({ kind: 'xml' });
    expect(recognize(text('<ds:Signature/>'))).toEqual({ kind: 'xml' });
    expect(recognize(new Uint8Array([0xff, 0xfe, 0x3c, 0x00]))).toEqual({ kind: 'xml' });
    expect(recognize(text('release notes\n'))).toEqual({ kind: 'unknown' });
    expect(recognize(new Uint8Array(0))).toEqual({ kind: 'unknown' });
  });
});

describe('a ZIP without a mimetype: its type from its layout, as DSS decides it (ASiCUtils)', () => {
  it('finds the evidence under META-INF/ that makes it a signed container, and none in a plain ZIP', () => {
    expect(
      containerEvidence([
        'doc.txt',
        'META-INF/signature.p7s',
        'META-INF/signatures001.xml',
        'META-INF/timestamp.tst',
        'META-INF/evidencerecord001.ers',
        'META-INF/evidencerecord.xml',
        'META-INF/ASiCManifest.xml',
        'META-INF/sub/signature.p7s',
        'signature.p7s',
      ]),
    ).toEqual([
      'META-INF/signature.p7s',
      'META-INF/signatures001.xml',
      'META-INF/timestamp.tst',
      'META-INF/evidencerecord001.ers',
      'META-INF/evidencerecord.xml',
    ]);
    expect(containerEvidence(['a.txt', 'b.txt', 'META-INF/', 'META-INF/notes.txt'])).toEqual([]);
    // The ASiCEvidenceRecordManifest names what a record covers; it is no evidence itself.
    expect(containerEvidence(['META-INF/ASiCEvidenceRecordManifest.xml'])).toEqual([]);
  });

  it('a manifest or XAdES signatures or several documents make an ASiC-E; one document an ASiC-S', () => {
    expect(containerTypeByLayout(['a', 'META-INF/ASiCManifest001.xml', 'META-INF/timestamp.tst'])).toEqual({
      type: 'asic-e',
      by: 'its META-INF/ASiCManifest001.xml',
    });
    expect(containerTypeByLayout(['a', 'META-INF/manifest.xml', 'META-INF/signatures0.xml']).type).toBe('asic-e');
    expect(containerTypeByLayout(['a', 'META-INF/signatures0.xml'])).toEqual({
      type: 'asic-e',
      by: 'its META-INF/signatures0.xml',
    });
    expect(containerTypeByLayout(['a', 'b/c', 'META-INF/evidencerecord.ers'])).toEqual({
      type: 'asic-e',
      by: 'its 2 documents',
    });
    expect(
      containerTypeByLayout([
        'a',
        'META-INF/',
        'META-INF/ASiCEvidenceRecordManifest.xml',
        'META-INF/evidencerecord.ers',
      ]),
    ).toEqual({ type: 'asic-s', by: 'its one document' });
  });

  it('still recognizes such a ZIP, mimetype or not, as a ZIP', () => {
    // Local header of an entry `doc.txt` (no mimetype first).
    const head = new Uint8Array(64);
    head.set([0x50, 0x4b, 0x03, 0x04]);
    head[26] = 7;
    head.set(text('doc.txt'), 30);
    expect(recognize(head)).toEqual({ kind: 'zip' });
  });
});
