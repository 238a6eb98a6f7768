/**
 * The qualification of a certificate, and so of a signature made with it: ETSI TS 119 615's
 * procedure over the verified trusted lists, as the EU's reference validator (DSS) applies it, named
 * in TS 119 172-4's terms (names.ts adds the signature's validation result).
 *
 * A trust service is reached only through a certificate of its ServiceDigitalIdentity whose key
 * esign has seen verify a certificate of the chain (anchors.ts): names and key identifiers only narrow
 * the search. Where no list is reached, the answer is N/A, never "not qualified".
 */
import type { TrustService, TrustedListCacheEntry, TrustedListSnapshot } from '../trusted-list/model.js';
import { chainBreak, serviceAnchors, type ChainAnchors, type ReachedService } from './anchors.js';
import { qualificationCertificate } from './certificate.js';
import type { QualificationCertificate, QualifiedFor } from './certificate.js';
import { lotlPointsTo, missingTerritory } from './missing-list.js';
import { isPostEidas, servicePeriods, type ServicePeriod } from './periods.js';
import { trustListPolicyOf, type TrustListPolicy } from './policy.js';

export type { TrustListPolicy };
import {
  QUALIFIER,
  SERVICE_CA_QC,
  SERVICE_TSA_QTST,
  FOR_ESEALS,
  FOR_ESIGNATURES,
  FOR_WEBSITE_AUTHENTICATION,
  POLICY,
  STATUS,
} from './uris.js';

/** TS 119 172-4 / DSS names of a certificate's qualification, and of a signature once its validation result is known (names.ts). */
export type BaseQualificationName =
  'QESig' | 'QESeal' | 'Unknown-QC-QSCD' | 'AdESig-QC' | 'AdESeal-QC' | 'Unknown-QC' | 'AdESig' | 'AdESeal' | 'Unknown';

export type QualificationName =
  | BaseQualificationName
  | `Indeterminate ${BaseQualificationName}`
  | 'Not AdES but QC with QSCD'
  | 'Not AdES but QC'
  | 'Not AdES'
  | 'N/A';

export type Qscd = 'yes' | 'no' | 'indeterminate';

/** The trust service a certificate's chain leads to, as its list names it. */
export interface QualifyingService {
  provider: string;
  name: string;
  territory: string;
  sequenceNumber: number;
  /** A sandbox TEST list. */
  test: boolean;
  /** A list added with `esign trust add` that the LOTL does not point to: its name. Never EU-qualified. */
  list?: string;
}

export interface Qualification {
  name: QualificationName;
  /** Why it is N/A, not qualified or indeterminate. */
  reason?: string;
  /** The services the chain leads to (each through a certificate that verified it). */
  services: QualifyingService[];
  qualifiedAtIssuance: boolean;
  qualifiedAtSigning: boolean;
  /** What the certificate is qualified (or, when not, meant) for; null when unknown. */
  type: QualifiedFor | null;
  /** Whether the private key was on a QSCD at signing time. */
  qscd: Qscd;
  /** Every list used is a sandbox TEST list. */
  test: boolean;
  /** The best-signature-time the qualification at signing was determined at. */
  signingTime?: string;
  /** What did not stop the verdict but weakens it (a list past its next update, a service not used). */
  warnings?: string[];
  /** N/A because a list the LOTL points to is not cached: the territory, and the command that fetches it. */
  missingList?: { territory: string; command: string };
  /** False when the verdict rests on a list added with `esign trust add` that the LOTL does not point to: never EU-qualified. */
  euQualified?: false;
}

export interface QualificationInput {
  /** The signer's certificate (DER). */
  certificate: Uint8Array;
  /** Other certificates (DER) to build its chain from, in any order; only links whose signature verifies are followed. */
  chain: readonly Uint8Array[];
  /** The best-signature-time: a trusted timestamp's time (or another proof of existence), else the validation time. */
  signingTime: Date;
  /** Now: a list past its next update at this time is expired. */
  validationTime: Date;
  /** The cache's entries; only verified snapshots are used. */
  lists: readonly TrustedListCacheEntry[];
  policy?: TrustListPolicy;
}

