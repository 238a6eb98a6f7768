import { PDFDocument } from 'pdf-lib';
import { describe, expect, it } from 'vitest';
import { buildClassicPdf, buildXrefStreamPdf } from '../../../test/helpers/pdf-fixtures.js';
import { bytesSource } from './byte-source.js';
import { readPdf } from './document.js';
import { buildDssUpdate } from './dss.js';
import { decodeStream } from './filters.js';
import type { PdfStream } from './objects.js';

const concat = (...parts: Uint8Array[]) => new Uint8Array(Buffer.concat(parts));
const bytes = (text: string) => new Uint8Array(Buffer.from(text));

async function dssContents(pdf: Uint8Array): Promise<Record<string, string[]>> {
  const doc = await readPdf(bytesSource(pdf));
  const dss = await doc.resolveDict((await doc.catalog()).dict.get('DSS'));
  const out: Record<string, string[]> = {};
  for (const key of ['Certs', 'OCSPs', 'CRLs']) {
    out[key] = [];
    for (const ref of (await doc.resolveArray(dss?.get(key))) ?? []) {
      out[key].push(Buffer.from(decodeStream((await doc.resolve(ref)) as PdfStream)).toString());
    }
  }
  return out;
}

describe('buildDssUpdate', () => {
  it.each([
    ['classic', buildClassicPdf],
    ['xref stream', buildXrefStreamPdf],
  ])('adds a DSS with certificate, OCSP and CRL streams to a %s file', async (_, make) => {
    const pdf = make();
    const update = await buildDssUpdate(await readPdf(bytesSource(pdf)), {
      certs: [bytes('cert-a'), bytes('cert-b'), bytes('cert-a')],
      ocsps: [bytes('ocsp-1')],
      crls: [],
    });
    const out = concat(pdf, update);
    expect(await dssContents(out)).toEqual({ Certs: ['cert-a', 'cert-b'], OCSPs: ['ocsp-1'], CRLs: [] });
    await PDFDocument.load(out);
  });

  it('keeps the entries of an existing DSS and rewrites it in place', async () => {
    const pdf = buildClassicPdf();
    const once = concat(pdf, await buildDssUpdate(await readPdf(bytesSource(pdf)), { certs: [bytes('cert-a')] }));
    const update = await buildDssUpdate(await readPdf(bytesSource(once)), {
      certs: [bytes('cert-b')],
      crls: [bytes('crl-1')],
    });
    expect(Buffer.from(update).toString('latin1')).not.toContain('/Type /Catalog');
    expect(await dssContents(concat(once, update))).toEqual({
      Certs: ['cert-a', 'cert-b'],
      OCSPs: [],
      CRLs: ['crl-1'],
    });
  });
});
