/**
 * The qualification of a certificate, and so of a signature made with it: ETSI TS 119 615's
 * procedure over the verified trusted lists, named in TS 119 172-4's terms. The lists decide; the
 * certificate's own QC statements count only where the list leaves them to it (TS 119 615: the
 * list wins where they contradict).
 */
import { X509Certificate } from 'node:crypto';
import type {
  ServiceStatusPeriod,
  TrustService,
  TrustedListCacheEntry,
  TrustedListSnapshot,
} from '../trusted-list/model.js';
import { qualificationCertificate } from './certificate.js';
import type { QualificationCertificate, QualifiedFor } from './certificate.js';
import { matchesCriteria } from './criteria.js';
import { sameSubject } from './name-key.js';
import { ServiceCertificateIndex } from './service-index.js';
import {
  EIDAS_START,
  FOR_ESEALS,
  FOR_ESIGNATURES,
  FOR_WEBSITE_AUTHENTICATION,
  POLICY,
  QUALIFIED_STATUSES,
  QUALIFIER,
  SERVICE_CA_QC,
  SERVICE_TSA_QTST,
} from './uris.js';

export type QualificationName =
  'QESig' | 'QESeal' | 'AdESig-QC' | 'AdESeal-QC' | 'AdESig' | 'AdESeal' | 'INDETERMINATE';

export type Qscd = 'yes' | 'no' | 'indeterminate';

/** The trust service a certificate's chain leads to, as its list names it. */
export interface QualifyingService {
  provider: string;
  name: string;
  territory: string;
  sequenceNumber: number;
  /** A sandbox TEST list. */
  test: boolean;
}

export interface Qualification {
  name: QualificationName;
  /** Why it is INDETERMINATE, or why it is not qualified. */
  reason?: string;
  /** The service the chain leads to; several when the CA key is listed under more than one. */
  services: QualifyingService[];
  qualifiedAtIssuance: boolean;
  qualifiedAtSigning: boolean;
  /** What the certificate is qualified (or, when not, meant) for; null when undetermined. */
  type: QualifiedFor | null;
  /** Whether the private key was on a QSCD at signing time. */
  qscd: Qscd;
  /** Every list used is a sandbox TEST list. */
  test: boolean;
}

export interface QualificationInput {
  /** The signer's certificate (DER). */
  certificate: Uint8Array;
  /** The rest of its chain (DER), issuer first; the root may be absent. */
  chain: readonly Uint8Array[];
  /** The trusted timestamp's time, else the validation time. */
  signingTime: Date;
  /** Now: a list past its next update at this time is expired. */
  validationTime: Date;
  /** The cache's entries; only verified snapshots are used. */
  lists: readonly TrustedListCacheEntry[];
}

interface ServiceMatch {
  list: TrustedListSnapshot;
  service: TrustService;
}

/** What one granted service says of the certificate at one time. */
interface ServiceVerdict {
  qualified: boolean;
  type: QualifiedFor | null;
  qscd: Qscd;
  /** Some Qualifications entry of the service selects the certificate. */
  selected: boolean;
  reason?: string;
}

interface TimeVerdict extends ServiceVerdict {
  /** The services disagree on whether it is qualified. */
  conflict?: string;
}

