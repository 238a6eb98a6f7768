/**
 * The certificates the trusted lists give for their CA/QC and TSA/QTST services, found by name
 * without parsing them all: real lists hold thousands, and a verification needs the few whose
 * subject is the name it looks for. The DER of every certificate is kept in one buffer and searched
 * for the name's DER (a certificate's issuer field is its issuer's subject, copied byte for byte).
 */
import { X509Certificate } from 'node:crypto';
import * as asn1js from 'asn1js';
import type { TrustedListCacheEntry } from '../trusted-list/model.js';
import { SERVICE_CA_QC, SERVICE_TSA_QTST } from './uris.js';

export class ServiceCertificateIndex {
  private readonly blob: Buffer;
  /** Where each certificate starts in `blob`, ascending. */
  private readonly starts: number[] = [];
  private readonly base64: string[] = [];
  private readonly known = new Set<string>();
  private readonly parsed = new Map<number, X509Certificate | null>();

  private static readonly cache = new WeakMap<readonly TrustedListCacheEntry[], ServiceCertificateIndex>();

  /** One index per set of lists (a verification asks for it once per chain). */
  static of(lists: readonly TrustedListCacheEntry[]): ServiceCertificateIndex {
    let index = ServiceCertificateIndex.cache.get(lists);
    if (!index) ServiceCertificateIndex.cache.set(lists, (index = new ServiceCertificateIndex(lists)));
    return index;
  }

  private constructor(lists: readonly TrustedListCacheEntry[]) {
    const parts: Buffer[] = [];
    let offset = 0;
    for (const entry of lists)
      for (const service of entry.snapshot?.isLotl === false ? entry.snapshot.services : [])
        if (service.type === SERVICE_CA_QC || service.type === SERVICE_TSA_QTST)
          for (const base64 of service.identity.certificates) {
            if (this.known.has(base64)) continue;
            this.known.add(base64);
            const der = Buffer.from(base64, 'base64');
            this.starts.push(offset);
            this.base64.push(base64);
            parts.push(der);
            offset += der.length;
          }
    this.blob = Buffer.concat(parts);
  }

  /** Whether `certificate` is itself one of the lists' service certificates. */
  includes(certificate: X509Certificate): boolean {
    return this.known.has(certificate.raw.toString('base64'));
  }

  /** The service certificates that may have issued `certificate` (their subject is its issuer). */
  issuersOf(certificate: X509Certificate): X509Certificate[] {
    const names = namesOf(certificate);
    return names ? this.containing(names.issuer).filter((candidate) => candidate.subject === certificate.issuer) : [];
  }

  /** The service certificates with the same subject as `certificate` (another certificate for the same CA). */
  sameSubjectAs(certificate: X509Certificate): X509Certificate[] {
    const names = namesOf(certificate);
    return names ? this.containing(names.subject).filter((candidate) => candidate.subject === certificate.subject) : [];
  }

  private containing(needle: Uint8Array): X509Certificate[] {
    const found = new Set<number>();
    for (let at = this.blob.indexOf(needle); at !== -1; at = this.blob.indexOf(needle, at + 1))
      found.add(this.certificateAt(at));
    return [...found].flatMap((index) => {
      let certificate = this.parsed.get(index);
      if (certificate === undefined) {
        certificate = parse(Buffer.from(this.base64[index] as string, 'base64'));
        this.parsed.set(index, certificate);
      }
      return certificate ? [certificate] : [];
    });
  }

  private certificateAt(offset: number): number {
    let low = 0;
    let high = this.starts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((this.starts[middle] as number) <= offset) low = middle;
      else high = middle - 1;
    }
    return low;
  }
}

const names = new WeakMap<X509Certificate, { issuer: Uint8Array; subject: Uint8Array } | null>();

/** The DER of a certificate's issuer and subject names, as encoded in it. */
function namesOf(certificate: X509Certificate): { issuer: Uint8Array; subject: Uint8Array } | undefined {
  let found = names.get(certificate);
  if (found === undefined) {
    found = null;
    const outer = asn1js.fromBER(certificate.raw).result;
    const tbs = outer instanceof asn1js.Sequence ? outer.valueBlock.value[0] : undefined;
    if (tbs instanceof asn1js.Sequence) {
      const fields = tbs.valueBlock.value;
      const skip = fields[0]?.idBlock.tagClass === 3 ? 1 : 0; // [0] version
      const issuer = fields[skip + 2];
      const subject = fields[skip + 4];
      if (issuer && subject) found = { issuer: issuer.valueBeforeDecodeView, subject: subject.valueBeforeDecodeView };
    }
    names.set(certificate, found);
  }
  return found ?? undefined;
}

function parse(der: Uint8Array): X509Certificate | null {
  try {
    return new X509Certificate(der);
  } catch {
    return null;
  }
}
