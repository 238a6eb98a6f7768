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

/**
 * Where revocation data is kept: the PDF's DSS, the CMS SignedData's `crls` field, its
 * adbe-revocationInfoArchival signed attribute, or a XAdES signature's RevocationValues; `fetched`:
 * asked for during this verification, from the certificate's own OCSP responder or CRL distribution point.
 */
export type RevocationStore = 'dss' | 'cms' | 'adbe' | 'xades' | 'fetched';

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
  /** Fetched data: the URL that answered. */
  url?: string;
  /**
   * Fetched data read from esign's revocation cache rather than asked for in this run (checked
   * as a fetched answer is): when it was fetched (ISO 8601).
   */
  cached?: string;
  /** The OCSP response or CRL is signed with an algorithm no longer acceptable (SHA-1, MD5): exit 12. */
  weak?: string;
  /**
   * Why the status is not established (EN 319 102-1): no data and none could be fetched (TRY_LATER,
   * naming the URLs tried), or data issued after the certificate expired (REVOCATION_OUT_OF_BOUNDS_NO_POE).
   */
  unestablished?: { subIndication: 'TRY_LATER' | 'REVOCATION_OUT_OF_BOUNDS_NO_POE'; reason: string };
}

/** OCSP responses and CRLs (DER) fetched for one certificate, and what went wrong on the way (one line each, naming the URL). */
export interface FetchedRevocation {
  ocsps: Uint8Array[];
  crls: Uint8Array[];
  url?: string;
  failures: string[];
  /** The answer was read from the revocation cache, fetched at this time (ISO 8601), not asked for now. */
  cachedAt?: string;
}

/** The port through which verification asks for the revocation data a file does not carry (the network side lives in src/io). */
export interface RevocationSource {
  /** OCSP, then the CRL, for `cert` (DER) issued by `issuer` (DER). Never throws: failures are reported in the result. */
  fetch(cert: Uint8Array, issuer: Uint8Array): Promise<FetchedRevocation>;
}

/**
 * `hard` (EN 319 102-1, the default): a signature whose chain's revocation status is not established
 * is INDETERMINATE (VERIFY_REVOCATION_UNKNOWN); `soft-fail` (Acrobat, pyHanko): it passes, with a warning.
 */
export type RevocationMode = 'hard' | 'soft-fail';

export interface RevocationPolicy {
  mode: RevocationMode;
  /** Absent (--offline): nothing is fetched. */
  source?: RevocationSource;
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

/**
 * `weak`: intact and validly signed, but with an algorithm no longer acceptable (SHA-1, RSA under 2048 bits).
 * `revocation-unknown`: intact, validly signed and trusted, but the revocation status of a certificate of a
 * chain was not established (EN 319 102-1 INDETERMINATE/TRY_LATER or REVOCATION_OUT_OF_BOUNDS_NO_POE).
 */
export type SignatureStatus = 'valid' | 'invalid' | 'untrusted' | 'modified' | 'revocation-unknown' | 'weak';

/** JSON codes: VERIFY_FAILED (invalid), VERIFY_MODIFIED (unsigned changes after it), VERIFY_UNTRUSTED, VERIFY_REVOCATION_UNKNOWN, VERIFY_WEAK_ALGORITHM. */
export type SignatureCode =
  | 'VERIFY_FAILED'
  | 'VERIFY_MODIFIED'
  | 'VERIFY_UNTRUSTED'
  | 'VERIFY_REVOCATION_UNKNOWN'
  | 'VERIFY_WEAK_ALGORITHM'
  | null;

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
  'REVOCATION_OUT_OF_BOUNDS_NO_POE',
  'TRY_LATER',
  'CRYPTO_CONSTRAINTS_FAILURE',
  'SIG_CONSTRAINTS_FAILURE',
] as const;
export type SubIndication = (typeof SUB_INDICATIONS)[number];

export type PadesLevel = 'B-B' | 'B-T' | 'B-LT' | 'B-LTA';

export interface SignatureReport {
  index: number;
  kind: 'signature' | 'docTimeStamp' | 'cades' | 'xades';
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
  /** The counter-signatures over this signature's value (CAdES: RFC 5652 §11.4; XAdES: EN 319 132-1 §5.2.7), each checked, nested as they are. */
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
  kind: 'pdf' | 'cades' | 'xades';
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
 * its archive timestamp checks out; `untrusted` when all holds but a TSA chain reaches no anchor;
 * `invalid` when either fails; `unverified` when esign could not
 * check all of it (`reason` says what), never silently left out.
 */
export interface EvidenceRecordReport {
  /** The entry that holds it (`META-INF/evidencerecord.ers`). */
  name: string;
  status: 'valid' | 'untrusted' | 'invalid' | 'unverified';
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
  /** How revocation status not in the file is sought and judged; default: hard, nothing fetched. */
  revocation?: RevocationPolicy;
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
  for (const status of ['invalid', 'untrusted', 'modified', 'revocation-unknown', 'weak'] as const)
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
  'revocation-unknown': 'VERIFY_REVOCATION_UNKNOWN',
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
  /** Make it revocation-unknown: a chain certificate's revocation status not established (hard mode). */
  unestablished: string[];
  /** Algorithms no longer acceptable. */
  weak: string[];
  /** The sub-indications the checks named. */
  failures: Set<SubIndication>;
}

export function noFindings(): Findings {
  return { problems: [], untrusted: [], modified: false, unestablished: [], weak: [], failures: new Set() };
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
          : findings.unestablished.length > 0
            ? 'revocation-unknown'
            : findings.weak.length > 0
              ? 'weak'
              : 'valid';
  if (status === 'valid') return { status, code: null, indication: 'TOTAL-PASSED' };
  const fallback: SubIndication =
    status === 'untrusted'
      ? 'NO_CERTIFICATE_CHAIN_FOUND'
      : status === 'weak'
        ? 'CRYPTO_CONSTRAINTS_FAILURE'
        : status === 'revocation-unknown'
          ? 'TRY_LATER'
          : 'SIG_CONSTRAINTS_FAILURE';
  const subIndication = SUB_INDICATIONS.find((candidate) => findings.failures.has(candidate)) ?? fallback;
  return {
    status,
    code: codeOf(status),
    indication: TOTAL_FAILED.has(subIndication) ? 'TOTAL-FAILED' : 'INDETERMINATE',
    subIndication,
  };
}
