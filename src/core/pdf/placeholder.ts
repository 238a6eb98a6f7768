/**
 * The signature placeholder: a signature (or document timestamp) dictionary with `/Contents`
 * zeros and an exact `/ByteRange`, the field and widget that hold it, and the page and AcroForm
 * edits — all as one incremental update. Then: which bytes to hash, and splicing the CMS in.
 */
import { EsignError } from '../errors.js';
import { buildAppearance } from './appearance.js';
import type { AppearanceFonts } from './appearance-fonts.js';
import type { AppearanceImage } from './appearance-image.js';
import type { PdfDocument } from './document.js';
import { IncrementalUpdate } from './incremental.js';
import { decodeStream } from './filters.js';
import { docMdpOf } from './signatures.js';
import { PdfDict, PdfHexPlaceholder, PdfRef, PdfStream, PdfString, asciiBytes, dict, isName, name } from './objects.js';
import type { PdfObject } from './objects.js';

/**
 * A visible signature: the page (1-based, -1 = last), the box in points, the text lines, and the
 * files its font and image come from (kept as paths: the split flow stores these options as JSON).
 */
export interface VisibleSignature {
  page: number;
  rect: [number, number, number, number];
  lines: string[];
  /** TrueType, OpenType or WOFF files, tried in order for each character before esign's bundled font. */
  fontFiles?: string[];
  image?: { file: string; position: 'left' | 'background' };
}

/** The font and image of a visible signature, loaded once per run from the files it names. */
export interface AppearanceAssets {
  fonts: AppearanceFonts;
  image?: AppearanceImage;
}

/** DocMDP permissions (ISO 32000-1 §12.8.2.2): 1 no changes, 2 form filling and signing, 3 also annotations. */
export type CertificationLevel = 1 | 2 | 3;

export interface SignatureOptions {
  /** `'signature'` (PAdES, ETSI.CAdES.detached) or `'docTimeStamp'` (ETSI.RFC3161). Default `'signature'`. */
  kind?: 'signature' | 'docTimeStamp';
  /** Sign into this existing, empty signature field (fully qualified name) instead of adding one. */
  fieldName?: string;
  /** Draw the signature; without it the new field is invisible (`/Rect [0 0 0 0]`). */
  visible?: VisibleSignature;
  /** What `visible` names, loaded; required with `visible`. */
  assets?: AppearanceAssets;
  /** Make a certification (author) signature with these DocMDP permissions. */
  certify?: CertificationLevel;
  /** Page of an invisible field's widget (1-based, -1 = last). Default 1. */
  page?: number;
  reason?: string;
  location?: string;
  contactInfo?: string;
  name?: string;
  /** Written as `/M`; required for `kind: 'signature'`, unused for document timestamps. */
  signingTime?: Date;
  /** Bytes reserved for the CMS (the hex in `/Contents` is twice as long). */
  contentsSize: number;
}

/** An update holding a placeholder, to be appended right after the original `originalSize` bytes. */
export interface PreparedUpdate {
  update: Uint8Array;
  originalSize: number;
  /** `[0, a, b, c]`: a = offset of `<`, b = offset after `>`, c = total length − b. Absolute offsets. */
  byteRange: [number, number, number, number];
  /** Absolute offset of the first hex digit inside `/Contents <…>`. */
  contentsHexOffset: number;
  contentsHexLength: number;
  /** The field that holds the signature. */
  fieldName: string;
  /** The object number of the signature dictionary (the field's /V) in the update. */
  signatureObject: number;
}

/** A stretch of bytes to hash: `start`/`end` are offsets within the original file or within `update`. */
export interface ByteRangeChunk {
  source: 'original' | 'update';
  start: number;
  end: number;
}

