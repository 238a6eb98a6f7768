/**
 * The Document Security Store (PAdES B-LT): certificates, OCSP responses and CRLs as streams in a
 * `/DSS` dictionary of the catalog, added by an incremental update after the signature.
 */
import { deflateSync } from 'node:zlib';
import { itemDigest } from '../ltv/item-digest.js';
import type { PdfDocument } from './document.js';
import { IncrementalUpdate } from './incremental.js';
import { PdfRef, PdfStream, dict, name } from './objects.js';
import type { PdfDict } from './objects.js';

/** Validation material for the DSS, each item DER-encoded. */
export interface DssMaterial {
  certs?: Uint8Array[];
  ocsps?: Uint8Array[];
  crls?: Uint8Array[];
}

/**
 * Builds the update that adds `material` to the document's DSS (created if absent; existing
 * entries are kept). Returns the bytes to append after the document.
 */
export async function buildDssUpdate(doc: PdfDocument, material: DssMaterial): Promise<Uint8Array> {
  const { ref: catalogRef, dict: catalog } = await doc.catalog();
  const u = new IncrementalUpdate(doc);
  const dssValue = catalog.get('DSS');
  const dss: PdfDict = (await doc.resolveDict(dssValue))?.clone() ?? dict({ Type: name('DSS') });
  const seen = new Set<string>();
  for (const [key, items] of [
    ['Certs', material.certs],
    ['OCSPs', material.ocsps],
    ['CRLs', material.crls],
  ] as const) {
    const refs = [...((await doc.resolveArray(dss.get(key))) ?? [])];
    for (const item of items ?? []) {
      const digest = itemDigest(item);
      if (seen.has(digest)) continue;
      seen.add(digest);
      refs.push(u.add(new PdfStream(dict({ Filter: name('FlateDecode') }), deflated(digest, item))));
    }
    if (refs.length > 0) dss.set(key, refs);
  }
  if (dssValue instanceof PdfRef) u.set(dssValue, dss);
  else u.set(catalogRef, catalog.clone().set('DSS', u.add(dss)));
  return u.serialize().bytes;
}

/**
 * Compressed DSS items by SHA-256: a batch writes the same few certificates, OCSP responses and
 * CRLs into every document of a window, and compressing them again for each was most of the DSS's
 * cost. Bounded; an entry is the compressed DER of public validation data, never document bytes.
 */
const compressed = new Map<string, Uint8Array>();
const COMPRESSED_ITEMS = 64;

function deflated(digest: string, item: Uint8Array): Uint8Array {
  let bytes = compressed.get(digest);
  if (!bytes) {
    bytes = new Uint8Array(deflateSync(item));
    if (compressed.size >= COMPRESSED_ITEMS) compressed.delete(compressed.keys().next().value!);
    compressed.set(digest, bytes);
  }
  return bytes;
}