/** What the certificate is at one time (DSS's CertificateQualification), or N/A with why. */
export type CertificateAtTime =
  | {
      na: false;
      qc: boolean;
      type: QualifiedFor | 'unknown';
      qscd: boolean;
      reason?: string;
      services: ServicePeriod[];
    }
  | { na: true; reason: string };

export function qualifyCertificate(input: QualificationInput): Qualification {
  let certificate: QualificationCertificate;
  try {
    certificate = qualificationCertificate(input.certificate);
  } catch {
    return notApplicable('the certificate cannot be read', input.signingTime);
  }
  const reached = serviceAnchors(certificate, input.chain, input.lists, false);
  return qualifyReached(certificate, reached, input);
}

/**
 * What a signature made at `signingTime` with a credential would be: the certificates as its signing
 * service sent them (signer first, each issuer after the certificate it signed), verified link by
 * link before anything is qualified. A chain that does not verify is N/A, with where it breaks.
 */
function notApplicable(reason: string, signingTime: Date): Qualification {
  return {
    name: 'N/A',
    reason,
    services: [],
    qualifiedAtIssuance: false,
    qualifiedAtSigning: false,
    type: null,
    qscd: 'no',
    test: false,
    signingTime: signingTime.toISOString(),
  };
}

export function qualifyCredential(
  certificates: readonly Uint8Array[],
  input: Omit<QualificationInput, 'certificate' | 'chain'>,
): Qualification | undefined {
  const [certificate, ...chain] = certificates;
  if (!certificate) return undefined;
  const broken = chainBreak(certificates);
  if (broken) return notApplicable(`the chain the signing service sent does not verify: ${broken}`, input.signingTime);
  return qualifyCertificate({ ...input, certificate, chain });
}

function qualifyReached(
  certificate: QualificationCertificate,
  reached: ChainAnchors,
  input: QualificationInput,
): Qualification {
  const usable = usableServices(reached.services, input.validationTime, input.policy ?? trustListPolicyOf(input.lists));
  const services = usable.services.map(describe);
  const test = usable.services.length > 0 && usable.services.every((match) => match.list.test);
  const warnings = [...usable.warnings];
  // Never EU-qualified when only lists added with `esign trust add` (that the LOTL does not point to) reach it.
  const outsideEu =
    usable.services.length > 0 &&
    usable.services.every((match) => match.added !== undefined && !lotlPointsTo(input.lists, match.added.url));
  const base = {
    services,
    test,
    ...(outsideEu ? { euQualified: false as const } : {}),
    signingTime: input.signingTime.toISOString(),
    ...(warnings.length > 0 ? { warnings } : {}),
  };
  if (usable.services.length === 0) {
    const missing = missingTerritory(reached.path, input.lists);
    const why =
      usable.dropped ??
      'no trusted list service certifies its chain (a certificate chain up to a trusted list cannot be built)';
    return {
      ...base,
      name: 'N/A',
      reason: missing
        ? `${why}; the LOTL points to the list of ${missing}, which is not cached: run \`esign trust update --territories ${missing}\``
        : why,
      qualifiedAtIssuance: false,
      qualifiedAtSigning: false,
      type: null,
      qscd: 'no',
      ...(missing
        ? { missingList: { territory: missing, command: `esign trust update --territories ${missing}` } }
        : {}),
    };
  }
  const periods = usable.services.flatMap((match) => servicePeriods(match.list, match.service, certificate));
  const atIssuance = certificateAt(certificate, periods, certificate.notBefore, 'when issued');
  const atSigning = certificateAt(certificate, periods, input.signingTime, 'at signing time');
  const final = finalQualification(atIssuance, atSigning);
  if (final.na)
    return {
      ...base,
      name: 'N/A',
      reason: final.reason,
      qualifiedAtIssuance: false,
      qualifiedAtSigning: false,
      type: null,
      qscd: 'indeterminate',
    };
  const qualifiedAtIssuance = !atIssuance.na && atIssuance.qc;
  const qualifiedAtSigning = !atSigning.na && atSigning.qc;
  const reason = !qualifiedAtIssuance
    ? `not qualified when issued: ${(!atIssuance.na && atIssuance.reason) || 'no granted service'}`
    : !qualifiedAtSigning
      ? `not qualified at signing time: ${(!atSigning.na && atSigning.reason) || 'no granted service'}`
      : final.type === 'web'
        ? 'the certificate is qualified for website authentication, not for signatures or seals'
        : final.type === 'unknown'
          ? 'what the certificate is qualified for cannot be determined'
          : undefined;
  return {
    ...base,
    name: certificateName(final),
    ...(reason ? { reason } : {}),
    qualifiedAtIssuance,
    qualifiedAtSigning,
    type: final.type === 'unknown' ? null : final.type,
    qscd: final.qc && final.qscd ? 'yes' : 'no',
  };
}

