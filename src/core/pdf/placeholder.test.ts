import fc from 'fast-check';
import { PDFDocument } from 'pdf-lib';
import { describe, expect, it } from 'vitest';
import {
  buildClassicPdf,
  buildHybridPdf,
  buildXrefStreamPdf,
  emptySignatureFieldBytes,
  minimalObjects,
  pdfLibBytes,
} from '../../../test/helpers/pdf-fixtures.js';
import { bytesSource } from './byte-source.js';
import { readPdf } from './document.js';
import type { PdfStream, PdfString } from './objects.js';
import { PdfDict, PdfName, PdfRef } from './objects.js';
import { byteRangeChunks, pdfDate, prepareSignature, spliceContents } from './placeholder.js';
import type { PreparedUpdate, SignatureOptions } from './placeholder.js';
import { encode as encodePng } from '@pdf-lib/upng';
import { AppearanceImage, MAX_IMAGE_BYTES } from './appearance-image.js';
import { testAppearanceAssets } from '../../../test/helpers/appearance-assets.js';

const signingTime = new Date(Date.UTC(2024, 4, 17, 9, 3, 7));
const latin1 = (bytes: Uint8Array) => Buffer.from(bytes).toString('latin1');
const concat = (...parts: Uint8Array[]) => new Uint8Array(Buffer.concat(parts));
const latin1Bytes = (text: string) => new Uint8Array(Buffer.from(text, 'latin1'));

async function sign(
  pdf: Uint8Array,
  opts: Partial<SignatureOptions> = {},
): Promise<{ out: Uint8Array; pu: PreparedUpdate }> {
  const pu = await prepareSignature(await readPdf(bytesSource(pdf)), {
    signingTime,
    contentsSize: 256,
    assets: testAppearanceAssets(),
    ...opts,
  });
  return { pu, out: concat(pdf, spliceContents(pu, new Uint8Array([0x30, 0x82, 0xca, 0xfe]))) };
}

/** The signature fields of a document, with their values resolved. */
async function signatureFields(
  pdf: Uint8Array,
): Promise<Array<{ name: string; field: PdfDict; sig: PdfDict | undefined }>> {
  const doc = await readPdf(bytesSource(pdf));
  const acroForm = await doc.resolveDict((await doc.catalog()).dict.get('AcroForm'));
  const out = [];
  for (const ref of (await doc.resolveArray(acroForm?.get('Fields'))) ?? []) {
    const field = (await doc.resolveDict(ref)) as PdfDict;
    out.push({ name: (field.get('T') as PdfString).toText(), field, sig: await doc.resolveDict(field.get('V')) });
  }
  return out;
}

const inputs = {
  'classic table': () => buildClassicPdf(),
  'xref stream with object stream': () => buildXrefStreamPdf(),
  hybrid: () => buildHybridPdf(),
  'pdf-lib classic': () => pdfLibBytes({ pages: 2 }),
  'pdf-lib object streams': () => pdfLibBytes({ pages: 2, objectStreams: true }),
};

