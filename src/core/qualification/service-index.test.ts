import { X509Certificate } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { objectIdentifier, sequence, setOf, tlv, Tag } from '../cms/der.js';
import { issueTestCertificate, type TestIdentity } from '../cms/test-pki.js';
import { listEntry } from '../../../test/helpers/qualified-lists.js';
import type { TrustService, TrustedListCacheEntry } from '../trusted-list/model.js';
import { qualifyCertificate } from './determine.js';
import { attachIndex, indexTrustedList } from './list-index.js';
import { nameKey, normalizedName } from './name-key.js';
import { ServiceCertificateIndex } from './service-index.js';

const CA_QC = 'http://uri.etsi.org/TrstSvc/Svctype/CA/QC';
const GRANTED = 'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/granted';

/** A Name of one CN, as a PrintableString (the test PKI writes UTF8String). */
function printableName(commonName: string): Uint8Array {
  return sequence(
    setOf([sequence(objectIdentifier('2.5.4.3'), tlv(Tag.printableString, new TextEncoder().encode(commonName)))]),
  );
}

function service(der: Uint8Array, name = 'Example CA'): TrustService {
  return {
    provider: 'Example QTSP',
    providerTradeNames: [],
    name,
    type: CA_QC,
    identity: { certificates: [Buffer.from(der).toString('base64')], subjectNames: [], subjectKeyIdentifiers: [] },
    history: [{ status: GRANTED, from: '2016-07-01T00:00:00Z', additionalServiceInformation: [], qualifications: [] }],
  };
}

function entry(territory: string, services: TrustService[]): TrustedListCacheEntry {
  return listEntry(services, { territory });
}

/** The qualification of the leaf against `lists` (only the services found matter here). */
function qualifyLeaf(lists: TrustedListCacheEntry[]): ReturnType<typeof qualifyCertificate> {
  const now = new Date('2026-06-01T00:00:00Z');
  return qualifyCertificate({
    certificate: new Uint8Array(leaf.raw),
    chain: [],
    signingTime: now,
    validationTime: now,
    lists,
  });
}

/** The CA as the list has it (UTF8String, mixed case), and a leaf whose issuer field writes that name otherwise. */
let ca: TestIdentity;
let leaf: X509Certificate;
let otherCa: TestIdentity;

beforeAll(() => {
  ca = issueTestCertificate({ commonName: 'Example Qualified CA', ca: true, keyType: 'ec' });
  leaf = new X509Certificate(
    issueTestCertificate({
      commonName: 'Alice',
      keyType: 'ec',
      issuer: { ...ca, name: printableName('EXAMPLE QUALIFIED  CA ') },
    }).der,
  );
  otherCa = issueTestCertificate({ commonName: 'Another CA', ca: true, keyType: 'ec' });
});

describe('names compared as RFC 5280 §7.1 says', () => {
  it('ignores string type, case and extra white space; keeps other values apart', () => {
    expect(normalizedName('C=BE\nO=EXAMPLE TRUST  SERVICES\nCN= example qualified ca ')).toBe(
      normalizedName('C=BE\nO=Example Trust Services\nCN=Example Qualified CA'),
    );
    expect(nameKey('CN=Example CA')).toBe(nameKey('CN=EXAMPLE   CA'));
    expect(nameKey('CN=Example CA')).not.toBe(nameKey('CN=Example CA 2'));
    expect(nameKey('CN=Example CA')).not.toBe(nameKey('O=Example CA'));
    expect(normalizedName('CN=a+O=b')).toBe(normalizedName('O=B+CN=A'));
    expect(normalizedName('CN=a\\+b')).toBe('CN=a+b');
  });
});

describe('ServiceCertificateIndex', () => {
  it('finds the issuer whose name the certificate writes in another string type, case and spacing; its signature confirms it', () => {
    expect(leaf.issuer).not.toBe(new X509Certificate(ca.der).subject);
    expect(leaf.checkIssued(new X509Certificate(ca.der))).toBe(true); // OpenSSL compares names as RFC 5280 does
    const lists = [entry('BE', [service(otherCa.der, 'Another CA'), service(ca.der)])];
    const issuers = ServiceCertificateIndex.of(lists).issuersOf(leaf);
    expect(issuers.map((issuer) => Buffer.from(issuer.raw))).toEqual([Buffer.from(ca.der)]);
    expect(leaf.verify(issuers[0]!.publicKey)).toBe(true);
    const qualification = qualifyLeaf(lists);
    expect(qualification.services.map((found) => found.name)).toEqual(['Example CA']);
  });

  it('reads only the lists whose index has the name looked for', () => {
    const read: string[] = [];
    const fromIndex = (list: TrustedListCacheEntry): TrustedListCacheEntry => {
      const index = indexTrustedList(list);
      const lazy = {
        territory: list.territory,
        get snapshot() {
          read.push(list.territory);
          return list.snapshot;
        },
      };
      return attachIndex(lazy, index);
    };
    const lists = [
      fromIndex(entry('AT', [service(otherCa.der, 'Another CA')])),
      fromIndex(entry('BE', [service(ca.der)])),
    ];
    const qualification = qualifyLeaf(lists);
    expect(qualification.services.map((found) => found.territory)).toEqual(['BE']);
    expect(new Set(read)).toEqual(new Set(['BE']));
  });
});
