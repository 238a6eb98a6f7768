/**
 * A signature's qualification name (TS 119 172-4, as DSS's SigQualificationMatrix gives it): the
 * certificate's qualification with the signature's EN 319 102-1 validation result. TOTAL-PASSED keeps
 * the name; INDETERMINATE makes it "Indeterminate …"; TOTAL-FAILED makes it "Not AdES …".
 */
import type { BaseQualificationName, Qualification, QualificationName } from './determine.js';

export type Indication = 'TOTAL-PASSED' | 'TOTAL-FAILED' | 'INDETERMINATE';

const WITH_QSCD: ReadonlySet<QualificationName> = new Set(['QESig', 'QESeal', 'Unknown-QC-QSCD']);
const QC: ReadonlySet<QualificationName> = new Set(['AdESig-QC', 'AdESeal-QC', 'Unknown-QC']);

/** The names `esign sign --require` accepts: only the plain qualified ones. */
export const QUALIFIED_SIGNATURE_NAMES: ReadonlySet<QualificationName> = new Set(['QESig', 'QESeal']);

export function signatureQualificationName(certificate: QualificationName, indication: Indication): QualificationName {
  if (certificate === 'N/A') return indication === 'TOTAL-FAILED' ? 'Not AdES' : 'N/A';
  if (certificate === 'Not AdES' || certificate.startsWith('Indeterminate ') || certificate.startsWith('Not AdES'))
    return certificate;
  switch (indication) {
    case 'TOTAL-PASSED':
      return certificate;
    case 'INDETERMINATE':
      return `Indeterminate ${certificate as BaseQualificationName}`;
    case 'TOTAL-FAILED':
      return WITH_QSCD.has(certificate)
        ? 'Not AdES but QC with QSCD'
        : QC.has(certificate)
          ? 'Not AdES but QC'
          : 'Not AdES';
  }
}

/** The qualification of a signature whose validation ended with `indication`. */
export function withValidationResult(
  qualification: Qualification,
  indication: Indication,
  why?: string,
): Qualification {
  const name = signatureQualificationName(qualification.name, indication);
  if (name === qualification.name) return qualification;
  const validation =
    indication === 'TOTAL-FAILED'
      ? `the signature is not valid (TOTAL-FAILED${why ? `: ${why}` : ''})`
      : `the signature's validation is INDETERMINATE${why ? ` (${why})` : ''}`;
  return {
    ...qualification,
    name,
    reason: qualification.reason ? `${validation}; ${qualification.reason}` : validation,
  };
}
