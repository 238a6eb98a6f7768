/**
 * A signature form: PAdES, detached CAdES (`.p7s`), enveloping CAdES (`.p7m`), ASiC-S, ASiC-E, and
 * XAdES next. The shared pipelines — the batch of `esign sign` (windows, approvals, timestamps,
 * validation data once per window, outputs, progress, `--continue-on-error`), the split flow,
 * `--skip-existing`, `esign verify` and `esign extend` — reach a form only through this interface,
 * and choose it in one place (`src/io/forms/registry.ts`), from `--format`, the file's extension
 * and its content.
 *
 * Where a form lives: its pure part (layout, what is hashed, how the signature is put in, how it is
 * read back) in `src/core/forms/<form>/`, its file work and the object implementing this interface
 * in `src/io/forms/<form>/`. What several forms share is in `src/core/forms/shared/` and
 * `src/io/forms/shared/`. A form never imports another form's folder, and the pipelines never
 * import a form's folder: only this file and the registry.
 *
 * The interface is general over what is signed. A CMS form (PAdES, CAdES, ASiC) signs the hash of
 * its signed attributes (DER, as a SET); an XML form signs the hash of its canonicalized SignedInfo.
 * Either way the form hands the pipeline `ToBeSigned` (in `PreparedDocument.toBeSigned`) and gets back the signature value (with its
 * signature timestamp at B-T and above) to complete its output with.
 */
import type { Hash } from 'node:crypto';
import type { DigestName } from '../cms/algorithms.js';
import type { CmsValidationData } from '../cms/long-term.js';
import type {
  CompletionOutputs,
  DocumentFiles,
  DocumentKind,
  DocumentSource,
  ExtendSigned,
  OpenedDocument,
  OutputContents,
  PreparedDocument,
  SignedValue,
  SignJob,
  SignOptions,
  ToBeSigned,
  UpdateCheck,
} from '../documents.js';
import type { ExtendDependencies, ExtensionResult, LongTermLevel } from '../ltv/extend.js';
import type { SigningCredential, TimestampResult } from '../ports.js';
import type { VerificationReport, VerifyOptions } from '../verify/types.js';
import type { ExistingSignature } from './shared/signed-already.js';

export type { ToBeSigned };

/** The forms esign writes, by the name `--format` gives them (XAdES adds `xades`). */
export type FormName = 'pades' | 'cades' | 'p7m' | 'asics' | 'asice' | 'xades';

/** What a form tells the pipelines about itself, so that they need not know it by name. */
export interface FormDeclarations {
  /**
   * `one-per-input`: each input gets its own output (a batch of N files is N jobs: PAdES, `.p7s`,
   * `.p7m`, ASiC-S). `one-for-many`: every input goes into one output, under one signature (ASiC-E:
   * one job whose inputs are all the files, one approval of one hash).
   */
  readonly outputs: 'one-per-input' | 'one-for-many';
  /**
   * Whether an output of this form, given as the input, gets a parallel signature added (a `.p7m`
   * another SignerInfo, an ASiC-E another manifest and signature): its output may then be the input
   * itself, replaced atomically.
   */
  readonly parallel: boolean;
  /**
   * Where B-LT and B-LTA put their validation data: `document` — after the signature, in the
   * document (PAdES: a DSS update and a document timestamp, which `esign extend` appends later);
   * `signature` — inside the signature itself (CAdES: SignedData certificates and crls, an
   * archive-time-stamp-v3; XAdES: its unsigned properties, which `esign extend` grows later).
   */
  readonly longTerm: 'document' | 'signature';
  /** Whether verifying or signing it may need a password (an encrypted PDF). */
  readonly passwords: boolean;
  /** What `esign verify --extract` writes: the signed content (`.p7m`), the container's documents (ASiC), or nothing. */
  readonly extract?: 'content' | 'documents';
}

/** How `--json` and the human line name what was made: `format` (PAdES, CAdES, XAdES) and `packaging`. */
export interface FormReport {
  readonly format: 'PAdES' | 'CAdES' | 'XAdES';
  readonly packaging?: 'enveloping' | 'enveloped' | 'asic-s' | 'asic-e';
  /** The key of the long-term counts in a sign report: `dss` (in the document) or `validationData` (in the signature). */
  readonly validationDataKey: 'dss' | 'validationData';
}

