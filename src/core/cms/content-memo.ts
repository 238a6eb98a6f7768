/**
 * What is computed from DER bytes (a parsed certificate, its fields), remembered by the array
 * itself and, bounded, by its SHA-256: a batch meets the same few certificates in every
 * timestamp token and signature, often as the same interned array (`internedCertificate`).
 */
import { createHash } from 'node:crypto';

export function memoByContent<T>(make: (der: Uint8Array) => T, kept = 64): (der: Uint8Array) => T {
  const byInstance = new WeakMap<Uint8Array, T>();
  const byDigest = new Map<string, T>();
  return (der) => {
    let value = byInstance.get(der);
    if (value !== undefined) return value;
    const key = createHash('sha256').update(der).digest('base64');
    value = byDigest.get(key);
    if (value === undefined) {
      value = make(der);
      if (byDigest.size >= kept) byDigest.delete(byDigest.keys().next().value!);
      byDigest.set(key, value);
    }
    byInstance.set(der, value);
    return value;
  };
}