/** DSS's FinalCertificateQualificationCalculator: the qualification at issuance and at signing time, made one. */
function finalQualification(
  issuance: CertificateAtTime,
  signing: CertificateAtTime,
): { na: true; reason: string } | { na: false; qc: boolean; type: QualifiedFor | 'unknown'; qscd: boolean } {
  if (issuance.na) return issuance;
  if (signing.na) return signing;
  const qc = issuance.qc && signing.qc;
  return {
    na: false,
    qc,
    type: issuance.type === signing.type ? signing.type : 'unknown',
    qscd: qc && signing.qscd,
  };
}

/** The name of a certificate qualification for a signature that passed validation (DSS's SigQualificationMatrix, TOTAL-PASSED row). */
function certificateName(q: {
  qc: boolean;
  type: QualifiedFor | 'unknown';
  qscd: boolean;
}): BaseQualificationName | 'Not AdES' {
  if (q.type === 'web') return 'Not AdES';
  if (q.qc && q.qscd) return q.type === 'esig' ? 'QESig' : q.type === 'eseal' ? 'QESeal' : 'Unknown-QC-QSCD';
  if (q.qc) return q.type === 'esig' ? 'AdESig-QC' : q.type === 'eseal' ? 'AdESeal-QC' : 'Unknown-QC';
  return q.type === 'esig' ? 'AdESig' : q.type === 'eseal' ? 'AdESeal' : 'Unknown';
}

/**
 * The services of lists that may be used at `now`: a list past its next update is used with a
 * warning (DSS's default policy), or, with `strict`, not at all; a service whose criteria esign
 * cannot read is not used.
 */
function usableServices(
  services: readonly ReachedService[],
  now: Date,
  policy: TrustListPolicy,
): { services: ReachedService[]; warnings: string[]; dropped?: string } {
  const warnings = new Set<string>();
  const dropped: string[] = [];
  const kept = services.filter((match) => {
    const { list, service } = match;
    if (list.nextUpdate !== null && Date.parse(list.nextUpdate) < now.getTime()) {
      const expired = `trusted list ${list.territory} expired: its next update was due ${list.nextUpdate}`;
      if (policy === 'strict') {
        dropped.push(`${expired} (not used: trustListPolicy strict)`);
        return false;
      }
      warnings.add(`${expired} (used, as DSS's default policy does)`);
    }
    const unreadable = unreadableCriteria(service);
    if (unreadable) {
      const why = `the service "${service.name}" of ${list.territory} is not used: esign cannot read its criteria (${unreadable})`;
      warnings.add(why);
      dropped.push(why);
      return false;
    }
    return true;
  });
  return {
    services: kept,
    warnings: [...warnings],
    ...(kept.length === 0 && dropped.length > 0 ? { dropped: [...new Set(dropped)].join('; ') } : {}),
  };
}

function unreadableCriteria(service: TrustService): string | undefined {
  for (const period of service.history)
    for (const qualification of period.qualifications) {
      const unsupported = unsupportedIn(qualification.criteria);
      if (unsupported.length > 0) return unsupported.join(', ');
    }
  return undefined;
}

