import { X509Certificate, generateKeyPairSync } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCertificate } from '../../sandbox/pki.js';
import {
  KU,
  authorityKeyId,
  basicConstraints,
  certificatePolicies,
  dn,
  issue,
  keyUsage,
  qcStatements,
  subjectKeyId,
} from '../../sandbox/pki.js';
import type { CriteriaList, TrustService, TrustedListCacheEntry, TrustedListSnapshot } from '../trusted-list/model.js';
import { listEntry } from '../../../test/helpers/qualified-lists.js';
import { qualificationCertificate } from './certificate.js';
import { matchesCriteria } from './criteria.js';
import { ServiceCertificateIndex, qualifyCertificate, qualifyTimestamp } from './index.js';

const EXT = 'http://uri.etsi.org/TrstSvc/TrustedList/SvcInfoExt/';
const STATUS = 'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/';
const CA_QC = 'http://uri.etsi.org/TrstSvc/Svctype/CA/QC';
const QCP_N = '0.4.0.194112.1.0';
const QCP_N_QSCD = '0.4.0.194112.1.2';

const DAY = 86_400_000;
const ISSUED = new Date('2025-03-01T00:00:00Z');
const SIGNED = new Date('2025-09-01T00:00:00Z');
const NOW = new Date('2025-10-01T00:00:00Z');

function rsaKey(): KeyObject {
  return generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
}

let root: IssuedCertificate;
let ca: IssuedCertificate;
let otherCa: IssuedCertificate;
let leafKey: KeyObject;

beforeAll(() => {
  const rootKey = rsaKey();
  root = issue({
    name: 'root',
    subject: dn('Qualification Test Root'),
    issuer: undefined,
    subjectKey: rootKey,
    issuerKey: rootKey,
    notBefore: new Date(ISSUED.getTime() - 1000 * DAY),
    notAfter: new Date(NOW.getTime() + 1000 * DAY),
    extensions: (ski) => [basicConstraints(true), keyUsage(KU.keyCertSign | KU.cRLSign), subjectKeyId(ski)],
  });
  const intermediate = (name: string): IssuedCertificate =>
    issue({
      name,
      subject: dn(name),
      issuer: root,
      subjectKey: rsaKey(),
      issuerKey: root.privateKey,
      notBefore: new Date(ISSUED.getTime() - 500 * DAY),
      notAfter: new Date(NOW.getTime() + 500 * DAY),
      extensions: (ski) => [
        basicConstraints(true, 0),
        keyUsage(KU.keyCertSign | KU.cRLSign),
        subjectKeyId(ski),
        authorityKeyId(root),
      ],
    });
  ca = intermediate('Qualified Test CA');
  otherCa = intermediate('Unlisted Test CA');
  leafKey = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
});

interface LeafOptions {
  issuer?: IssuedCertificate;
  qc?: { types: Array<'esign' | 'eseal' | 'web'>; sscd: boolean };
  policies?: string[];
  keyUsageBits?: number;
}

function leaf(options: LeafOptions = {}): Uint8Array {
  const issuer = options.issuer ?? ca;
  return issue({
    name: 'leaf',
    subject: dn('Signer Test'),
    issuer,
    subjectKey: leafKey,
    issuerKey: issuer.privateKey,
    notBefore: ISSUED,
    notAfter: new Date(NOW.getTime() + 300 * DAY),
    extensions: (ski) => [
      basicConstraints(false),
      keyUsage(options.keyUsageBits ?? KU.digitalSignature | KU.nonRepudiation),
      ...(options.qc ? [qcStatements(options.qc)] : []),
      ...(options.policies ? [certificatePolicies(options.policies)] : []),
      subjectKeyId(ski),
      authorityKeyId(issuer),
    ],
  }).certificate;
}

const qesLeaf = (): Uint8Array => leaf({ qc: { types: ['esign'], sscd: true }, policies: [QCP_N_QSCD] });

function criteria(partial: Partial<CriteriaList> = {}): CriteriaList {
  return {
    assert: 'atLeastOne',
    keyUsage: [],
    policySets: [],
    extendedKeyUsage: [],
    subjectAttributes: [],
    criteriaLists: [],
    ...partial,
  };
}

