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
        qualifications: [policyQualifier('QCWithSSCD', QCP_N_QSCD), policyQualifier('QCNoSSCD', QCP_N)],
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

describe('qualifyCertificate', () => {
  it('names a QC for e-signatures on a QSCD, from a granted CA/QC service, a QESig and says which service', () => {
    const result = qualify(qesLeaf(), [list([caService()])]);
    expect(result).toMatchObject({
      name: 'QESig',
      qualifiedAtIssuance: true,
      qualifiedAtSigning: true,
      type: 'esig',
      qscd: 'yes',
      test: false,
      services: [{ provider: 'Test Provider SA', name: 'Qualified Test CA', territory: 'BE', sequenceNumber: 42 }],
    });
    expect(result.reason).toBeUndefined();
  });

  it('names a qualified seal certificate on a QSCD a QESeal', () => {
    const seal = leaf({ qc: { types: ['eseal'], sscd: true }, policies: ['0.4.0.194112.1.3'] });
    expect(qualify(seal, [list([caService()])])).toMatchObject({ name: 'QESeal', type: 'eseal', qscd: 'yes' });
  });

  it('splits credentials on their policy: QCNoSSCD for QCP-n makes an AdESig-QC', () => {
    const result = qualify(leaf({ qc: { types: ['esign'], sscd: false }, policies: [QCP_N] }), [list([caService()])]);
    expect(result).toMatchObject({ name: 'AdESig-QC', qualifiedAtSigning: true, qscd: 'no' });
  });

  it('a service withdrawn between issuance and signing: qualified at issuance, not at signing, so no QES', () => {
    const withdrawn = caService({
      history: [
        { ...caService().history[0]!, status: `${STATUS}withdrawn`, from: '2025-06-01T00:00:00Z' },
        caService().history[0]!,
      ],
    });
    const result = qualify(qesLeaf(), [list([withdrawn])]);
    expect(result).toMatchObject({ name: 'AdESig', qualifiedAtIssuance: true, qualifiedAtSigning: false });
    expect(result.reason).toMatch(/not qualified at signing time: the service was withdrawn/);
  });

  it('a service granted after issuance: the certificate was not issued as qualified', () => {
    const late = caService({
      history: [
        { ...caService().history[0]!, from: '2025-05-01T00:00:00Z' },
        { ...caService().history[0]!, status: `${STATUS}withdrawn`, from: '2019-01-01T00:00:00Z' },
      ],
    });
    const result = qualify(qesLeaf(), [list([late])]);
    expect(result).toMatchObject({ name: 'AdESig', qualifiedAtIssuance: false, qualifiedAtSigning: true });
    expect(result.reason).toMatch(/not qualified when issued/);
  });

  it('a service not yet listed at issuance is not qualified then', () => {
    const late = caService({ history: [{ ...caService().history[0]!, from: '2025-05-01T00:00:00Z' }] });
    expect(qualify(qesLeaf(), [list([late])])).toMatchObject({ name: 'AdESig', qualifiedAtIssuance: false });
  });

  it('a CA key under several services: each certificate takes the qualifiers its criteria select', () => {
    const qscdService = caService({
      name: 'QSCD service',
      history: [{ ...caService().history[0]!, qualifications: [policyQualifier('QCWithSSCD', QCP_N_QSCD)] }],
    });
    const softService = caService({
      name: 'Software keys service',
      history: [{ ...caService().history[0]!, qualifications: [policyQualifier('QCNoSSCD', QCP_N)] }],
    });
    const lists = [list([qscdService, softService])];
    const onQscd = qualify(leaf({ qc: { types: ['esign'], sscd: false }, policies: [QCP_N_QSCD] }), lists);
    expect(onQscd).toMatchObject({ name: 'QESig', qscd: 'yes' });
    expect(onQscd.services.map((service) => service.name)).toEqual(['QSCD service', 'Software keys service']);
    const soft = qualify(leaf({ qc: { types: ['esign'], sscd: true }, policies: [QCP_N] }), lists);
    expect(soft).toMatchObject({ name: 'AdESig-QC', qscd: 'no' });
  });

  it('a CA key under several services that contradict each other on the same certificate: INDETERMINATE', () => {
    const allQscd = caService({
      history: [{ ...caService().history[0]!, qualifications: [policyQualifier('QCWithSSCD', QCP_N_QSCD)] }],
    });
    const allSoft = caService({
      history: [{ ...caService().history[0]!, qualifications: [policyQualifier('QCNoSSCD', QCP_N_QSCD)] }],
    });
    const result = qualify(qesLeaf(), [list([allQscd, allSoft])]);
    expect(result).toMatchObject({ name: 'INDETERMINATE', qscd: 'indeterminate' });
    expect(result.reason).toMatch(/QSCD/);
  });

  it('two services, one saying NotQualified: INDETERMINATE, never a silent QES', () => {
    const notQualified = caService({
      history: [{ ...caService().history[0]!, qualifications: [policyQualifier('NotQualified', QCP_N_QSCD)] }],
    });
    const result = qualify(qesLeaf(), [list([caService(), notQualified])]);
    expect(result.name).toBe('INDETERMINATE');
    expect(result.reason).toMatch(/disagree/);
  });

  it('a list past its next update: INDETERMINATE "trusted list expired", never a silent QES', () => {
    const result = qualify(qesLeaf(), [list([caService()], { nextUpdate: '2025-09-30T00:00:00Z' })]);
    expect(result).toMatchObject({ name: 'INDETERMINATE', qscd: 'indeterminate', type: null });
    expect(result.reason).toBe('trusted list expired: BE (next update was due 2025-09-30T00:00:00Z)');
  });

  it('a closed list (no next update) is not expired', () => {
    expect(qualify(qesLeaf(), [list([caService()], { nextUpdate: null })]).name).toBe('QESig');
  });

  it('an entry without a verified snapshot (its signature failed) is not used', () => {
    const failed: TrustedListCacheEntry = {
      territory: 'BE',
      lastFailure: { at: '2025-09-20T00:00:00Z', reason: 'bad signature' },
    };
    const result = qualify(qesLeaf(), [failed]);
    expect(result).toMatchObject({ name: 'AdESig', qualifiedAtIssuance: false, services: [] });
  });

  it('the LOTL itself names no services that qualify', () => {
    const lotl = list([caService()], { territory: 'EU', isLotl: true });
    expect(qualify(qesLeaf(), [lotl]).name).toBe('AdESig');
  });

  it('a certificate with QC statements whose issuer is on no list is not qualified', () => {
    const result = qualify(
      leaf({ issuer: otherCa, qc: { types: ['esign'], sscd: true }, policies: [QCP_N_QSCD] }),
      [list([caService()])],
      otherCa,
    );
    expect(result).toMatchObject({
      name: 'AdESig',
      qualifiedAtIssuance: false,
      qualifiedAtSigning: false,
      services: [],
    });
    expect(result.reason).toBe('the certificate claims to be qualified, but its issuer is on no trusted list');
  });

  it('a service that lists the root CA covers what its subordinate CA issues', () => {
    const rootService = caService({
      identity: {
        certificates: [Buffer.from(root.certificate).toString('base64')],
        subjectNames: [],
        subjectKeyIdentifiers: [],
      },
    });
    expect(qualify(qesLeaf(), [list([rootService])]).name).toBe('QESig');
  });

  it('identifies a service by its subject key identifier alone', () => {
    const ski = qualificationCertificate(ca.certificate).subjectKeyIdentifier as string;
    const bySki = caService({
      identity: {
        certificates: [],
        subjectNames: ['CN=Qualified Test CA'],
        subjectKeyIdentifiers: [ski.toUpperCase()],
      },
    });
    expect(qualify(qesLeaf(), [list([bySki])]).name).toBe('QESig');
  });

  it('labels a result from a sandbox TEST list', () => {
    expect(qualify(qesLeaf(), [list([caService()], { test: true })])).toMatchObject({ name: 'QESig', test: true });
  });

  describe('the list wins where it contradicts the certificate', () => {
    it('QCNoSSCD over a certificate that claims QcSSCD', () => {
      const service = caService({
        history: [{ ...caService().history[0]!, qualifications: [policyQualifier('QCNoSSCD', QCP_N_QSCD)] }],
      });
      expect(qualify(qesLeaf(), [list([service])])).toMatchObject({ name: 'AdESig-QC', qscd: 'no' });
    });

    it('QCWithSSCD over a certificate without QcSSCD', () => {
      expect(
        qualify(leaf({ qc: { types: ['esign'], sscd: false }, policies: [QCP_N_QSCD] }), [list([caService()])]),
      ).toMatchObject({ name: 'QESig', qscd: 'yes' });
    });

    it('QCQSCDStatusAsInCert leaves it to the certificate; QCQSCDManagedOnBehalf is a QSCD', () => {
      const asInCert = caService({
        history: [{ ...caService().history[0]!, qualifications: [policyQualifier('QCQSCDStatusAsInCert', QCP_N)] }],
      });
      const soft = leaf({ qc: { types: ['esign'], sscd: false }, policies: [QCP_N] });
      expect(qualify(soft, [list([asInCert])]).qscd).toBe('no');
      expect(qualify(leaf({ qc: { types: ['esign'], sscd: true }, policies: [QCP_N] }), [list([asInCert])]).qscd).toBe(
        'yes',
      );
      const onBehalf = caService({
        history: [{ ...caService().history[0]!, qualifications: [policyQualifier('QCQSCDManagedOnBehalf', QCP_N)] }],
      });
      expect(qualify(soft, [list([onBehalf])]).name).toBe('QESig');
    });

    it('NotQualified over QcCompliance', () => {
      const service = caService({
        history: [{ ...caService().history[0]!, qualifications: [policyQualifier('NotQualified', QCP_N_QSCD)] }],
      });
      const result = qualify(qesLeaf(), [list([service])]);
      expect(result).toMatchObject({ name: 'AdESig', qualifiedAtIssuance: false });
      expect(result.reason).toMatch(/NotQualified/);
    });

    it('QCStatement makes a certificate without QC statements qualified', () => {
      const service = caService({
        history: [
          {
            ...caService().history[0]!,
            qualifications: [policyQualifier('QCStatement', QCP_N_QSCD), policyQualifier('QCWithSSCD', QCP_N_QSCD)],
          },
        ],
      });
      expect(qualify(leaf({ policies: [QCP_N_QSCD] }), [list([service])]).name).toBe('QESig');
    });

    it('QCForESeal over a QcType esign', () => {
      const service = caService({
        history: [
          {
            ...caService().history[0]!,
            qualifications: [
              {
                qualifiers: [`${EXT}QCForESeal`, `${EXT}QCWithSSCD`],
                criteria: criteria({ policySets: [[QCP_N_QSCD]] }),
              },
            ],
          },
        ],
      });
      expect(qualify(qesLeaf(), [list([service])])).toMatchObject({ name: 'QESeal', type: 'eseal' });
    });

    it('a service that issues qualified certificates only for seals does not qualify an e-signature one', () => {
      const sealsOnly = caService({
        history: [{ ...caService().history[0]!, additionalServiceInformation: [`${EXT}ForeSeals`] }],
      });
      const result = qualify(qesLeaf(), [list([sealsOnly])]);
      expect(result).toMatchObject({ name: 'AdESig', qualifiedAtIssuance: false });
      expect(result.reason).toMatch(/does not issue qualified certificates for electronic signatures/);
    });
  });

  it('a certificate without QC statements from a granted service is an AdESig', () => {
    expect(qualify(leaf({ policies: [QCP_N] }), [list([caService()])])).toMatchObject({
      name: 'AdESig',
      qualifiedAtIssuance: false,
    });
  });

  it('a certificate qualified for website authentication does not make a qualified signature', () => {
    expect(
      qualify(leaf({ qc: { types: ['web'], sscd: false } }), [
        list([caService({ history: [{ ...caService().history[0]!, additionalServiceInformation: [] }] })]),
      ]).name,
    ).toBe('AdESig');
  });
});

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
              qualifiers: [`${EXT}QCWithSSCD`],
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
    });

  it('a TSA/QTST service granted at the token time makes a qualified time stamp', () => {
    expect(qualifyTsa([list([tsaService('granted')])])).toMatchObject({
      qualified: true,
      services: [{ name: 'Qualified TSA' }],
    });
  });

  it('not when the service was withdrawn, when no list names it, or when the list expired', () => {
    expect(qualifyTsa([list([tsaService('withdrawn', '2025-01-01T00:00:00Z')])]).qualified).toBe(false);
    expect(qualifyTsa([list([caService()])])).toMatchObject({
      qualified: false,
      reason: 'its TSA is on no trusted list',
    });
    expect(qualifyTsa([list([tsaService('granted')], { nextUpdate: '2025-09-01T00:00:00Z' })])).toMatchObject({
      qualified: 'indeterminate',
      reason: expect.stringMatching(/^trusted list expired: BE/),
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
