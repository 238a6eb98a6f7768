/**
 * Conformance of the qualification verdict to ETSI TS 119 615 as the EU's reference validator (DSS)
 * applies it, one scenario per rule, each named after it. Written from the facts of DSS's
 * qualification tests and of the procedure; certificates come from the sandbox PKI's builders,
 * lists from the trusted-list builders (snapshots, or signed XML read back where parsing matters).
 */
import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { listEntry } from '../../../test/helpers/qualified-lists.js';
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
import { trustedListXml } from '../trusted-list/build.js';
import type { ServiceDescription } from '../trusted-list/build.js';
import type {
  CriteriaList,
  Qualification as ListQualification,
  ServiceStatusPeriod,
  TrustService,
  TrustedListCacheEntry,
  TrustedListSnapshot,
} from '../trusted-list/model.js';
import { readTrustedList } from '../trusted-list/parse.js';
import { nationalListDescription, testSigner } from '../trusted-list/test-lists.js';
import { signTrustedList } from '../trusted-list/build.js';
import {
  QUALIFIED_SIGNATURE_NAMES,
  describeQualification,
  qualifyCertificate,
  qualifyCredential,
  qualifyTimestamp,
  signatureQualificationName,
  withValidationResult,
} from './index.js';
import type { Qualification } from './index.js';
import { qualificationCertificate } from './certificate.js';
import { withTrustListPolicy } from './policy.js';

const EXT = 'http://uri.etsi.org/TrstSvc/TrustedList/SvcInfoExt/';
const STATUS = 'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/';
const CA_QC = 'http://uri.etsi.org/TrstSvc/Svctype/CA/QC';
const CA_PKC = 'http://uri.etsi.org/TrstSvc/Svctype/CA/PKC';
const TSA_QTST = 'http://uri.etsi.org/TrstSvc/Svctype/TSA/QTST';
const QCP_N = '0.4.0.194112.1.0';
const QCP_N_QSCD = '0.4.0.194112.1.2';
const QCP_PUBLIC = '0.4.0.1456.1.2';
const QCP_PUBLIC_SSCD = '0.4.0.1456.1.1';
const FOR_ESIG = `${EXT}ForeSignatures`;
const FOR_ESEAL = `${EXT}ForeSeals`;
const FOR_WEB = `${EXT}ForWebSiteAuthentication`;

const DAY = 86_400_000;
const ISSUED = new Date('2025-03-01T00:00:00Z');
const SIGNED = new Date('2025-09-01T00:00:00Z');
const NOW = new Date('2025-10-01T00:00:00Z');
const OLD_ISSUED = new Date('2014-03-01T00:00:00Z');
const OLD_SIGNED = new Date('2015-09-01T00:00:00Z');

const rsa = (): KeyObject => generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
const base64 = (der: Uint8Array): string => Buffer.from(der).toString('base64');

let root: IssuedCertificate;
let ca: IssuedCertificate;
let caRenewed: IssuedCertificate;
let impostorCa: IssuedCertificate;
let otherCa: IssuedCertificate;
let germanCa: IssuedCertificate;
let greekCa: IssuedCertificate;
let tsa: IssuedCertificate;
let leafKey: KeyObject;

function caCertificate(
  name: string,
  issuer: IssuedCertificate | undefined,
  key: KeyObject,
  country?: string,
): IssuedCertificate {
  return issue({
    name,
    subject: dn(name, undefined, country),
    issuer,
    subjectKey: key,
    issuerKey: issuer?.privateKey ?? key,
    notBefore: new Date('2010-01-01T00:00:00Z'),
    notAfter: new Date('2040-01-01T00:00:00Z'),
    extensions: (ski) => [
      basicConstraints(true),
      keyUsage(KU.keyCertSign | KU.cRLSign),
      subjectKeyId(ski),
      ...(issuer ? [authorityKeyId(issuer)] : []),
    ],
  });
}

beforeAll(() => {
  const rootKey = rsa();
  root = caCertificate('Conformance Root', undefined, rootKey);
  const caKey = rsa();
  ca = caCertificate('Conformance Qualified CA', root, caKey);
  // The same CA key and name in a renewed certificate: a historical identity of the same service.
  caRenewed = caCertificate('Conformance Qualified CA', root, caKey);
  impostorCa = caCertificate('Conformance Qualified CA', root, rsa());
  otherCa = caCertificate('Conformance Unlisted CA', root, rsa());
  germanCa = caCertificate('Conformance German CA', undefined, rsa(), 'DE');
  greekCa = caCertificate('Conformance Greek CA', undefined, rsa(), 'GR');
  tsa = issue({
    name: 'tsa',
    subject: dn('Conformance TSA'),
    issuer: root,
    subjectKey: rsa(),
    issuerKey: root.privateKey,
    notBefore: new Date('2010-01-01T00:00:00Z'),
    notAfter: new Date('2040-01-01T00:00:00Z'),
    extensions: (ski) => [
      basicConstraints(false),
      keyUsage(KU.digitalSignature),
      subjectKeyId(ski),
      authorityKeyId(root),
    ],
  });
  leafKey = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
});

interface LeafOptions {
  issuer?: IssuedCertificate;
  /** Sign with this key instead of the issuer's (a forgery). */
  issuerKey?: KeyObject;
  /** The AKI to write (the issuer's by default). */
  aki?: IssuedCertificate;
  qc?: { types?: Array<'esign' | 'eseal' | 'web'>; sscd?: boolean; legislation?: string[]; compliance?: boolean };
  policies?: string[];
  notBefore?: Date;
}