function policyQualifier(qualifier: string, policy: string): { qualifiers: string[]; criteria: CriteriaList } {
  return { qualifiers: [`${EXT}${qualifier}`], criteria: criteria({ policySets: [[policy]] }) };
}

function caService(overrides: Partial<TrustService> = {}): TrustService {
  return {
    provider: 'Test Provider SA',
    providerTradeNames: [],
    name: 'Qualified Test CA',
    type: CA_QC,
    identity: {
      certificates: [Buffer.from(ca.certificate).toString('base64')],
      subjectNames: [],
      subjectKeyIdentifiers: [],
    },
    history: [
      {
        status: `${STATUS}granted`,
        from: '2020-01-01T00:00:00Z',
        additionalServiceInformation: [`${EXT}ForeSignatures`, `${EXT}ForeSeals`],
        qualifications: [policyQualifier('QCWithQSCD', QCP_N_QSCD), policyQualifier('QCNoQSCD', QCP_N)],
      },
    ],
    ...overrides,
  };
}

function list(services: TrustService[], overrides: Partial<TrustedListSnapshot> = {}): TrustedListCacheEntry {
  return listEntry(services, { sequenceNumber: 42, nextUpdate: '2026-03-20T00:00:00Z', ...overrides });
}

function qualify(certificate: Uint8Array, lists: TrustedListCacheEntry[], issuer = ca) {
  return qualifyCertificate({
    certificate,
    chain: [issuer.certificate, root.certificate],
    signingTime: SIGNED,
    validationTime: NOW,
    lists,
  });
}

describe('criteria lists', () => {
  const facts = () =>
    qualificationCertificate(leaf({ policies: [QCP_N_QSCD, '1.2.3.4'], keyUsageBits: KU.nonRepudiation }));

  it('KeyUsage: every bit it names must have the value it gives', () => {
    expect(matchesCriteria(criteria({ keyUsage: [{ nonRepudiation: true }] }), facts())).toBe(true);
    expect(matchesCriteria(criteria({ keyUsage: [{ nonRepudiation: true, digitalSignature: false }] }), facts())).toBe(
      true,
    );
    expect(matchesCriteria(criteria({ keyUsage: [{ digitalSignature: true }] }), facts())).toBe(false);
    expect(matchesCriteria(criteria({ keyUsage: [{ contentCommitment: true }] }), facts())).toBe(true);
  });

  it('PolicySet: every OID of a set must be present', () => {
    expect(matchesCriteria(criteria({ policySets: [[QCP_N_QSCD, '1.2.3.4']] }), facts())).toBe(true);
    expect(matchesCriteria(criteria({ policySets: [[QCP_N_QSCD, '1.2.3.5']] }), facts())).toBe(false);
  });

  it('assert all, atLeastOne and none', () => {
    const items = { keyUsage: [{ nonRepudiation: true }], policySets: [[QCP_N]] };
    expect(matchesCriteria(criteria({ assert: 'all', ...items }), facts())).toBe(false);
    expect(matchesCriteria(criteria({ assert: 'atLeastOne', ...items }), facts())).toBe(true);
    expect(matchesCriteria(criteria({ assert: 'none', policySets: [[QCP_N]] }), facts())).toBe(true);
    expect(matchesCriteria(criteria({ assert: 'none', ...items }), facts())).toBe(false);
  });

  it('nested lists are criteria of their own', () => {
    const nested = criteria({
      assert: 'all',
      keyUsage: [{ nonRepudiation: true }],
      criteriaLists: [criteria({ assert: 'none', policySets: [[QCP_N]] })],
    });
    expect(matchesCriteria(nested, facts())).toBe(true);
    const failing = criteria({
      assert: 'all',
      criteriaLists: [criteria({ assert: 'atLeastOne', policySets: [[QCP_N]] })],
    });
    expect(matchesCriteria(failing, facts())).toBe(false);
  });

  it('subject attributes and extended key usage', () => {
    expect(matchesCriteria(criteria({ subjectAttributes: [['2.5.4.3', '2.5.4.10']] }), facts())).toBe(true);
    expect(matchesCriteria(criteria({ subjectAttributes: [['2.5.4.97']] }), facts())).toBe(false);
    expect(matchesCriteria(criteria({ extendedKeyUsage: [['1.3.6.1.5.5.7.3.8']] }), facts())).toBe(false);
  });

  it('a criteria list with a QcStatement qualifier applies only where it matches', () => {
    const service = caService({
      history: [
        {
          ...caService().history[0]!,
          qualifications: [
            {
              qualifiers: [`${EXT}QCWithQSCD`],
              criteria: criteria({ assert: 'all', keyUsage: [{ nonRepudiation: true }], policySets: [[QCP_N_QSCD]] }),
            },
          ],
        },
      ],
    });
    const matching = leaf({
      qc: { types: ['esign'], sscd: false },
      policies: [QCP_N_QSCD],
      keyUsageBits: KU.nonRepudiation,
    });
    const other = leaf({
      qc: { types: ['esign'], sscd: false },
      policies: [QCP_N_QSCD],
      keyUsageBits: KU.digitalSignature,
    });
    expect(qualify(matching, [list([service])]).name).toBe('QESig');
    expect(qualify(other, [list([service])]).name).toBe('AdESig-QC');
  });
});

