/**
 * Long-term validation (PAdES B-LT, B-LTA): chains, revocation data (OCSP, CRL), the DSS update
 * and the document timestamp. Pure apart from the RevocationFetcher and TimestampAuthority ports.
 */
export { extendPdf, appendedSource, existingDss, DOC_TIMESTAMP_CONTENTS } from './extend.js';
export type { ExtendDependencies, ExtensionResult, LongTermLevel } from './extend.js';
export { collectValidationData, RevocationCache, targetsOf, tokenTarget } from './validation-data.js';
export type {
  ChainTarget,
  RevocationCacheOptions,
  RevocationCheck,
  RevocationFetcher,
  ValidationData,
} from './validation-data.js';
export { findSignatures } from './pdf-signatures.js';
export { trimDer } from '../pdf/signatures.js';
export type { PdfSignature } from './pdf-signatures.js';
export { buildOcspRequest, checkOcspResponse } from './ocsp.js';
export type { CheckedOcspResponse, OcspCertStatus } from './ocsp.js';
export { checkCrl } from './crl.js';
export type { CheckedCrl } from './crl.js';
export { certificateFacts, isIssuedBy } from './certificates.js';
export type { CertificateFacts } from './certificates.js';