function leaf(options: LeafOptions = {}): Uint8Array {
  const issuer = options.issuer ?? ca;
  return issue({
    name: 'leaf',
    subject: dn('Conformance Signer'),
    issuer,
    subjectKey: leafKey,
    issuerKey: options.issuerKey ?? issuer.privateKey,
    notBefore: options.notBefore ?? ISSUED,
    notAfter: new Date((options.notBefore ?? ISSUED).getTime() + 1000 * DAY),
    extensions: (ski) => [
      basicConstraints(false),
      keyUsage(KU.digitalSignature | KU.nonRepudiation),
      ...(options.qc
        ? [
            qcStatements({
              types: options.qc.types ?? ['esign'],
              sscd: options.qc.sscd ?? false,
              ...(options.qc.legislation ? { legislation: options.qc.legislation } : {}),
              ...(options.qc.compliance === false ? { compliance: false } : {}),
            }),
          ]
        : []),
      ...(options.policies ? [certificatePolicies(options.policies)] : []),
      subjectKeyId(ski),
      authorityKeyId(options.aki ?? issuer),
    ],
  }).certificate;
}

const esig = (extra: LeafOptions = {}): Uint8Array =>
  leaf({ qc: { types: ['esign'] }, policies: [QCP_N_QSCD], ...extra });
const eseal = (extra: LeafOptions = {}): Uint8Array =>
  leaf({ qc: { types: ['eseal'] }, policies: [QCP_N_QSCD], ...extra });

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

/** Qualifiers for every certificate with a non-repudiation key usage (all the leaves here). */
function qualifiers(...names: string[]): ListQualification {
  return {
    qualifiers: names.map((name) => `${EXT}${name}`),
    criteria: criteria({ keyUsage: [{ nonRepudiation: true }] }),
  };
}

function period(
  status: string,
  from: string,
  options: { asi?: string[]; qualifications?: ListQualification[]; type?: string } = {},
): ServiceStatusPeriod {
  return {
    ...(options.type ? { type: options.type } : {}),
    status: `${STATUS}${status}`,
    from,
    additionalServiceInformation: options.asi ?? [FOR_ESIG, FOR_ESEAL],
    qualifications: options.qualifications ?? [qualifiers('QCWithQSCD')],
  };
}

function service(overrides: Partial<TrustService> & { certificates?: IssuedCertificate[] } = {}): TrustService {
  const { certificates, ...rest } = overrides;
  return {
    provider: 'Conformance QTSP',
    providerTradeNames: [],
    name: 'Conformance qualified CA service',
    type: CA_QC,
    identity: {
      certificates: (certificates ?? [ca]).map((c) => base64(c.certificate)),
      subjectNames: [],
      subjectKeyIdentifiers: [],
    },
    history: [period('granted', '2020-01-01T00:00:00Z')],
    ...rest,
  };
}

function list(services: TrustService[], overrides: Partial<TrustedListSnapshot> = {}): TrustedListCacheEntry {
  return listEntry(services, { nextUpdate: '2026-03-01T00:00:00Z', ...overrides });
}

function lotl(territories: string[]): TrustedListCacheEntry {
  return listEntry([], {
    territory: 'EU',
    isLotl: true,
    pointers: territories.map((territory) => ({
      territory,
      location: `https://tl.example/${territory}.xml`,
      mimeType: 'application/vnd.etsi.tsl+xml',
      signingCertificates: [],
    })),
  });
}

function qualify(
  certificate: Uint8Array,
  lists: readonly TrustedListCacheEntry[],
  options: { chain?: Uint8Array[]; signingTime?: Date; now?: Date } = {},
): Qualification {
  return qualifyCertificate({
    certificate,
    chain: options.chain ?? [ca.certificate, root.certificate],
    signingTime: options.signingTime ?? SIGNED,
    validationTime: options.now ?? NOW,
    lists,
  });
}

describe('TS 119 615 trust anchors: a service is reached only through a certificate whose key verified the chain', () => {
  it('anchor: the service certificate that verified the issuer signature reaches the service (QESig)', () => {
    expect(qualify(esig(), [list([service()])])).toMatchObject({ name: 'QESig', qscd: 'yes', type: 'esig' });
  });

  it('anchor: a leaf whose authority key identifier copies a listed CA but is signed by another key is N/A, never qualified', () => {
    const forger = rsa();
    const forgedIssuer = caCertificate('Forged Issuer', undefined, forger);
    const forged = leaf({ issuer: forgedIssuer, aki: ca, qc: { types: ['esign'], sscd: true } });
    const result = qualify(forged, [list([service()])], { chain: [] });
    expect(result.name).toBe('N/A');
    expect(result.services).toEqual([]);
  });

  it('anchor: a service identified only by X509SKI never matches on its own', () => {
    const bySki = service({ identity: { certificates: [], subjectNames: [], subjectKeyIdentifiers: [skiOf(ca)] } });
    expect(qualify(esig(), [list([bySki])]).name).toBe('N/A');
  });

  it('anchor: a service identified only by X509SubjectName never matches on its own', () => {
    const byName = service({
      identity: {
        certificates: [],
        subjectNames: [new X509Certificate(ca.certificate).subject],
        subjectKeyIdentifiers: [],
      },
    });
    expect(qualify(esig(), [list([byName])]).name).toBe('N/A');
  });

  it('anchor: a listed CA certificate appended to a leaf of an unlisted CA does not make it qualified', () => {
    const result = qualify(esig({ issuer: otherCa }), [list([service()])], {
      chain: [ca.certificate, root.certificate],
    });
    expect(result.name).toBe('N/A');
  });

  it('anchor: a CA certificate under the listed name with another key verifies nothing and reaches no service', () => {
    const impostorLeaf = esig({ issuer: impostorCa });
    expect(qualify(impostorLeaf, [list([service()])], { chain: [impostorCa.certificate] }).name).toBe('N/A');
  });

  it('anchor: a historical identity of the same CA key (a renewed certificate) reaches the service', () => {
    const historical = service({ certificates: [caRenewed] });
    expect(qualify(esig(), [list([historical])]).name).toBe('QESig');
  });

  it('anchor: a root CA service reaches what its subordinate CA issued, through the root verifying the CA', () => {
    expect(qualify(esig(), [list([service({ certificates: [root] })])]).name).toBe('QESig');
  });

  it('anchor: the issuer found in the lists by name is confirmed by its signature when the chain is not sent', () => {
    expect(qualify(esig(), [list([service()])], { chain: [] }).name).toBe('QESig');
  });

  it('anchor: a credential chain that does not verify link by link is N/A with where it breaks', () => {
    const result = qualifyCredential([esig({ issuer: otherCa }), ca.certificate, root.certificate], {
      signingTime: SIGNED,
      validationTime: NOW,
      lists: [list([service()])],
    });
    expect(result).toMatchObject({ name: 'N/A' });
    expect(result?.reason).toMatch(
      /^the chain the signing service sent does not verify: .*Conformance Signer.* is not signed by/,
    );
  });

  it('anchor: a credential chain that verifies link by link is qualified', () => {
    const result = qualifyCredential([esig(), ca.certificate, root.certificate], {
      signingTime: SIGNED,
      validationTime: NOW,
      lists: [list([service()])],
    });
    expect(result?.name).toBe('QESig');
  });

  it('anchor: a list without a verified copy (its signature failed) is never used', () => {
    const failed: TrustedListCacheEntry = {
      territory: 'BE',
      lastFailure: { at: '2025-09-20T00:00:00Z', reason: 'bad signature' },
    };
    expect(qualify(esig(), [failed]).name).toBe('N/A');
  });

  it('anchor: the LOTL names no trust services', () => {
    expect(qualify(esig(), [list([service()], { territory: 'EU', isLotl: true })]).name).toBe('N/A');
  });
});

