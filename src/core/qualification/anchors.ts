/**
 * Which trust services a certificate's chain reaches, as TS 119 615 and DSS take trust anchors: only
 * through an X509Certificate of a service's ServiceDigitalIdentity whose key verified a certificate
 * of the chain built from the certificate (subject name and key identifiers only narrow the search,
 * never match alone). A rotated CA key's historical certificates count the same way. For a TSA, its
 * own certificate may be the service's identity when its key verified the token (`self`), and then
 * only with the same name and the same key.
 */
import { X509Certificate } from 'node:crypto';
import type { TrustService, TrustedListCacheEntry, TrustedListSnapshot } from '../trusted-list/model.js';
import type { QualificationCertificate } from './certificate.js';
import { sameSubject } from './name-key.js';
import { issuedBy, oneLine } from '../certificate-links.js';
import { ServiceCertificateIndex } from './service-index.js';

export interface ReachedService {
  list: TrustedListSnapshot;
  service: TrustService;
  /** A list added with `esign trust add`: its name and address. */
  added?: { name: string; url: string };
}

export interface ChainAnchors {
  /** The chain built from the certificate, each link verified by its issuer's signature; the certificate first. */
  path: X509Certificate[];
  services: ReachedService[];
}

export function serviceAnchors(
  certificate: QualificationCertificate,
  chain: readonly Uint8Array[],
  lists: readonly TrustedListCacheEntry[],
  self: boolean,
): ChainAnchors {
  const path = verifiedPath(
    certificate.x509,
    chain.flatMap((der) => parse(der) ?? []),
  );
  const index = ServiceCertificateIndex.of(lists);
  const anchors = new Set<string>();
  for (const subject of path)
    for (const issuer of index.issuersOf(subject))
      if (issuedBy(subject, issuer)) anchors.add(issuer.raw.toString('base64'));
  if (self)
    for (const listed of index.sameSubjectAs(certificate.x509))
      if (sameKeyAndName(certificate.x509, listed)) anchors.add(listed.raw.toString('base64'));
  const services: ReachedService[] = [];
  if (anchors.size === 0) return { path, services };
  const naming = index.listsNaming(anchors, new Set()); // the others' services are not read
  for (const entry of lists) {
    if (!naming.has(entry)) continue;
    const list = entry.snapshot;
    if (!list || list.isLotl) continue;
    for (const service of list.services)
      if (service.identity.certificates.some((base64) => anchors.has(base64)))
        services.push({
          list,
          service,
          ...(entry.added ? { added: { name: entry.added.name, url: entry.added.url } } : {}),
        });
  }
  return { path, services };
}

/** From `leaf`, each next certificate of `pool` whose key verifies the current one (name chaining and signature), up to a self-signed one. */
export function verifiedPath(leaf: X509Certificate, pool: readonly X509Certificate[]): X509Certificate[] {
  const path = [leaf];
  let current = leaf;
  for (let depth = 0; depth < 10 && !selfIssued(current); depth++) {
    const next = pool.find(
      (candidate) => !path.some((seen) => seen.raw.equals(candidate.raw)) && issuedBy(current, candidate),
    );
    if (!next) break;
    path.push(next);
    current = next;
  }
  return path;
}

/**
 * Where the chain a signing service sent (signer first, each certificate's issuer after it) breaks:
 * the first certificate the next one did not sign, in one line; undefined when every link verifies.
 */
export function chainBreak(certificates: readonly Uint8Array[]): string | undefined {
  const parsed = certificates.map(parse);
  for (let i = 0; i + 1 < parsed.length; i++) {
    const subject = parsed[i];
    const issuer = parsed[i + 1];
    if (!subject || !issuer) return `certificate ${i + (subject ? 2 : 1)} of the chain does not parse`;
    if (!issuedBy(subject, issuer))
      return `${oneLine(subject.subject)} is not signed by the next certificate of the chain, ${oneLine(issuer.subject)}`;
  }
  return undefined;
}

function selfIssued(certificate: X509Certificate): boolean {
  return issuedBy(certificate, certificate);
}

function sameKeyAndName(a: X509Certificate, b: X509Certificate): boolean {
  try {
    return sameSubject(a, b) && a.publicKey.equals(b.publicKey);
  } catch {
    return false;
  }
}

function parse(der: Uint8Array): X509Certificate | undefined {
  try {
    return new X509Certificate(der);
  } catch {
    return undefined;
  }
}
