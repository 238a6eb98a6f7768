/**
 * PAdES, signing: the incremental update around a placeholder (checked before any approval), the
 * original copied to the temp output and hashed on the way, the CMS put into /Contents, and at B-LT
 * and B-LTA the extension appended before the output is committed.
 */
import { createHash } from 'node:crypto';
import { maxSignatureLength, type DigestName } from '../../cms/algorithms.js';
import { buildSignedAttributes } from '../../cms/signed-attributes.js';
import { EsignError } from '../../errors.js';
import { readPdfFromHeader, type PdfDocument } from '../../pdf/document.js';
import { assertContentsFit, prepareSignature } from '../../pdf/placeholder.js';
import type { SigningCredential } from '../../ports.js';
import type { SignatureLevel } from '../../profile.js';
import {
  copyOriginal,
  type DocumentFiles,
  type DocumentSource,
  type ExtendSigned,
  type OpenedDocument,
  type PreparedDocument,
  type SignedValue,
  type SignJob,
  type SignOptions,
  type UpdateAroundContents,
  type UpdateCheck,
} from '../../documents.js';
import { signedDataOf } from '../shared/cms-signature.js';

/**
 * Room for the CMS in /Contents: the chain, the signature value, signed attributes and structure,
 * and a timestamp token with its certificates, with margin, so a token never fails to fit after
 * the signer already approved.
 */
export function contentsSizeFor(credential: SigningCredential, level: SignatureLevel): number {
  const chain = credential.certificates.reduce((sum, certificate) => sum + certificate.length, 0);
  const signature = maxSignatureLength(credential.scheme, credential.keyLengthBits);
  const timestamp = level === 'B-B' ? 0 : 12_288;
  return chain + signature + 2_048 + timestamp + 2_048;
}

// The check's update is never written; its placeholder size only has to be a valid one.
const CHECK_CONTENTS_SIZE = 64;

/**
 * Reads a PDF's cross-reference data and refuses one that cannot take an update; with `check`, also
 * builds its signature's update once and drops it (see openDocument).
 */
export async function openPdf(source: DocumentSource, password?: string, check?: UpdateCheck): Promise<OpenedDocument> {
  const opened = await readPdfFromHeader(source, fromHeader, { password });
  opened.pdf.assertUpdatable();
  if (check)
    await prepareSignature(opened.pdf, {
      kind: 'signature',
      signingTime: check.signingTime,
      contentsSize: CHECK_CONTENTS_SIZE,
      ...check.pdf,
      assets: check.appearance,
    });
  return opened;
}

/** The view of a document from byte `start` on (its `%PDF-` header). */
export function fromHeader(source: DocumentSource, start: number): DocumentSource {
  return {
    path: source.path,
    size: source.size - start,
    headerOffset: start,
    read: (offset, length) => source.read(start + offset, length),
    unchanged: () => source.unchanged(),
    close: () => source.close(),
  };
}

/**
 * Prepares a PAdES signature: the incremental update around its placeholder, the original copied to
 * the temp output and hashed on the way, the signed attributes over the ByteRange's digest.
 */
export async function preparePdf(
  job: SignJob,
  opened: DocumentSource,
  parsed: PdfDocument | undefined,
  credential: SigningCredential,
  files: DocumentFiles,
  options: SignOptions,
  signer: Uint8Array,
  digest: DigestName,
): Promise<PreparedDocument> {
  let source = opened;
  let document = parsed;
  if (!document)
    ({ source, pdf: document } = await readPdfFromHeader(source, fromHeader, {
      password: options.pdfPassword?.(job.input),
    }));
  const update = await prepareSignature(document, {
    kind: 'signature',
    signingTime: options.signingTime,
    contentsSize: contentsSizeFor(credential, options.level),
    ...options.pdf,
    assets: options.appearance,
  });
  const output = await files.createOutput(job.output, { overwrite: options.overwrite });
  try {
    const documentHash = createHash(digest);
    const outputHash = await copyOriginal(source, output, documentHash, digest);
    const bytes = update.update;
    const [, beforeContents, afterContents] = update.byteRange.map((offset) => offset - source.size);
    documentHash.update(bytes.subarray(0, beforeContents)).update(bytes.subarray(afterContents));
    await output.suspend();
    const hexStart = update.contentsHexOffset - source.size;
    const around = {
      before: bytes.slice(0, hexStart),
      hexLength: update.contentsHexLength,
      after: bytes.slice(hexStart + update.contentsHexLength),
    };
    const contentDigest = new Uint8Array(documentHash.digest());
    const signedAttributes = buildSignedAttributes({ contentDigest, digest, signerCertificate: signer });
    return {
      job,
      toBeSigned: signedAttributes,
      inputSize: source.size,
      signatureObject: update.signatureObject,
      update: around,
      output,
      outputHash,
    };
  } catch (error) {
    await output.abort();
    throw error;
  }
}

