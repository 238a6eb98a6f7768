/**
 * The streaming PDF core: open a document through a ByteSource, append incremental updates
 * (signature and document-timestamp placeholders, DSS), compute what to hash, splice the CMS.
 */
export { readPdf, PdfDocument } from './document.js';
export type { PdfOpenOptions } from './document.js';
export type { PdfPage } from './document.js';
export { bytesSource } from './byte-source.js';
export { IncrementalUpdate } from './incremental.js';
export type { SerializedUpdate } from './incremental.js';
export { prepareSignature, byteRangeChunks, spliceContents, pdfDate } from './placeholder.js';
export type { PreparedUpdate, SignatureOptions, VisibleSignature, ByteRangeChunk } from './placeholder.js';
export { buildDssUpdate } from './dss.js';
export type { DssMaterial } from './dss.js';
export {
  listRevisions,
  listSignatureFields,
  readDss,
  readRevision,
  hashByteRange,
  sliceSource,
  trimDer,
  parsePdfDate,
} from './signatures.js';
export type { PdfRevision, PdfSignatureField, PdfDss } from './signatures.js';