/**
 * The window's long-term stage at B-LT and B-LTA, as a form's completion uses it: fetched once per
 * window (the revocation data of the signer's chain and of the window's TSA chains, issued after the
 * window's signatures), handed to each document of the window.
 */
export interface LongTermWindow {
  readonly level: 'B-LT' | 'B-LTA';
  /**
   * The validation data (certificates, OCSP responses, CRLs) of the signer's chain and of the TSA's
   * chain of `value`'s timestamp, from the window's cache; its counts and warnings are recorded for
   * `input`'s report. With `chains: 'timestamp'`, of the TSA's chain only (an earlier archive
   * timestamp, renewed: `value` holds just its token), recorded for `input` as well.
   */
  validationData(input: string, value: SignedValue, chains?: 'timestamp'): Promise<CmsValidationData>;
  /** A timestamp over `imprint` (an archive timestamp at B-LTA), its time recorded for `input`'s report. */
  archiveTimestamp(input: string, imprint: Uint8Array, digest: DigestName): Promise<TimestampResult>;
  /** For forms whose long-term data goes into the document (`longTerm: 'document'`): the bytes to append to a signed document. */
  extendDocument: ExtendSigned;
}

/** What the check before approval is given: a PDF's password, the update to try, the time (for warnings about what the input already holds). */
export interface CheckOptions {
  password?: string;
  update?: UpdateCheck;
  now?: Date;
}

/** A file `esign verify` was given, opened once. */
export interface VerifyInput {
  readonly file: string;
  readonly source: DocumentSource & { chunks(start: number, end: number): AsyncIterable<Uint8Array> };
  /** With `--signature FILE.p7s`: the detached signature, read whole. */
  readonly signature?: Uint8Array;
}

/** A verified file: its report, and how to write out what `--extract` asks for once the verdict is known. */
export interface VerifiedFile {
  readonly report: VerificationReport;
  readonly extract?: {
    /** The warning when the verdict keeps anything from being written (`${file}: …`). */
    readonly refused: (file: string, target: string) => string;
    write(target: string): Promise<void>;
  };
  /** Releases what verification kept open for `--extract` (a ZIP reader). */
  close?(): void;
}

/**
 * `esign extend` of one file: what raises its signatures to B-LT or B-LTA, and what was added. A
 * form that appends (PAdES: a DSS update, a document timestamp) returns the tail to append to a copy
 * of the input; a form that cannot append (XAdES in an XML document or a container) returns
 * `rewrite`, which writes the whole output. Either way the caller owns the temp output and its
 * commit (a rename: also with --in-place), and never names the form.
 */
export interface FormExtension {
  /**
   * Reads `source` (its signatures, what validation data it lacks) and returns the tail to append
   * or the output to write; `copy` copies the original into the output once it is known to be
   * extendable, and gives the SHA-256 state over it (a form that rewrites does not call it).
   */
  extend(
    source: DocumentSource,
    copy: () => Promise<Hash>,
    level: LongTermLevel,
    dependencies: ExtendDependencies,
  ): Promise<ExtensionResult>;
}

/**
 * One signature form. The pipelines call, for each job of a batch (or the one job of a
 * `one-for-many` form, made by `jobFor`, whose `SignJob.inputs` are every input named and whose
 * output's files are counted as the batch counts files): `check` before any approval; `prepare` in its window (reading the input
 * once, hashing it, holding a temp output at most); then the service signs `toBeSigned`, the TSA
 * stamps the signature value, `writeAhead` may write it into the temp output at once, and `complete`
 * writes the output (with `longTerm` at B-LT and B-LTA). `--skip-existing` asks `alreadySigned`;
 * `esign verify` asks `verify`; `esign extend` asks `extension`.
 */
export interface SignatureForm {
  readonly name: FormName;
  /** The kind of job it signs, as the split flow's state file records it. */
  readonly kind: DocumentKind;
  readonly declares: FormDeclarations;
  readonly report: FormReport;