describe('TS 119 615 trust anchors for time stamps', () => {
  const tsaService = (
    certificates: IssuedCertificate[],
    history = [period('granted', '2020-01-01T00:00:00Z', { asi: [], qualifications: [] })],
  ) => service({ type: TSA_QTST, name: 'Conformance QTST', certificates, history });
  const qualifyTsa = (certificate: Uint8Array, lists: TrustedListCacheEntry[], tokenVerified = true, poe?: Date) =>
    qualifyTimestamp({
      certificate,
      chain: [root.certificate],
      time: SIGNED,
      ...(poe ? { proofOfExistence: poe } : {}),
      validationTime: NOW,
      lists,
      tokenVerified,
    });

  it('tsa anchor: the TSA certificate itself listed, its key having verified the token: QTSA', () => {
    expect(qualifyTsa(tsa.certificate, [list([tsaService([tsa])])])).toMatchObject({ name: 'QTSA', qualified: true });
  });

  it('tsa anchor: a self-signed TSA certificate copying the listed TSA SKI is N/A', () => {
    const forged = issue({
      name: 'forged-tsa',
      subject: dn('Conformance TSA'),
      issuer: undefined,
      subjectKey: rsa(),
      issuerKey: rsa(),
      notBefore: new Date('2020-01-01T00:00:00Z'),
      notAfter: new Date('2030-01-01T00:00:00Z'),
      extensions: () => [basicConstraints(false), keyUsage(KU.digitalSignature), subjectKeyId(skiBytes(tsa))],
    });
    expect(qualifyTsa(forged.certificate, [list([tsaService([tsa])])])).toMatchObject({
      name: 'N/A',
      qualified: false,
    });
  });

  it('tsa anchor: its own listed certificate does not count when its key did not verify the token', () => {
    expect(qualifyTsa(tsa.certificate, [list([tsaService([tsa])])], false).name).toBe('N/A');
  });

  it('tsa anchor: a TSA/QTST service listing the CA that issued the TSA', () => {
    expect(qualifyTsa(tsa.certificate, [list([tsaService([root])])]).name).toBe('QTSA');
  });

  it('qualified timestamp: granted at the token time but withdrawn before its proof of existence: TSA', () => {
    const history = [
      period('withdrawn', '2025-09-15T00:00:00Z', { asi: [], qualifications: [] }),
      period('granted', '2020-01-01T00:00:00Z', { asi: [], qualifications: [] }),
    ];
    expect(qualifyTsa(tsa.certificate, [list([tsaService([tsa], history)])])).toMatchObject({ name: 'TSA' });
    expect(
      qualifyTsa(tsa.certificate, [list([tsaService([tsa], history)])], true, new Date('2025-09-10T00:00:00Z')).name,
    ).toBe('QTSA');
  });

  it('qualified timestamp: not granted at the token time: TSA', () => {
    const history = [period('granted', '2025-09-15T00:00:00Z', { asi: [], qualifications: [] })];
    expect(qualifyTsa(tsa.certificate, [list([tsaService([tsa], history)])]).name).toBe('TSA');
  });

  it('qualified timestamp: setbynationallaw after eIDAS is not granted: TSA', () => {
    const history = [period('setbynationallaw', '2020-01-01T00:00:00Z', { asi: [], qualifications: [] })];
    expect(qualifyTsa(tsa.certificate, [list([tsaService([tsa], history)])]).name).toBe('TSA');
  });

  it('qualified timestamp: a CA/QC service is not a TSA/QTST one: TSA', () => {
    expect(qualifyTsa(tsa.certificate, [list([service({ certificates: [tsa] })])]).name).toBe('TSA');
  });
});

