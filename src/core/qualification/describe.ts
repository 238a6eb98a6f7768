/** One line a person reads for a qualification, e.g. "qualified electronic signature (QESig): BE, Provider SA, key on a QSCD". */
import type { Qualification, QualificationName, TimestampQualification } from './determine.js';

const NAMES: Readonly<Record<QualificationName, string>> = {
  QESig: 'qualified electronic signature (QESig)',
  QESeal: 'qualified electronic seal (QESeal)',
  'AdESig-QC': 'advanced electronic signature with a qualified certificate (AdESig-QC), not a QES',
  'AdESeal-QC': 'advanced electronic seal with a qualified certificate (AdESeal-QC), not a QESeal',
  AdESig: 'not qualified (AdESig)',
  AdESeal: 'not qualified (AdESeal)',
  INDETERMINATE: 'qualification INDETERMINATE',
};

export function describeQualification(qualification: Qualification): string {
  const service = qualification.services[0];
  const where = service ? `${service.territory}, ${service.provider}` : undefined;
  const qualifiedCertificate = qualification.name.startsWith('Q') || qualification.name.endsWith('-QC');
  const details = [
    where,
    qualifiedCertificate ? (qualification.qscd === 'yes' ? 'key on a QSCD' : 'key not on a QSCD') : undefined,
    qualification.reason,
  ].filter((part): part is string => part !== undefined);
  const line = `${NAMES[qualification.name]}${details.length > 0 ? `: ${details.join(', ')}` : ''}`;
  return qualification.test ? `TEST — ${line}` : line;
}

export function describeTimestampQualification(qualification: TimestampQualification): string {
  const service = qualification.services[0];
  const line =
    qualification.qualified === true
      ? `qualified electronic time stamp${service ? ` (${service.territory}, ${service.provider})` : ''}`
      : qualification.qualified === false
        ? `not a qualified time stamp (${qualification.reason ?? 'no granted TSA/QTST service'})`
        : `qualified time stamp INDETERMINATE (${qualification.reason ?? ''})`;
  return qualification.test ? `TEST — ${line}` : line;
}
