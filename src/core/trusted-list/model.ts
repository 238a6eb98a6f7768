/**
 * A trusted list (ETSI TS 119 612) in the compact form esign keeps after checking its XML signature.
 * Verification and qualification read only this, never the XML: everything here came from inside
 * the signed part of a list whose signature checked out (or from the LOTL that vouched for it).
 * Times are ISO 8601 strings (UTC); service types, statuses and qualifiers are the list's URIs as written.
 */

/** One list: the LOTL (territory `EU`, `isLotl`) or a national list. */
export interface TrustedListSnapshot {
  /** SchemeTerritory, e.g. `BE`; `EU` for the LOTL. */
  territory: string;
  isLotl: boolean;
  /** TSLType URI, e.g. http://uri.etsi.org/TrstSvc/TrustedList/TSLType/EUgeneric. */
  type: string;
  sequenceNumber: number;
  /** ListIssueDateTime. */
  issueDate: string;
  /** NextUpdate/dateTime; null when the list says it is closed (no next update). */
  nextUpdate: string | null;
  /** SchemeOperatorName (the English one when several). */
  operator: string;
  /** Where the list was fetched from, or the file it was imported from. */
  source: string;
  /** A sandbox TEST list: never trusted by a profile that is not a sandbox profile. */
  test: boolean;
  /** SHA-256 of the XML as fetched, lower-case hex. */
  sha256: string;
  /** The certificate (DER, base64) whose key verified the list's signature. */
  signerCertificate: string;
  /** LOTL only: the national lists it points to (XML ones), with the certificates that may sign each. */
  pointers: TrustedListPointer[];
  /** LOTL only: the URIs in SchemeInformationURI that are pivot LOTLs (oldest last), for key rotation. */
  pivots: string[];
  /** National lists: every TSPService of every TrustServiceProvider, in list order. */
  services: TrustService[];
}

export interface TrustedListPointer {
  territory: string;
  /** TSLLocation. */
  location: string;
  /** MimeType from AdditionalInformation, e.g. application/vnd.etsi.tsl+xml. */
  mimeType: string;
  /** Certificates (DER, base64) the pointed list may be signed with. */
  signingCertificates: string[];
}

export interface TrustService {
  /** TSPName (English when several). */
  provider: string;
  /** TSPTradeName entries, e.g. VATBE-0123456789. */
  providerTradeNames: string[];
  /** ServiceName (English when several). */
  name: string;
  /** ServiceTypeIdentifier, e.g. http://uri.etsi.org/TrstSvc/Svctype/CA/QC. */
  type: string;
  /** ServiceDigitalIdentity: what identifies the service's key. */
  identity: ServiceIdentity;
  /** The current status first, then ServiceHistory in document order (newest first): each period starts at `from` and ends where the one before it in this array starts. */
  history: ServiceStatusPeriod[];
}

export interface ServiceIdentity {
  /** X509Certificate values (DER, base64). */
  certificates: string[];
  /** X509SubjectName values as written. */
  subjectNames: string[];
  /** X509SKI values, lower-case hex. */
  subjectKeyIdentifiers: string[];
}

export interface ServiceStatusPeriod {
  /** This entry's own ServiceTypeIdentifier, when it differs from the service's current one (absent in lists cached by an earlier esign). */
  type?: string;
  /** ServiceStatus URI, e.g. http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/granted. */
  status: string;
  /** StatusStartingTime. */
  from: string;
  /** AdditionalServiceInformation URIs (ForeSignatures, ForeSeals, ForWebSiteAuthentication, RootCA-QC, …). */
  additionalServiceInformation: string[];
  /** The Qualifications extension (http://uri.etsi.org/TrstSvc/SvcInfoExt/…): each qualifier set with the certificates it applies to. */
  qualifications: Qualification[];
  /** ExpiredCertsRevocationInfo, when the list gives it. */
  expiredCertsRevocationInfo?: string;
}

export interface Qualification {
  /** Qualifier URIs, e.g. http://uri.etsi.org/TrstSvc/TrustedList/SvcInfoExt/QCWithSSCD. */
  qualifiers: string[];
  criteria: CriteriaList;
}

/** TS 119 612 §5.5.9.2.1: which certificates a qualification applies to. */
export interface CriteriaList {
  assert: 'all' | 'atLeastOne' | 'none';
  /** KeyUsage elements: each a set of bits (digitalSignature, nonRepudiation, …) and the value each must have. */
  keyUsage: Array<Record<string, boolean>>;
  /** PolicySet elements: each a set of certificate policy OIDs that must all be present. */
  policySets: string[][];
  /** ExtendedKeyUsage (otherCriteriaList): each a set of EKU OIDs that must all be present. */
  extendedKeyUsage: string[][];
  /** CertSubjectDNAttribute (otherCriteriaList): each a set of attribute OIDs that must all be present in the subject. */
  subjectAttributes: string[][];
  criteriaLists: CriteriaList[];
  /** QcStatementSet (otherCriteriaList): each a set of QC statements that must all be present. */
  qcStatementSets?: QcStatementCriterion[][];
  /** Criteria esign cannot read (an unknown otherCriteriaList element): a service with one is not used. */
  unsupported?: string[];
}

/** One QcStatement of a QcStatementSet: the statement, with the QcType or QcCClegislation it must carry. */
export interface QcStatementCriterion {
  id: string;
  qcType?: string;
  legislation?: string;
}

/** A list added with `esign trust add` (TS 119 612, outside the LOTL): where it is fetched and who signs it. */
export interface AddedTrustedList {
  /** Its name in the cache and in verdicts (lower case, e.g. `acme-ca`). */
  name: string;
  url: string;
  /** The certificates (DER, base64) its signature must verify with. */
  signerCertificates: string[];
}

/** What esign knows of one list in its cache: the last copy that passed its checks, and the last failure after it. */
export interface TrustedListCacheEntry {
  /** `EU` for the LOTL, else the territory code; an added list's name. */
  territory: string;
  /** A list added with `esign trust add`, not one the LOTL points to. */
  added?: AddedTrustedList;
  /** The last verified copy; absent when no copy ever passed. */
  snapshot?: TrustedListSnapshot;
  /** When that copy was verified. */
  verifiedAt?: string;
  /** For conditional requests (If-None-Match / If-Modified-Since). */
  etag?: string;
  lastModified?: string;
  /** The last update attempt that failed, when it came after the verified copy: a one-line reason. */
  lastFailure?: { at: string; reason: string };
}