describe('TS 119 172-4 names from the validation result (DSS SigQualificationMatrix)', () => {
  const cases: Array<[string, 'TOTAL-PASSED' | 'INDETERMINATE' | 'TOTAL-FAILED', string]> = [
    ['QESig', 'TOTAL-PASSED', 'QESig'],
    ['QESig', 'INDETERMINATE', 'Indeterminate QESig'],
    ['AdESeal-QC', 'INDETERMINATE', 'Indeterminate AdESeal-QC'],
    ['QESeal', 'TOTAL-FAILED', 'Not AdES but QC with QSCD'],
    ['AdESig-QC', 'TOTAL-FAILED', 'Not AdES but QC'],
    ['AdESig', 'TOTAL-FAILED', 'Not AdES'],
    ['N/A', 'INDETERMINATE', 'N/A'],
    ['N/A', 'TOTAL-FAILED', 'Not AdES'],
    ['Not AdES', 'TOTAL-PASSED', 'Not AdES'],
  ];
  for (const [certificate, indication, name] of cases)
    it(`names: ${certificate} with ${indication} is "${name}"`, () => {
      expect(signatureQualificationName(certificate as Qualification['name'], indication)).toBe(name);
    });

  it('names: an untrusted (INDETERMINATE) signature with a QES certificate is never a plain QESig, and says why', () => {
    const result = withValidationResult(
      qualify(esig(), [list([service()])]),
      'INDETERMINATE',
      'NO_CERTIFICATE_CHAIN_FOUND',
    );
    expect(result.name).toBe('Indeterminate QESig');
    expect(result.reason).toMatch(/INDETERMINATE \(NO_CERTIFICATE_CHAIN_FOUND\)/);
  });

  it('names: the human line of an Indeterminate verdict says it is not the plain one, and why', () => {
    const result = withValidationResult(
      qualify(esig(), [list([service()])]),
      'INDETERMINATE',
      'NO_CERTIFICATE_CHAIN_FOUND',
    );
    expect(describeQualification(result)).toBe(
      "Indeterminate QESig, not a QESig: BE, Conformance QTSP, key on a QSCD, the signature's validation is INDETERMINATE (NO_CERTIFICATE_CHAIN_FOUND)",
    );
  });

  it('names: --require accepts only the plain qualified names', () => {
    expect([...QUALIFIED_SIGNATURE_NAMES].sort()).toEqual(['QESeal', 'QESig']);
  });

  it('N/A: the LOTL points to the list that would decide and it is not cached: names it and the command', () => {
    const result = qualify(esig({ issuer: germanCa }), [lotl(['BE', 'DE']), list([service()])], {
      chain: [germanCa.certificate],
    });
    expect(result).toMatchObject({
      name: 'N/A',
      missingList: { territory: 'DE', command: 'esign trust update --territories DE' },
    });
    expect(result.reason).toMatch(/esign trust update --territories DE/);
  });

  it('N/A: the list of the issuer country is cached but does not name it: no list to fetch', () => {
    const result = qualify(
      esig({ issuer: germanCa }),
      [lotl(['BE', 'DE']), list([service()]), list([], { territory: 'DE' })],
      {
        chain: [germanCa.certificate],
      },
    );
    expect(result.name).toBe('N/A');
    expect(result.missingList).toBeUndefined();
  });

  it('N/A: a Greek issuer (C=GR) points to the list the LOTL files under EL', () => {
    const result = qualify(esig({ issuer: greekCa }), [lotl(['BE', 'EL']), list([service()])], {
      chain: [greekCa.certificate],
    });
    expect(result.missingList?.territory).toBe('EL');
  });
});