function unsupportedIn(criteria: {
  unsupported?: string[];
  criteriaLists: Array<{ unsupported?: string[]; criteriaLists: unknown[] }>;
}): string[] {
  return [
    ...(criteria.unsupported ?? []),
    ...criteria.criteriaLists.flatMap((nested) => unsupportedIn(nested as Parameters<typeof unsupportedIn>[0])),
  ];
}

/**
 * TS 119 615 §4.4 at one time, as DSS's CertQualificationAtTimeBlock: the status periods in force,
 * CA/QC first, those that apply to the certificate's type, conflicts, consistency by status, granted,
 * one service, then qualified / type / QSCD each from the services consistent for it.
 */
export function certificateAt(
  certificate: QualificationCertificate,
  periods: readonly ServicePeriod[],
  at: Date,
  when: string,
): CertificateAtTime {
  const time = at.getTime();
  let filtered = periods.filter((period) => period.start <= time && (period.end === undefined || time <= period.end));
  const inForce = filtered;
  const caQc = filtered.filter((period) => period.type === SERVICE_CA_QC);
  if (caQc.length > 0) filtered = caQc;
  const byType = filtered.filter((period) => appliesToCertificateType(certificate, period));
  filtered = byType;
  if (filtered.length > 1) {
    const results = new Map<string, ServicePeriod>();
    for (const period of filtered) results.set(key(calculate(certificate, period)), period);
    if (results.size > 1)
      return {
        na: true,
        reason: `the trust services listing its issuer disagree ${when} (${[...results.values()]
          .map((period) => `"${period.service.name}" of ${period.list.territory}`)
          .join(', ')}): conflicting qualifications`,
      };
  }
  filtered = filtered.filter(statusConsistent);
  const granted = filtered.filter(isGranted);
  if (granted.length > 0) filtered = granted;
  if (filtered.length > 1) {
    const results = new Set(filtered.map((period) => key(calculate(certificate, period))));
    filtered = results.size > 1 ? [] : [filtered[0] as ServicePeriod];
  }
  // Only a granted CA/QC entry says anything further of the certificate.
  const selected = filtered[0];
  if (selected && (!caQc.includes(selected) || !granted.includes(selected))) filtered = [];
  const forQc = filtered.filter(qcStatementConsistent)[0];
  const qc = qualifiedBy(certificate, forQc);
  const forType = filtered.filter(typeConsistent)[0];
  const type = typeBy(certificate, forType, qc.qc);
  const forQscd = filtered.filter(qscdConsistent)[0];
  const qscd = qscdBy(certificate, forQscd, qc.qc);
  const reason = qc.qc ? undefined : (whyNotQualified(certificate, at, inForce, caQc, byType, granted) ?? qc.reason);
  return { na: false, qc: qc.qc, type, qscd, ...(reason ? { reason } : {}), services: filtered };
}

function whyNotQualified(
  certificate: QualificationCertificate,
  at: Date,
  inForce: readonly ServicePeriod[],
  caQc: readonly ServicePeriod[],
  byType: readonly ServicePeriod[],
  granted: readonly ServicePeriod[],
): string | undefined {
  if (inForce.length === 0) return `no service of its issuer was listed at ${at.toISOString()}`;
  if (caQc.length === 0) return `no CA/QC service of its issuer at ${at.toISOString()}`;
  if (byType.length === 0) {
    const type = typeFromCertificate(certificate);
    return `the service does not issue qualified certificates for ${type === 'unknown' ? 'this type of certificate' : TYPE_WORDS[type]}`;
  }
  if (granted.length === 0) {
    const statuses = byType.map((period) => period.status.split('/').pop() ?? period.status);
    return `the service was ${[...new Set(statuses)].join(', ')} at ${at.toISOString()}`;
  }
  return undefined;
}

const TYPE_WORDS: Readonly<Record<QualifiedFor, string>> = {
  esig: 'electronic signatures',
  eseal: 'electronic seals',
  web: 'website authentication',
};

function key(q: { qc: boolean; type: string; qscd: boolean }): string {
  return `${q.qc}/${q.type}/${q.qc && q.type !== 'web' && q.qscd}`;
}