export function qualifyCertificate(input: QualificationInput): Qualification {
  const certificate = qualificationCertificate(input.certificate);
  const matches = servicesFor(SERVICE_CA_QC, certificate, input.chain, input.lists);
  const services = matches.map(describe);
  const test = matches.length > 0 && matches.every((match) => match.list.test);
  const claimedType = typeFromCertificate(certificate);
  const unqualified = (reason: string, extra: Partial<Qualification> = {}): Qualification => ({
    name: claimedType === 'eseal' ? 'AdESeal' : 'AdESig',
    reason,
    services,
    qualifiedAtIssuance: false,
    qualifiedAtSigning: false,
    type: claimedType,
    qscd: 'no',
    test,
    ...extra,
  });
  if (matches.length === 0)
    return unqualified(
      certificate.qcCompliance
        ? 'the certificate claims to be qualified, but its issuer is on no trusted list'
        : 'its issuer is on no trusted list',
    );
  const expired = expiredLists(matches, input.validationTime);
  if (expired) return { ...unqualified(expired), name: 'INDETERMINATE', type: null, qscd: 'indeterminate' };

  const atIssuance = verdictAt(certificate, matches, certificate.notBefore);
  const atSigning = verdictAt(certificate, matches, input.signingTime);
  const base = { services, qualifiedAtIssuance: atIssuance.qualified, qualifiedAtSigning: atSigning.qualified, test };
  const conflict = atIssuance.conflict ?? atSigning.conflict;
  if (conflict) return { ...base, name: 'INDETERMINATE', reason: conflict, type: null, qscd: 'indeterminate' };
  if (!atIssuance.qualified)
    return unqualified(`not qualified when issued: ${atIssuance.reason ?? 'no granted service'}`, base);
  if (!atSigning.qualified)
    return unqualified(`not qualified at signing time: ${atSigning.reason ?? 'no granted service'}`, {
      ...base,
      type: atIssuance.type,
    });
  const type = atIssuance.type;
  if (type === null || type !== atSigning.type)
    return {
      ...base,
      name: 'INDETERMINATE',
      reason: 'what the certificate is qualified for cannot be determined',
      type: null,
      qscd: atSigning.qscd,
    };
  if (type === 'web')
    return unqualified('the certificate is qualified for website authentication, not for signatures', {
      ...base,
      type,
    });
  if (atSigning.qscd === 'indeterminate')
    return {
      ...base,
      name: 'INDETERMINATE',
      reason: 'whether the key is on a QSCD cannot be determined',
      type,
      qscd: 'indeterminate',
    };
  const seal = type === 'eseal';
  const name: QualificationName =
    atSigning.qscd === 'yes' ? (seal ? 'QESeal' : 'QESig') : seal ? 'AdESeal-QC' : 'AdESig-QC';
  return { ...base, name, type, qscd: atSigning.qscd };
}

export interface TimestampQualification {
  qualified: boolean | 'indeterminate';
  reason?: string;
  services: QualifyingService[];
  test: boolean;
}

/** Whether a timestamp is a qualified electronic time stamp: its TSA is a TSA/QTST service granted at the token's time. */
export function qualifyTimestamp(input: {
  certificate: Uint8Array;
  chain: readonly Uint8Array[];
  time: Date;
  validationTime: Date;
  lists: readonly TrustedListCacheEntry[];
}): TimestampQualification {
  const certificate = qualificationCertificate(input.certificate);
  const matches = servicesFor(SERVICE_TSA_QTST, certificate, input.chain, input.lists, true);
  const services = matches.map(describe);
  const test = matches.length > 0 && matches.every((match) => match.list.test);
  if (matches.length === 0) return { qualified: false, reason: 'its TSA is on no trusted list', services, test };
  const expired = expiredLists(matches, input.validationTime);
  if (expired) return { qualified: 'indeterminate', reason: expired, services, test };
  const granted = matches.some((match) => grantedPeriod(match.service, input.time));
  return granted
    ? { qualified: true, services, test }
    : { qualified: false, reason: 'its TSA service was not granted at the time of the token', services, test };
}

/** The services of `type` whose digital identity is the certificate's issuer or a CA above it (or, with `self`, the certificate itself). */
function servicesFor(
  type: string,
  certificate: QualificationCertificate,
  chain: readonly Uint8Array[],
  lists: readonly TrustedListCacheEntry[],
  self = false,
): ServiceMatch[] {
  const index = ServiceCertificateIndex.of(lists);
  const above = chain.map(parse).filter((cert): cert is X509Certificate => cert !== undefined);
  // The list's certificate for the issuer (verified: it signed this one), or for the same key and name as a CA above.
  const identified = new Set<string>();
  if (!self)
    for (const issuer of index.issuersOf(certificate.x509))
      if (issuedBy(certificate.x509, issuer)) identified.add(issuer.raw.toString('base64'));
  for (const candidate of self ? [certificate.x509, ...above] : above)
    for (const listed of index.sameSubjectAs(candidate))
      if (sameKeyAndName(candidate, listed)) identified.add(listed.raw.toString('base64'));
  const keyIdentifiers = new Set<string>();
  if (certificate.authorityKeyIdentifier) keyIdentifiers.add(certificate.authorityKeyIdentifier);
  for (const der of self ? [certificate.x509.raw, ...chain] : chain) {
    const ski = safeSki(der);
    if (ski) keyIdentifiers.add(ski);
  }
  const naming = index.listsNaming(identified, keyIdentifiers); // the others' services are not read
  const matches: ServiceMatch[] = [];
  for (const entry of lists) {
    if (!naming.has(entry)) continue;
    const list = entry.snapshot;
    if (!list || list.isLotl) continue;
    for (const service of list.services)
      if (
        service.type === type &&
        (service.identity.certificates.some((base64) => identified.has(base64)) ||
          service.identity.subjectKeyIdentifiers.some((ski) => keyIdentifiers.has(ski.toLowerCase())))
      )
        matches.push({ list, service });
  }
  return matches;
}