/** Builds the incremental update that adds a signature or document timestamp placeholder. */
export async function prepareSignature(doc: PdfDocument, opts: SignatureOptions): Promise<PreparedUpdate> {
  const kind = opts.kind ?? 'signature';
  if (!Number.isInteger(opts.contentsSize) || opts.contentsSize <= 0) {
    throw new EsignError('INTERNAL', `contentsSize must be a positive integer, not ${opts.contentsSize}`);
  }
  const { ref: catalogRef, dict: catalog } = await doc.catalog();
  if (opts.visible && !opts.assets)
    throw new EsignError('INTERNAL', 'prepareSignature needs the appearance assets of a visible signature.');
  if (opts.visible?.image && opts.assets?.image?.transparent && (await pdfaPart(doc, catalog)) === 1) {
    throw new EsignError(
      'USAGE',
      `The PDF declares PDF/A-1, which forbids transparency, and the image ${opts.visible.image.file} has an alpha channel.`,
      {
        hint: 'Give a JPEG or a PNG without transparency, or leave out --image.',
      },
    );
  }
  const certification = kind === 'signature' ? await certificationLevel(doc, catalog) : undefined;
  if (certification === 1) {
    throw new EsignError(
      'PDF_CERTIFIED_NO_CHANGES',
      'The PDF is certified with "no changes allowed" (DocMDP P=1); another signature would break its certification.',
      {
        hint: 'Ask the author for a version certified to allow signing (P=2), or sign the document before it is certified.',
      },
    );
  }

  const u = new IncrementalUpdate(doc);
  const contents = new PdfHexPlaceholder(opts.contentsSize);
  const byteRange: number[] = [0, 0, 0, 0];
  const sigRef = u.add(signatureDictionary(kind, opts, byteRange, contents));

  const acroFormValue = catalog.get('AcroForm');
  const acroForm = (await doc.resolveDict(acroFormValue))?.clone() ?? new PdfDict();
  const fields = [...((await doc.resolveArray(acroForm.get('Fields'))) ?? [])];
  const existing = await surveyFields(doc, fields);
  if (opts.certify !== undefined) refuseCertifyingSigned(existing, certification);
  let fieldName: string;
  const filled =
    opts.fieldName !== undefined && (await fillExistingField(doc, u, fields, opts.fieldName, sigRef, opts));
  if (opts.fieldName !== undefined && filled) fieldName = opts.fieldName;
  else {
    // A new field is a new widget annotation: a document certified for form filling (P=2) forbids it.
    if (certification === 2) {
      throw new EsignError(
        'PDF_CERTIFIED_NO_CHANGES',
        'The PDF is certified for form filling and signing only (DocMDP P=2): a signature must go into one of its empty signature fields, and adding a field would break its certification.',
        {
          hint:
            existing.empty.length > 0
              ? `Sign into one with --field: ${existing.empty.join(', ')}.`
              : 'The PDF has no empty signature field to sign into; ask its author for one certified to allow annotations (P=3).',
        },
      );
    }
    if (opts.fieldName !== undefined && opts.fieldName.includes('.')) {
      throw new EsignError(
        'PDF_FIELD_NOT_FOUND',
        `The PDF has no field named "${opts.fieldName}", and a new field's name cannot contain ".".`,
        { hint: hintForFields(existing.empty) },
      );
    }
    fieldName =
      opts.fieldName ?? (await uniqueFieldName(doc, fields, kind === 'signature' ? 'Signature' : 'Timestamp'));
    fields.push(await addField(doc, u, fieldName, sigRef, opts));
  }

  const flags = acroForm.get('SigFlags');
  acroForm.set('Fields', fields).set('SigFlags', (typeof flags === 'number' ? flags : 0) | 3);
  let newCatalog: PdfDict | undefined;
  if (acroFormValue instanceof PdfRef) u.set(acroFormValue, acroForm);
  else newCatalog = catalog.clone().set('AcroForm', acroFormValue instanceof PdfDict ? acroForm : u.add(acroForm));
  if (opts.certify !== undefined) newCatalog = (newCatalog ?? catalog.clone()).set('Perms', dict({ DocMDP: sigRef }));
  if (newCatalog) u.set(catalogRef, newCatalog);

  // Numbers in /ByteRange shift the bytes after them, so serialize until their widths settle.
  for (let attempt = 0; attempt < 16; attempt++) {
    const serialized = u.serialize();
    const a = serialized.placeholders.get(contents) as number;
    const b = a + 2 + 2 * opts.contentsSize;
    const next: [number, number, number, number] = [0, a, b, doc.size + serialized.length - b];
    if (next.every((value, i) => value === byteRange[i])) {
      return {
        update: serialized.bytes,
        originalSize: doc.size,
        byteRange: next,
        contentsHexOffset: a + 1,
        contentsHexLength: 2 * opts.contentsSize,
        fieldName,
        signatureObject: sigRef.num,
      };
    }
    byteRange.splice(0, 4, ...next);
  }
  throw new EsignError('INTERNAL', 'The /ByteRange of the signature placeholder did not settle.');
}