  /** Where an input signed alone goes: `contract-signed.pdf`, `notes.txt.p7s`, `a.xml.p7m`, `a.xml.asics` (in `outputDir` when given). */
  outputFor(input: string, outputDir?: string): string;
  /**
   * A `one-for-many` form: its one job of every input named, in `SignJob.inputs` (files,
   * directories, or an output of this form to add a signature to), and where its output goes (`-o`,
   * `--output-dir`). Refuses a run that names no input, or several without an output name. Its
   * `check` then walks and checks the inputs (`OpenedDocument.files`: how many files it signs),
   * `prepare` leaves out an input it cannot read through `SignOptions.leaveOut`, and `complete`
   * returns what the output holds (`contents`) for the report.
   */
  jobFor?(inputs: string[], options: { output?: string; outputDir?: string }): Promise<SignJob>;
  /** Whether signing `input` in this form adds a parallel signature to it (`declares.parallel`, and `input` is of this form). */
  addsTo(input: string): boolean;

  /**
   * Before any approval: opens the input and checks everything that can refuse it (a PDF's
   * structure, encryption, the field, the visible box, a certification that forbids signing). What
   * it returns is handed to `prepare` for the first window, or closed.
   */
  check(job: SignJob, files: DocumentFiles, options: CheckOptions): Promise<OpenedDocument>;

  /**
   * Prepares the digest or digests to sign: reads the input once (hashing it, and copying it into
   * the temp output where the output begins with it), and builds what is signed. `opened` (from
   * `check`) is taken over and closed.
   */
  prepare(
    job: SignJob,
    credential: SigningCredential,
    files: DocumentFiles,
    options: SignOptions,
    opened?: OpenedDocument,
  ): Promise<PreparedDocument>;

  /**
   * Optional: writes the signature into the temp output as soon as its timestamp is in, before the
   * window's validation data (PAdES at B-LT/B-LTA); returns what `complete` still needs of `value`.
   */
  writeAhead?(prepared: PreparedDocument, credential: SigningCredential, value: SignedValue): Promise<SignedValue>;

  /**
   * Completes the output from the signature value and its timestamp: puts the signature in, and at
   * B-LT/B-LTA (`longTerm` given) its validation data and archive timestamp, in the signature or in
   * the document as the form declares; commits the temp output. Returns its size and SHA-256.
   */
  complete(
    prepared: PreparedDocument,
    credential: SigningCredential,
    value: SignedValue,
    options: SignOptions,
    outputs: CompletionOutputs,
    longTerm?: LongTermWindow,
  ): Promise<{ bytes: number; sha256: string; contents?: OutputContents; format?: 'CAdES' | 'XAdES' }>;

  /**
   * `--skip-existing`: whether the output already there is what signing the input would make — a
   * valid signature over the input as it is now, by `signerCertificate` (whose credential hashes
   * with `digest`, for a form that compares the input's digests).
   */
  alreadySigned(
    job: SignJob,
    signerCertificate: Uint8Array,
    files: DocumentFiles,
    password?: string,
    digest?: DigestName,
  ): Promise<ExistingSignature>;

  /**
   * `esign verify`: every signature (and timestamp) of the file, what each covers, the level
   * reached; with `declares.extract`, how to write out the content once the verdict is known.
   */
  verify(input: VerifyInput, options: VerifyOptions): Promise<VerifiedFile>;

  /** `esign extend`: raising the signatures of an existing file of this form to B-LT or B-LTA (PAdES, XAdES and XAdES containers). */
  readonly extension?: FormExtension;

  /**
   * The split flow (`--prepare`/`--complete`): what the state file keeps of a prepared document
   * beyond its job and the hash approved (JSON, never a secret; a `one-for-many` job's inputs are
   * kept beside it). `--complete` prepares the document again at the same signing time and refuses
   * it when it no longer gives the hash approved: with `splitCheck`, as the form words it, from
   * what `splitState` kept (a manifest names the files that changed).
   */
  splitState?(prepared: PreparedDocument): Record<string, unknown>;
  /** Throws (`STATE_FILE_INVALID`) when `prepared`, made again at `--complete`, is not the one `saved` and `approvedHash` (base64) describe. */
  splitCheck?(saved: Record<string, unknown>, prepared: PreparedDocument, approvedHash: string): void;
}
