/**
 * The signing workflow, one window at a time: prepare its documents (read once: hash and copy),
 * authorize and sign its hashes (one approval), timestamp, then complete every output. A batch runs
 * these windows as a pipeline (sign-run.ts). Pure apart from its ports: files, the remote signer
 * and the TSA are passed in.
 */
import { createHash, type Hash } from 'node:crypto';
import { maxSignatureLength, type DigestName } from './cms/algorithms.js';
import { buildSignedAttributes, type SignedAttributes } from './cms/signed-attributes.js';
import {
  addedSignerAround,
  buildSignedData,
  signedDataAround,
  signedDataParts,
  type SignedDataInput,
} from './cms/signed-data.js';
import { readEnveloping } from './cms/enveloping.js';
import type { CmsValidationData } from './cms/long-term.js';
import { MAX_HASHES_PER_AUTHORIZATION } from './csc/shapes.js';
import { EsignError, isEsignError, naming } from './errors.js';
import { readPdfFromHeader, type PdfDocument } from './pdf/document.js';
import {
  assertContentsFit,
  prepareSignature,
  type AppearanceAssets,
  type CertificationLevel,
  type VisibleSignature,
} from './pdf/placeholder.js';
import type { ByteSource, RemoteSigner, SigningCredential, TimestampAuthority, TimestampResult } from './ports.js';
import type { SignatureLevel } from './profile.js';

export { MAX_HASHES_PER_AUTHORIZATION };
/** Reads of at least 1 MiB keep SHA-256 near its top speed; 4 MiB amortises syscalls further. */
export const READ_CHUNK_BYTES = 4 * 1024 * 1024;

/**
 * A PAdES signature in the PDF, a detached CAdES `.p7s`, an enveloping CAdES `.p7m` (the content
 * inside), or an ASiC-S container (the document and its detached CAdES in a ZIP).
 */
export type DocumentKind = 'pdf' | 'cades' | 'p7m' | 'asics';

export interface SignJob {
  input: string;
  output: string;
  kind: DocumentKind;
}

export interface PdfSignatureOptions {
  reason?: string;
  location?: string;
  contactInfo?: string;
  name?: string;
  fieldName?: string;
  visible?: VisibleSignature;
  /** A certification signature with these DocMDP permissions. */
  certify?: CertificationLevel;
}

export interface SignOptions {
  level: SignatureLevel;
  signingTime: Date;
  pdf?: PdfSignatureOptions;
  /** The loaded font and image `pdf.visible` names (never in the split flow's state: loaded again from the files). */
  appearance?: AppearanceAssets;
  /** Replace existing outputs. */
  overwrite: boolean;
  /** The password of an encrypted PDF that needs one, by input path (never kept in the split flow's state). */
  pdfPassword?: (input: string) => string | undefined;
}

/** A source document opened for reading. */
export interface DocumentSource extends ByteSource {
  readonly path: string;
  /** Bytes of the file before this source's first byte (before a `%PDF-` header that does not start the file). */
  readonly headerOffset?: number;
  /** Whether its path still leads to the file opened, with the content it had then (as the inode tells). */
  unchanged(): Promise<boolean>;
  close(): Promise<void>;
}

/** Where copied bytes are hashed: a node:crypto Hash, or several at once. */
export interface HashSink {
  update(chunk: Uint8Array): unknown;
}

/** An output being written through a temp file: nothing is visible at `path` until commit. */
export interface OutputFile {
  /**
   * Puts a copy of `source` at the start of the output and feeds the same bytes into `hash`, so
   * that what is signed is what was written. Fails if the source changed since it was opened.
   */
  copyFrom(source: DocumentSource, hash: HashSink): Promise<void>;
  /** Appends bytes (pieces given in order). */
  write(bytes: Uint8Array | readonly Uint8Array[]): Promise<void>;
  /** The first `size` bytes written so far, readable until commit or abort (where a long-term extension reads the original). */
  written?(size: number): Promise<ByteSource>;
  /** Releases the file handle between prepare and complete (a batch may hold thousands). */
  suspend(): Promise<void>;
  /** Appends the tail, syncs and renames into place. */
  commit(tail: Uint8Array | readonly Uint8Array[]): Promise<void>;
  /** Removes the temp file. Safe to call more than once. */
  abort(): Promise<void>;
}

