/**
 * The signature placeholder: a signature (or document timestamp) dictionary with `/Contents`
 * zeros and an exact `/ByteRange`, the field and widget that hold it, and the page and AcroForm
 * edits — all as one incremental update. Then: which bytes to hash, and splicing the CMS in.
 */
import { EsignError } from '../errors.js';
import { buildAppearance } from './appearance.js';
import type { PdfDocument } from './document.js';
import { IncrementalUpdate } from './incremental.js';
import { PdfDict, PdfHexPlaceholder, PdfRef, PdfString, asciiBytes, dict, isName, name } from './objects.js';
import type { PdfObject } from './objects.js';

/** A visible signature: the page (1-based, -1 = last), the box in points, the text lines. */
export interface VisibleSignature {
  page: number;
  rect: [number, number, number, number];
  lines: string[];
}

export interface SignatureOptions {
  /** `'signature'` (PAdES, ETSI.CAdES.detached) or `'docTimeStamp'` (ETSI.RFC3161). Default `'signature'`. */
  kind?: 'signature' | 'docTimeStamp';
  /** Sign into this existing, empty signature field (fully qualified name) instead of adding one. */
  fieldName?: string;
  /** Draw the signature; without it the new field is invisible (`/Rect [0 0 0 0]`). */
  visible?: VisibleSignature;
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
  if (kind === 'signature') await refuseCertifiedNoChanges(doc, catalog);

  const u = new IncrementalUpdate(doc);
  const contents = new PdfHexPlaceholder(opts.contentsSize);
  const byteRange: number[] = [0, 0, 0, 0];
  const sigRef = u.add(signatureDictionary(kind, opts, byteRange, contents));

  const acroFormValue = catalog.get('AcroForm');
  const acroForm = (await doc.resolveDict(acroFormValue))?.clone() ?? new PdfDict();
  const fields = [...((await doc.resolveArray(acroForm.get('Fields'))) ?? [])];
  let fieldName: string;
  if (opts.fieldName !== undefined) {
    fieldName = opts.fieldName;
    await fillExistingField(doc, u, fields, opts.fieldName, sigRef, opts.visible);
  } else {
    fieldName = await uniqueFieldName(doc, fields, kind === 'signature' ? 'Signature' : 'Timestamp');
    fields.push(await addField(doc, u, fieldName, sigRef, opts));
  }

  const flags = acroForm.get('SigFlags');
  acroForm.set('Fields', fields).set('SigFlags', (typeof flags === 'number' ? flags : 0) | 3);
  if (acroFormValue instanceof PdfRef) u.set(acroFormValue, acroForm);
  else {
    const newCatalog = catalog.clone().set('AcroForm', acroFormValue instanceof PdfDict ? acroForm : u.add(acroForm));
    u.set(catalogRef, newCatalog);
  }

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
  const text = (value: string | undefined): PdfString | undefined => (value === undefined ? undefined : PdfString.text(value));
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

/** Refuses documents certified with DocMDP P=1 (no changes allowed, not even signatures). */
async function refuseCertifiedNoChanges(doc: PdfDocument, catalog: PdfDict): Promise<void> {
  const perms = await doc.resolveDict(catalog.get('Perms'));
  const certification = await doc.resolveDict(perms?.get('DocMDP'));
  for (const reference of (await doc.resolveArray(certification?.get('Reference'))) ?? []) {
    const ref = await doc.resolveDict(reference);
    if (!ref || !isName(ref.get('TransformMethod'), 'DocMDP')) continue;
    const params = await doc.resolveDict(ref.get('TransformParams'));
    if ((await doc.resolve(params?.get('P'))) === 1) {
      throw new EsignError('PDF_CERTIFIED_NO_CHANGES', 'The PDF is certified with "no changes allowed" (DocMDP P=1); another signature would break its certification.', {
        hint: 'Ask the author for a version certified to allow signing (P=2), or sign the document before it is certified.',
      });
    }
  }
}

interface FoundField {
  ref: PdfRef;
  dict: PdfDict;
  qualifiedName: string;
  isSignature: boolean;
}

/** Walks the field tree (`/Kids` with `/T`), yielding terminal and non-terminal fields by full name. */
async function* walkFields(doc: PdfDocument, refs: readonly PdfObject[], prefix = '', inheritedType?: string, depth = 0): AsyncGenerator<FoundField> {
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

async function fillExistingField(
  doc: PdfDocument,
  u: IncrementalUpdate,
  fields: readonly PdfObject[],
  fieldName: string,
  sigRef: PdfRef,
  visible: VisibleSignature | undefined,
): Promise<void> {
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
    if (visible && isName(field.dict.get('Subtype'), 'Widget') && rect?.length === 4 && rect.every((n) => typeof n === 'number')) {
      const [x1, y1, x2, y2] = rect as number[] as [number, number, number, number];
      updated.set('AP', dict({ N: u.add(buildAppearance(Math.abs(x2 - x1), Math.abs(y2 - y1), visible.lines)) }));
    }
    u.set(field.ref, updated);
    return;
  }
  throw new EsignError('PDF_FIELD_NOT_FOUND', `The PDF has no field named "${fieldName}".`, { hint: hintForFields(emptySignatureFields) });
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
async function addField(doc: PdfDocument, u: IncrementalUpdate, fieldName: string, sigRef: PdfRef, opts: SignatureOptions): Promise<PdfRef> {
  const page = await doc.page(opts.visible?.page ?? opts.page ?? 1);
  let rect: number[] = [0, 0, 0, 0];
  let appearance: PdfDict | undefined;
  if (opts.visible) {
    const [x1, y1, x2, y2] = opts.visible.rect;
    rect = [Math.min(x1, x2), Math.min(y1, y2), Math.max(x1, x2), Math.max(y1, y2)];
    const width = (rect[2] as number) - (rect[0] as number);
    const height = (rect[3] as number) - (rect[1] as number);
    if (!(width > 0 && height > 0)) {
      throw new EsignError('USAGE', `The signature box [${opts.visible.rect.join(' ')}] has no area.`, {
        hint: 'Give the box as x1,y1,x2,y2 in points with x1 ≠ x2 and y1 ≠ y2.',
      });
    }
    appearance = dict({ N: u.add(buildAppearance(width, height, opts.visible.lines)) });
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
  throw new EsignError('PDF_PLACEHOLDER_TOO_SMALL', `The signature (${cmsDer.length} bytes) does not fit the ${hexLength / 2} bytes reserved for it.`, {
    hint: 'This is a bug in the size estimate; please report it with the certificate chain length.',
    details: { needed: cmsDer.length, reserved: hexLength / 2 },
  });
}

/** A copy of the update with `cmsDer` written as hex into `/Contents` (the rest stays zeros). */
export function spliceContents(pu: PreparedUpdate, cmsDer: Uint8Array): Uint8Array {
  assertContentsFit(cmsDer, pu.contentsHexLength);
  const out = pu.update.slice();
  out.set(asciiBytes(Buffer.from(cmsDer).toString('hex')), pu.contentsHexOffset - pu.originalSize);
  return out;
}