describe('TS 119 615 eras and status mappings', () => {
  it('era: a granted status period after eIDAS qualifies', () => {
    expect(qualify(esig(), [list([service()])]).qualifiedAtSigning).toBe(true);
  });

  it('status: setbynationallaw after eIDAS is not granted', () => {
    const result = qualify(esig(), [
      list([service({ history: [period('setbynationallaw', '2020-01-01T00:00:00Z')] })]),
    ]);
    expect(result).toMatchObject({ name: 'AdESig', qualifiedAtIssuance: false });
    expect(result.reason).toMatch(/setbynationallaw/);
  });

  it('status: accredited in a period that starts before eIDAS qualifies a pre-eIDAS certificate', () => {
    const old = esig({ notBefore: OLD_ISSUED, qc: { types: ['esign'], sscd: true } });
    const s = service({ history: [period('accredited', '2010-01-01T00:00:00Z', { asi: [], qualifications: [] })] });
    expect(qualify(old, [list([s])], { signingTime: OLD_SIGNED })).toMatchObject({
      name: 'QESig',
      qualifiedAtSigning: true,
    });
  });

  it('status: accredited in a period that starts after eIDAS is not granted', () => {
    const s = service({ history: [period('accredited', '2020-01-01T00:00:00Z')] });
    expect(qualify(esig(), [list([s])]).qualifiedAtIssuance).toBe(false);
  });

  it('status: undersupervision and supervisionincessation before eIDAS are granted', () => {
    for (const status of ['undersupervision', 'supervisionincessation']) {
      const s = service({ history: [period(status, '2010-01-01T00:00:00Z', { asi: [], qualifications: [] })] });
      const old = esig({ notBefore: OLD_ISSUED, qc: { types: ['esign'], sscd: true } });
      expect(qualify(old, [list([s])], { signingTime: OLD_SIGNED }).qualifiedAtSigning).toBe(true);
    }
  });

  it('status: granted in a period that starts before eIDAS is inconsistent and not used', () => {
    const s = service({ history: [period('granted', '2010-01-01T00:00:00Z', { asi: [], qualifications: [] })] });
    const old = esig({ notBefore: OLD_ISSUED, qc: { types: ['esign'], sscd: true } });
    expect(qualify(old, [list([s])], { signingTime: OLD_SIGNED }).qualifiedAtIssuance).toBe(false);
  });

  it('era: issuance is judged in the period in force at the certificate notBefore, signing in the one at the best-signature-time', () => {
    const s = service({
      history: [
        period('granted', '2016-07-01T00:00:00Z'),
        period('accredited', '2010-01-01T00:00:00Z', { asi: [], qualifications: [] }),
      ],
    });
    const old = esig({ notBefore: OLD_ISSUED, qc: { types: ['esign'], sscd: true } });
    expect(qualify(old, [list([s])])).toMatchObject({
      name: 'QESig',
      qualifiedAtIssuance: true,
      qualifiedAtSigning: true,
    });
  });

  it('status: withdrawn at signing time: qualified when issued only, so not a QES', () => {
    const s = service({
      history: [period('withdrawn', '2025-06-01T00:00:00Z'), period('granted', '2020-01-01T00:00:00Z')],
    });
    const result = qualify(esig(), [list([s])]);
    expect(result).toMatchObject({ name: 'AdESig', qualifiedAtIssuance: true, qualifiedAtSigning: false });
    expect(result.reason).toMatch(/not qualified at signing time: the service was withdrawn/);
  });

  it('status: granted only after the certificate was issued: not qualified when issued', () => {
    const s = service({
      history: [period('granted', '2025-05-01T00:00:00Z'), period('withdrawn', '2019-01-01T00:00:00Z')],
    });
    expect(qualify(esig(), [list([s])])).toMatchObject({ name: 'AdESig', qualifiedAtIssuance: false });
  });

  it('status: no period in force at issuance (not yet listed) is not qualified then', () => {
    const s = service({ history: [period('granted', '2025-05-01T00:00:00Z')] });
    const result = qualify(esig(), [list([s])]);
    expect(result.reason).toMatch(/not qualified when issued: no service of its issuer was listed/);
  });

  it('era: the eIDAS date is 1 July 2016 Brussels time (2016-06-30T22:00Z): a period starting then is post-eIDAS', () => {
    const s = service({ history: [period('granted', '2016-06-30T22:00:00Z')] });
    expect(qualify(esig(), [list([s])]).name).toBe('QESig');
  });

  it('era: a pre-eIDAS certificate is for e-signatures whatever its QcType', () => {
    const s = service({ history: [period('accredited', '2010-01-01T00:00:00Z', { asi: [], qualifications: [] })] });
    const old = eseal({ notBefore: OLD_ISSUED, qc: { types: ['eseal'], sscd: true } });
    expect(qualify(old, [list([s])], { signingTime: OLD_SIGNED })).toMatchObject({ name: 'QESig', type: 'esig' });
  });

  it('era: before eIDAS a QCP+ policy makes a qualified certificate with its key on an SSCD', () => {
    const s = service({ history: [period('accredited', '2010-01-01T00:00:00Z', { asi: [], qualifications: [] })] });
    const old = leaf({ notBefore: OLD_ISSUED, policies: [QCP_PUBLIC_SSCD] });
    expect(qualify(old, [list([s])], { signingTime: OLD_SIGNED }).name).toBe('QESig');
  });

  it('era: before eIDAS a QCP policy without QcSSCD makes an AdESig-QC', () => {
    const s = service({ history: [period('accredited', '2010-01-01T00:00:00Z', { asi: [], qualifications: [] })] });
    const old = leaf({ notBefore: OLD_ISSUED, policies: [QCP_PUBLIC] });
    expect(qualify(old, [list([s])], { signingTime: OLD_SIGNED }).name).toBe('AdESig-QC');
  });

  it('era: after eIDAS a QCP policy alone does not make a certificate qualified', () => {
    expect(qualify(leaf({ policies: [QCP_PUBLIC] }), [list([service()])]).qualifiedAtIssuance).toBe(false);
  });
});

describe('TS 119 615 QSCD qualifiers and their consistency', () => {
  const withQualifiers = (names: string[], from = '2020-01-01T00:00:00Z') =>
    service({ history: [period('granted', from, { qualifications: [qualifiers(...names)] })] });

  it('qscd: QCWithQSCD in a post-eIDAS period puts the key on a QSCD', () => {
    expect(qualify(esig(), [list([withQualifiers(['QCWithQSCD'])])]).qscd).toBe('yes');
  });

  it('qscd: QCWithSSCD alone in a post-eIDAS period is inconsistent, and the certificate is not on a QSCD by it', () => {
    expect(qualify(esig(), [list([withQualifiers(['QCWithSSCD'])])]).name).toBe('AdESig-QC');
  });

  it('qscd: QCWithSSCD in a pre-eIDAS period puts the key on an SSCD', () => {
    const s = service({
      history: [period('accredited', '2010-01-01T00:00:00Z', { asi: [], qualifications: [qualifiers('QCWithSSCD')] })],
    });
    const old = esig({ notBefore: OLD_ISSUED });
    expect(qualify(old, [list([s])], { signingTime: OLD_SIGNED }).qscd).toBe('yes');
  });

  it('qscd: QCNoQSCD over a certificate that claims QcSSCD', () => {
    expect(qualify(esig({ qc: { types: ['esign'], sscd: true } }), [list([withQualifiers(['QCNoQSCD'])])]).name).toBe(
      'AdESig-QC',
    );
  });

  it('qscd: QCQSCDStatusAsInCert leaves it to the certificate QcSSCD', () => {
    const s = withQualifiers(['QCQSCDStatusAsInCert']);
    expect(qualify(esig({ qc: { types: ['esign'], sscd: true } }), [list([s])]).qscd).toBe('yes');
    expect(qualify(esig({ qc: { types: ['esign'], sscd: false } }), [list([s])]).qscd).toBe('no');
  });

  it('qscd: QCQSCDManagedOnBehalf is a QSCD', () => {
    expect(qualify(esig(), [list([withQualifiers(['QCQSCDManagedOnBehalf'])])]).name).toBe('QESig');
  });

  it('qscd: QCWithQSCD and QCNoQSCD together are inconsistent: not a QSCD', () => {
    expect(
      qualify(esig({ qc: { types: ['esign'], sscd: true } }), [list([withQualifiers(['QCWithQSCD', 'QCNoQSCD'])])])
        .qscd,
    ).toBe('no');
  });

  it('qscd: without a QSCD qualifier the certificate QcSSCD decides', () => {
    const s = service({ history: [period('granted', '2020-01-01T00:00:00Z', { qualifications: [] })] });
    expect(qualify(esig({ qc: { types: ['esign'], sscd: true } }), [list([s])]).name).toBe('QESig');
    expect(qualify(esig(), [list([s])]).name).toBe('AdESig-QC');
  });
});

