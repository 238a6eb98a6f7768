/** The two facts of X.509 every chain walk asks: did this issuer sign that certificate, and a name in one line. */
import type { X509Certificate } from 'node:crypto';

/** Whether `issuer` issued `subject`: the names chain and `issuer`'s key verifies `subject`'s signature. */
export function issuedBy(subject: X509Certificate, issuer: X509Certificate): boolean {
  try {
    return subject.checkIssued(issuer) && subject.verify(issuer.publicKey);
  } catch {
    return false;
  }
}

/** A distinguished name as Node prints it (one attribute per line), on one line. */
export function oneLine(name: string): string {
  return name.split('\n').filter(Boolean).join(', ');
}