/** "trusted list expired: …" when a list that names one of the services is past its next update. */
function expiredLists(matches: readonly ServiceMatch[], now: Date): string | undefined {
  const expired = new Map<string, string>();
  for (const { list } of matches)
    if (list.nextUpdate !== null && Date.parse(list.nextUpdate) < now.getTime())
      expired.set(list.territory, `${list.territory} (next update was due ${list.nextUpdate})`);
  return expired.size > 0 ? `trusted list expired: ${[...expired.values()].join(', ')}` : undefined;
}

/** The status period in force at `at` (history is newest first, each period ending where the newer one starts). */
export function periodAt(service: TrustService, at: Date): ServiceStatusPeriod | undefined {
  return service.history.find((period) => Date.parse(period.from) <= at.getTime());
}

function grantedPeriod(service: TrustService, at: Date): ServiceStatusPeriod | undefined {
  const period = periodAt(service, at);
  return period && QUALIFIED_STATUSES.has(period.status) ? period : undefined;
}

function verdictAt(certificate: QualificationCertificate, matches: readonly ServiceMatch[], at: Date): TimeVerdict {
  const granted = matches.flatMap(({ service }) => {
    const period = grantedPeriod(service, at);
    return period ? [verdictOfService(certificate, period, at)] : [];
  });
  // Where the same CA key is listed under several services, those whose qualifications select this
  // certificate speak of it; the others only of the key.
  const selecting = granted.filter((verdict) => verdict.selected);
  const verdicts = selecting.length > 0 ? selecting : granted;
  const first = verdicts[0];
  if (!first) {
    const statuses = matches.map(({ service }) => periodAt(service, at)?.status.split('/').pop() ?? 'not yet listed');
    return {
      qualified: false,
      type: null,
      qscd: 'no',
      selected: false,
      reason: `the service was ${[...new Set(statuses)].join(', ')} at ${at.toISOString()}`,
    };
  }
  if (verdicts.every((verdict) => sameVerdict(verdict, first))) return first;
  if (verdicts.some((verdict) => verdict.qualified !== first.qualified))
    return {
      ...first,
      conflict: 'the trust services listing the issuer disagree on whether the certificate is qualified',
    };
  const agreed = (key: 'type' | 'qscd'): boolean => verdicts.every((verdict) => verdict[key] === first[key]);
  return { ...first, type: agreed('type') ? first.type : null, qscd: agreed('qscd') ? first.qscd : 'indeterminate' };
}

function sameVerdict(a: ServiceVerdict, b: ServiceVerdict): boolean {
  return a.qualified === b.qualified && a.type === b.type && a.qscd === b.qscd;
}