/** DSS's CertificateQualificationCalculator: what one service period alone says of the certificate. */
function calculate(certificate: QualificationCertificate, period: ServicePeriod) {
  const qc = qualifiedBy(certificate, period).qc;
  return { qc, type: typeBy(certificate, period, qc), qscd: qscdBy(certificate, period, qc) };
}

/** DSS's GrantedServiceFilter: granted after eIDAS; under supervision, in cessation or accredited before (by the period's start). */
export function isGranted(period: Pick<ServicePeriod, 'status' | 'start'>): boolean {
  return isPostEidas(period.start)
    ? period.status === STATUS.granted
    : period.status === STATUS.undersupervision ||
        period.status === STATUS.supervisionincessation ||
        period.status === STATUS.accredited;
}

/** A period that starts before eIDAS cannot have an eIDAS status (granted, withdrawn). */
function statusConsistent(period: ServicePeriod): boolean {
  return isPostEidas(period.start) || (period.status !== STATUS.granted && period.status !== STATUS.withdrawn);
}

/** DSS's ServiceByCertificateTypeFilter: after eIDAS, a service serves the types its AdditionalServiceInformation names (or a qualifier overrules to). */
function appliesToCertificateType(certificate: QualificationCertificate, period: ServicePeriod): boolean {
  if (!isPostEidas(certificate.notBefore.getTime())) return true;
  const asi = period.additionalServiceInformation;
  const q = period.qualifiers;
  const qcForEseal = q.has(QUALIFIER.forESeal);
  const qcForWsa = q.has(QUALIFIER.forWsa);
  const qcForEsig = q.has(QUALIFIER.forESig) || (!qcForEseal && !qcForWsa && certificate.qcCompliance);
  const onlyOne = [qcForEsig, qcForEseal, qcForWsa].filter(Boolean).length === 1;
  const asiEsig = asi.includes(FOR_ESIGNATURES) && !q.has(QUALIFIER.forLegalPerson);
  const asiEseal = asi.includes(FOR_ESEALS);
  const asiWsa = asi.includes(FOR_WEBSITE_AUTHENTICATION);
  const toEsig = asiEsig && qcForEsig && onlyOne;
  const toEseal = asiEseal && qcForEseal && onlyOne;
  const toWsa = asiWsa && qcForWsa && onlyOne;
  switch (typeFromCertificate(certificate)) {
    case 'esig':
      return asiEsig || toEseal || toWsa;
    case 'eseal':
      return asiEseal || toEsig || toWsa;
    case 'web':
      return asiWsa || toEseal || toEsig;
    case 'unknown':
      return true;
  }
}

function qcStatementConsistent(period: ServicePeriod): boolean {
  return !(period.qualifiers.has(QUALIFIER.qcStatement) && period.qualifiers.has(QUALIFIER.notQualified));
}

function typeConsistent(period: ServicePeriod): boolean {
  const q = period.qualifiers;
  const usages = [q.has(QUALIFIER.forESig), q.has(QUALIFIER.forESeal), q.has(QUALIFIER.forWsa)].filter(Boolean).length;
  if (q.has(QUALIFIER.forLegalPerson) && q.has(QUALIFIER.forESig)) return false;
  if (usages > 1) return false;
  const asi = period.additionalServiceInformation;
  if (asi.length > 0 && usages === 1) {
    const expected = q.has(QUALIFIER.forESig)
      ? FOR_ESIGNATURES
      : q.has(QUALIFIER.forESeal)
        ? FOR_ESEALS
        : FOR_WEBSITE_AUTHENTICATION;
    if (!asi.includes(expected)) return false;
  }
  if (!isPostEidas(period.start)) {
    const forSig = asi.includes(FOR_ESIGNATURES);
    if ((asi.includes(FOR_ESEALS) || asi.includes(FOR_WEBSITE_AUTHENTICATION)) && !forSig) return false;
    if (q.has(QUALIFIER.forESeal) || q.has(QUALIFIER.forWsa)) return false;
  }
  return true;
}

