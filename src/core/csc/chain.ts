/**
 * The signer's chain as the CMS should carry it. A service may return the chain without its root,
 * or only the signer's certificate (`certificates: "chain"` not honoured); the chain is complete
 * when it ends in a self-signed certificate or in one a trust anchor issued. Pure: the next step
 * says what to look for, the io layer fetches it (AIA caIssuers) and comes back.
 */
import { X509Certificate } from 'node:crypto';
import { issuedBy, oneLine } from '../certificate-links.js';

export type ChainStep =
  | { kind: 'complete' }
  /** A trust anchor that is not itself a root (an intermediate kept with the roots) issued the last certificate: append it and go on. */
  | { kind: 'append'; certificate: Uint8Array; from: 'trust anchors' }
  /** The last certificate's issuer is to be fetched from one of these URLs. */
  | { kind: 'fetch'; urls: string[]; subject: string; issuer: string }
  | { kind: 'stuck'; subject: string; issuer: string };

/** What the chain, leaf first, still lacks. */
export function nextChainStep(chain: readonly Uint8Array[], anchors: readonly Uint8Array[]): ChainStep {
  const last = chain.at(-1);
  if (!last) return { kind: 'stuck', subject: '(none)', issuer: '(none)' };
  const lastX509 = new X509Certificate(last);
  if (selfSigned(lastX509)) return { kind: 'complete' };
  for (const anchor of anchors) {
    const anchorX509 = new X509Certificate(anchor);
    if (!issuedBy(lastX509, anchorX509)) continue;
    if (selfSigned(anchorX509) || chain.some((der) => Buffer.compare(der, anchor) === 0)) return { kind: 'complete' };
    return { kind: 'append', certificate: anchor, from: 'trust anchors' };
  }
  const names = { subject: oneLine(lastX509.subject), issuer: oneLine(lastX509.issuer) };
  const urls = caIssuersUrls(lastX509);
  return urls.length > 0 ? { kind: 'fetch', urls, ...names } : { kind: 'stuck', ...names };
}

/** Whether `issuer` signed the last certificate of `chain` (a fetched caIssuers answer is checked before it is used). */
export function issuesLast(chain: readonly Uint8Array[], issuer: Uint8Array): boolean {
  const last = chain.at(-1);
  try {
    return last !== undefined && issuedBy(new X509Certificate(last), new X509Certificate(issuer));
  } catch {
    return false;
  }
}

function selfSigned(certificate: X509Certificate): boolean {
  return certificate.subject === certificate.issuer && issuedBy(certificate, certificate);
}

/** The http(s) caIssuers locations of the certificate's Authority Information Access. */
export function caIssuersUrls(certificate: X509Certificate): string[] {
  return [...(certificate.infoAccess ?? '').matchAll(/^CA Issuers - URI:(https?:\/\/\S+)$/gim)].map(
    (match) => match[1]!,
  );
}