describe('prepareSignature', () => {
  it.each(Object.entries(inputs))('appends a placeholder to a %s file without touching its bytes', async (_, make) => {
    const pdf = await make();
    const { pu, out } = await sign(pdf, { reason: 'Approved', location: 'Zoë’s desk' });
    expect(out.subarray(0, pdf.length)).toEqual(pdf);
    const [zero, a, b, c] = pu.byteRange;
    expect(zero).toBe(0);
    expect(String.fromCharCode(out[a]!, out[b - 1]!)).toBe('<>');
    expect(b - a).toBe(pu.contentsHexLength + 2);
    expect(b + c).toBe(out.length);
    expect(pu.contentsHexOffset).toBe(a + 1);
    expect(latin1(out)).toContain(`/ByteRange [0 ${a} ${b} ${c}]`);
    expect(latin1(out.subarray(a + 1, a + 9))).toBe('3082cafe');

    const [field] = await signatureFields(out);
    expect(field?.name).toBe('Signature1');
    expect(field?.field.get('Rect')).toEqual([0, 0, 0, 0]);
    expect(field?.field.get('F')).toBe(132);
    expect(field?.sig?.get('SubFilter')).toBe(PdfName.of('ETSI.CAdES.detached'));
    expect((field?.sig?.get('M') as PdfString).toText()).toBe("D:20240517090307+00'00'");
    expect((field?.sig?.get('Location') as PdfString).toText()).toBe('Zoë’s desk');
    const doc = await readPdf(bytesSource(out));
    expect((await doc.resolveDict((await doc.catalog()).dict.get('AcroForm')))?.get('SigFlags')).toBe(3);
    await PDFDocument.load(out);
  });

  it('writes the update in the file’s own cross-reference style', async () => {
    const classic = latin1((await sign(buildClassicPdf())).pu.update);
    expect(classic).toMatch(
      /\nxref\n[\s\S]*trailer\n<< \/Size \d+ \/Root 1 0 R \/Prev \d+ >>\nstartxref\n\d+\n%%EOF\n$/,
    );
    const stream = latin1((await sign(buildXrefStreamPdf())).pu.update);
    expect(stream).not.toContain('\nxref\n');
    expect(stream).toMatch(/\/Type \/XRef \/Size \d+ \/Root 1 0 R \/Prev \d+/);
  });

  it('carries /Info and /ID over and points /Prev at the previous startxref', async () => {
    const pdf = buildClassicPdf([...minimalObjects(), '<< /Title (t) >>'], '/Info 4 0 R /ID [<01> <02>] ');
    const doc = await readPdf(bytesSource(pdf));
    const { out } = await sign(pdf);
    const after = await readPdf(bytesSource(out));
    expect(after.trailer.get('Info')).toEqual(new PdfRef(4, 0));
    expect(after.trailer.get('ID')).toEqual(doc.trailer.get('ID'));
    expect(after.trailer.get('Prev')).toBe(doc.startxref);
  });

  it('lists exactly the bytes outside /Contents as the chunks to hash', async () => {
    const pdf = buildClassicPdf();
    const { pu, out } = await sign(pdf);
    const hashed = concat(
      ...byteRangeChunks(pu, pdf.length).map((chunk) =>
        (chunk.source === 'original' ? pdf : pu.update).subarray(chunk.start, chunk.end),
      ),
    );
    const [, a, b, c] = pu.byteRange;
    expect(hashed).toEqual(concat(out.subarray(0, a), out.subarray(b, b + c)));
  });

  it('refuses a CMS that does not fit and fills one that does exactly', async () => {
    const { pu } = await sign(buildClassicPdf(), { contentsSize: 8 });
    expect(() => spliceContents(pu, new Uint8Array(9))).toThrow(
      expect.objectContaining({ code: 'PDF_PLACEHOLDER_TOO_SMALL' }),
    );
    const filled = spliceContents(pu, new Uint8Array(8).fill(0xab));
    expect(
      latin1(filled.subarray(pu.contentsHexOffset - pu.originalSize - 1, pu.contentsHexOffset - pu.originalSize + 17)),
    ).toBe(`<${'ab'.repeat(8)}>`);
  });

  it('settles the ByteRange whatever the number widths (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 12_000 }),
        fc.integer({ min: 4, max: 6_000 }),
        async (padding, contentsSize) => {
          const pdf = buildClassicPdf([...minimalObjects(), `(${'x'.repeat(padding)})`]);
          const { pu, out } = await sign(pdf, { contentsSize });
          const [, a, b, c] = pu.byteRange;
          expect(out[a]).toBe(0x3c);
          expect(out[b - 1]).toBe(0x3e);
          expect(b + c).toBe(out.length);
          expect(latin1(out)).toContain(`/ByteRange [0 ${a} ${b} ${c}]`);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('adds a second signature without changing the bytes the first one covers', async () => {
    const { out: once, pu: first } = await sign(await pdfLibBytes({ pages: 1 }));
    const { out: twice } = await sign(once, { reason: 'second' });
    expect(twice.subarray(0, once.length)).toEqual(once);
    const fields = await signatureFields(twice);
    expect(fields.map((f) => f.name)).toEqual(['Signature1', 'Signature2']);
    expect(fields[0]?.sig?.get('ByteRange')).toEqual(first.byteRange);
    await PDFDocument.load(twice);
  });

  it('signs into an existing empty signature field, refuses a signed one, and makes a field of a name the PDF lacks', async () => {
    const pdf = await emptySignatureFieldBytes('Approval');
    const { out } = await sign(pdf, {
      fieldName: 'Approval',
      visible: { page: 1, rect: [0, 0, 1, 1], lines: ['Signed'] },
    });
    const [field] = await signatureFields(out);
    expect(field?.name).toBe('Approval');
    expect(field?.sig?.get('Type')).toBe(PdfName.of('Sig'));
    expect(field?.field.get('AP')).toBeInstanceOf(PdfDict);
    await expect(sign(out, { fieldName: 'Approval' })).rejects.toMatchObject({ code: 'PDF_FIELD_ALREADY_SIGNED' });
    // A new field: invisible without a box, on --page at --rect with one.
    const invisible = await signatureFields((await sign(pdf, { fieldName: 'Witness' })).out);
    expect(invisible.map((f) => f.name)).toEqual(['Approval', 'Witness']);
    expect(invisible[1]?.field.get('Rect')).toEqual([0, 0, 0, 0]);
    const drawn = await signatureFields(
      (await sign(pdf, { fieldName: 'Witness', visible: { page: 1, rect: [20, 20, 220, 80], lines: ['Signed'] } })).out,
    );
    expect(drawn[1]).toMatchObject({ name: 'Witness' });
    expect(drawn[1]?.field.get('Rect')).toEqual([20, 20, 220, 80]);
    expect(drawn[1]?.field.get('AP')).toBeInstanceOf(PdfDict);
    await expect(sign(pdf, { fieldName: 'Parent.Kid' })).rejects.toMatchObject({
      code: 'PDF_FIELD_NOT_FOUND',
      hint: expect.stringContaining('Approval'),
    });
  });

  it('draws a visible signature on the chosen page', async () => {
    const pdf = await pdfLibBytes({ pages: 3 });
    const { out } = await sign(pdf, {
      visible: { page: 2, rect: [300, 100, 50, 40], lines: ['Signed by Zoë', 'Ω is not WinAnsi'] },
    });
    const doc = await readPdf(bytesSource(out));
    const page = await doc.page(2);
    const [widgetRef] = (await doc.resolveArray(page.dict.get('Annots'))) as PdfRef[];
    const widget = (await doc.resolveDict(widgetRef)) as PdfDict;
    expect(widget.get('Rect')).toEqual([50, 40, 300, 100]);
    expect(widget.get('F')).toBe(4);
    expect(widget.get('P')).toEqual(page.ref);
    const ap = (await doc.resolve((widget.get('AP') as PdfDict).get('N') as PdfRef)) as PdfStream;
    expect(ap.dict.get('BBox')).toEqual([0, 0, 250, 60]);
    const content = latin1(ap.data);
    expect(content).toMatch(/BT \/F1 [\d.]+ Tf/);
    expect(content).not.toContain('?');
    const resources = ap.dict.get('Resources') as PdfDict;
    const type0 = (await doc.resolveDict(
      ((await doc.resolveDict(resources.get('Font'))) as PdfDict).get('F1'),
    )) as PdfDict;
    expect(type0.get('Subtype')).toBe(PdfName.of('Type0'));
    await expect(sign(pdf, { visible: { page: 1, rect: [10, 10, 10, 50], lines: [] } })).rejects.toMatchObject({
      code: 'USAGE',
    });
    // A box past the page's edge is refused, naming the page's size.
    await expect(sign(pdf, { visible: { page: 1, rect: [500, 700, 700, 900], lines: [] } })).rejects.toMatchObject({
      code: 'USAGE',
      message: expect.stringMatching(/not within page 1, which is [\d.]+ × [\d.]+ points/),
    });
  });

  it('rewrites an indirect /Annots array rather than the page, and a direct /AcroForm inside the catalog', async () => {
    const pdf = buildClassicPdf([
      ...minimalObjects('/AcroForm << /Fields [] /DA (/Helv 0 Tf 0 g) >> ', '/Annots 4 0 R '),
      '[]',
    ]);
    const { pu, out } = await sign(pdf);
    const update = latin1(pu.update);
    expect(update).toMatch(/\n4 0 obj\n\[\d+ 0 R\]/);
    expect(update).not.toMatch(/\n3 0 obj/);
    expect(update).toMatch(
      /^1 0 obj\n<< \/Type \/Catalog \/Pages 2 0 R \/AcroForm << \/Fields \[\d+ 0 R\] \/DA \(\/Helv 0 Tf 0 g\) \/SigFlags 3 >> >>/,
    );
    await PDFDocument.load(out);
  });

  it('on a certified document: P=1 refused; P=2 only into an empty field; P=3 also a new field (an annotation)', async () => {
    const certified = (p: number, withField = false) =>
      buildClassicPdf([
        ...minimalObjects(
          `/Perms << /DocMDP 4 0 R >> ${withField ? '/AcroForm << /Fields [5 0 R] >> ' : ''}`,
          withField ? '/Annots [5 0 R] ' : '',
        ),
        `<< /Type /Sig /Reference [<< /Type /SigRef /TransformMethod /DocMDP /TransformParams << /Type /TransformParams /P ${p} /V /1.2 >> >>] >>`,
        '<< /Type /Annot /Subtype /Widget /FT /Sig /T (Approval) /Rect [0 0 0 0] /F 132 /P 3 0 R >>',
      ]);
    await expect(sign(certified(1, true), { fieldName: 'Approval' })).rejects.toMatchObject({
      code: 'PDF_CERTIFIED_NO_CHANGES',
    });
    await expect(sign(certified(2))).rejects.toMatchObject({
      code: 'PDF_CERTIFIED_NO_CHANGES',
      message: expect.stringMatching(/P=2/),
    });
    await expect(sign(certified(2, true))).rejects.toMatchObject({
      code: 'PDF_CERTIFIED_NO_CHANGES',
      hint: expect.stringContaining('Approval'),
    });
    await expect(sign(certified(2, true), { fieldName: 'Approval' })).resolves.toBeDefined();
    await expect(sign(certified(3))).resolves.toBeDefined();
    // Document timestamps (and DSS updates) are allowed whatever the level (ETSI EN 319 142-1 §5.4).
    await expect(sign(certified(2), { kind: 'docTimeStamp', signingTime: undefined })).resolves.toBeDefined();
  });

  it('--certify: DocMDP P in a /Reference with TransformMethod DocMDP, /Perms /DocMDP in the catalog; the first signature only', async () => {
    for (const p of [1, 2, 3] as const) {
      const { out } = await sign(await pdfLibBytes({ pages: 1 }), { certify: p });
      const doc = await readPdf(bytesSource(out));
      const { dict: catalog } = await doc.catalog();
      const [field] = await signatureFields(out);
      const perms = (await doc.resolveDict(catalog.get('Perms'))) as PdfDict;
      expect(perms.get('DocMDP')).toEqual(field?.field.get('V'));
      const [reference] = (await doc.resolveArray(field?.sig?.get('Reference'))) as PdfDict[];
      expect(reference?.get('TransformMethod')).toBe(PdfName.of('DocMDP'));
      expect((reference?.get('TransformParams') as PdfDict).get('P')).toBe(p);
    }
    const { out: signed } = await sign(await pdfLibBytes({ pages: 1 }));
    await expect(sign(signed, { certify: 2 })).rejects.toMatchObject({
      code: 'PDF_ALREADY_SIGNED',
      message: expect.stringMatching(/already has a signature \(field "Signature1"\)/),
    });
    // An empty field is no signature: it can be certified into.
    await expect(
      sign(await emptySignatureFieldBytes('Approval'), { certify: 3, fieldName: 'Approval' }),
    ).resolves.toBeDefined();
  });

  it('prepares a document timestamp: /DocTimeStamp, ETSI.RFC3161, no /M', async () => {
    const { out } = await sign(buildXrefStreamPdf(), { kind: 'docTimeStamp', signingTime: undefined });
    const [field] = await signatureFields(out);
    expect(field?.name).toBe('Timestamp1');
    expect(field?.sig?.get('Type')).toBe(PdfName.of('DocTimeStamp'));
    expect(field?.sig?.get('SubFilter')).toBe(PdfName.of('ETSI.RFC3161'));
    expect(field?.sig?.has('M')).toBe(false);
  });

  it('formats /M in UTC', () => {
    expect(pdfDate(new Date('2024-01-02T23:04:05-02:00'))).toBe("D:20240103010405+00'00'");
  });
});

describe('appearance images', () => {
  /** A 4 × 2 PNG, half of it transparent. */
  const transparentPng = (): Uint8Array => {
    const rgba = new Uint8Array(4 * 2 * 4).map((_, i) => (i % 4 === 3 ? (i < 16 ? 0 : 255) : 200));
    return new Uint8Array(encodePng([rgba.buffer], 4, 2, 0));
  };

  it('draws a PNG beside the text with its transparency as a soft mask; reads a JPEG frame header; refuses other files', async () => {
    const image = await AppearanceImage.load(transparentPng(), 'logo.png');
    expect([image.width, image.height, image.transparent]).toEqual([4, 2, true]);
    const { out } = await sign(await pdfLibBytes({ pages: 1 }), {
      visible: { page: 1, rect: [20, 20, 220, 80], lines: ['Signed'], image: { file: 'logo.png', position: 'left' } },
      assets: { ...testAppearanceAssets(), image },
    });
    const text = latin1(out);
    expect(text).toMatch(/\/Subtype \/Image \/Width 4 \/Height 2 [^>]*\/SMask \d+ 0 R/);
    expect(text).toMatch(/cm \/Im1 Do Q/);
    // SOF0 of a 16 × 32 RGB JPEG (the header is all esign reads; the data goes in as it is, DCTDecode).
    const jpeg = await AppearanceImage.load(
      Uint8Array.from([
        0xff, 0xd8, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x00, 0x20, 0x00, 0x10, 0x03, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
        0xff, 0xd9,
      ]),
      'sig.jpg',
    );
    expect([jpeg.width, jpeg.height, jpeg.transparent]).toEqual([16, 32, false]);
    await expect(AppearanceImage.load(latin1Bytes('GIF89a...'), 'x.gif')).rejects.toThrow(
      /x\.gif is neither a PNG nor a JPEG/,
    );
    await expect(AppearanceImage.load(new Uint8Array(MAX_IMAGE_BYTES + 1), 'huge.png')).rejects.toThrow(
      /esign embeds images up to 10 MiB/,
    );
  });

  it('refuses a transparent image on a document that declares PDF/A-1, which forbids transparency', async () => {
    const xmp =
      '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/" pdfaid:part="1" pdfaid:conformance="B"/></rdf:RDF></x:xmpmeta>';
    const pdfa = buildClassicPdf([
      ...minimalObjects('/Metadata 4 0 R '),
      { dict: '<< /Type /Metadata /Subtype /XML >>', data: xmp },
    ]);
    const image = await AppearanceImage.load(transparentPng(), 'logo.png');
    const visible = {
      page: 1,
      rect: [20, 20, 220, 80] as [number, number, number, number],
      lines: ['Signed'],
      image: { file: 'logo.png', position: 'background' as const },
    };
    await expect(sign(pdfa, { visible, assets: { ...testAppearanceAssets(), image } })).rejects.toMatchObject({
      code: 'USAGE',
      message: expect.stringMatching(/declares PDF\/A-1, which forbids transparency/),
    });
    // Without the image, the signature's appearance is only its embedded font and text: accepted,
    // with the font program embedded, a CIDSet (PDF/A-1 §6.3.5), a ToUnicode map, and no transparency.
    const { out } = await sign(pdfa, { visible: { ...visible, image: undefined } });
    const added = latin1(out.subarray(pdfa.length));
    expect(added).toMatch(/\/FontFile2 \d+ 0 R/);
    expect(added).toMatch(/\/CIDSet \d+ 0 R/);
    expect(added).toMatch(/\/ToUnicode \d+ 0 R/);
    expect(added).not.toMatch(/\/SMask|\/S \/Transparency|\/CA [0.]|\/ca [0.]|\/BM /);
  });
});