describe('TS 119 615 qualified status and type', () => {
  const withQualifiers = (names: string[], asi = [FOR_ESIG, FOR_ESEAL]) =>
    service({ history: [period('granted', '2020-01-01T00:00:00Z', { asi, qualifications: [qualifiers(...names)] })] });

  it('qc: NotQualified over QcCompliance', () => {
    const result = qualify(esig(), [list([withQualifiers(['NotQualified'])])]);
    expect(result).toMatchObject({ name: 'AdESig', qualifiedAtIssuance: false });
    expect(result.reason).toMatch(/NotQualified/);
  });

  it('qc: QCStatement qualifies a certificate without QC statements, of unknown type unless the list gives it', () => {
    expect(
      qualify(leaf({ policies: [QCP_N_QSCD] }), [list([withQualifiers(['QCStatement', 'QCWithQSCD'])])]).name,
    ).toBe('Unknown-QC-QSCD');
    const withType = withQualifiers(['QCStatement', 'QCForESig', 'QCWithQSCD']);
    expect(qualify(leaf({ policies: [QCP_N_QSCD] }), [list([withType])]).name).toBe('QESig');
  });

  it('qc: QCStatement with NotQualified is inconsistent: not qualified', () => {
    expect(qualify(esig(), [list([withQualifiers(['QCStatement', 'NotQualified'])])]).qualifiedAtIssuance).toBe(false);
  });

  it('qc: QcCClegislation names a non-EU law: not an EU qualified certificate', () => {
    const result = qualify(esig({ qc: { types: ['esign'], legislation: ['CH'] } }), [list([service()])]);
    expect(result).toMatchObject({ name: 'AdESig', qualifiedAtIssuance: false });
    expect(result.reason).toMatch(/QcCClegislation/);
  });

  it('qc: the list QCStatement qualifies a QcCClegislation certificate all the same', () => {
    const result = qualify(esig({ qc: { types: ['esign'], legislation: ['CH'] } }), [
      list([withQualifiers(['QCStatement', 'QCWithQSCD'])]),
    ]);
    expect(result.name).toBe('QESig');
  });

  it('qc: a certificate without QcCompliance from a granted service is not qualified', () => {
    expect(qualify(leaf({ policies: [QCP_N] }), [list([service()])])).toMatchObject({
      name: 'Unknown',
      qualifiedAtIssuance: false,
    });
  });

  it('type: QCForESeal over a QcType esign, the service issuing for seals', () => {
    expect(qualify(esig(), [list([withQualifiers(['QCForESeal', 'QCWithQSCD'])])])).toMatchObject({
      name: 'QESeal',
      type: 'eseal',
    });
  });

  it('type: two usage qualifiers are inconsistent: the type is unknown', () => {
    expect(qualify(esig(), [list([withQualifiers(['QCForESig', 'QCForESeal', 'QCWithQSCD'])])]).name).toBe(
      'Unknown-QC-QSCD',
    );
  });

  it('type: a qualified certificate for website authentication makes no signature (Not AdES)', () => {
    const s = withQualifiers(['QCWithQSCD'], [FOR_WEB]);
    expect(qualify(leaf({ qc: { types: ['web'] } }), [list([s])]).name).toBe('Not AdES');
  });

  it('type: QcCompliance without QcType is for e-signatures', () => {
    expect(qualify(leaf({ qc: { types: [] }, policies: [QCP_N_QSCD] }), [list([service()])]).type).toBe('esig');
  });

  it('type filter: a service issuing only for seals does not qualify an e-signature certificate', () => {
    const result = qualify(esig(), [list([withQualifiers(['QCWithQSCD'], [FOR_ESEAL])])]);
    expect(result).toMatchObject({ name: 'AdESig', qualifiedAtIssuance: false });
    expect(result.reason).toMatch(/does not issue qualified certificates for electronic signatures/);
  });

  it('type filter: QCForLegalPerson takes ForeSignatures away from the service', () => {
    const result = qualify(esig(), [list([withQualifiers(['QCForLegalPerson', 'QCWithQSCD'], [FOR_ESIG])])]);
    expect(result.qualifiedAtIssuance).toBe(false);
  });

  it('criteria: the qualifiers apply only to the certificates their criteria select', () => {
    const s = service({
      history: [
        period('granted', '2020-01-01T00:00:00Z', {
          qualifications: [
            { qualifiers: [`${EXT}QCWithQSCD`], criteria: criteria({ policySets: [[QCP_N_QSCD]] }) },
            { qualifiers: [`${EXT}QCNoQSCD`], criteria: criteria({ policySets: [[QCP_N]] }) },
          ],
        }),
      ],
    });
    expect(qualify(esig(), [list([s])]).name).toBe('QESig');
    expect(qualify(esig({ policies: [QCP_N] }), [list([s])]).name).toBe('AdESig-QC');
  });
});

