/** Signature verification: PAdES (signatures, document timestamps, DSS) and detached CAdES. */
export { verifyPdf } from '../forms/pades/verify.js';
export { verifyCades } from './cades.js';
export type * from './types.js';