export interface DocumentFiles {
  open(path: string): Promise<DocumentSource>;
  createOutput(path: string, options: { overwrite: boolean }): Promise<OutputFile>;
}

export interface PreparedDocument {
  job: SignJob;
  signedAttributes: SignedAttributes;
  /** Bytes of the original, as the output holds them (a PDF's from its `%PDF-` header on). */
  inputSize: number;
  /** PDF only: the object number of its signature dictionary in the update. */
  signatureObject?: number;
  /** PDF only: the incremental update around its placeholder, and the temp output holding the original bytes. */
  update?: UpdateAroundContents;
  output?: OutputFile;
  /** SHA-256 state over the output bytes written so far (the original), to finish with the update. */
  outputHash?: Hash;
  /** CAdES only: digest (the credential's) of the whole input (of a .p7m's content, when co-signing one). */
  contentDigest?: Uint8Array;
  /** A .p7m a parallel signature is added to: where its content lies, and its SignedData without it. */
  enveloped?: { fileSize: number; offset: number; length: number; detached: Uint8Array };
  /** PDF at B-LT/B-LTA: the size of the signed document once its signature is in the temp output (`writeSignature`). */
  signedSize?: number;
}

/**
 * An incremental update kept without its placeholder (`hexLength` zeros, up to 40 KB): a window of
 * a thousand prepared documents then holds a few KB each.
 */
export interface UpdateAroundContents {
  before: Uint8Array;
  hexLength: number;
  after: Uint8Array;
}

export interface SignedDocument {
  input: string;
  output: string;
  kind: DocumentKind;
  level: SignatureLevel;
  bytes: number;
  sha256: string;
  timestampTime?: Date;
}

export interface SignedValue {
  signature: Uint8Array;
  timestampToken?: Uint8Array;
  timestampTime?: Date;
  /** The timestamp token's certificates, the TSA's first, as the TSA client read them. */
  timestampCertificates?: Uint8Array[];
  /** CAdES B-LT: the chains' certificates and revocation data, fetched after the timestamp, for the SignedData. */
  validationData?: CmsValidationData;
  /** CAdES B-LTA: the archive-time-stamp-v3 token (its ats-hash-index-v3 inside) over the B-LT signature. */
  archiveTimestampToken?: Uint8Array;
}

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

/** An input opened and, for a PDF, its structure read: what checking it before approval leaves for prepare. */
export interface OpenedDocument {
  source: DocumentSource;
  pdf?: PdfDocument;
}

/** What a check before approval builds the signature's update with (and then drops). */
export interface UpdateCheck {
  signingTime: Date;
  pdf?: PdfSignatureOptions;
  appearance?: AppearanceAssets;
}

/**
 * Opens an input and, for a PDF, reads its cross-reference data; with `check`, also builds its
 * signature's update once (reading every object the update needs: catalog, AcroForm, fields, the
 * page, DocMDP) and drops it. Everything that can refuse a document fails here, before any browser step.
 */
