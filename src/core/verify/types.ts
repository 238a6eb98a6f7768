/** The verification report: what `esign verify` prints, as data. */
import type { Qualification, TimestampQualification } from '../qualification/index.js';
import { withValidationResult } from '../qualification/names.js';
import type { TrustedListCacheEntry } from '../trusted-list/model.js';

export interface CertificateSummary {
  subject: string;
  issuer: string;
  /** Lower-case hex. */
  serialNumber: string;
  notBefore: string;
  notAfter: string;
}

export type RevocationState = 'good' | 'revoked' | 'unknown' | 'not-checked';

/** Where revocation data is kept: the PDF's DSS, the CMS SignedData's `crls` field, or its adbe-revocationInfoArchival signed attribute. */
export type RevocationStore = 'dss' | 'cms' | 'adbe';

export interface RevocationResult {
  subject: string;
  status: RevocationState;
  /**
   * Where the answer came from: an OCSP response or CRL in a store (`dss-ocsp`, `cms-crl`,
   * `adbe-ocsp`, …), `ocsp-nocheck`, `trust-anchor` or `none`.
   */
  source: `${RevocationStore}-${'ocsp' | 'crl'}` | 'ocsp-nocheck' | 'trust-anchor' | 'none';
  /** DSS data: the revision whose DSS first held it. */
  revision?: number;
  revokedAt?: string;
  /** OCSP producedAt or CRL thisUpdate. */
  issuedAt?: string;
}

export interface ChainReport {
  trusted: boolean;
  /** Why not trusted, or why a certificate is not valid at `checkedAt`. */
  problems: string[];
  /** Leaf first; the trust anchor last when `trusted`. */
  certificates: CertificateSummary[];
  checkedAt: string;
  /** Certificates of the path signed with SHA-1 or MD5 (the anchor's self-signature aside). */
  weak?: string[];
  /** One entry per certificate of the path. */
  revocation: RevocationResult[];
}

export interface TimestampReport {
  time: string;
  tsa: string;
  serialNumber: string;
  valid: boolean;
  problems: string[];
  /** An imprint, token signature or TSA chain under SHA-1 or MD5: intact, but no longer acceptable. */
  weak?: string[];
  chain: ChainReport | undefined;
  /** Whether it is a qualified electronic time stamp (TSA/QTST service granted at its time); only with trusted lists. */
  qualified?: TimestampQualification;
}

export type UpdateKind = 'signature' | 'docTimeStamp' | 'dss' | 'unsigned';

export interface AppendedUpdate {
  revision: number;
  kind: UpdateKind;
  /** Object numbers the update defines or frees. */
  objects: number;
  /** What a page shows changed: the pages, their order, or a page's contents, resources or boxes (not its annotations). */
  pageContentChanged: boolean;
  details: string[];
}

/** `weak`: intact and validly signed, but with an algorithm no longer acceptable (SHA-1, RSA under 2048 bits). */
export type SignatureStatus = 'valid' | 'invalid' | 'untrusted' | 'modified' | 'weak';

/** JSON codes: VERIFY_FAILED (invalid), VERIFY_MODIFIED (unsigned changes after it), VERIFY_UNTRUSTED, VERIFY_WEAK_ALGORITHM. */
export type SignatureCode = 'VERIFY_FAILED' | 'VERIFY_MODIFIED' | 'VERIFY_UNTRUSTED' | 'VERIFY_WEAK_ALGORITHM' | null;

/** ETSI EN 319 102-1 §5.1.3: the main status indication of a validation. */
export type Indication = 'TOTAL-PASSED' | 'TOTAL-FAILED' | 'INDETERMINATE';

/** ETSI EN 319 102-1 sub-indications esign reports, most decisive first. */
export const SUB_INDICATIONS = [
  'FORMAT_FAILURE',
  'HASH_FAILURE',
  'SIG_CRYPTO_FAILURE',
  'REVOKED',
  'NO_SIGNING_CERTIFICATE_FOUND',
  'REVOKED_NO_POE',
  'NO_CERTIFICATE_CHAIN_FOUND',
  'OUT_OF_BOUNDS_NO_POE',
  'NOT_YET_VALID',
  'CRYPTO_CONSTRAINTS_FAILURE',
  'SIG_CONSTRAINTS_FAILURE',
] as const;
export type SubIndication = (typeof SUB_INDICATIONS)[number];