function qscdConsistent(period: ServicePeriod): boolean {
  const q = period.qualifiers;
  const withQscd = q.has(QUALIFIER.withQscd) || q.has(QUALIFIER.withSscd) || q.has(QUALIFIER.qscdManagedOnBehalf);
  const asInCert = q.has(QUALIFIER.qscdAsInCert) || q.has(QUALIFIER.sscdAsInCert);
  const noQscd = q.has(QUALIFIER.noQscd) || q.has(QUALIFIER.noSscd);
  if ((withQscd || asInCert) && noQscd) return false;
  if (asInCert && withQscd) return false;
  if (isPostEidas(period.start)) {
    const preEidas = q.has(QUALIFIER.withSscd) || q.has(QUALIFIER.noSscd);
    const postEidas = q.has(QUALIFIER.withQscd) || q.has(QUALIFIER.noQscd);
    if (preEidas && !postEidas) return false;
  }
  return true;
}

/** Qualified: the list's NotQualified / QCStatement over what the certificate says (QcCompliance without QcCClegislation; before eIDAS, a QCP policy too). */
function qualifiedBy(
  certificate: QualificationCertificate,
  period: ServicePeriod | undefined,
): { qc: boolean; reason?: string } {
  if (!period) return { qc: false };
  if (!isGranted(period)) return { qc: false };
  if (period.qualifiers.has(QUALIFIER.notQualified))
    return { qc: false, reason: 'the trusted list says the certificate is not qualified (NotQualified)' };
  if (period.qualifiers.has(QUALIFIER.qcStatement)) return { qc: true };
  if (certificate.qcLegislation.length > 0)
    return {
      qc: false,
      reason: `the certificate is qualified under the law of ${certificate.qcLegislation.join(', ')} (QcCClegislation), not under eIDAS`,
    };
  const claims = isPostEidas(certificate.notBefore.getTime())
    ? certificate.qcCompliance
    : certificate.qcCompliance ||
      certificate.policies.includes(POLICY.qcpPublic) ||
      certificate.policies.includes(POLICY.qcpPublicWithSscd);
  return claims
    ? { qc: true }
    : {
        qc: false,
        reason: 'the certificate does not claim to be qualified (no QcCompliance) and the list does not say it is',
      };
}

/** The type: before eIDAS e-signatures; else the one usage qualifier of the list, else the certificate's QcType. */
function typeBy(
  certificate: QualificationCertificate,
  period: ServicePeriod | undefined,
  qc: boolean,
): QualifiedFor | 'unknown' {
  if (qc) {
    if (!period) return 'unknown';
    if (!isPostEidas(period.start)) return 'esig';
    const usages: QualifiedFor[] = [];
    if (period.qualifiers.has(QUALIFIER.forESig)) usages.push('esig');
    if (period.qualifiers.has(QUALIFIER.forESeal)) usages.push('eseal');
    if (period.qualifiers.has(QUALIFIER.forWsa)) usages.push('web');
    if (usages.length > 1) return 'unknown';
    if (usages.length === 1) return usages[0] as QualifiedFor;
  }
  return typeFromCertificate(certificate);
}

/** EN 319 412-5: QcType says what it is for; a qualified certificate without one is for e-signatures. Before eIDAS, a qualified one is for e-signatures. */
export function typeFromCertificate(certificate: QualificationCertificate): QualifiedFor | 'unknown' {
  if (!isPostEidas(certificate.notBefore.getTime()))
    return certificate.qcCompliance ||
      certificate.policies.includes(POLICY.qcpPublic) ||
      certificate.policies.includes(POLICY.qcpPublicWithSscd)
      ? 'esig'
      : 'unknown';
  const types = certificate.qcTypes;
  if (types.length === 0) return certificate.qcCompliance ? 'esig' : 'unknown';
  return types.length === 1 ? (types[0] as QualifiedFor) : 'unknown';
}

