/**
 * The signatures and document timestamps of a PDF, found through the AcroForm field tree (the
 * way viewers find them): each with its CMS (zero padding trimmed) and, for a signature, the
 * embedded signature-time-stamp token.
 */
import { bytesEqual, parseSignedData } from '../cms/parse.js';
import type { PdfDocument } from '../pdf/index.js';
import { cmsPrefix } from '../pdf/signatures.js';
import { PdfRef, PdfString, isName } from '../pdf/objects.js';
import type { PdfDict, PdfObject } from '../pdf/objects.js';
import type { ChainTarget } from './chain-target.js';

export interface PdfSignature {
  kind: 'signature' | 'docTimeStamp';
  fieldName: string;
  /** DER of the CMS in `/Contents`, without the zero padding; absent for a signature esign has just written and let go. */
  cms?: Uint8Array;
  /** Certificates of the CMS (for a document timestamp: the token's). */
  certificates: Uint8Array[];
  /** The signer (or TSA) certificate the SignerInfo identifies. */
  signerCertificate: Uint8Array | undefined;
  /** The signature-time-stamp token of a signature, when it has one. */
  timestampToken: Uint8Array | undefined;
  /** Its TSA's chain and genTime, when known without parsing the token (a signature esign just made). */
  timestampTarget?: ChainTarget;
}

/** A signature esign has just built, as it built it: found in the document, it is taken from here rather than parsed back. */
export interface KnownSignature {
  /** Its CMS, when still held: how it is recognized when its object number is not known. */
  cms?: Uint8Array;
  certificates: Uint8Array[];
  signerCertificate: Uint8Array | undefined;
  timestampToken: Uint8Array | undefined;
  timestampTarget: ChainTarget | undefined;
  /** Its signature dictionary's object number, when known: that field's value is then not read back (its /Contents is tens of KB of hex). */
  objectNumber?: number;
}

/** Every signed signature field's value, in field order. Unsigned fields are skipped. */
export async function findSignatures(doc: PdfDocument, known?: KnownSignature): Promise<PdfSignature[]> {
  const { dict: catalog } = await doc.catalog();
  const acroForm = await doc.resolveDict(catalog.get('AcroForm'));
  const fields = (await doc.resolveArray(acroForm?.get('Fields'))) ?? [];
  const found: PdfSignature[] = [];
  const seen = new Set<number>();
  await walk(doc, fields, '', undefined, 0, seen, found, known);
  return found;
}

async function walk(
  doc: PdfDocument,
  refs: readonly PdfObject[],
  prefix: string,
  inheritedType: string | undefined,
  depth: number,
  seen: Set<number>,
  found: PdfSignature[],
  known: KnownSignature | undefined,
): Promise<void> {
  if (depth > 32) return;
  for (const ref of refs) {
    if (ref instanceof PdfRef) {
      if (seen.has(ref.num)) continue;
      seen.add(ref.num);
    }
    const field = await doc.resolveDict(ref);
    if (!field) continue;
    const partial = field.get('T');
    const name = partial instanceof PdfString ? (prefix ? `${prefix}.${partial.toText()}` : partial.toText()) : prefix;
    const ft = field.get('FT');
    const type = isName(ft) ? ft.value : inheritedType;
    if (type === 'Sig') {
      const v = field.get('V');
      if (known?.objectNumber !== undefined && v instanceof PdfRef && v.num === known.objectNumber)
        found.push(knownSignature(known, name));
      else {
        const value = await doc.resolveDict(v);
        const signature = value ? readSignature(value, name, known) : undefined;
        if (signature) found.push(signature);
      }
    }
    const kids = await doc.resolveArray(field.get('Kids'));
    if (kids) await walk(doc, kids, name, type, depth + 1, seen, found, known);
  }
}

function readSignature(value: PdfDict, fieldName: string, known: KnownSignature | undefined): PdfSignature | undefined {
  const contents = value.get('Contents');
  if (!(contents instanceof PdfString) || contents.bytes.length === 0) return undefined;
  const subFilter = value.get('SubFilter');
  const kind =
    isName(value.get('Type'), 'DocTimeStamp') || isName(subFilter, 'ETSI.RFC3161') ? 'docTimeStamp' : 'signature';
  // Contents that begin with the CMS just built hold it (its DER header fixes its length), padding after.
  if (
    kind === 'signature' &&
    known?.cms &&
    known.cms.length <= contents.bytes.length &&
    bytesEqual(contents.bytes.subarray(0, known.cms.length), known.cms)
  )
    return knownSignature(known, fieldName);
  const cms = cmsPrefix(contents.bytes);
  const parsed = parseSignedData(cms);
  return {
    kind,
    fieldName,
    cms,
    certificates: parsed.certificates,
    signerCertificate: parsed.signerCertificate,
    timestampToken: kind === 'signature' ? parsed.signatureTimeStampToken : undefined,
  };
}

function knownSignature(
  { cms, certificates, signerCertificate, timestampToken, timestampTarget }: KnownSignature,
  fieldName: string,
): PdfSignature {
  return {
    kind: 'signature',
    fieldName,
    ...(cms ? { cms } : {}),
    certificates,
    signerCertificate,
    timestampToken,
    ...(timestampTarget ? { timestampTarget } : {}),
  };
}