export type PadesLevel = 'B-B' | 'B-T' | 'B-LT' | 'B-LTA';

export interface SignatureReport {
  index: number;
  kind: 'signature' | 'docTimeStamp' | 'cades';
  field?: string;
  subFilter?: string;
  signer?: CertificateSummary;
  /** `/M` (PAdES) or the signing-time attribute (CAdES): claimed, not proven. */
  claimedTime?: string;
  /** The signature-time-stamp (signatures) or the token itself (document timestamps). */
  timestamp?: TimestampReport;
  integrity: { valid: boolean; reason?: string; digestAlgorithm: string };
  /** `algorithm`: sha256WithRSAEncryption, ecdsa-with-SHA384, RSASSA-PSS (…), Ed25519, …; `key`: RSA 2048, EC P-256, … */
  signatureValue: { valid: boolean; reason?: string; algorithm: string; key?: string };
  coverage?: {
    wholeFile: boolean;
    /** The revision the signature ends with, of `revisions`. */
    revision: number;
    revisions: number;
    signedBytes: number;
    appended: AppendedUpdate[];
  };
  chain?: ChainReport;
  /** In an ASiC container: the entries the signature covers. */
  covers?: string[];
  /** CAdES: the counter-signatures (RFC 5652 §11.4) over this signature's value, each checked, nested as they are. */
  counterSignatures?: SignatureReport[];
  /** A certification (author) signature: its DocMDP permissions, which later revisions must keep to. */
  certification?: { level: 1 | 2 | 3; permits: 'no-changes' | 'form-filling' | 'annotations' };
  level?: PadesLevel;
  /** ETSI TS 119 615 / TS 119 172-4, from the trusted lists; only when verified lists are cached. */
  qualification?: Qualification;
  status: SignatureStatus;
  code: SignatureCode;
  /** The same verdict in ETSI EN 319 102-1's terms. */
  indication: Indication;
  subIndication?: SubIndication;
  problems: string[];
  warnings: string[];
}

export interface VerificationReport {
  file: string;
  kind: 'pdf' | 'cades';
  /** A CAdES signature with its content inside (a .p7m), or in an ASiC container. */
  packaging?: 'enveloping' | 'asic-s' | 'asic-e';
  /** In an ASiC container: the entries (outside META-INF/) that no signature covers. */
  uncovered?: string[];
  /** What was read though it bends its format's rules (an ASiC layout others write): each one a warning. */
  warnings?: string[];
  signatures: SignatureReport[];
  /** Worst status over all signatures; `no-signatures` when there are none. */
  status: SignatureStatus | 'no-signatures';
  code: SignatureCode | 'VERIFY_NO_SIGNATURES';
  checkedAt: string;
  dss?: { certs: number; ocsps: number; crls: number; revision: number };
  /** In an ASiC container: its evidence records (RFC 4998 `.ers`, RFC 6283 `.xml`), each verified or said not to be. */
  evidenceRecords?: EvidenceRecordReport[];
}

/**
 * An evidence record (RFC 4998 ERS, RFC 6283 XMLERS): `valid` when its hash tree covers the data and
 * its archive timestamp checks out; `invalid` when either fails; `unverified` when esign could not
 * check all of it (`reason` says what), never silently left out.
 */
export interface EvidenceRecordReport {
  /** The entry that holds it (`META-INF/evidencerecord.ers`). */
  name: string;
  status: 'valid' | 'invalid' | 'unverified';
  /** Why it is not (fully) verified. */
  reason?: string;
  /** The files whose hashes its first hash tree holds. */
  covers: string[];
  /** The first archive timestamp's token, as a signature timestamp is reported. */
  timestamp?: TimestampReport;
  /** How many archive timestamps (in all chains) it holds, and how many esign checked. */
  archiveTimestamps: number;
  checked: number;
  problems: string[];
}

export interface VerifyOptions {
  /** DER trust anchors. */
  trustAnchors: Uint8Array[];
  /** The current time, for signatures without a trusted timestamp. */
  now: Date;
  /** The password of an encrypted PDF that does not open with the empty one. */
  password?: string;
  /** The trusted-list cache's entries: each signature and timestamp is then qualified against them. */
  trustedLists?: readonly TrustedListCacheEntry[];
  /** What one `esign verify` run of many files shares among them (loaded or fetched once per run). */
  run?: VerifyRun;
}

