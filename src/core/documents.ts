/**
 * Documents as the signing workflow and every signature form see them: the file ports (a source
 * opened for reading, an output written through a temp file), a job, what prepare leaves and what
 * signing returns, and the helpers that read a source in large chunks. Pure: the files come in
 * through `DocumentFiles`.
 */
import { createHash, type Hash } from 'node:crypto';
import type { DigestName } from './cms/algorithms.js';
import type { CmsValidationData } from './cms/long-term.js';
import { EsignError } from './errors.js';
import type { PdfDocument } from './pdf/document.js';
import type { AppearanceAssets, CertificationLevel, VisibleSignature } from './pdf/placeholder.js';
import type { ByteSource } from './ports.js';
import type { SignatureLevel } from './profile.js';

/** Reads of at least 1 MiB keep SHA-256 near its top speed; 4 MiB amortises syscalls further. */
export const READ_CHUNK_BYTES = 4 * 1024 * 1024;

/**
 * What a job makes, as the split flow's state file records it: a PAdES signature in the PDF, a
 * detached CAdES `.p7s`, an enveloping CAdES `.p7m` (the content inside), an ASiC-S container (the
 * document and its detached CAdES in a ZIP), or an ASiC-E (many files, one signature). Each is one
 * signature form's (`SignatureForm.kind`); the registry (src/io/forms/registry.ts) maps one to the other.
 */
export type DocumentKind = 'pdf' | 'cades' | 'p7m' | 'asics' | 'asice' | 'xades';

export interface SignJob {
  /** What the job signs, as reports name it (for a job of several inputs: them all, joined by spaces). */
  input: string;
  output: string;
  kind: DocumentKind;
  /**
   * A job of a `one-for-many` form: every input named (files, directories, or the output to add a
   * signature to), in order. The form walks and checks them; one-per-input jobs have none.
   */
  inputs?: string[];
}

/** An explicit signature policy of a XAdES signature (XAdES-EPES, `--signature-policy`). */
export interface SignaturePolicy {
  /** The policy's identifier: a URL, or `urn:oid:…`. */
  readonly identifier: string;
  readonly description?: string;
  readonly hashAlgorithm: DigestName | 'sha1';
  /** The digest of the policy document, base64. */
  readonly hashBase64: string;
  /** Where the policy document is (the SPURI qualifier). */
  readonly url?: string;
  /** The role the signer claims, as the policy asks: in SignerRoleV2 (EN 319 132-1), or SignerRole (XAdES 1.3.2, as FacturaE 3.1 names it). */
  readonly claimedRole?: { readonly role: string; readonly element: 'SignerRole' | 'SignerRoleV2' };
  /** What the policy asks the DataObjectFormat of the signed document to say beside its MIME type. */
  readonly dataObject?: { readonly description: string; readonly objectIdentifier: string };
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
  /** XAdES only: the explicit signature policy (XAdES-EPES) `--signature-policy` names. */
  signaturePolicy?: SignaturePolicy;
  /** The signature inside a new ASiC container (`--asic-signature`; a container signed again keeps its own). */
  asicSignature?: 'xades' | 'cades';
  /** The password of an encrypted PDF that needs one, by input path (never kept in the split flow's state). */
  pdfPassword?: (input: string) => string | undefined;
  /**
   * A job of several inputs: an input that cannot be read is handed here and left out of the
   * output (`--continue-on-error`); it throws the error back when the run must stop. Without it,
   * prepare fails.
   */
  leaveOut?: (input: string, error: unknown) => void;
}

/** A source document opened for reading. */
export interface DocumentSource extends ByteSource {
  readonly path: string;
  /** Bytes of the file before this source's first byte (before a `%PDF-` header that does not start the file). */
  readonly headerOffset?: number;
  /** Whether its path still leads to the file opened, with the content it had then (as the inode tells). */
  unchanged(): Promise<boolean>;
  /** Reads into `target` (as much of it as the source has left at `offset`): the part filled. */
  readInto?(target: Uint8Array, offset: number): Promise<Uint8Array>;
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
  /** Appends bytes (pieces given in order); the caller may use them again once this resolves. */
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

/**
 * What the signing service signs for one prepared document: the bytes whose hash is signed (the DER
 * of CMS signed attributes, or a canonicalized XML SignedInfo) and that hash, made with the
 * credential's digest. `PreparedDocument.toBeSigned` holds it; for CMS forms it is their `SignedAttributes`.
 */
export interface ToBeSigned {
  readonly der: Uint8Array;
  readonly toBeSignedHash: Uint8Array;
}

/**
 * A document prepared for signing: its job, what is signed, and the form's own state until completion.
 * The fields below `inputSize` belong to the forms that set them (a new form keeps its own in `state`).
 */
export interface PreparedDocument {
  job: SignJob;
  /** What the signing service signs (a CMS form's signed attributes, an XML form's SignedInfo). */
  toBeSigned: ToBeSigned;
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
  /**
   * The bytes the signature timestamp (B-T) covers, given the signature value, when they are not
   * the value itself: XAdES stamps its canonicalized `ds:SignatureValue` element (EN 319 132-1 §5.3).
   */
  timestampCovers?: (signature: Uint8Array) => Uint8Array;
  /** A form's own state between prepare and complete, for forms that keep none of the fields above. */
  state?: unknown;
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
  /** A job of several inputs: what its output holds, as its report names it. */
  contents?: OutputContents;
  /** The signature's format, when the form's output may hold either (an ASiC: XAdES or CAdES). */
  format?: 'CAdES' | 'XAdES';
}

/**
 * What the output of a job of several inputs holds, for its report: the names of its files, and how
 * the line names the output (`ASiC-E`, `ASiC-E, signature 002`).
 */
export interface OutputContents {
  files: string[];
  label: string;
  /** The signature's format, when the form's output may hold either (an ASiC-E: XAdES or CAdES). */
  format?: 'CAdES' | 'XAdES';
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

/** An input opened and, for a PDF, its structure read: what checking it before approval leaves for prepare. */
export interface OpenedDocument {
  /** The input opened (a job of several inputs: its first file, or the output it adds a signature to). */
  source: DocumentSource;
  /** A job of several inputs: how many files it signs (what progress and the summary count), and what its check found. */
  files?: number;
  state?: unknown;
  pdf?: PdfDocument;
  /** What the check found worth telling but not refusing (a certification already broken), each said of the input. */
  warnings?: string[];
}

/** What a check before approval builds the signature's update with (and then drops). */
export interface UpdateCheck {
  signingTime: Date;
  pdf?: PdfSignatureOptions;
  appearance?: AppearanceAssets;
}

export function changedWhileSigning(path: string): EsignError {
  return new EsignError('INPUT_UNREADABLE', `${path} changed while esign was signing it.`, {
    hint: 'Let whatever writes to it finish, then sign again.',
  });
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

/** Where a completed signature goes: a detached one written whole, an enveloping one streamed around its content. */
export interface CompletionOutputs {
  /** Where outputs that stream their input again are written (a batch shares temp directories). */
  files: DocumentFiles;
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