function signatureDictionary(
  kind: 'signature' | 'docTimeStamp',
  opts: SignatureOptions,
  byteRange: number[],
  contents: PdfHexPlaceholder,
): PdfDict {
  const text = (value: string | undefined): PdfString | undefined =>
    value === undefined ? undefined : PdfString.text(value);
  if (kind === 'docTimeStamp') {
    return dict({
      Type: name('DocTimeStamp'),
      Filter: name('Adobe.PPKLite'),
      SubFilter: name('ETSI.RFC3161'),
      ByteRange: byteRange,
      Contents: contents,
    });
  }
  if (!opts.signingTime) throw new EsignError('INTERNAL', 'prepareSignature needs signingTime for a signature.');
  return dict({
    Type: name('Sig'),
    Filter: name('Adobe.PPKLite'),
    SubFilter: name('ETSI.CAdES.detached'),
    ByteRange: byteRange,
    Contents: contents,
    M: new PdfString(asciiBytes(pdfDate(opts.signingTime))),
    Name: text(opts.name),
    Reason: text(opts.reason),
    Location: text(opts.location),
    ContactInfo: text(opts.contactInfo),
    Reference:
      opts.certify === undefined
        ? undefined
        : [
            dict({
              Type: name('SigRef'),
              TransformMethod: name('DocMDP'),
              TransformParams: dict({ Type: name('TransformParams'), P: opts.certify, V: name('1.2') }),
            }),
          ],
  });
}

/** A PDF date in UTC: `D:YYYYMMDDHHmmSS+00'00'`. */
export function pdfDate(date: Date): string {
  const two = (n: number): string => String(n).padStart(2, '0');
  return (
    `D:${String(date.getUTCFullYear()).padStart(4, '0')}${two(date.getUTCMonth() + 1)}${two(date.getUTCDate())}` +
    `${two(date.getUTCHours())}${two(date.getUTCMinutes())}${two(date.getUTCSeconds())}+00'00'`
  );
}