describe('TS 119 615 conflicts, after the type filter', () => {
  it('conflict: one service for e-signatures and one for e-seals under the same CA are no conflict', () => {
    const forSig = service({
      name: 'For e-signatures',
      history: [period('granted', '2020-01-01T00:00:00Z', { asi: [FOR_ESIG] })],
    });
    const forSeal = service({
      name: 'For e-seals',
      history: [
        period('granted', '2020-01-01T00:00:00Z', {
          asi: [FOR_ESEAL],
          qualifications: [{ qualifiers: [`${EXT}QCNoQSCD`], criteria: criteria({ policySets: [[QCP_N_QSCD]] }) }],
        }),
      ],
    });
    // The e-seal service does not apply to an e-signature certificate: the one left decides.
    const result = qualify(esig(), [list([forSig, forSeal])]);
    expect(result.name).toBe('QESig');
    // DSS keeps a ForeSignatures service for any QcCompliance certificate without usage qualifiers.
    expect(qualify(eseal(), [list([forSig, forSeal])]).name).toBe('N/A');
  });

  it('conflict: two services that contradict each other on the certificate: N/A', () => {
    const onQscd = service({ name: 'A' });
    const offQscd = service({
      name: 'B',
      history: [period('granted', '2020-01-01T00:00:00Z', { qualifications: [qualifiers('QCNoQSCD')] })],
    });
    const result = qualify(esig(), [list([onQscd, offQscd])]);
    expect(result.name).toBe('N/A');
    expect(result.reason).toMatch(/disagree/);
  });

  it('conflict: across two lists', () => {
    const other = list(
      [
        service({
          history: [period('granted', '2020-01-01T00:00:00Z', { qualifications: [qualifiers('NotQualified')] })],
        }),
      ],
      {
        territory: 'LU',
      },
    );
    expect(qualify(esig(), [list([service()]), other]).name).toBe('N/A');
  });

  it('conflict: a granted and a withdrawn service for the same CA at the same time (DSS simulates both)', () => {
    const withdrawn = service({ name: 'Withdrawn', history: [period('withdrawn', '2020-01-01T00:00:00Z')] });
    expect(qualify(esig(), [list([service(), withdrawn])]).name).toBe('N/A');
  });

  it('conflict: two services that agree are one verdict, both named', () => {
    const result = qualify(esig(), [list([service({ name: 'A' }), service({ name: 'B' })])]);
    expect(result.name).toBe('QESig');
    expect(result.services.map((s) => s.name)).toEqual(['A', 'B']);
  });
});

describe('TS 119 612 status history: document order and per-entry service types', () => {
  it('per-entry type: a history entry that was CA/QC qualifies at issuance though the service is now CA/PKC', () => {
    const s = service({
      type: CA_PKC,
      history: [period('granted', '2025-06-01T00:00:00Z'), period('granted', '2020-01-01T00:00:00Z', { type: CA_QC })],
    });
    const result = qualify(esig(), [list([s])]);
    expect(result).toMatchObject({ qualifiedAtIssuance: true, qualifiedAtSigning: false, name: 'AdESig' });
  });

  it('per-entry type: read from each ServiceHistoryInstance of a signed list', () => {
    const snapshot = readSigned([
      {
        name: 'Changed type',
        type: CA_PKC,
        certificates: [base64(ca.certificate)],
        history: [
          { status: `${STATUS}granted`, from: new Date('2025-06-01T00:00:00Z') },
          { type: CA_QC, status: `${STATUS}granted`, from: new Date('2020-01-01T00:00:00Z') },
        ],
      },
    ]);
    expect(snapshot.services[0]?.history.map((p) => p.type ?? snapshot.services[0]?.type)).toEqual([CA_PKC, CA_QC]);
  });

  it('document order: entries with equal start times keep the order the list writes them in (the first in force)', () => {
    const snapshot = readSigned([
      {
        name: 'Equal starts',
        type: CA_QC,
        certificates: [base64(ca.certificate)],
        history: [
          { status: `${STATUS}granted`, from: new Date('2026-01-01T00:00:00Z') },
          { status: `${STATUS}withdrawn`, from: new Date('2020-01-01T00:00:00Z') },
          { status: `${STATUS}granted`, from: new Date('2020-01-01T00:00:00Z') },
        ],
      },
    ]);
    expect(snapshot.services[0]?.history.map((p) => p.status.split('/').pop())).toEqual([
      'granted',
      'withdrawn',
      'granted',
    ]);
    const result = qualify(esig(), [listEntry(snapshot.services, { nextUpdate: '2026-03-01T00:00:00Z' })]);
    expect(result.qualifiedAtSigning).toBe(false);
  });
});

