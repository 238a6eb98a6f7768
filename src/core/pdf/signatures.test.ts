import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { bytesSource } from './byte-source.js';
import { readPdf } from './document.js';
import { buildDssUpdate } from './dss.js';
import { prepareSignature } from './placeholder.js';
import {
  cmsPrefix,
  hashByteRange,
  listRevisions,
  listSignatureFields,
  parsePdfDate,
  readDss,
  trimDer,
} from './signatures.js';
import { appendRevision, buildClassicPdf, buildXrefStreamPdf } from '../../../test/helpers/pdf-fixtures.js';

const concat = (...parts: Uint8Array[]): Uint8Array => new Uint8Array(Buffer.concat(parts));

describe('PDF signature reading', () => {
  it('parses PDF dates with and without offsets', () => {
    expect(parsePdfDate("D:20240102030405+01'00'")?.toISOString()).toBe('2024-01-02T02:04:05.000Z');
    expect(parsePdfDate('D:20240102030405Z')?.toISOString()).toBe('2024-01-02T03:04:05.000Z');
    expect(parsePdfDate('garbage')).toBeUndefined();
  });

  it('trims zero padding after a DER value', () => {
    expect([...trimDer(Uint8Array.of(0x30, 0x02, 0x05, 0x00, 0, 0, 0))]).toEqual([0x30, 0x02, 0x05, 0x00]);
    expect(trimDer(Uint8Array.of(0x30, 0x82, 0x01, 0x00, ...new Array(300).fill(1))).length).toBe(260);
  });

  it('lists revisions oldest first, with the objects each update defines', async () => {
    const original = buildClassicPdf();
    const updated = appendRevision(original, { 3: '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 10 10] >>' }, 4);
    const revisions = await listRevisions(await readPdf(bytesSource(updated)));
    expect(revisions.map((r) => r.number)).toEqual([1, 2]);
    expect(revisions[0]!.end).toBe(original.length);
    expect(revisions[1]!.end).toBe(updated.length);
    expect(revisions[1]!.objects).toEqual([3]);
  });

  it('finds a signature placeholder field, hashes its ByteRange and reads a DSS added later', async () => {
    for (const original of [buildClassicPdf(), buildXrefStreamPdf()]) {
      const doc = await readPdf(bytesSource(original));
      const pu = await prepareSignature(doc, {
        kind: 'signature',
        signingTime: new Date('2024-05-06T07:08:09Z'),
        contentsSize: 64,
      });
      const signed = concat(original, pu.update);
      const signedDoc = await readPdf(bytesSource(signed));
      const [field] = await listSignatureFields(signedDoc);
      expect(field).toMatchObject({ name: 'Signature1', subFilter: 'ETSI.CAdES.detached', byteRange: pu.byteRange });
      expect(parsePdfDate(field!.signingTime!)?.toISOString()).toBe('2024-05-06T07:08:09.000Z');
      const [, a, b] = pu.byteRange;
      const expected = createHash('sha256').update(signed.subarray(0, a)).update(signed.subarray(b)).digest();
      expect(Buffer.from(await hashByteRange(bytesSource(signed), pu.byteRange, 'sha256', 7))).toEqual(expected);

      const withDss = concat(
        signed,
        await buildDssUpdate(signedDoc, { certs: [Uint8Array.of(1, 2, 3)], crls: [Uint8Array.of(4)] }),
      );
      const finalDoc = await readPdf(bytesSource(withDss));
      const dss = await readDss(finalDoc);
      expect(dss?.certs.map((c) => [...c])).toEqual([[1, 2, 3]]);
      expect(dss?.crls.length).toBe(1);
      const revisions = await listRevisions(finalDoc);
      expect(revisions.length).toBe(3);
      expect(revisions[1]!.end).toBe(signed.length);
    }
  });
});

describe('cmsPrefix: the CMS of a /Contents, padding dropped', () => {
  it('keeps a DER value as trimDer does, and a BER value with indefinite lengths (NSS) up to its end-of-contents octets', () => {
    const der = Uint8Array.of(0x30, 0x03, 0x02, 0x01, 0x05, 0, 0, 0);
    expect([...cmsPrefix(der)]).toEqual([...trimDer(der)]);
    // SEQUENCE (indefinite) { SEQUENCE (indefinite) { INTEGER 5 } } then zero padding: trimDer would keep two bytes.
    const ber = Uint8Array.of(0x30, 0x80, 0x30, 0x80, 0x02, 0x01, 0x05, 0x00, 0x00, 0x00, 0x00, 0, 0, 0, 0);
    expect([...cmsPrefix(ber)]).toEqual([...ber.subarray(0, 11)]);
    expect(trimDer(ber)).toHaveLength(2);
  });
});