/**
 * The per-run cache of `esign verify FILES...`: the trust anchors and trusted lists are loaded once
 * (into `VerifyOptions` itself, the same for every file); what verification learns while it runs
 * is kept here for the next files.
 */
export interface VerifyRun {
  /**
   * Revocation answers (OCSP responses, CRLs) fetched during the run, by a key the fetcher chooses
   * (the certificate's issuer and serial, or the URL): each asked for once per run, its promise
   * shared by the files that need it at the same time.
   */
  readonly revocation: Map<string, Promise<unknown>>;
}

/** A new, empty per-run cache. */
export function newVerifyRun(): VerifyRun {
  return { revocation: new Map() };
}

/** The qualification named with the signature's validation result (TS 119 172-4): never a plain QES unless TOTAL-PASSED. */
export function judgedQualification(
  qualification: Qualification | undefined,
  validation: Pick<SignatureReport, 'indication' | 'subIndication'>,
): Qualification | undefined {
  return qualification && withValidationResult(qualification, validation.indication, validation.subIndication);
}

/** Orders statuses from best to worst and names the code of each. */
export function worst(statuses: readonly SignatureStatus[]): SignatureStatus {
  for (const status of ['invalid', 'untrusted', 'modified', 'weak'] as const)
    if (statuses.includes(status)) return status;
  return 'valid';
}

/** The worst status of the signatures and of every counter-signature nested under them. */
export function worstOfSignatures(signatures: readonly SignatureReport[]): SignatureStatus {
  const statuses = (signature: SignatureReport): SignatureStatus[] => [
    signature.status,
    ...(signature.counterSignatures ?? []).flatMap(statuses),
  ];
  return worst(signatures.flatMap(statuses));
}

const CODES: Readonly<Record<SignatureStatus, SignatureCode>> = {
  valid: null,
  invalid: 'VERIFY_FAILED',
  untrusted: 'VERIFY_UNTRUSTED',
  modified: 'VERIFY_MODIFIED',
  weak: 'VERIFY_WEAK_ALGORITHM',
};

export function codeOf(status: SignatureStatus): SignatureCode {
  return CODES[status];
}

/** What a signature's checks found, from which its status and ETSI indication follow. */
export interface Findings {
  /** Make it invalid. */
  problems: string[];
  /** Make it untrusted (no chain to an anchor). */
  untrusted: string[];
  /** Unsigned updates after it. */
  modified: boolean;
  /** Algorithms no longer acceptable. */
  weak: string[];
  /** The sub-indications the checks named. */
  failures: Set<SubIndication>;
}

export function noFindings(): Findings {
  return { problems: [], untrusted: [], modified: false, weak: [], failures: new Set() };
}

const TOTAL_FAILED: ReadonlySet<SubIndication> = new Set([
  'FORMAT_FAILURE',
  'HASH_FAILURE',
  'SIG_CRYPTO_FAILURE',
  'REVOKED',
]);

/** esign's status, its code and the ETSI indication: a changed or forged signature stays TOTAL-FAILED whatever else is wrong. */
export function verdict(findings: Findings): Pick<SignatureReport, 'status' | 'code' | 'indication' | 'subIndication'> {
  const status: SignatureStatus =
    findings.problems.length > 0
      ? 'invalid'
      : findings.untrusted.length > 0
        ? 'untrusted'
        : findings.modified
          ? 'modified'
          : findings.weak.length > 0
            ? 'weak'
            : 'valid';
  if (status === 'valid') return { status, code: null, indication: 'TOTAL-PASSED' };
  const fallback: SubIndication =
    status === 'untrusted'
      ? 'NO_CERTIFICATE_CHAIN_FOUND'
      : status === 'weak'
        ? 'CRYPTO_CONSTRAINTS_FAILURE'
        : 'SIG_CONSTRAINTS_FAILURE';
  const subIndication = SUB_INDICATIONS.find((candidate) => findings.failures.has(candidate)) ?? fallback;
  return {
    status,
    code: codeOf(status),
    indication: TOTAL_FAILED.has(subIndication) ? 'TOTAL-FAILED' : 'INDETERMINATE',
    subIndication,
  };
}