describe('TS 119 612 criteria: QcStatementSet, and services whose criteria cannot be read', () => {
  const QC_TYPE_ESEAL = '0.4.0.1862.1.6.2';
  const bySet = (set: NonNullable<CriteriaList['qcStatementSets']>[number], names = ['QCWithQSCD']) =>
    service({
      history: [
        period('granted', '2020-01-01T00:00:00Z', {
          qualifications: [
            { qualifiers: names.map((n) => `${EXT}${n}`), criteria: criteria({ qcStatementSets: [set] }) },
          ],
        }),
      ],
    });

  it('criteria: a QcStatementSet selects the certificates with that QcType', () => {
    const s = bySet([{ id: '0.4.0.1862.1.6', qcType: QC_TYPE_ESEAL }]);
    expect(qualify(eseal(), [list([s])]).name).toBe('QESeal');
    expect(qualify(esig(), [list([s])]).name).toBe('AdESig-QC');
  });

  it('criteria: a QcStatementSet with a QcCClegislation', () => {
    const s = bySet([{ id: '0.4.0.1862.1.7', legislation: 'CH' }], ['QCStatement', 'QCWithQSCD']);
    expect(qualify(esig({ qc: { types: ['esign'], legislation: ['CH'] } }), [list([s])]).name).toBe('QESig');
  });

  it('criteria: a QcStatementSet is read from a signed list', () => {
    const snapshot = readSigned([
      {
        name: 'By QC statement',
        type: CA_QC,
        certificates: [base64(ca.certificate)],
        history: [
          {
            status: `${STATUS}granted`,
            from: new Date('2020-01-01T00:00:00Z'),
            additionalServiceInformation: [FOR_ESIG, FOR_ESEAL],
            qualifications: [
              {
                qualifiers: [`${EXT}QCWithQSCD`],
                criteria: criteria({ qcStatementSets: [[{ id: '0.4.0.1862.1.6', qcType: QC_TYPE_ESEAL }]] }),
              },
            ],
          },
        ],
      },
    ]);
    expect(snapshot.services[0]?.history[0]?.qualifications[0]?.criteria.qcStatementSets).toEqual([
      [{ id: '0.4.0.1862.1.6', qcType: QC_TYPE_ESEAL }],
    ]);
    expect(qualify(eseal(), [listEntry(snapshot.services, { nextUpdate: '2026-03-01T00:00:00Z' })]).name).toBe(
      'QESeal',
    );
  });

  it('criteria: a service with a criterion esign cannot read is not used, and says so', () => {
    const snapshot = readSigned([
      {
        name: 'Unknown criterion',
        type: CA_QC,
        certificates: [base64(ca.certificate)],
        history: [
          {
            status: `${STATUS}granted`,
            from: new Date('2020-01-01T00:00:00Z'),
            additionalServiceInformation: [FOR_ESIG],
            qualifications: [
              { qualifiers: [`${EXT}QCWithQSCD`], criteria: criteria({ unsupported: ['FutureCriterion'] }) },
            ],
          },
        ],
      },
    ]);
    const result = qualify(esig(), [listEntry(snapshot.services, { nextUpdate: '2026-03-01T00:00:00Z' })]);
    expect(result.name).toBe('N/A');
    expect(result.reason).toMatch(/cannot read its criteria \(otherCriteriaList\/FutureCriterion\)/);
  });
});

describe('TS 119 615 list freshness (DSS default policy, and trustListPolicy strict)', () => {
  const expired = () => list([service()], { nextUpdate: '2025-09-30T00:00:00Z' });

  it('expired list: still used under the default policy, with a warning on the verdict', () => {
    const result = qualify(esig(), [expired()]);
    expect(result.name).toBe('QESig');
    expect(result.warnings).toEqual([
      "trusted list BE expired: its next update was due 2025-09-30T00:00:00Z (used, as DSS's default policy does)",
    ]);
  });

  it('expired list: not used under trustListPolicy strict: N/A with why', () => {
    const result = qualify(esig(), withTrustListPolicy([expired()], 'strict'));
    expect(result.name).toBe('N/A');
    expect(result.reason).toMatch(/trusted list BE expired.*trustListPolicy strict/);
  });

  it('expired list: under strict, another fresh list naming the CA still decides', () => {
    const fresh = list([service()], { territory: 'LU' });
    expect(qualify(esig(), withTrustListPolicy([expired(), fresh], 'strict')).name).toBe('QESig');
  });

  it('closed list: without a next update, never expired', () => {
    expect(qualify(esig(), [list([service()], { nextUpdate: null })]).warnings).toBeUndefined();
  });

  it('TEST lists: a verdict from sandbox lists says TEST', () => {
    expect(qualify(esig(), [list([service()], { test: true })])).toMatchObject({ name: 'QESig', test: true });
  });
});

function skiBytes(certificate: IssuedCertificate): Uint8Array {
  return new Uint8Array(Buffer.from(skiOf(certificate), 'hex'));
}

function skiOf(certificate: IssuedCertificate): string {
  return qualificationCertificate(certificate.certificate).subjectKeyIdentifier ?? '';
}

const operator = testSigner('Conformance scheme operator');

function readSigned(services: ServiceDescription[]): TrustedListSnapshot {
  const description = nationalListDescription(base64(ca.certificate), {
    providers: [{ name: 'Conformance QTSP', services }],
  });
  const xml = signTrustedList(trustedListXml(description), operator.identity.privateKey, operator.certificate);
  return readTrustedList(new TextEncoder().encode(xml), [operator.certificate], 'BE.xml');
}

describe('lists outside the LOTL (esign trust add)', () => {
  const url = 'https://tsl.example.ch/tsl.xml';
  const addedList = (): TrustedListCacheEntry => ({
    ...list([service()], { territory: 'CH' }),
    territory: 'swiss-tsl',
    added: { name: 'swiss-tsl', url, signerCertificates: [] },
  });

  it('added list: its verdicts name the list and are never EU-qualified', () => {
    const result = qualify(esig(), [addedList()]);
    expect(result).toMatchObject({
      name: 'QESig',
      euQualified: false,
      services: [{ list: 'swiss-tsl', territory: 'CH' }],
    });
  });

  it('added list: counted as EU when the LOTL points to its address', () => {
    const lotlEntry = lotl(['CH']);
    lotlEntry.snapshot!.pointers[0]!.location = url;
    const result = qualify(esig(), [lotlEntry, addedList()]);
    expect(result.name).toBe('QESig');
    expect(result.euQualified).toBeUndefined();
  });

  it('added list: an EU list that gives the same verdict for the same CA makes it EU-qualified', () => {
    expect(qualify(esig(), [list([service()]), addedList()])).toMatchObject({ name: 'QESig' });
    expect(qualify(esig(), [list([service()]), addedList()]).euQualified).toBeUndefined();
  });
});
