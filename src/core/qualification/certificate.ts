/** What qualification reads in a certificate: its QC statements (EN 319 412-5), policies, key usage and identifiers. */
import { X509Certificate } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { keyUsageNames } from '../key-usage.js';
import {
  OID_QC_COMPLIANCE,
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

const cache = new WeakMap<Uint8Array, QualificationCertificate>();

/** Reads a DER certificate; throws when it does not parse. */
export function qualificationCertificate(der: Uint8Array): QualificationCertificate {
  const cached = cache.get(der);
  if (cached) return cached;
  const x509 = new X509Certificate(der);
  const parsed = pkijs.Certificate.fromBER(der);
  const facts: QualificationCertificate = {
    x509,
    notBefore: new Date(x509.validFrom),
    qcCompliance: false,
    qcSscd: false,
    qcTypes: [],
    policies: [],
    keyUsage: new Set(),
    extendedKeyUsage: [],
    subjectAttributes: parsed.subject.typesAndValues.map((attribute) => attribute.type),
    subjectKeyIdentifier: undefined,
    authorityKeyIdentifier: undefined,
  };
  for (const extension of parsed.extensions ?? []) {
    const value = extension.extnValue.valueBlock.valueHexView;
    switch (extension.extnID) {
      case OID_QC_STATEMENTS:
        readQcStatements(value, facts);
        break;
      case '2.5.29.32':
        if (extension.parsedValue instanceof pkijs.CertificatePolicies)
          facts.policies = extension.parsedValue.certificatePolicies.map((policy) => policy.policyIdentifier);
        break;
      case '2.5.29.15': {
        const bits = asn1js.fromBER(value).result;
        if (!(bits instanceof asn1js.BitString)) break;
        facts.keyUsage = new Set(keyUsageNames(bits.valueBlock.valueHexView));
        break;
      }
      case '2.5.29.37':
        if (extension.parsedValue instanceof pkijs.ExtKeyUsage)
          facts.extendedKeyUsage = extension.parsedValue.keyPurposes;
        break;
      case '2.5.29.14': {
        const octets = asn1js.fromBER(value).result;
        if (octets instanceof asn1js.OctetString) facts.subjectKeyIdentifier = hex(octets.valueBlock.valueHexView);
        break;
      }
      case '2.5.29.35':
        if (extension.parsedValue instanceof pkijs.AuthorityKeyIdentifier && extension.parsedValue.keyIdentifier)
          facts.authorityKeyIdentifier = hex(extension.parsedValue.keyIdentifier.valueBlock.valueHexView);
        break;
    }
  }
  cache.set(der, facts);
  return facts;
}

/** QCStatements ::= SEQUENCE OF SEQUENCE { statementId OID, statementInfo ANY OPTIONAL } (RFC 3739). */
function readQcStatements(value: Uint8Array, facts: QualificationCertificate): void {
  const statements = asn1js.fromBER(value).result;
  if (!(statements instanceof asn1js.Sequence)) return;
  for (const statement of statements.valueBlock.value) {
    if (!(statement instanceof asn1js.Sequence)) continue;
    const [id, info] = statement.valueBlock.value;
    if (!(id instanceof asn1js.ObjectIdentifier)) continue;
    const oid = id.valueBlock.toString();
    if (oid === OID_QC_COMPLIANCE) facts.qcCompliance = true;
    else if (oid === OID_QC_SSCD) facts.qcSscd = true;
    else if (oid === OID_QC_TYPE && info instanceof asn1js.Sequence)
      for (const type of info.valueBlock.value) {
        const qcType = type instanceof asn1js.ObjectIdentifier ? QC_TYPES[type.valueBlock.toString()] : undefined;
        if (qcType && !facts.qcTypes.includes(qcType)) facts.qcTypes.push(qcType);
      }
  }
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}