describe('qualifyTimestamp', () => {
  const tsaService = (status: string, from = '2020-01-01T00:00:00Z'): TrustService =>
    caService({
      type: 'http://uri.etsi.org/TrstSvc/Svctype/TSA/QTST',
      name: 'Qualified TSA',
      identity: {
        certificates: [Buffer.from(ca.certificate).toString('base64')],
        subjectNames: [],
        subjectKeyIdentifiers: [],
      },
      history: [{ status: `${STATUS}${status}`, from, additionalServiceInformation: [], qualifications: [] }],
    });
  const qualifyTsa = (lists: TrustedListCacheEntry[]) =>
    qualifyTimestamp({
      certificate: ca.certificate,
      chain: [root.certificate],
      time: SIGNED,
      validationTime: NOW,
      lists,
      tokenVerified: true,
    });

  it('a TSA/QTST service granted at the token time makes a qualified time stamp', () => {
    expect(qualifyTsa([list([tsaService('granted')])])).toMatchObject({
      name: 'QTSA',
      qualified: true,
      services: [{ name: 'Qualified TSA' }],
    });
  });

  it('not when the service was withdrawn, nor a CA/QC service; N/A when no list names it; an expired list warns', () => {
    expect(qualifyTsa([list([tsaService('withdrawn', '2025-01-01T00:00:00Z')])])).toMatchObject({ name: 'TSA' });
    expect(qualifyTsa([list([caService()])])).toMatchObject({ name: 'TSA', qualified: false });
    expect(
      qualifyTimestamp({
        certificate: otherCa.certificate,
        chain: [root.certificate],
        time: SIGNED,
        validationTime: NOW,
        lists: [list([tsaService('granted')])],
        tokenVerified: true,
      }),
    ).toMatchObject({ name: 'N/A', qualified: false });
    expect(qualifyTsa([list([tsaService('granted')], { nextUpdate: '2025-09-01T00:00:00Z' })])).toMatchObject({
      name: 'QTSA',
      warnings: [expect.stringMatching(/^trusted list BE expired/)],
    });
  });
});

describe('ServiceCertificateIndex', () => {
  it('finds the listed issuer of a certificate by name among the others, and tells a listed certificate', () => {
    const other = caService({
      name: 'Other',
      identity: {
        certificates: [Buffer.from(otherCa.certificate).toString('base64')],
        subjectNames: [],
        subjectKeyIdentifiers: [],
      },
    });
    const rootService = caService({
      identity: {
        certificates: [Buffer.from(root.certificate).toString('base64')],
        subjectNames: [],
        subjectKeyIdentifiers: [],
      },
    });
    const index = ServiceCertificateIndex.of([list([other, caService(), rootService])]);
    const signer = new X509Certificate(qesLeaf());
    expect(index.issuersOf(signer).map((cert) => cert.subject)).toEqual([new X509Certificate(ca.certificate).subject]);
    expect(
      index.issuersOf(new X509Certificate(ca.certificate)).map((cert) => cert.raw.equals(root.certificate)),
    ).toEqual([true]);
    expect(index.sameSubjectAs(new X509Certificate(otherCa.certificate))).toHaveLength(1);
    expect(index.includes(new X509Certificate(ca.certificate))).toBe(true);
    expect(index.includes(signer)).toBe(false);
  });
});
