/** The verification report: what `esign verify` prints, as data. */

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
  /** One entry per certificate of the path. */
  revocation: RevocationResult[];
}

export interface TimestampReport {
  time: string;
  tsa: string;
  serialNumber: string;
  valid: boolean;
  problems: string[];
  chain: ChainReport | undefined;
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

export type SignatureStatus = 'valid' | 'invalid' | 'untrusted' | 'modified';

/** JSON codes: VERIFY_FAILED (invalid), VERIFY_MODIFIED (unsigned changes after it), VERIFY_UNTRUSTED. */
export type SignatureCode = 'VERIFY_FAILED' | 'VERIFY_MODIFIED' | 'VERIFY_UNTRUSTED' | null;

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
  signatureValue: { valid: boolean; reason?: string; algorithm: string };
  coverage?: {
    wholeFile: boolean;
    /** The revision the signature ends with, of `revisions`. */
    revision: number;
    revisions: number;
    signedBytes: number;
    appended: AppendedUpdate[];
  };
  chain?: ChainReport;
  level?: PadesLevel;
  status: SignatureStatus;
  code: SignatureCode;
  problems: string[];
  warnings: string[];
}

export interface VerificationReport {
  file: string;
  kind: 'pdf' | 'cades';
  signatures: SignatureReport[];
  /** Worst status over all signatures; `no-signatures` when there are none. */
  status: SignatureStatus | 'no-signatures';
  code: SignatureCode | 'VERIFY_NO_SIGNATURES';
  checkedAt: string;
  dss?: { certs: number; ocsps: number; crls: number; revision: number };
}

export interface VerifyOptions {
  /** DER trust anchors. */
  trustAnchors: Uint8Array[];
  /** The current time, for signatures without a trusted timestamp. */
  now: Date;
  /** The password of an encrypted PDF that does not open with the empty one. */
  password?: string;
}

/** Orders statuses from best to worst and names the code of each. */
export function worst(statuses: readonly SignatureStatus[]): SignatureStatus {
  for (const status of ['invalid', 'untrusted', 'modified'] as const) if (statuses.includes(status)) return status;
  return 'valid';
}

export function codeOf(status: SignatureStatus): SignatureCode {
  return status === 'invalid' ? 'VERIFY_FAILED' : status === 'untrusted' ? 'VERIFY_UNTRUSTED' : status === 'modified' ? 'VERIFY_MODIFIED' : null;
}