/** TS 119 615 §4.3.x: one granted service's period applied to the certificate. */
function verdictOfService(
  certificate: QualificationCertificate,
  period: ServiceStatusPeriod,
  at: Date,
): ServiceVerdict {
  const selecting = period.qualifications.filter((qualification) =>
    matchesCriteria(qualification.criteria, certificate),
  );
  const qualifiers = new Set(selecting.flatMap((qualification) => qualification.qualifiers));
  const preEidas = at.getTime() < EIDAS_START;
  const has = (uri: string): boolean => qualifiers.has(uri);

  let qualified: boolean;
  let reason: string | undefined;
  if (has(QUALIFIER.notQualified)) {
    qualified = false;
    reason = 'the trusted list says the certificate is not qualified (NotQualified)';
  } else if (has(QUALIFIER.qcStatement)) qualified = true;
  else {
    qualified =
      certificate.qcCompliance ||
      (preEidas && certificate.policies.some((oid) => oid === POLICY.qcpPublic || oid === POLICY.qcpPublicWithSscd));
    if (!qualified) reason = 'the certificate does not claim to be qualified and the list does not say it is';
  }
  if (qualified && preEidas && has(QUALIFIER.forLegalPerson)) {
    qualified = false;
    reason = 'before eIDAS, certificates issued to legal persons were not qualified (QCForLegalPerson)';
  }

  const listTypes: QualifiedFor[] = [];
  if (has(QUALIFIER.forESig)) listTypes.push('esig');
  if (has(QUALIFIER.forESeal)) listTypes.push('eseal');
  if (has(QUALIFIER.forWsa)) listTypes.push('web');
  const type: QualifiedFor | null = preEidas
    ? 'esig'
    : listTypes.length > 0
      ? listTypes.length === 1
        ? (listTypes[0] as QualifiedFor)
        : null
      : typeFromCertificate(certificate);

  const asi = period.additionalServiceInformation;
  const servedTypes = new Map<QualifiedFor, boolean>([
    ['esig', asi.includes(FOR_ESIGNATURES)],
    ['eseal', asi.includes(FOR_ESEALS)],
    ['web', asi.includes(FOR_WEBSITE_AUTHENTICATION)],
  ]);
  const restricted = [...servedTypes.values()].some(Boolean);
  if (qualified && !preEidas && restricted && type !== null && !servedTypes.get(type)) {
    qualified = false;
    reason = `the service does not issue qualified certificates for ${TYPE_WORDS[type]}`;
  }
  return {
    qualified,
    type,
    qscd: qscdOf(certificate, qualifiers, preEidas),
    selected: selecting.length > 0,
    ...(reason ? { reason } : {}),
  };
}

const TYPE_WORDS: Readonly<Record<QualifiedFor, string>> = {
  esig: 'electronic signatures',
  eseal: 'electronic seals',
  web: 'website authentication',
};

function qscdOf(certificate: QualificationCertificate, qualifiers: ReadonlySet<string>, preEidas: boolean): Qscd {
  const yes =
    qualifiers.has(QUALIFIER.withQscd) ||
    qualifiers.has(QUALIFIER.withSscd) ||
    qualifiers.has(QUALIFIER.qscdManagedOnBehalf);
  const no = qualifiers.has(QUALIFIER.noQscd) || qualifiers.has(QUALIFIER.noSscd);
  if (yes && no) return 'indeterminate';
  if (yes) return 'yes';
  if (no) return 'no';
  const inCert = certificate.qcSscd || (preEidas && certificate.policies.includes(POLICY.qcpPublicWithSscd));
  return inCert ? 'yes' : 'no';
}

/** EN 319 412-5: QcType says what the certificate is for; without it, an EU qualified certificate is for e-signatures. */
function typeFromCertificate(certificate: QualificationCertificate): QualifiedFor | null {
  if (certificate.qcTypes.length === 1) return certificate.qcTypes[0] as QualifiedFor;
  if (certificate.qcTypes.length > 1) return null;
  return 'esig';
}

function describe({ list, service }: ServiceMatch): QualifyingService {
  return {
    provider: service.provider,
    name: service.name,
    territory: list.territory,
    sequenceNumber: list.sequenceNumber,
    test: list.test,
  };
}

function parse(der: Uint8Array): X509Certificate | undefined {
  try {
    return new X509Certificate(der);
  } catch {
    return undefined;
  }
}

function safeSki(der: Uint8Array): string | undefined {
  try {
    return qualificationCertificate(der).subjectKeyIdentifier;
  } catch {
    return undefined;
  }
}

function issuedBy(subject: X509Certificate, issuer: X509Certificate): boolean {
  try {
    return subject.checkIssued(issuer) && subject.verify(issuer.publicKey);
  } catch {
    return false;
  }
}

/** The same key under the same name, the name compared as RFC 5280 §7.1 says (not byte for byte). */
function sameKeyAndName(a: X509Certificate, b: X509Certificate): boolean {
  return sameSubject(a, b) && a.publicKey.equals(b.publicKey);
}
