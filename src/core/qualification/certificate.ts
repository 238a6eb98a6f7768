/** What qualification reads in a certificate: its QC statements (EN 319 412-5), policies, key usage and identifiers. */
import type { X509Certificate } from 'node:crypto';
import { memoByContent } from '../cms/content-memo.js';
import { x509Of } from '../cms/x509.js';
import {
  bitStringValue,
  decode,
  explicitInner,
  isContext,
  isUniversal,
  octets,
  oid,
  sequenceItems,
  setItems,
} from '../cms/der.js';
import { keyUsageNames } from '../key-usage.js';
import {
  OID_QC_COMPLIANCE,
  OID_QC_LEGISLATION,
  OID_QC_SSCD,
  OID_QC_STATEMENTS,
  OID_QC_TYPE,
  OID_QC_TYPE_ESEAL,
  OID_QC_TYPE_ESIGN,
  OID_QC_TYPE_WEB,
} from './uris.js';

export type QualifiedFor = 'esig' | 'eseal' | 'web';

export interface QualificationCertificate {
  x509: X509Certificate;
  notBefore: Date;
  /** QcCompliance: the issuer claims it is an EU qualified certificate. */
  qcCompliance: boolean;
  /** QcSSCD: the issuer claims the private key is on a QSCD. */
  qcSscd: boolean;
  /** QcType values; none when the statement is absent. */
  qcTypes: QualifiedFor[];
  /** Every QcType OID, as written (a QcStatementSet criterion compares them). */
  qcTypeOids: string[];
  /** The statementId of every QC statement (a QcStatementSet criterion compares them). */
  qcStatementIds: string[];
  /** QcCClegislation country codes: the certificate is qualified under these countries' law, not the EU's. */
  qcLegislation: string[];
  /** The certificate has a qcStatements extension. */
  hasQcStatements: boolean;
  policies: string[];
  /** keyUsage bits set, by their RFC 5280 name. */
  keyUsage: Set<string>;
  extendedKeyUsage: string[];
  /** The attribute types (OIDs) of the subject name. */
  subjectAttributes: string[];
  /** Lower-case hex. */
  subjectKeyIdentifier: string | undefined;
  authorityKeyIdentifier: string | undefined;
}

const QC_TYPES: Readonly<Record<string, QualifiedFor>> = {
  [OID_QC_TYPE_ESIGN]: 'esig',
  [OID_QC_TYPE_ESEAL]: 'eseal',
  [OID_QC_TYPE_WEB]: 'web',
};

/**
 * Reads a DER certificate; throws when it does not parse. With the small DER reader (no ASN.1
 * framework: a verification qualifies a few certificates, each read in microseconds), and kept by
 * content, as a chain's CAs come back for every signature and timestamp.
 */
export const qualificationCertificate: (der: Uint8Array) => QualificationCertificate = memoByContent(read);

function read(der: Uint8Array): QualificationCertificate {
  const x509 = x509Of(der);
  const tbs = sequenceItems(sequenceItems(decode(der, 'certificate'), 'certificate')[0], 'tbsCertificate');
  const skip = isContext(tbs[0], 0) ? 1 : 0; // [0] version
  const facts: QualificationCertificate = {
    x509,
    notBefore: new Date(x509.validFrom),
    qcCompliance: false,
    qcSscd: false,
    qcTypes: [],
    qcTypeOids: [],
    qcStatementIds: [],
    qcLegislation: [],
    hasQcStatements: false,
    policies: [],
    keyUsage: new Set(),
    extendedKeyUsage: [],
    subjectAttributes: sequenceItems(tbs[skip + 4], 'subject').flatMap((rdn) =>
      setItems(rdn, 'subject RDN').map((attribute) => oid(sequenceItems(attribute, 'attribute')[0], 'attribute type')),
    ),
    subjectKeyIdentifier: undefined,
    authorityKeyIdentifier: undefined,
  };
  const extensions = tbs.slice(skip + 6).find((field) => isContext(field, 3));
  for (const extension of extensions ? sequenceItems(explicitInner(extensions, 3, 'extensions'), 'extensions') : []) {
    try {
      const fields = sequenceItems(extension, 'extension');
      readExtension(oid(fields[0], 'extnID'), octets(fields.at(-1), 'extnValue'), facts);
    } catch {
      // an extension that does not decode says nothing
    }
  }
  return facts;
}

function readExtension(extnID: string, value: Uint8Array, facts: QualificationCertificate): void {
  switch (extnID) {
    case OID_QC_STATEMENTS:
      readQcStatements(value, facts);
      break;
    case '2.5.29.32':
      facts.policies = sequenceItems(decode(value, 'certificatePolicies'), 'certificatePolicies').map((policy) =>
        oid(sequenceItems(policy, 'policyInformation')[0], 'policyIdentifier'),
      );
      break;
    case '2.5.29.15':
      facts.keyUsage = new Set(keyUsageNames(bitStringValue(decode(value, 'keyUsage'), 'keyUsage').bytes));
      break;
    case '2.5.29.37':
      facts.extendedKeyUsage = sequenceItems(decode(value, 'extKeyUsage'), 'extKeyUsage').map((purpose) =>
        oid(purpose, 'keyPurposeId'),
      );
      break;
    case '2.5.29.14':
      facts.subjectKeyIdentifier = hex(octets(decode(value, 'subjectKeyIdentifier'), 'subjectKeyIdentifier'));
      break;
    case '2.5.29.35': {
      const keyIdentifier = sequenceItems(decode(value, 'authorityKeyIdentifier'), 'authorityKeyIdentifier').find(
        (field) => isContext(field, 0),
      );
      if (keyIdentifier) facts.authorityKeyIdentifier = hex(octets(keyIdentifier, 'keyIdentifier'));
      break;
    }
  }
}

/** QCStatements ::= SEQUENCE OF SEQUENCE { statementId OID, statementInfo ANY OPTIONAL } (RFC 3739). */
function readQcStatements(value: Uint8Array, facts: QualificationCertificate): void {
  facts.hasQcStatements = true;
  for (const statement of sequenceItems(decode(value, 'qcStatements'), 'qcStatements')) {
    if (!isUniversal(statement, 16)) continue;
    const [id, info] = statement.items;
    if (!isUniversal(id, 6)) continue;
    const statementId = oid(id, 'statementId');
    if (!facts.qcStatementIds.includes(statementId)) facts.qcStatementIds.push(statementId);
    if (statementId === OID_QC_COMPLIANCE) facts.qcCompliance = true;
    else if (statementId === OID_QC_LEGISLATION && isUniversal(info, 16))
      // QcCClegislation ::= SEQUENCE OF CountryName (PrintableString (SIZE (2)))
      for (const country of info?.items ?? []) {
        if (!isUniversal(country, 19)) continue;
        const code = Buffer.from(country.content).toString('latin1').toUpperCase();
        if (!facts.qcLegislation.includes(code)) facts.qcLegislation.push(code);
      }
    else if (statementId === OID_QC_SSCD) facts.qcSscd = true;
    else if (statementId === OID_QC_TYPE && isUniversal(info, 16))
      for (const type of info?.items ?? []) {
        if (!isUniversal(type, 6)) continue;
        const typeOid = oid(type, 'QcType');
        if (!facts.qcTypeOids.includes(typeOid)) facts.qcTypeOids.push(typeOid);
        const qcType = QC_TYPES[typeOid];
        if (qcType && !facts.qcTypes.includes(qcType)) facts.qcTypes.push(qcType);
      }
  }
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}
