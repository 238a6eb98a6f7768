/**
 * Node's X509Certificate for a DER certificate, kept for the certificates met again and again: a
 * batch checks every document's timestamp token against the same TSA chain and every signature
 * against the same signer, and parsing a certificate costs about a millisecond. Bounded.
 */
import { X509Certificate } from 'node:crypto';
import { memoByContent } from './content-memo.js';

export const x509Of: (der: Uint8Array) => X509Certificate = memoByContent((der) => new X509Certificate(der));

/**
 * One instance per certificate content (a copy, never a view into what it was read from): a
 * batch's timestamp tokens all carry the same TSA chain, so what is kept of each token shares one
 * chain, and the caches keyed by instance (parsed certificates, DSS digests) find it without
 * hashing it again. Bounded.
 */
export function internedCertificate(der: Uint8Array): Uint8Array {
  const bucket = interned.get(der.length);
  const known = bucket?.find((candidate) => Buffer.compare(candidate, der) === 0);
  if (known) return known;
  if (internedCount >= INTERNED_KEPT) {
    interned.clear();
    internedCount = 0;
  }
  const copy = Uint8Array.from(der);
  if (bucket) bucket.push(copy);
  else interned.set(der.length, [copy]);
  internedCount++;
  return copy;
}
const interned = new Map<number, Uint8Array[]>();
let internedCount = 0;
const INTERNED_KEPT = 64;
