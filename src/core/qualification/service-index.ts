/**
 * The certificates the trusted lists give for their CA/QC and TSA/QTST services, found by name
 * without reading every list: real lists hold thousands, and a verification needs the few whose
 * subject is the name it looks for. Each list's index (list-index.ts, written beside the list in the
 * cache) maps the normalized subject names of its service certificates to their fingerprints; only a
 * list that has the name is read, and only the certificates with it are parsed. Names match as RFC
 * 5280 §7.1 says (name-key.ts), not byte for byte; the chain builder confirms an issuer by its signature.
 */
import { X509Certificate } from 'node:crypto';
import type { TrustedListCacheEntry } from '../trusted-list/model.js';
import { certificateFingerprint, fingerprintsNamed, indexOf, isQualifiedService } from './list-index.js';
import { issuerKey, subjectKey } from './name-key.js';

interface Located {
  /** Position of the list in `lists`. */
  list: number;
  fingerprint: string;
}

export class ServiceCertificateIndex {
  /** By subject key: where the lists have a certificate with that subject, in list order (as asked). */
  private readonly bySubject = new Map<string, Located[]>();
  /** Per list read: its CA/QC and TSA/QTST certificates (base64) by fingerprint. */
  private readonly certificatesOfList = new Map<number, Map<string, string[]>>();
  private readonly parsed = new Map<string, X509Certificate | null>();
  /** By X509SKI value: the lists with a CA/QC or TSA/QTST service identified by it (made when first asked). */
  private byKeyIdentifier: Map<string, number[]> | undefined;

  private static readonly cache = new WeakMap<readonly TrustedListCacheEntry[], ServiceCertificateIndex>();

  /** One index per set of lists (a verification asks for it once per chain). */
  static of(lists: readonly TrustedListCacheEntry[]): ServiceCertificateIndex {
    let index = ServiceCertificateIndex.cache.get(lists);
    if (!index) ServiceCertificateIndex.cache.set(lists, (index = new ServiceCertificateIndex(lists)));
    return index;
  }

  private constructor(private readonly lists: readonly TrustedListCacheEntry[]) {}

  /** Where the lists have a certificate whose subject has `key`, in list order (each list's index searched). */
  private located(key: string): Located[] {
    let found = this.bySubject.get(key);
    if (!found) {
      found = [];
      for (let list = 0; list < this.lists.length; list++) {
        const index = indexOf(this.lists[list] as TrustedListCacheEntry);
        if (index.verified && !index.isLotl)
          for (const fingerprint of fingerprintsNamed(index, key)) found.push({ list, fingerprint });
      }
      this.bySubject.set(key, found);
    }
    return found;
  }

  /** Whether `certificate` is itself one of the lists' service certificates. */
  includes(certificate: X509Certificate): boolean {
    const fingerprint = certificateFingerprint(certificate.raw);
    const base64 = certificate.raw.toString('base64');
    return this.located(subjectKey(certificate)).some(
      (located) =>
        located.fingerprint === fingerprint &&
        (this.certificatesIn(located.list).get(fingerprint) ?? []).includes(base64),
    );
  }

  /** The service certificates that may have issued `certificate` (their subject is its issuer's name). */
  issuersOf(certificate: X509Certificate): X509Certificate[] {
    return this.withSubjectKey(issuerKey(certificate));
  }

  /** The service certificates with the same subject as `certificate` (another certificate for the same CA). */
  sameSubjectAs(certificate: X509Certificate): X509Certificate[] {
    return this.withSubjectKey(subjectKey(certificate));
  }

  /**
   * The lists that may have a CA/QC or TSA/QTST service identified by one of `certificates` (DER,
   * base64) or one of `keyIdentifiers` (lower-case hex): the others have none, and their services need
   * not be read.
   */
  listsNaming(certificates: ReadonlySet<string>, keyIdentifiers: ReadonlySet<string>): Set<TrustedListCacheEntry> {
    const naming = new Set<TrustedListCacheEntry>();
    for (const ski of keyIdentifiers)
      for (const list of this.keyIdentifierLists().get(ski) ?? [])
        naming.add(this.lists[list] as TrustedListCacheEntry);
    for (const base64 of certificates) {
      const certificate = this.parsedCertificate(base64);
      if (!certificate) continue;
      const fingerprint = certificateFingerprint(certificate.raw);
      for (const located of this.located(subjectKey(certificate)))
        if (located.fingerprint === fingerprint) naming.add(this.lists[located.list] as TrustedListCacheEntry);
    }
    return naming;
  }

  private keyIdentifierLists(): Map<string, number[]> {
    if (!this.byKeyIdentifier) {
      this.byKeyIdentifier = new Map();
      this.lists.forEach((entry, list) => {
        const index = indexOf(entry);
        if (!index.verified || index.isLotl) return;
        for (const ski of index.keyIdentifiers)
          this.byKeyIdentifier?.set(ski, [...(this.byKeyIdentifier.get(ski) ?? []), list]);
      });
    }
    return this.byKeyIdentifier;
  }

  private parsedCertificate(base64: string): X509Certificate | null {
    let certificate = this.parsed.get(base64);
    if (certificate === undefined) this.parsed.set(base64, (certificate = parse(base64)));
    return certificate;
  }

  private withSubjectKey(key: string): X509Certificate[] {
    const found = new Set<string>();
    for (const { list, fingerprint } of this.located(key))
      for (const base64 of this.certificatesIn(list).get(fingerprint) ?? []) found.add(base64);
    return [...found].flatMap((base64) => {
      const certificate = this.parsedCertificate(base64);
      return certificate && subjectKey(certificate) === key ? [certificate] : [];
    });
  }

  /** The list's CA/QC and TSA/QTST certificates by fingerprint; reads the list (once) when it comes from the cache. */
  private certificatesIn(list: number): Map<string, string[]> {
    let byFingerprint = this.certificatesOfList.get(list);
    if (!byFingerprint) {
      byFingerprint = new Map();
      const snapshot = this.lists[list]?.snapshot;
      for (const service of snapshot?.isLotl === false ? snapshot.services : [])
        if (isQualifiedService(service))
          for (const base64 of service.identity.certificates) {
            const fingerprint = certificateFingerprint(Buffer.from(base64, 'base64'));
            const same = byFingerprint.get(fingerprint) ?? [];
            if (!same.includes(base64)) byFingerprint.set(fingerprint, [...same, base64]);
          }
      this.certificatesOfList.set(list, byFingerprint);
    }
    return byFingerprint;
  }
}

function parse(base64: string): X509Certificate | null {
  try {
    return new X509Certificate(Buffer.from(base64, 'base64'));
  } catch {
    return null;
  }
}
