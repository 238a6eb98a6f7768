/** Moved to `src/core/forms/shared/xades/` (ASiC-E and ASiC-S write XAdES too); kept here for the reader's imports. */
export * from '../shared/xades/signature.js';