/**
 * Puts a PDF's signature into its temp output as soon as its timestamp is in, before the window's
 * validation data (B-LT/B-LTA): the CMS is built and written while the TSA still works on the
 * window's other timestamps, and nothing of it (CMS, token, update) is held until completion,
 * which reads the signed document back. Returns what completion still needs of `value`.
 */
export async function writeSignature(
  prepared: PreparedDocument,
  credential: SigningCredential,
  value: SignedValue,
): Promise<SignedValue> {
  const { output, update, outputHash: hash } = prepared;
  if (prepared.job.kind !== 'pdf' || !output || !update || !hash)
    throw new EsignError('INTERNAL', 'A signature was written for a document not prepared as a PDF.');
  const pieces = updateWithSignature(update, signedDataOf(prepared, credential, value));
  for (const piece of pieces) hash.update(piece);
  await output.write(pieces);
  await output.suspend();
  prepared.update = undefined;
  prepared.signedSize = prepared.inputSize + pieces.reduce((sum, piece) => sum + piece.length, 0);
  // The token goes (its TSA chain is what the validation data needs), unless its chain is known only from it.
  return {
    signature: value.signature,
    timestampTime: value.timestampTime,
    ...(value.timestampCertificates?.[0]
      ? { timestampCertificates: value.timestampCertificates }
      : { timestampToken: value.timestampToken }),
  };
}

/** Writes a PAdES output: the CMS into its update's /Contents, then (B-LT, B-LTA) the extension, committed together. */
export async function completePdf(
  prepared: PreparedDocument,
  cms: Uint8Array,
  value: SignedValue,
  extend?: ExtendSigned,
): Promise<{ bytes: number; sha256: string }> {
  const { output, update, outputHash: hash } = prepared;
  if (!output || !update || !hash) throw new EsignError('INTERNAL', 'A PDF was completed without being prepared.');
  const pieces = updateWithSignature(update, cms);
  const tailLength = pieces.reduce((sum, piece) => sum + piece.length, 0);
  for (const piece of pieces) hash.update(piece);
  if (!extend) {
    await output.commit(pieces);
    return { bytes: prepared.inputSize + tailLength, sha256: hash.digest('hex') };
  }
  if (!output.written) throw new EsignError('INTERNAL', 'A long-term level needs an output it can read back.');
  const tail = Buffer.concat(pieces);
  const original = await output.written(prepared.inputSize);
  const extension = await extend({
    input: prepared.job.input,
    original,
    tail,
    hash,
    cms,
    value,
    signatureObject: prepared.signatureObject,
  });
  hash.update(extension);
  await output.commit([tail, extension]);
  return { bytes: prepared.inputSize + tail.length + extension.length, sha256: hash.digest('hex') };
}

/** Completes a PDF whose signature `writeSignature` put in its temp output: the extension read from there, appended, committed. */
export async function extendWritten(
  prepared: PreparedDocument,
  value: SignedValue,
  extend: ExtendSigned | undefined,
): Promise<{ bytes: number; sha256: string }> {
  const { output, outputHash: hash, signedSize } = prepared;
  if (!output?.written || !hash || signedSize === undefined || !extend)
    throw new EsignError('INTERNAL', 'A signature written ahead was completed without its extension.');
  const signed = await output.written(signedSize);
  const extension = await extend({
    input: prepared.job.input,
    original: signed,
    tail: new Uint8Array(0),
    hash,
    value,
    signatureObject: prepared.signatureObject,
  });
  hash.update(extension);
  await output.commit([extension]);
  return { bytes: signedSize + extension.length, sha256: hash.digest('hex') };
}

/**
 * The update whole again, as pieces to write in order: the CMS as hex in /Contents, the
 * placeholder's zeros after it (shared, not copied for every file); refused when it does not fit.
 */
function updateWithSignature({ before, hexLength, after }: UpdateAroundContents, cms: Uint8Array): Uint8Array[] {
  assertContentsFit(cms, hexLength);
  const hex = Buffer.from(Buffer.from(cms.buffer, cms.byteOffset, cms.length).toString('hex'), 'latin1');
  return [before, hex, zeroDigits(hexLength - hex.length), after];
}

function zeroDigits(count: number): Uint8Array {
  if (count > ZERO_DIGITS.length) return Buffer.alloc(count, '0');
  return ZERO_DIGITS.subarray(0, count);
}
const ZERO_DIGITS = Buffer.alloc(64 * 1024, '0');
