/** TS 119 612 §5.5.9.2.1: whether a certificate is one a Qualifications entry's criteria list selects. */
import type { CriteriaList, QcStatementCriterion } from '../trusted-list/model.js';
import type { QualificationCertificate } from './certificate.js';

/** The names lists write for a keyUsage bit, in the form certificate.ts gives them. */
const KEY_USAGE_ALIASES: Readonly<Record<string, string>> = {
  contentcommitment: 'nonRepudiation',
  nonrepudiation: 'nonRepudiation',
  crlsign: 'cRLSign',
};

export function matchesCriteria(criteria: CriteriaList, certificate: QualificationCertificate): boolean {
  const outcomes = [
    ...criteria.keyUsage.map((bits) => keyUsageMatches(bits, certificate)),
    ...criteria.policySets.map((set) => set.every((oid) => certificate.policies.includes(oid))),
    ...criteria.extendedKeyUsage.map((set) => set.every((oid) => certificate.extendedKeyUsage.includes(oid))),
    ...criteria.subjectAttributes.map((set) => set.every((oid) => certificate.subjectAttributes.includes(oid))),
    ...(criteria.qcStatementSets ?? []).map((set) =>
      set.every((statement) => qcStatementMatches(statement, certificate)),
    ),
    ...criteria.criteriaLists.map((nested) => matchesCriteria(nested, certificate)),
  ];
  switch (criteria.assert) {
    case 'all':
      return outcomes.every(Boolean);
    case 'atLeastOne':
      return outcomes.some(Boolean);
    case 'none':
      return !outcomes.some(Boolean);
  }
}

function keyUsageMatches(bits: Record<string, boolean>, certificate: QualificationCertificate): boolean {
  return Object.entries(bits).every(([name, expected]) => certificate.keyUsage.has(bitName(name)) === expected);
}

function bitName(name: string): string {
  const lower = name.toLowerCase();
  return KEY_USAGE_ALIASES[lower] ?? lower.charAt(0) + name.slice(1);
}

/** DSS's QCStatementCondition: the certificate has QC statements, this one among them, with the QcType and QcCClegislation asked. */
function qcStatementMatches(statement: QcStatementCriterion, certificate: QualificationCertificate): boolean {
  if (!certificate.hasQcStatements) return false;
  if (statement.id && !certificate.qcStatementIds.includes(statement.id)) return false;
  if (statement.qcType && !certificate.qcTypeOids.includes(statement.qcType)) return false;
  if (statement.legislation && !certificate.qcLegislation.includes(statement.legislation.toUpperCase())) return false;
  return true;
}
