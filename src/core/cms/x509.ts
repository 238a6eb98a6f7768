/**
 * Node's X509Certificate for a DER certificate, kept for the certificates met again and again: a
 * batch checks every document's timestamp token against the same TSA chain and every signature
 * against the same signer, and parsing a certificate costs about a millisecond. Bounded.
 */
import { createHash, X509Certificate } from 'node:crypto';

const parsed = new Map<string, X509Certificate>();
const KEPT = 64;

export function x509Of(der: Uint8Array): X509Certificate {
  const key = createHash('sha256').update(der).digest('base64');
  let certificate = parsed.get(key);
  if (!certificate) {
    certificate = new X509Certificate(der);
    if (parsed.size >= KEPT) parsed.delete(parsed.keys().next().value!);
    parsed.set(key, certificate);
  }
  return certificate;
}