/** The PDF/A part the document's XMP metadata declares (`pdfaid:part`), if any. */
async function pdfaPart(doc: PdfDocument, catalog: PdfDict): Promise<number | undefined> {
  const metadata = await doc.resolve(catalog.get('Metadata'));
  if (!(metadata instanceof PdfStream)) return undefined;
  let xmp: string;
  try {
    xmp = Buffer.from(decodeStream(metadata)).toString('utf8');
  } catch {
    return undefined;
  }
  const part = /pdfaid:part\s*=\s*["'](\d)["']|<pdfaid:part>\s*(\d)\s*</.exec(xmp);
  return part ? Number(part[1] ?? part[2]) : undefined;
}

/** The DocMDP permissions of a certified document (`/Perms /DocMDP`), or undefined when it is not certified. */
export async function certificationLevel(doc: PdfDocument, catalog: PdfDict): Promise<CertificationLevel | undefined> {
  const perms = await doc.resolveDict(catalog.get('Perms'));
  const certification = await doc.resolveDict(perms?.get('DocMDP'));
  if (!certification) return undefined;
  // A /Perms /DocMDP signature without a DocMDP reference: P's default, 2.
  return (await docMdpOf(doc, certification)) ?? 2;
}

interface FieldSurvey {
  /** Qualified names of signature fields with a value. */
  signed: string[];
  empty: string[];
}

async function surveyFields(doc: PdfDocument, fields: readonly PdfObject[]): Promise<FieldSurvey> {
  const survey: FieldSurvey = { signed: [], empty: [] };
  for await (const field of walkFields(doc, fields)) {
    if (!field.isSignature) continue;
    const value = field.dict.get('V');
    (value !== undefined && value !== null ? survey.signed : survey.empty).push(field.qualifiedName);
  }
  return survey;
}

/** A certification signature must be the document's first: it states what may change after it. */
function refuseCertifyingSigned(existing: FieldSurvey, certification: CertificationLevel | undefined): void {
  const [first] = existing.signed;
  if (first === undefined && certification === undefined) return;
  const what =
    first !== undefined
      ? `a signature (field "${first}"${existing.signed.length > 1 ? ` and ${existing.signed.length - 1} more` : ''})`
      : 'a certification';
  throw new EsignError(
    'PDF_ALREADY_SIGNED',
    `The PDF already has ${what}; a certification signature must be the document's first signature.`,
    {
      hint: 'Certify the unsigned original, or sign this one without --certify (an approval signature).',
    },
  );
}

interface FoundField {
  ref: PdfRef;
  dict: PdfDict;
  qualifiedName: string;
  isSignature: boolean;
}

/** Walks the field tree (`/Kids` with `/T`), yielding terminal and non-terminal fields by full name. */
async function* walkFields(
  doc: PdfDocument,
  refs: readonly PdfObject[],
  prefix = '',
  inheritedType?: string,
  depth = 0,
): AsyncGenerator<FoundField> {
  if (depth > 32) return;
  for (const ref of refs) {
    const field = ref instanceof PdfRef ? await doc.resolveDict(ref) : undefined;
    const partial = field?.get('T');
    if (!field || !(ref instanceof PdfRef) || !(partial instanceof PdfString)) continue;
    const qualifiedName = prefix ? `${prefix}.${partial.toText()}` : partial.toText();
    const ft = field.get('FT');
    const type = isName(ft) ? ft.value : inheritedType;
    yield { ref, dict: field, qualifiedName, isSignature: type === 'Sig' };
    const kids = await doc.resolveArray(field.get('Kids'));
    if (kids) yield* walkFields(doc, kids, qualifiedName, type, depth + 1);
  }
}

/** Signs into the field named `fieldName`; false when the document has no field of that name. */
async function fillExistingField(
  doc: PdfDocument,
  u: IncrementalUpdate,
  fields: readonly PdfObject[],
  fieldName: string,
  sigRef: PdfRef,
  opts: SignatureOptions,
): Promise<boolean> {
  const emptySignatureFields: string[] = [];
  for await (const field of walkFields(doc, fields)) {
    const signed = field.dict.get('V') !== undefined && field.dict.get('V') !== null;
    if (field.isSignature && !signed) emptySignatureFields.push(field.qualifiedName);
    if (field.qualifiedName !== fieldName) continue;
    if (!field.isSignature) {
      throw new EsignError('PDF_FIELD_NOT_FOUND', `The field "${fieldName}" is not a signature field.`, {
        hint: hintForFields(emptySignatureFields),
      });
    }
    if (signed) {
      throw new EsignError('PDF_FIELD_ALREADY_SIGNED', `The signature field "${fieldName}" is already signed.`, {
        hint: 'Sign into another empty field, or leave out the field name to add a new signature field.',
      });
    }
    const updated = field.dict.clone().set('V', sigRef);
    const rect = await doc.resolveArray(field.dict.get('Rect'));
    if (
      opts.visible &&
      isName(field.dict.get('Subtype'), 'Widget') &&
      rect?.length === 4 &&
      rect.every((n) => typeof n === 'number')
    ) {
      const [x1, y1, x2, y2] = rect as number[] as [number, number, number, number];
      updated.set('AP', dict({ N: u.add(await appearanceFor(u, Math.abs(x2 - x1), Math.abs(y2 - y1), opts)) }));
    }
    u.set(field.ref, updated);
    return true;
  }
  return false;
}

function appearanceFor(
  u: IncrementalUpdate,
  width: number,
  height: number,
  opts: SignatureOptions,
): Promise<PdfStream> {
  const { visible, assets } = opts as Required<Pick<SignatureOptions, 'visible' | 'assets'>>;
  const image = assets.image && visible.image ? { image: assets.image, position: visible.image.position } : undefined;
  return buildAppearance(
    width,
    height,
    { lines: visible.lines, fonts: assets.fonts, ...(image ? { image } : {}) },
    (value) => u.add(value),
  );
}

function hintForFields(names: string[]): string {
  return names.length > 0
    ? `Empty signature fields in this PDF: ${names.join(', ')}.`
    : 'This PDF has no empty signature field; leave out the field name to add a new one.';
}

async function uniqueFieldName(doc: PdfDocument, fields: readonly PdfObject[], stem: string): Promise<string> {
  const taken = new Set<string>();
  for (const ref of fields) {
    const title = (await doc.resolveDict(ref))?.get('T');
    if (title instanceof PdfString) taken.add(title.toText());
  }
  let n = 1;
  while (taken.has(`${stem}${n}`)) n++;
  return `${stem}${n}`;
}

/** Adds a merged signature field + widget on the chosen page and lists it in the page's `/Annots`. */
async function addField(
  doc: PdfDocument,
  u: IncrementalUpdate,
  fieldName: string,
  sigRef: PdfRef,
  opts: SignatureOptions,
): Promise<PdfRef> {
  const page = await doc.page(opts.visible?.page ?? opts.page ?? 1);
  let rect: number[] = [0, 0, 0, 0];
  let appearance: PdfDict | undefined;
  if (opts.visible) {
    const [x1, y1, x2, y2] = opts.visible.rect;
    rect = [Math.min(x1, x2), Math.min(y1, y2), Math.max(x1, x2), Math.max(y1, y2)];
    const width = (rect[2] as number) - (rect[0] as number);
    const height = (rect[3] as number) - (rect[1] as number);
    const box = await pageBox(doc, page.dict);
    if (!(width > 0 && height > 0)) {
      throw new EsignError('USAGE', `The signature box [${opts.visible.rect.join(' ')}] has no area.`, {
        hint: `Give the box as x1,y1,x2,y2 in points with x1 ≠ x2 and y1 ≠ y2, within page ${page.number} (${boxText(box)}).`,
      });
    }
    if (box && (rect[0]! < box[0] || rect[1]! < box[1] || rect[2]! > box[2] || rect[3]! > box[3])) {
      throw new EsignError(
        'USAGE',
        `The signature box [${opts.visible.rect.join(' ')}] is not within page ${page.number}, which is ${boxText(box)}.`,
        {
          hint: 'Give --rect x1,y1,x2,y2 in points inside the page (the origin is its lower left corner).',
        },
      );
    }
    appearance = dict({ N: u.add(await appearanceFor(u, width, height, opts)) });
  }
  const widgetRef = u.add(
    dict({
      Type: name('Annot'),
      Subtype: name('Widget'),
      FT: name('Sig'),
      T: PdfString.text(fieldName),
      V: sigRef,
      F: opts.visible ? 4 : 132,
      Rect: rect,
      P: page.ref,
      AP: appearance,
    }),
  );
  const annots = page.dict.get('Annots');
  if (annots instanceof PdfRef) {
    u.set(annots, [...((await doc.resolveArray(annots)) ?? []), widgetRef]);
  } else {
    u.set(page.ref, page.dict.clone().set('Annots', [...(Array.isArray(annots) ? annots : []), widgetRef]));
  }
  return widgetRef;
}

/** The page's visible area (`/CropBox`, else `/MediaBox`, inherited through the page tree), normalized. */
async function pageBox(doc: PdfDocument, page: PdfDict): Promise<[number, number, number, number] | undefined> {
  let node: PdfDict | undefined = page;
  for (let depth = 0; node && depth < 64; depth++) {
    for (const key of ['CropBox', 'MediaBox']) {
      const box = await doc.resolveArray(node.get(key));
      if (box?.length === 4 && box.every((n) => typeof n === 'number')) {
        const [x1, y1, x2, y2] = box as [number, number, number, number];
        return [Math.min(x1, x2), Math.min(y1, y2), Math.max(x1, x2), Math.max(y1, y2)];
      }
    }
    node = await doc.resolveDict(node.get('Parent'));
  }
  return undefined;
}

function boxText(box: [number, number, number, number] | undefined): string {
  if (!box) return 'of unknown size';
  const [x1, y1, x2, y2] = box;
  const origin = x1 === 0 && y1 === 0 ? '' : ` from ${x1},${y1}`;
  return `${x2 - x1} × ${y2 - y1} points${origin}`;
}

/** The stretches of bytes the signature covers, without the `/Contents` hex, in order. */
export function byteRangeChunks(pu: PreparedUpdate, originalSize = pu.originalSize): ByteRangeChunk[] {
  const [, a, b] = pu.byteRange;
  return [
    { source: 'original', start: 0, end: originalSize },
    { source: 'update', start: 0, end: a - originalSize },
    { source: 'update', start: b - originalSize, end: pu.update.length },
  ];
}

/** Refuses a CMS whose hex does not fit a placeholder of `hexLength` digits. */
export function assertContentsFit(cmsDer: Uint8Array, hexLength: number): void {
  if (cmsDer.length * 2 <= hexLength) return;
  throw new EsignError(
    'PDF_PLACEHOLDER_TOO_SMALL',
    `The signature (${cmsDer.length} bytes) does not fit the ${hexLength / 2} bytes reserved for it.`,
    {
      hint: 'This is a bug in the size estimate; please report it with the certificate chain length.',
      details: { needed: cmsDer.length, reserved: hexLength / 2 },
    },
  );
}

/** A copy of the update with `cmsDer` written as hex into `/Contents` (the rest stays zeros). */
export function spliceContents(pu: PreparedUpdate, cmsDer: Uint8Array): Uint8Array {
  assertContentsFit(cmsDer, pu.contentsHexLength);
  const out = Buffer.from(pu.update);
  out.write(
    Buffer.from(cmsDer.buffer, cmsDer.byteOffset, cmsDer.length).toString('hex'),
    pu.contentsHexOffset - pu.originalSize,
    'latin1',
  );
  return out;
}