export async function openDocument(
  job: SignJob,
  files: DocumentFiles,
  password?: string,
  check?: UpdateCheck,
): Promise<OpenedDocument> {
  const source = await files.open(job.input).catch((error: unknown) => {
    throw naming(job.input, error);
  });
  try {
    if (job.kind !== 'pdf') return { source };
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
  } catch (error) {
    await source.close();
    throw naming(job.input, error);
  }
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
 * Prepares one document: reads it once, hashing it (and, for a PDF, copying it to the temp output).
 * `opened` (from openDocument) is taken over and closed; without it the input is opened here.
 */
export async function prepareDocument(
  job: SignJob,
  credential: SigningCredential,
  files: DocumentFiles,
  options: SignOptions,
  opened?: OpenedDocument,
): Promise<PreparedDocument> {
  try {
    return await prepareOne(job, credential, files, options, opened);
  } catch (error) {
    throw naming(job.input, error);
  }
}

export function changedWhileSigning(path: string): EsignError {
  return new EsignError('INPUT_UNREADABLE', `${path} changed while esign was signing it.`, {
    hint: 'Let whatever writes to it finish, then sign again.',
  });
}

async function prepareOne(
  job: SignJob,
  credential: SigningCredential,
  files: DocumentFiles,
  options: SignOptions,
  opened?: OpenedDocument,
): Promise<PreparedDocument> {
  // A document checked before the sign-in may have been saved again since (minutes, with a person
  // at the browser): then it is read as it is now, as one opened only here would be.
  let held = opened;
  if (held && !(await held.source.unchanged())) {
    await held.source.close();
    held = undefined;
  }
  let source = held?.source ?? (await files.open(job.input));
  try {
    const signer = credential.certificates[0];
    if (!signer)
      throw new EsignError(
        'CREDENTIAL_UNSUPPORTED_KEY',
        `The credential ${credential.credentialID} has no certificate.`,
      );
    const digest = credential.scheme.digest;
    if (job.kind !== 'pdf') {
      const hash = createHash(digest);
      const enveloped = job.kind === 'p7m' && /\.p7m$/i.test(job.input) ? await readEnveloping(source) : undefined;
      await hashSource(enveloped ? rangeOf(source, enveloped.offset, enveloped.length) : source, hash);
      // What was hashed is the file as it was opened; a write meanwhile would make a false signature.
      if (!(await source.unchanged())) throw changedWhileSigning(source.path);
      const contentDigest = new Uint8Array(hash.digest());
      const signedAttributes = buildSignedAttributes({
        contentDigest,
        digest,
        signerCertificate: signer,
        signingTime: options.signingTime,
      });
      return {
        job,
        signedAttributes,
        inputSize: source.size,
        contentDigest,
        ...(enveloped ? { enveloped: { ...enveloped, fileSize: source.size } } : {}),
      };
    }
    let document = held?.pdf;
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
        signedAttributes,
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
  } finally {
    await source.close();
  }
}

/**
 * Copies the whole original into the output and the document hash, and returns the SHA-256 state
 * of the output so far. The original always lies inside the first ByteRange segment, because the
 * update is appended after it. A document hash of another digest is fed beside a SHA-256 of its own.
 */
export async function copyOriginal(
  source: DocumentSource,
  output: OutputFile,
  documentHash: Hash,
  digest: DigestName = 'sha256',
): Promise<Hash> {
  if (digest === 'sha256') {
    await output.copyFrom(source, documentHash);
    return documentHash.copy();
  }
  const outputHash = createHash('sha256');
  await output.copyFrom(source, {
    update(chunk: Uint8Array) {
      documentHash.update(chunk);
      outputHash.update(chunk);
    },
  });
  return outputHash;
}

/** The `length` bytes of `source` from `offset` on, as a source of their own. */
export function rangeOf(source: ByteSource, offset: number, length: number): ByteSource {
  return {
    size: length,
    read: (at, wanted) => source.read(offset + at, Math.max(0, Math.min(wanted, length - at))),
  };
}

/** Feeds a whole source into `hash`, chunk by chunk. */
export async function hashSource(source: ByteSource, hash: HashSink): Promise<void> {
  for (let offset = 0; offset < source.size; offset += READ_CHUNK_BYTES)
    hash.update(await source.read(offset, READ_CHUNK_BYTES));
}

/**
 * Raises a just-signed PDF to a long-term level before its output is committed: given the signed
 * document (the original input followed by `tail`) and the SHA-256 state over all of it, returns
 * the bytes to append (DSS, document timestamp). Nothing is visible at the output until it returns.
 * `cms` and `value` are the new signature as built, so that it need not be parsed back.
 */
export type ExtendSigned = (signed: {
  input: string;
  original: ByteSource;
  tail: Uint8Array;
  hash: Hash;
  cms?: Uint8Array;
  value: SignedValue;
  signatureObject: number | undefined;
}) => Promise<Uint8Array>;

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

function signedDataOf(prepared: PreparedDocument, credential: SigningCredential, value: SignedValue): Uint8Array {
  return buildSignedData(signedDataInput(prepared, credential, value));
}

/** What a prepared document's CMS is built from, once it is signed (and timestamped, and given its validation data). */
export function signedDataInput(
  prepared: Pick<PreparedDocument, 'signedAttributes'>,
  credential: SigningCredential,
  value: SignedValue,
): SignedDataInput {
  return {
    signedAttributesDer: prepared.signedAttributes.der,
    signatureValue: value.signature,
    scheme: credential.scheme,
    certificates: credential.certificates,
    unsignedAttributes: value.timestampToken
      ? {
          signatureTimeStampToken: value.timestampToken,
          ...(value.archiveTimestampToken ? { archiveTimeStampV3Token: value.archiveTimestampToken } : {}),
        }
      : undefined,
    ...(value.validationData ? { validationData: value.validationData } : {}),
  };
}

/** Where a completed signature goes: a detached one written whole, an enveloping one streamed around its content. */
export interface CompletionOutputs {
  writeDetached(path: string, bytes: Uint8Array, overwrite: boolean): Promise<void>;
  files: DocumentFiles;
  /** Writes an ASiC-S around the input and its signature; its output is registered for a stop to abort. */
  writeAsicS?(
    job: AsicSToWrite,
    registerOutput: (output: OutputFile) => void,
  ): Promise<{ bytes: number; sha256: string }>;
}

export interface AsicSToWrite {
  input: string;
  output: string;
  /** The detached CAdES over the input. */
  cms: Uint8Array;
  contentDigest: Uint8Array;
  digest: DigestName;
  overwrite: boolean;
  mtime: Date;
}

/** Writes the signed output of a prepared document. */
export async function completeDocument(
  prepared: PreparedDocument,
  credential: SigningCredential,
  value: SignedValue,
  options: SignOptions,
  outputs: CompletionOutputs,
  extend?: ExtendSigned,
): Promise<SignedDocument> {
  const base = {
    input: prepared.job.input,
    output: prepared.job.output,
    kind: prepared.job.kind,
    level: options.level,
    timestampTime: value.timestampTime,
  };
  if (prepared.signedSize !== undefined) return extendWritten(prepared, value, base, extend);
  if (prepared.job.kind === 'p7m')
    return { ...base, ...(await writeEnveloping(prepared, credential, value, options, outputs.files)) };
  const cms = signedDataOf(prepared, credential, value);
  if (prepared.job.kind === 'asics') {
    if (!outputs.writeAsicS || !prepared.contentDigest)
      throw new EsignError('INTERNAL', 'An ASiC-S was completed without its writer.');
    const written = await outputs.writeAsicS(
      {
        input: prepared.job.input,
        output: prepared.job.output,
        cms,
        contentDigest: prepared.contentDigest,
        digest: credential.scheme.digest,
        overwrite: options.overwrite,
        mtime: options.signingTime,
      },
      (output) => (prepared.output = output),
    );
    return { ...base, ...written };
  }
  if (prepared.job.kind === 'cades') {
    await outputs.writeDetached(prepared.job.output, cms, options.overwrite);
    return { ...base, bytes: cms.length, sha256: createHash('sha256').update(cms).digest('hex') };
  }
  const { output, update, outputHash: hash } = prepared;
  if (!output || !update || !hash) throw new EsignError('INTERNAL', 'A PDF was completed without being prepared.');
  const pieces = updateWithSignature(update, cms);
  const tailLength = pieces.reduce((sum, piece) => sum + piece.length, 0);
  for (const piece of pieces) hash.update(piece);
  if (!extend) {
    await output.commit(pieces);
    return { ...base, bytes: prepared.inputSize + tailLength, sha256: hash.digest('hex') };
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
  return { ...base, bytes: prepared.inputSize + tail.length + extension.length, sha256: hash.digest('hex') };
}

/**
 * Writes an enveloping .p7m: the SignedData's head (every length computed from the content's size),
 * the input streamed in, the certificates and SignerInfo after it. The content is read a second time
 * here and must hash to what was signed, so the output holds exactly the signed bytes; no more than
 * a chunk of it is in memory at once.
 */
async function writeEnveloping(
  prepared: PreparedDocument,
  credential: SigningCredential,
  value: SignedValue,
  options: SignOptions,
  files: DocumentFiles,
): Promise<{ bytes: number; sha256: string }> {
  const { job, inputSize, contentDigest, enveloped } = prepared;
  const parts = signedDataParts(signedDataInput(prepared, credential, value));
  const { offset: start, length } = enveloped ?? { offset: 0, length: inputSize };
  const { head, tail } = enveloped
    ? addedSignerAround(enveloped.detached, parts, length)
    : signedDataAround(parts, length);
  const source = await files.open(job.input);
  try {
    if (source.size !== inputSize) throw changedWhileSigning(job.input);
    // A parallel signature replaces the .p7m it is added to (a temp file renamed over it).
    const output = await files.createOutput(job.output, { overwrite: options.overwrite || enveloped !== undefined });
    prepared.output = output;
    try {
      const outputHash = createHash('sha256').update(head);
      const contentHash = createHash(credential.scheme.digest);
      await output.write(head);
      let writing: Promise<void> = Promise.resolve();
      for (let offset = 0; offset < length; offset += READ_CHUNK_BYTES) {
        const chunk = await source.read(start + offset, Math.min(READ_CHUNK_BYTES, length - offset));
        contentHash.update(chunk);
        outputHash.update(chunk);
        await writing;
        writing = output.write(chunk);
      }
      await writing;
      if (!contentDigest || !Buffer.from(contentHash.digest()).equals(contentDigest))
        throw changedWhileSigning(job.input);
      outputHash.update(tail);
      await output.commit(tail);
      return { bytes: head.length + length + tail.length, sha256: outputHash.digest('hex') };
    } catch (error) {
      await output.abort();
      throw error;
    }
  } finally {
    await source.close();
  }
}

/** Completes a PDF whose signature `writeSignature` put in its temp output: the extension read from there, appended, committed. */
async function extendWritten(
  prepared: PreparedDocument,
  value: SignedValue,
  base: Omit<SignedDocument, 'bytes' | 'sha256'>,
  extend: ExtendSigned | undefined,
): Promise<SignedDocument> {
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
  return { ...base, bytes: signedSize + extension.length, sha256: hash.digest('hex') };
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

/** Splits a list into authorization batches of at most 50. */
export function batches<T>(items: readonly T[], size = MAX_HASHES_PER_AUTHORIZATION): T[][] {
  const result: T[][] = [];
  for (let index = 0; index < items.length; index += size) result.push(items.slice(index, index + size));
  return result;
}

/** What a document of a batch got: its signature value (with its timestamp at B-T and above), or why not. */
export type BatchResult = PromiseSettledResult<SignedValue>;

export interface BatchProgress {
  /** The signing service answered (after the browser step): signatures are being timestamped. */
  signed?(count: number): void | Promise<void>;
  timestamped?(done: number, total: number): void;
}

/**
 * One signHash call for a batch (≤ 50 hashes, one browser step), then one timestamp per signature
 * value at B-T and above (at most `concurrency` at once). A failed signHash fails the batch; a failed
 * timestamp fails only its document.
 */
export async function signBatch(
  prepared: readonly PreparedDocument[],
  credential: SigningCredential,
  signer: RemoteSigner,
  tsa: TimestampAuthority | undefined,
  level: SignatureLevel,
  progress: BatchProgress = {},
  stamped?: (index: number, result: BatchResult) => Promise<BatchResult>,
): Promise<BatchResult[]> {
  const signatures = await signer.signHashes(
    credential,
    prepared.map((document) => document.signedAttributes.toBeSignedHash),
  );
  if (signatures.length !== prepared.length) {
    throw new EsignError(
      'CSC_BAD_RESPONSE',
      `The signing service returned ${signatures.length} signatures for ${prepared.length} hashes.`,
    );
  }
  await progress.signed?.(signatures.length);
  return timestampSignatures(signatures, tsa, level, progress, { digest: credential.scheme.digest, stamped });
}

/** Timestamp requests of one window in flight at once: enough to hide a TSA's round trip, few enough to be polite. */
export const TIMESTAMP_CONCURRENCY = 8;

/** The timestamps of B-T and above for signature values, each settled on its own; the imprint is of the signature's digest. */
export async function timestampSignatures(
  signatures: readonly Uint8Array[],
  tsa: TimestampAuthority | undefined,
  level: SignatureLevel,
  progress: BatchProgress = {},
  {
    concurrency = TIMESTAMP_CONCURRENCY,
    digest = 'sha256',
    stamped,
  }: {
    concurrency?: number;
    digest?: DigestName;
    /** Called with each document's outcome as soon as it is settled, in its slot; what it returns is the document's result. */
    stamped?: (index: number, result: BatchResult) => Promise<BatchResult>;
  } = {},
): Promise<BatchResult[]> {
  if (level === 'B-B') return signatures.map((signature) => ({ status: 'fulfilled', value: { signature } }));
  if (!tsa)
    throw new EsignError(
      'TSA_NOT_CONFIGURED',
      `Level ${level} needs a timestamping service, and the profile has none.`,
      { hint: 'Set tsaUrls, or sign with --level B-B.' },
    );
  let done = 0;
  return mapConcurrently(signatures, concurrency, async (signature, index): Promise<BatchResult> => {
    let result: BatchResult;
    try {
      const stamp = await timestampSignature(tsa, signature, digest);
      result = {
        status: 'fulfilled',
        value: {
          signature,
          timestampToken: stamp.token,
          timestampTime: stamp.genTime,
          ...(stamp.certificates ? { timestampCertificates: stamp.certificates } : {}),
        },
      };
    } catch (reason) {
      result = { status: 'rejected', reason };
    } finally {
      progress.timestamped?.(++done, signatures.length);
    }
    return stamped ? stamped(index, result) : result;
  });
}

/**
 * A timestamp over the signature value, its imprint of the signature's digest. A TSA that refuses
 * that hash algorithm (badAlg: the service's TSA accepts only SHA-256) is asked again with SHA-256,
 * which RFC 3161 and ETSI EN 319 122-1 allow whatever the signature's digest.
 */
async function timestampSignature(
  tsa: TimestampAuthority,
  signature: Uint8Array,
  digest: DigestName,
): Promise<TimestampResult> {
  const imprint = (name: DigestName) => new Uint8Array(createHash(name).update(signature).digest());
  try {
    return await tsa.timestamp(imprint(digest), digest);
  } catch (error) {
    const failInfo = isEsignError(error, 'TSA_REJECTED') ? error.details?.['failInfo'] : undefined;
    if (digest === 'sha256' || !Array.isArray(failInfo) || !failInfo.includes('badAlg')) throw error;
    return tsa.timestamp(imprint('sha256'), 'sha256');
  }
}

/** Maps with at most `limit` calls in flight, keeping order. */
export async function mapConcurrently<T, R>(
  items: readonly T[],
  limit: number,
  map: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await map(items[index] as T, index);
    }
  });
  await Promise.all(workers);
  return results;
}
