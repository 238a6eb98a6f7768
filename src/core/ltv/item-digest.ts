import { createHash } from 'node:crypto';

/**
 * SHA-256 (hex) of a certificate, OCSP response or CRL: what tells two items of validation data
 * apart. Remembered per array: a window's documents share the same arrays.
 */
export function itemDigest(item: Uint8Array): string {
  let digest = digests.get(item);
  if (digest === undefined) {
    digest = createHash('sha256').update(item).digest('hex');
    digests.set(item, digest);
  }
  return digest;
}

const digests = new WeakMap<Uint8Array, string>();
