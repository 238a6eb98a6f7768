/** Qualification (ETSI TS 119 615, named per TS 119 172-4) of signatures and timestamps against the verified trusted lists. */
export { qualifyCertificate, qualifyCredential, qualifyTimestamp } from './determine.js';
export { ServiceCertificateIndex } from './service-index.js';
export { describeQualification, describeTimestampQualification } from './describe.js';
export { QUALIFIED_SIGNATURE_NAMES, signatureQualificationName, withValidationResult } from './names.js';
export type {
  BaseQualificationName,
  Qualification,
  QualificationInput,
  QualificationName,
  QualifyingService,
  Qscd,
  TimestampQualification,
  TrustListPolicy,
} from './determine.js';
export type { QualifiedFor } from './certificate.js';
