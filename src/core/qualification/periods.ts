/**
 * A trust service's status periods as TS 119 615 and DSS read them: in document order (the current
 * status, then each ServiceHistoryInstance as written), each ending where the one before it starts,
 * each with its own service type, status, AdditionalServiceInformation and the qualifiers whose
 * criteria select the certificate at hand.
 */
import type { TrustService, TrustedListSnapshot } from '../trusted-list/model.js';
import type { QualificationCertificate } from './certificate.js';
import { matchesCriteria } from './criteria.js';

/** eIDAS (Regulation 910/2014) applies from 1 July 2016, Brussels time: DSS's EIDAS_DATE. */
export const EIDAS_START = Date.parse('2016-06-30T22:00:00Z');

export function isPostEidas(time: number): boolean {
  return time >= EIDAS_START;
}

export interface ServicePeriod {
  list: TrustedListSnapshot;
  service: TrustService;
  /** The ServiceTypeIdentifier of this status entry (a history instance may have another than the current one). */
  type: string;
  status: string;
  /** StatusStartingTime, ms. */
  start: number;
  /** Where the next newer entry starts (inclusive, as DSS has it); undefined for the current status. */
  end: number | undefined;
  additionalServiceInformation: readonly string[];
  /** The qualifiers of the Qualifications entries whose criteria select the certificate. */
  qualifiers: ReadonlySet<string>;
}

export function servicePeriods(
  list: TrustedListSnapshot,
  service: TrustService,
  certificate: QualificationCertificate,
): ServicePeriod[] {
  const periods: ServicePeriod[] = [];
  let end: number | undefined;
  for (const period of service.history) {
    const start = Date.parse(period.from);
    const qualifiers = new Set<string>();
    for (const qualification of period.qualifications)
      if (matchesCriteria(qualification.criteria, certificate))
        for (const qualifier of qualification.qualifiers) qualifiers.add(qualifier);
    periods.push({
      list,
      service,
      type: period.type ?? service.type,
      status: period.status,
      start,
      end,
      additionalServiceInformation: period.additionalServiceInformation,
      qualifiers,
    });
    end = start;
  }
  return periods;
}