/** QSCD: the list's qualifiers of the period's era (QCWithQSCD… after eIDAS, QCWithSSCD… before), else the certificate. */
function qscdBy(certificate: QualificationCertificate, period: ServicePeriod | undefined, qc: boolean): boolean {
  if (!period || !qc) return false;
  const q = period.qualifiers;
  if (q.size > 0) {
    if (isPostEidas(period.start)) {
      if (q.has(QUALIFIER.withQscd) || q.has(QUALIFIER.qscdManagedOnBehalf)) return true;
      if (q.has(QUALIFIER.qscdAsInCert)) return qscdFromCertificate(certificate);
      if (q.has(QUALIFIER.noQscd)) return false;
    } else {
      if (q.has(QUALIFIER.withSscd)) return true;
      if (q.has(QUALIFIER.sscdAsInCert)) return qscdFromCertificate(certificate);
      if (q.has(QUALIFIER.noSscd)) return false;
    }
  }
  return qscdFromCertificate(certificate);
}

function qscdFromCertificate(certificate: QualificationCertificate): boolean {
  return isPostEidas(certificate.notBefore.getTime())
    ? certificate.qcSscd
    : certificate.qcSscd || certificate.policies.includes(POLICY.qcpPublicWithSscd);
}

export interface TimestampQualification {
  /** TS 119 615: QTSA (a qualified electronic time stamp), TSA, or N/A (no trusted list reached). */
  name: 'QTSA' | 'TSA' | 'N/A';
  qualified: boolean;
  reason?: string;
  services: QualifyingService[];
  test: boolean;
  warnings?: string[];
}

/**
 * Whether a timestamp is a qualified electronic time stamp (DSS's TimestampQualificationBlock): its
 * TSA reaches a TSA/QTST service granted both at the token's time and at its proof of existence
 * (the earliest time a later timestamp proves it existed; without one, the validation time).
 * `tokenVerified`: the TSA certificate's key verified the token, so its own certificate may be the
 * service's identity.
 */
export function qualifyTimestamp(input: {
  certificate: Uint8Array;
  chain: readonly Uint8Array[];
  time: Date;
  proofOfExistence?: Date;
  validationTime: Date;
  lists: readonly TrustedListCacheEntry[];
  tokenVerified: boolean;
  policy?: TrustListPolicy;
}): TimestampQualification {
  let certificate: QualificationCertificate;
  try {
    certificate = qualificationCertificate(input.certificate);
  } catch {
    return { name: 'N/A', qualified: false, reason: 'its TSA certificate cannot be read', services: [], test: false };
  }
  const reached = serviceAnchors(certificate, input.chain, input.lists, input.tokenVerified);
  const usable = usableServices(reached.services, input.validationTime, input.policy ?? trustListPolicyOf(input.lists));
  const services = usable.services.map(describe);
  const test = usable.services.length > 0 && usable.services.every((match) => match.list.test);
  const warnings = usable.warnings.length > 0 ? { warnings: usable.warnings } : {};
  if (usable.services.length === 0)
    return {
      name: 'N/A',
      qualified: false,
      reason: usable.dropped ?? 'no trusted list service certifies its TSA',
      services,
      test,
      ...warnings,
    };
  const periods = usable.services.flatMap((match) => servicePeriods(match.list, match.service, certificate));
  const grantedAt = (at: Date): boolean =>
    periods.some(
      (period) =>
        period.type === SERVICE_TSA_QTST &&
        isGranted(period) &&
        period.start <= at.getTime() &&
        (period.end === undefined || at.getTime() <= period.end),
    );
  const poe = input.proofOfExistence ?? input.validationTime;
  if (!grantedAt(input.time))
    return {
      name: 'TSA',
      qualified: false,
      reason: 'its TSA was not a granted TSA/QTST service at the time of the token',
      services,
      test,
      ...warnings,
    };
  if (!grantedAt(poe))
    return {
      name: 'TSA',
      qualified: false,
      reason: `its TSA was not a granted TSA/QTST service at ${poe.toISOString()}, the token's proof of existence`,
      services,
      test,
      ...warnings,
    };
  return { name: 'QTSA', qualified: true, services, test, ...warnings };
}

function describe({ list, service, added }: ReachedService): QualifyingService {
  return {
    provider: service.provider,
    name: service.name,
    territory: list.territory,
    sequenceNumber: list.sequenceNumber,
    test: list.test,
    ...(added ? { list: added.name } : {}),
  };
}

export type { TrustedListSnapshot };
