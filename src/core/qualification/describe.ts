/** One line a person reads for a qualification, e.g. "qualified electronic signature (QESig): BE, Provider SA, key on a QSCD". */
import type { Qualification, QualificationName, TimestampQualification } from './determine.js';

const NAMES: Readonly<Record<string, string>> = {
  QESig: 'qualified electronic signature (QESig)',
  QESeal: 'qualified electronic seal (QESeal)',
  'Unknown-QC-QSCD':
    'signature with a qualified certificate of unknown type, key on a QSCD (Unknown-QC-QSCD), not a QES',
  'AdESig-QC': 'advanced electronic signature with a qualified certificate (AdESig-QC), not a QES',
  'AdESeal-QC': 'advanced electronic seal with a qualified certificate (AdESeal-QC), not a QESeal',
  'Unknown-QC': 'signature with a qualified certificate of unknown type (Unknown-QC), not a QES',
  AdESig: 'not qualified (AdESig)',
  AdESeal: 'not qualified (AdESeal)',
  Unknown: 'not qualified, certificate of unknown type (Unknown)',
  'Not AdES but QC with QSCD':
    'not an advanced signature, qualified certificate with its key on a QSCD (Not AdES but QC with QSCD)',
  'Not AdES but QC': 'not an advanced signature, qualified certificate (Not AdES but QC)',
  'Not AdES': 'not an advanced signature (Not AdES)',
  'N/A': 'qualification not applicable (N/A)',
};

export function qualificationWords(name: QualificationName): string {
  // "Indeterminate QESig": its reason says why the validation is INDETERMINATE.
  if (name.startsWith('Indeterminate ')) return `${name}, not a ${name.slice('Indeterminate '.length)}`;
  return NAMES[name] ?? name;
}

export function describeQualification(qualification: Qualification): string {
  const service = qualification.services[0];
  const where = service ? `${service.list ?? service.territory}, ${service.provider}` : undefined;
  const plain = qualification.name.replace(/^Indeterminate /, '');
  const qualifiedCertificate = plain.startsWith('Q') || plain.includes('-QC');
  const details = [
    where,
    qualifiedCertificate ? (qualification.qscd === 'yes' ? 'key on a QSCD' : 'key not on a QSCD') : undefined,
    qualification.reason,
    ...(qualification.warnings ?? []).map((warning) => `warning: ${warning}`),
  ].filter((part): part is string => part !== undefined);
  const words = `${qualificationWords(qualification.name)}${details.length > 0 ? `: ${details.join(', ')}` : ''}`;
  const added = [...new Set(qualification.services.flatMap((s) => (s.list ? [s.list] : [])))];
  const line =
    qualification.euQualified === false
      ? `under the list ${added.join(', ')}, not an EU trusted list — ${words}`
      : words;
  return qualification.test ? `TEST — ${line}` : line;
}

export function describeTimestampQualification(qualification: TimestampQualification): string {
  const service = qualification.services[0];
  const line =
    qualification.name === 'QTSA'
      ? `qualified electronic time stamp${service ? ` (${service.list ?? service.territory}, ${service.provider})` : ''}`
      : qualification.name === 'TSA'
        ? `not a qualified time stamp (${qualification.reason ?? 'no granted TSA/QTST service'})`
        : `qualified time stamp N/A (${qualification.reason ?? 'no trusted list reached'})`;
  const warnings = (qualification.warnings ?? []).map((warning) => `; warning: ${warning}`).join('');
  return qualification.test ? `TEST — ${line}${warnings}` : `${line}${warnings}`;
}
