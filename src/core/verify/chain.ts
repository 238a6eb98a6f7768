/**
 * Certificate paths for verification: from a leaf through a pool of certificates (the CMS's, the
 * timestamp token's, the DSS's) to one of the trust anchors, with each certificate's validity
 * period checked at the time that matters (a trusted timestamp's time, else now).
 */
import { X509Certificate } from 'node:crypto';
import type { CertificateSummary } from './types.js';
import { issuedBy, oneLine } from '../certificate-links.js';

export interface ChainBuild {
  /** Leaf first; ends with the anchor when `anchored`. */
  path: X509Certificate[];
  anchored: boolean;
  /** Why no anchor was reached. */
  untrustedReason: string | undefined;
  /** Certificates in the path not valid at `at`, with the reason. */
  validityProblems: string[];
}

/** The certificate, or undefined when it does not parse or its validity dates are not dates. */
export function certificate(der: Uint8Array): X509Certificate | undefined {
  try {
    const cert = new X509Certificate(der);
    return Number.isNaN(Date.parse(cert.validFrom)) || Number.isNaN(Date.parse(cert.validTo)) ? undefined : cert;
  } catch {
    return undefined;
  }
}

export function summarize(cert: X509Certificate): CertificateSummary {
  return {
    subject: oneLine(cert.subject),
    issuer: oneLine(cert.issuer),
    serialNumber: normalizeSerial(cert.serialNumber),
    notBefore: new Date(cert.validFrom).toISOString(),
    notAfter: new Date(cert.validTo).toISOString(),
  };
}

/** Lower-case hex without leading zero bytes. */
export function normalizeSerial(hex: string): string {
  const clean = hex.toLowerCase().replace(/[^0-9a-f]/g, '');
  return clean.replace(/^(00)+(?=..)/, '') || '0';
}

export function validAt(cert: X509Certificate, at: Date): boolean {
  return new Date(cert.validFrom).getTime() <= at.getTime() && at.getTime() <= new Date(cert.validTo).getTime();
}

/** More anchors, looked up for the certificate at hand (the trusted lists' services): is it one, and which may have issued it. */
export interface AnchorLookup {
  includes(certificate: X509Certificate): boolean;
  issuersOf(certificate: X509Certificate): X509Certificate[];
}

/** Builds the path from `leaf` to an anchor through `pool`, and checks validity periods at `at`. */
export function buildChain(
  leaf: X509Certificate,
  pool: readonly X509Certificate[],
  anchors: readonly X509Certificate[],
  at: Date,
  more?: AnchorLookup,
): ChainBuild {
  // The configured anchors first: their path is the longer one, whose CAs get their revocation checked.
  const configured = walkChain(leaf, pool, anchors, at);
  if (configured.anchored || !more) return configured;
  const listed = walkChain(leaf, pool, anchors, at, more);
  return listed.anchored ? listed : configured;
}

function walkChain(
  leaf: X509Certificate,
  pool: readonly X509Certificate[],
  anchors: readonly X509Certificate[],
  at: Date,
  more?: AnchorLookup,
): ChainBuild {
  const path: X509Certificate[] = [leaf];
  let anchored = false;
  let untrustedReason: string | undefined;
  let current = leaf;
  for (let depth = 0; depth < 10; depth++) {
    if (anchors.some((anchor) => anchor.raw.equals(current.raw)) || more?.includes(current)) {
      anchored = true;
      break;
    }
    const anchor = [...anchors, ...(more?.issuersOf(current) ?? [])].find((candidate) => issuedBy(current, candidate));
    if (anchor) {
      path.push(anchor);
      anchored = true;
      break;
    }
    const next = pool.find(
      (candidate) =>
        !path.some((seen) => seen.raw.equals(candidate.raw)) && candidate.ca && issuedBy(current, candidate),
    );
    if (!next) {
      const selfSigned = current.checkIssued(current);
      untrustedReason = selfSigned
        ? `the chain ends at ${oneLine(current.subject)}, which is not a trust anchor`
        : `the issuer of ${oneLine(current.subject)} (${oneLine(current.issuer)}) is neither available nor a trust anchor`;
      break;
    }
    path.push(next);
    current = next;
  }
  if (!anchored && untrustedReason === undefined) untrustedReason = 'the chain is too long';
  const validityProblems = path
    .filter((cert) => !validAt(cert, at))
    .map((cert) =>
      new Date(cert.validTo).getTime() < at.getTime()
        ? `${oneLine(cert.subject)} expired on ${new Date(cert.validTo).toISOString()} (checked at ${at.toISOString()})`
        : `${oneLine(cert.subject)} is not valid before ${new Date(cert.validFrom).toISOString()} (checked at ${at.toISOString()})`,
    );
  return { path, anchored, untrustedReason, validityProblems };
}

/** Parses DER certificates, skipping what does not parse and duplicates. */
export function certificatePool(...lists: ReadonlyArray<readonly Uint8Array[]>): X509Certificate[] {
  const pool: X509Certificate[] = [];
  for (const list of lists) {
    for (const der of list) {
      const cert = certificate(der);
      if (cert && !pool.some((known) => known.raw.equals(cert.raw))) pool.push(cert);
    }
  }
  return pool;
}
