import type { Command } from 'commander';
import { describeQualification, describeTimestampQualification } from '../../core/qualification/describe.js';
import type {
  VerificationReport,
  SignatureReport,
  ChainReport,
  PadesLevel,
  VerifyOptions,
  EvidenceRecordReport,
  RevocationMode,
} from '../../core/verify/types.js';
import type { VerifiedFile } from '../../core/forms/form.js';
import type { Context } from '../context.js';
import type { CommandModule } from '../command.js';
import { PdfPasswords, withPasswordOptions, type PdfPasswordOptions } from '../pdf-password.js';
import { usableTrustedLists } from '../trusted-lists.js';

export interface VerifyCommandOptions extends PdfPasswordOptions {
  trust: string[];
  signature?: string;
  level?: string;
  extract?: string;
  /** Fetch nothing: revocation status the file does not hold stays unknown. */
  offline?: boolean;
  /** `hard` (EN 319 102-1, default) or `soft-fail`. */
  revocation?: string;
  /** false under --no-revocation-cache: answers are neither read from nor kept in the cache. */
  revocationCache?: boolean;
}

const LEVELS: readonly PadesLevel[] = ['B-B', 'B-T', 'B-LT', 'B-LTA'];
const REVOCATION_MODES: readonly RevocationMode[] = ['hard', 'soft-fail'];

export const defineCommand: CommandModule['defineCommand'] = (program: Command, run) => {
  const command = program
    .command('verify')
    .summary('verify the signatures and timestamps in a PDF, a .p7s, a .p7m, an XML file (XAdES) or an ASiC container')
    .description(
      'Check every signature and document timestamp in FILE.pdf: signer, claimed time (/M), signature timestamp, ' +
        'integrity of the signed bytes, the signature value, what the signature covers and what was appended after it, ' +
        "the chain to the trust anchors (--trust, else the profile's trustAnchors), revocation status from the DSS and the CMS, " +
        'and the level reached (PAdES or CAdES: B-LT from the validation data in the DSS or the CMS, B-LTA from a document ' +
        'timestamp, an archive-time-stamp-v3 (ats-hash-index-v3 or the older ats-hash-index), an archive-time-stamp-v2 or an ASiC-E archive manifest). When verified EU trusted lists are cached (esign trust update), their qualified CAs ' +
        'and TSAs are trust anchors too, and each signature gets its qualification (ETSI TS 119 615: QESig, QESeal, ' +
        'AdESig-QC, AdESeal-QC, AdESig, AdESeal, their Indeterminate forms, Not AdES or N/A, with the reason) and each timestamp whether it is ' +
        'a qualified electronic time stamp. With --signature FILE.p7s, check a detached CAdES signature of FILE; ' +
        'with --signature SIG.xml, a detached XAdES signature of FILE. FILE.xml (or .xsig) is checked for XAdES: enveloped ' +
        'and enveloping signatures, each reference by its unique Id, c14n 1.0/1.1/exclusive, SigningCertificate(V2), the ' +
        'signature and archive timestamps, CertificateValues and RevocationValues (B-B to B-LTA); a DTD or entity, an ' +
        'external or outside reference, an Id given twice, a second SignedProperties, a wrapped or moved signature, XSLT ' +
        'or another XPath transform, or XML over 50 MB is refused (exit 7). ' +
        'FILE.p7m (enveloping CAdES, the content inside, DER or BER) is checked as it is; --extract OUT then writes its content. ' +
        'FILE.asics (ASiC-S) and FILE.asice (ASiC-E; .sce and .bdoc too), with CAdES, XAdES or both, are checked with their layout (safe and unique names, none "." or "..", ' +
        'no encryption, no ZIP bomb; a mimetype not first, compressed, with an extra field or trailing white space is read ' +
        'with a warning), each signature with the files it covers (an ASiC-E manifest entry changed: VERIFY_FAILED), ' +
        'and the files no signature covers or a manifest names but the container lacks (VERIFY_MODIFIED, whatever the trust), ' +
        'and its evidence records (RFC 4998 META-INF/evidencerecord*.ers: the hash tree and archive timestamp verified, ' +
        'or said to be unverified; a record does not change the verdict). ' +
        'Reads DER and BER (as NSS writes), RSA PKCS#1 v1.5, RSASSA-PSS and ECDSA over SHA-2 and SHA-3, Ed25519 and Ed448, signatures ' +
        'with or without signed attributes, and adbe.pkcs7.sha1; in CAdES, each SignerInfo as a signature; each CAdES and XAdES ' +
        'counter-signature verified under the signature it signs. Each verdict comes with its ETSI EN 319 102-1 ' +
        'indication (TOTAL-PASSED, TOTAL-FAILED or INDETERMINATE, and a sub-indication).\n\n' +
        'Exit 0 only when every signature is valid and trusted (and reaches --level). Exit 12 when every signature ' +
        'is intact and validly signed but one uses an algorithm no longer acceptable (SHA-1, MD5, RSA under 2048 bits, ' +
        'in the signature, a timestamp token or a certificate: VERIFY_WEAK_ALGORITHM). An algorithm esign does not ' +
        'implement is INDETERMINATE/CRYPTO_CONSTRAINTS_FAILURE, named, never TOTAL-FAILED. ' +
        'Revocation (EN 319 102-1): each certificate of a trusted chain but the anchor (and OCSP responders with ' +
        "id-pkix-ocsp-nocheck) needs its status; where the file holds none, esign asks the certificate's OCSP " +
        'responder, then its CRL distribution point (once per certificate per run, through the proxies and ESIGN_CA_FILE, ' +
        '10 s each; --offline: never), and keeps each answer in its cache dir until its nextUpdate (15 min without one), ' +
        'checked again when used. A status not established is INDETERMINATE: TRY_LATER (no answer) or ' +
        'REVOCATION_OUT_OF_BOUNDS_NO_POE (data issued after the certificate expired); --revocation soft-fail passes it with a warning. ' +
        'Revocation data signed with SHA-1 is weak (exit 12).\n\n' +
        'Otherwise exit 9; the JSON code says why: VERIFY_FAILED (invalid: changed bytes, bad ' +
        'signature, revoked or expired certificate, page content changed later), VERIFY_UNTRUSTED (valid, but no chain ' +
        'to a trust anchor), VERIFY_MODIFIED (valid, but an unsigned update was appended after it), ' +
        'VERIFY_REVOCATION_UNKNOWN (valid and trusted, but a revocation status not established), VERIFY_LEVEL ' +
        '(valid, below --level), VERIFY_NO_SIGNATURES.\n\n' +
        'Files are recognised by their content, not their name: a PDF, a CMS SignedData (enveloping when it holds its content, ' +
        'as a .p7m or a .p7s may; a detached one needs its content named, with --signature), a ZIP (ASiC-E or ASiC-S by its mimetype, ' +
        'else its layout: .asice, .sce, .bdoc, .asics, .scs or no extension alike), XML (XAdES: refused in one line for now).\n\n' +
        'Several files, directories (their files, not hidden, not recursive) or patterns: each file is verified and reported as it ' +
        'finishes (with --json one object per line, the same object as for one file; a file that cannot be read is a line ' +
        '{"file", "error"} and the others go on), a few at a time, with progress on a terminal; a detached NAME.p7s is ' +
        'verified with NAME beside it. The run ends with a summary (with --json a last line {"summary": {files, outcomes, failed, ' +
        'exitCode}}). Trust anchors, trusted lists and revocation answers are loaded once per run. The exit code is the worst ' +
        "outcome's, in this order, worst first: VERIFY_FAILED (9), VERIFY_MODIFIED (9), a file not read (its error's exit code, " +
        'e.g. 7), VERIFY_UNTRUSTED (9), VERIFY_REVOCATION_UNKNOWN (9), VERIFY_NO_SIGNATURES (9), VERIFY_LEVEL (9), VERIFY_WEAK_ALGORITHM (12), valid (0).',
    )
    .argument(
      '<files...>',
      'signed files (PDF, .p7m, .p7s, XML with XAdES, ASiC containers: .asice, .sce, .bdoc, .asics), directories or patterns; or, with --signature, the one content file it signs',
    )
    .option(
      '--trust <pem>',
      "a trusted root certificate (PEM or DER), instead of the profile's trustAnchors; repeatable",
      collect,
      [],
    )
    .option('--signature <sig>', 'a detached signature of FILE: CAdES (.p7s) or XAdES (XML) (with one FILE only)')
    .option(
      '--extract <path>',
      'with a .p7m: write the signed content to FILE; with an .asics/.asice: its documents into the directory FILE; with several inputs, one folder per input in the directory FILE. Only when every signature checks out (valid and trusted) and, in a container, covers every document',
    )
    .option(
      '--level <level>',
      'also require this level (PAdES, CAdES or XAdES) for every signature: B-B, B-T, B-LT or B-LTA',
    )
    .option(
      '--offline',
      'fetch nothing: a certificate whose revocation status neither the file nor the revocation cache (fresh answers of earlier runs) holds stays unknown (INDETERMINATE/TRY_LATER unless --revocation soft-fail)',
    )
    .option(
      '--no-revocation-cache',
      'ask the responders again and keep nothing: no answer is read from the revocation cache or written to it (with --offline, only the file answers)',
    )
    .option(
      '--revocation <mode>',
      'hard (default, EN 319 102-1): a signature whose revocation status is not established is INDETERMINATE (VERIFY_REVOCATION_UNKNOWN, exit 9); soft-fail (Acrobat, pyHanko): it passes, with a warning on each signature',
    );
  withPasswordOptions(command)
    .addHelpText(
      'after',
      '\nExamples:\n  esign verify contract-signed.pdf\n  esign verify --trust root.pem --json contract-signed.pdf\n  esign verify notes.txt --signature notes.txt.p7s\n  esign verify fattura.xml.p7m --extract fattura.xml\n  esign verify --level B-LT archived.pdf\n  esign verify factura-signed.xml\n  esign verify bundle.bdoc\n  esign verify received/ --trust root.pem\n  esign verify --json "invoices/*.p7m" > report.jsonl',
    )
    .action((files: string[], options: VerifyCommandOptions, command: Command) =>
      run(command, (ctx) => runVerify(files, options, ctx)),
    );
};

/**
 * `esign verify FILES...`: one file given as a file is verified as it always was (its report, its
 * exit code, errors thrown); several, a directory or a pattern make a run (`verifyMany`).
 */
export async function runVerify(
  args: string | readonly string[],
  options: VerifyCommandOptions,
  ctx: Context,
): Promise<void> {
  const { EsignError } = await import('../../core/errors.js');
  if (options.level !== undefined && !LEVELS.includes(options.level as PadesLevel)) {
    throw new EsignError('USAGE', `--level must be one of ${LEVELS.join(', ')}, not ${JSON.stringify(options.level)}.`);
  }
  if (options.revocation !== undefined && !REVOCATION_MODES.includes(options.revocation as RevocationMode)) {
    throw new EsignError(
      'USAGE',
      `--revocation must be one of ${REVOCATION_MODES.join(', ')}, not ${JSON.stringify(options.revocation)}.`,
    );
  }
  const files = typeof args === 'string' ? [args] : args;
  if (files.length === 1 && (await isOneFile(files[0]!))) {
    const run = await VerifyRunState.start(options, ctx);
    await verifyOne(files[0]!, options.signature, run, options, ctx);
    return;
  }
  if (options.signature !== undefined)
    throw new EsignError('USAGE', '--signature goes with one file, the content it signs.', {
      hint: 'Verify a detached signature with its content alone: esign verify FILE --signature FILE.p7s.',
    });
  await verifyMany(files, options, ctx);
}

/** A single argument that is a file (or names nothing, no pattern: its error is the one-file error). */
async function isOneFile(arg: string): Promise<boolean> {
  const { stat } = await import('node:fs/promises');
  const info = await stat(arg).catch(() => undefined);
  return info ? !info.isDirectory() : !/[*?[]/.test(arg);
}

/**
 * What a run loads once for all its files: the trust anchors, the trusted lists (fetched at most
 * once), the PDF passwords, and the revocation policy, whose cache of fetched OCSP responses and
 * CRLs is the run's (each certificate's status asked for once per run).
 */
export class VerifyRunState {
  private lists: Promise<{ anchored: boolean; options: VerifyOptions }> | undefined;
  private passwords: Promise<PdfPasswords> | undefined;

  private constructor(
    private readonly options: VerifyCommandOptions,
    private readonly ctx: Context,
    private readonly paths: readonly string[],
    private readonly trustAnchors: Uint8Array[],
  ) {}

  static async start(options: VerifyCommandOptions, ctx: Context): Promise<VerifyRunState> {
    const { loadTrustAnchors } = await import('../../io/tsa-client.js');
    const paths = options.trust.length > 0 ? options.trust : ((await ctx.profile()).settings.trustAnchors ?? []);
    return new VerifyRunState(options, ctx, paths, await loadTrustAnchors(paths));
  }

  /**
   * The options every file is verified with, made once: with lists, their CA/QC and TSA/QTST
   * services are anchors alongside the configured ones (the sandbox's TEST lists fetched on first
   * use, unless --trust names the anchors to use).
   */
  verifyOptions(): Promise<{ anchored: boolean; options: VerifyOptions }> {
    this.lists ??= (async () => {
      const trustedLists = await usableTrustedLists(this.ctx, {
        // --offline fetches nothing, the sandbox's TEST lists included.
        fetchSandboxLists: this.options.trust.length === 0 && this.options.offline !== true,
      });
      const { revocationPolicy } = await import('../../io/verify-revocation.js');
      const revocation = revocationPolicy(this.ctx, {
        mode: (this.options.revocation ?? 'hard') as RevocationMode,
        offline: this.options.offline === true,
        cache: this.options.revocationCache !== false,
      });
      return {
        anchored: this.paths.length > 0 || trustedLists !== undefined,
        options: {
          trustAnchors: this.trustAnchors,
          now: new Date(),
          revocation,
          ...(trustedLists ? { trustedLists } : {}),
        },
      };
    })();
    return this.lists;
  }

  pdfPasswords(): Promise<PdfPasswords> {
    this.passwords ??= PdfPasswords.from(this.options, this.ctx);
    return this.passwords;
  }
}

/** How a file of a run was verified: its code (null: it all checks out), or the error that kept it from being read. */
export type FileOutcome = { readonly code: string | null } | { readonly error: unknown };

/** In a run of many files: where --extract puts this file's output, and how its report is printed. */
export interface BatchFile {
  /** The --extract target of this input (a folder per input), or undefined. */
  readonly extractTo?: (declared: 'content' | 'documents') => Promise<string>;
  /** Prints the report (through the progress line), in place of `ctx.io.result`. */
  readonly print: (data: object, human: () => string) => void;
}

/**
 * Verifies one file (with `signaturePath`: a detached signature of it) and prints its report;
 * alone (`batch` undefined) exactly as `esign verify FILE` always has, errors thrown.
 */
async function verifyOne(
  file: string,
  signaturePath: string | undefined,
  run: VerifyRunState,
  options: VerifyCommandOptions,
  ctx: Context,
  batch?: BatchFile,
): Promise<string | null> {
  const { EsignError } = await import('../../core/errors.js');
  const { FileByteSource } = await import('../../io/file-source.js');
  // A missing input fails before any list is fetched.
  const source = await FileByteSource.open(file);
  let verified: VerifiedFile | undefined;
  try {
    const form = await (
      await import('../../io/forms/registry.js')
    ).formForVerifying({ file, source }, signaturePath !== undefined);
    if (options.extract !== undefined && !form.declares.extract && !batch)
      throw new EsignError(
        'USAGE',
        '--extract writes the content of a .p7m or an ASiC container; this file is neither.',
        {
          hint: 'Name the .p7m or container, or leave out --extract.',
        },
      );
    const { anchored, options: verifyOptions } = await run.verifyOptions();
    const passwords = form.declares.passwords ? await run.pdfPasswords() : undefined;
    const signature = signaturePath === undefined ? undefined : await readDetachedSignature(signaturePath);
    const input = { file, source, ...(signature ? { signature } : {}) };
    verified = passwords
      ? await passwords.open(file, (password) => form.verify(input, { ...verifyOptions, password }))
      : await form.verify(input, verifyOptions);
    const { report, extract } = verified;
    const declared = form.declares.extract;
    return await finishVerify(
      report,
      anchored,
      options,
      ctx,
      async (code) => {
        if (options.extract === undefined || !extract || !declared) return {};
        if (code !== null) {
          ctx.io.warn(extract.refused(file, options.extract));
          return {};
        }
        const target = batch?.extractTo ? await batch.extractTo(declared) : options.extract;
        await extract.write(target);
        return { extracted: target };
      },
      batch?.print,
    );
  } finally {
    verified?.close?.();
    await source.close();
  }
}

/** How many files a run reads at a time. */
const FILES_AT_A_TIME = 4;

/**
 * The outcomes of a run, worst first: the exit code is the worst outcome's (README "Verifying many
 * files"). A file that could not be read at all ranks below a proven change and above a signature
 * that is only untrusted.
 */
export const OUTCOME_ORDER = [
  'VERIFY_FAILED',
  'VERIFY_MODIFIED',
  'unreadable',
  'VERIFY_UNTRUSTED',
  'VERIFY_REVOCATION_UNKNOWN',
  'VERIFY_NO_SIGNATURES',
  'VERIFY_LEVEL',
  'VERIFY_WEAK_ALGORITHM',
  'valid',
] as const;

/**
 * `esign verify FILES|DIRS|GLOBS...`: every file verified and reported as it finishes (one JSON
 * object per file with --json), a few at a time, then one summary (counts by outcome, the files that
 * failed). Anchors, lists and revocation answers are loaded once for the run; only the names of the
 * files and the failed ones are kept, so memory stays flat in the number of files. A file that
 * cannot be read is reported as such and the others go on. A detached `NAME.p7s` is verified with
 * `NAME` beside it, and `NAME` then is not verified alone.
 */
async function verifyMany(args: readonly string[], options: VerifyCommandOptions, ctx: Context): Promise<void> {
  const [{ expandInputs }, { renderError }, { ExitCode }, { resolve, basename, join }] = await Promise.all([
    import('../inputs.js'),
    import('../render-error.js'),
    import('../../core/errors.js'),
    import('node:path'),
  ]);
  const inputs = await expandInputs(args, 'verify');
  const run = await VerifyRunState.start(options, ctx);
  const signatures = new Set<string>();
  for (const file of inputs) if (/\.p7s$/i.test(file)) signatures.add(resolve(file));
  const counts = new Map<string, number>();
  const failed: string[] = [];
  let worstRank: number = OUTCOME_ORDER.indexOf('valid');
  let worstExit: number = ExitCode.ok;
  const extractNames = new Set<string>();
  const progress = await ctx.io.spinner(`verifying ${inputs.length} files`);
  let done = 0;
  let next = 0;

  const record = (file: string, outcome: string, exit: number) => {
    counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
    if (outcome !== 'valid') failed.push(file);
    const rank = OUTCOME_ORDER.indexOf(outcome as (typeof OUTCOME_ORDER)[number]);
    if (rank < worstRank || (rank === worstRank && outcome === 'unreadable' && exit > worstExit)) {
      worstRank = rank;
      worstExit = exit;
    }
  };
  const print = (data: object, human: () => string) => progress.print(() => ctx.io.result(data, () => `${human()}\n`));

  const verifyFile = async (file: string) => {
    const content = /\.p7s$/i.test(file) ? file.slice(0, -4) : undefined;
    // The content of a detached signature in the run: verified through it.
    if (!content && signatures.has(`${resolve(file)}.p7s`)) return;
    const signed = content !== undefined && (await isDetached(file)) && (await exists(content)) ? content : undefined;
    const subject = signed ?? file;
    const batch: BatchFile = {
      print,
      extractTo: async (declared) => {
        // One folder per input, named after it (a second input of the same name gets a number).
        let folder = basename(subject);
        for (let n = 2; extractNames.has(folder); n++) folder = `${basename(subject)}-${n}`;
        extractNames.add(folder);
        const dir = join(options.extract!, folder);
        if (declared === 'documents') return dir;
        const { mkdir } = await import('node:fs/promises');
        await mkdir(dir, { recursive: true });
        return join(dir, basename(subject).replace(/\.p7m$/i, '') || 'content');
      },
    };
    try {
      const code = await verifyOne(subject, signed === undefined ? undefined : file, run, options, ctx, batch);
      record(
        subject,
        code ?? 'valid',
        code === 'VERIFY_WEAK_ALGORITHM' ? ExitCode.weakAlgorithm : code === null ? ExitCode.ok : ExitCode.verification,
      );
    } catch (error) {
      const rendered = renderError(error);
      print(
        { file: subject, error: rendered.json.error },
        () => `✗ ${subject}: unreadable: ${rendered.line.replace(/^esign: /, '')}`,
      );
      record(subject, 'unreadable', rendered.exitCode);
    }
  };

  const worker = async () => {
    while (next < inputs.length) {
      const file = inputs.at(next++);
      await verifyFile(file);
      progress.update(`verified ${++done} of ${inputs.length} files`);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(FILES_AT_A_TIME, inputs.length) }, worker));
  } finally {
    progress.stop();
  }
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  const byOutcome = Object.fromEntries(OUTCOME_ORDER.filter((o) => counts.has(o)).map((o) => [o, counts.get(o)!]));
  const line = `${total} file(s): ${Object.entries(byOutcome)
    .map(([outcome, count]) => `${count} ${outcome}`)
    .join(', ')}${failed.length > 0 ? `; not valid: ${failed.join(', ')}` : ''}`;
  ctx.io.result({ summary: { files: total, outcomes: byOutcome, failed, exitCode: worstExit } }, () => line);
  if (worstExit !== ExitCode.ok) {
    process.exitCode = worstExit;
    ctx.io.error(`esign: ${OUTCOME_ORDER[worstRank]}: ${failed.length} of ${total} file(s) not valid.`);
  }
}

async function exists(path: string): Promise<boolean> {
  const { stat } = await import('node:fs/promises');
  return (await stat(path).catch(() => undefined))?.isFile() ?? false;
}

/** Whether a `.p7s` is a detached CMS signature (its content not inside). */
async function isDetached(file: string): Promise<boolean> {
  const [{ open }, { recognize, RECOGNIZE_BYTES }] = await Promise.all([
    import('node:fs/promises'),
    import('../../core/forms/shared/recognize.js'),
  ]);
  const handle = await open(file, 'r').catch(() => undefined);
  if (!handle) return false;
  try {
    const head = new Uint8Array(RECOGNIZE_BYTES);
    const { bytesRead } = await handle.read(head, 0, RECOGNIZE_BYTES, 0);
    const found = recognize(head.subarray(0, bytesRead));
    return found.kind === 'cms' && !found.enveloping;
  } finally {
    await handle.close();
  }
}

/** Reports a verification (what --json prints, the exit code) and returns the code, null when it all checks out. */
export async function finishVerify(
  report: VerificationReport,
  anchored: boolean,
  options: VerifyCommandOptions,
  ctx: Context,
  /** What to do once the verdict is known, before it is printed (--extract); its fields join the report. */
  afterVerdict?: (code: string | null) => Promise<Record<string, unknown>>,
  /** In a run of many files: prints the report; the exit code and the error line are then the run's. */
  print?: (data: object, human: () => string) => void,
): Promise<string | null> {
  const { ExitCode } = await import('../../core/errors.js');
  if (!anchored)
    for (const signature of report.signatures)
      signature.warnings.push('no trust anchors: pass --trust ROOT.pem or set trustAnchors in the profile');

  let code: string | null = report.code;
  if (code === null && options.level !== undefined) {
    const wanted = LEVELS.indexOf(options.level as PadesLevel);
    const short = report.signatures.filter(
      (s) => s.kind !== 'docTimeStamp' && (s.level === undefined || LEVELS.indexOf(s.level) < wanted),
    );
    if (short.length > 0) code = 'VERIFY_LEVEL';
  }
  const extra = (await afterVerdict?.(code)) ?? {};
  (print ?? ctx.io.result.bind(ctx.io))({ ...report, ...extra, code, valid: code === null }, () => human(report, code));
  if (code !== null && !print) {
    process.exitCode = code === 'VERIFY_WEAK_ALGORITHM' ? ExitCode.weakAlgorithm : ExitCode.verification;
    ctx.io.error(`esign: ${code}: ${summary(report, code)}`);
  }
  return code;
}

/** The detached signature `--signature` names, read whole. */
async function readDetachedSignature(path: string): Promise<Uint8Array> {
  const [{ readFile }, { inputError }] = await Promise.all([
    import('node:fs/promises'),
    import('../../io/file-source.js'),
  ]);
  try {
    return new Uint8Array(await readFile(path));
  } catch (error) {
    throw inputError(path, error);
  }
}

function summary(report: VerificationReport, code: string): string {
  if (code === 'VERIFY_NO_SIGNATURES') return `${report.file} has no signatures.`;
  if (code === 'VERIFY_LEVEL') return 'a signature does not reach the required level.';
  const bad = report.signatures.filter((s) => s.status !== 'valid').map((s) => `#${s.index} ${s.status}`);
  // A status not established: why, naming the responders and distribution points tried (one line).
  const why =
    code === 'VERIFY_REVOCATION_UNKNOWN'
      ? report.signatures
          .find((s) => s.status === 'revocation-unknown')
          ?.problems.find((p) => p.includes('is not established'))
      : undefined;
  const line = `${bad.join(', ')} (of ${report.signatures.length})${why ? `: ${why.replace(/\.$/, '')}` : ''}.`;
  if (code !== 'VERIFY_REVOCATION_UNKNOWN') return line;
  // What to do: a sandbox's responder answers only while it runs; elsewhere, later, or soft-fail.
  const sandbox = why !== undefined && /https?:\/\/(127\.0\.0\.1|localhost|\[::1\])[:/]/.test(why);
  const offline = why?.includes('--offline') === true;
  const first = offline
    ? 'Leave out --offline to ask the responders'
    : sandbox
      ? 'Keep `esign sandbox start` running while you verify what it signed'
      : 'Try again when the responder answers';
  return `${line} ${first}, or pass --revocation soft-fail to accept an unknown status (not EN 319 102-1).`;
}

function human(report: VerificationReport, code: string | null): string {
  if (report.signatures.length === 0) {
    // A container of evidence records only (DSS writes them) says what it holds and how it was read.
    const lines = [`✗ ${report.file}: no signatures`, ...(report.warnings ?? []).map((warning) => `! ${warning}`)];
    for (const record of report.evidenceRecords ?? []) lines.push('', ...describeEvidenceRecord(record));
    return lines.join('\n');
  }
  const lines: string[] = [
    `${report.file}: ${report.signatures.length} signature(s)${report.dss ? `; DSS in revision ${report.dss.revision} (${report.dss.certs} certs, ${report.dss.ocsps} OCSP, ${report.dss.crls} CRL)` : ''}`,
  ];
  for (const warning of report.warnings ?? []) lines.push(`! ${warning}`);
  for (const s of report.signatures) lines.push('', ...describe(s));
  for (const record of report.evidenceRecords ?? []) lines.push('', ...describeEvidenceRecord(record));
  lines.push('', code === null ? '✓ all signatures valid and trusted' : `✗ ${code}`);
  return lines.join('\n');
}

const MARK: Record<SignatureReport['status'], string> = {
  valid: '✓ valid',
  invalid: '✗ INVALID',
  untrusted: '? valid but UNTRUSTED',
  modified: '! valid, but the file was CHANGED after it',
  'revocation-unknown': '? valid and trusted, but the REVOCATION STATUS is NOT ESTABLISHED',
  weak: '~ intact, but the algorithm is NOT ACCEPTABLE',
};

function describe(s: SignatureReport, counter = false): string[] {
  const what = counter
    ? 'Counter-signature'
    : s.kind === 'docTimeStamp'
      ? 'Document timestamp'
      : s.kind === 'cades'
        ? 'CAdES signature'
        : 'Signature';
  const etsi = s.subIndication ? `${s.indication}/${s.subIndication}` : s.indication;
  // Invalid only in that it cannot be checked: an algorithm esign does not implement.
  const mark =
    s.status === 'invalid' && s.indication === 'INDETERMINATE' && s.subIndication === 'CRYPTO_CONSTRAINTS_FAILURE'
      ? '? NOT CHECKED (an algorithm esign does not implement)'
      : MARK[s.status];
  const out = [`#${s.index} ${what}${s.field ? ` (field ${s.field})` : ''}: ${mark} [ETSI ${etsi}]`];
  if (s.signer)
    out.push(
      `  signer      ${s.signer.subject}`,
      `  issuer      ${s.signer.issuer}`,
      `  serial      ${s.signer.serialNumber}`,
    );
  if (s.claimedTime) out.push(`  claimed     ${s.claimedTime} (not proven)`);
  if (s.timestamp)
    out.push(`  timestamp   ${s.timestamp.time || '?'} by ${s.timestamp.tsa}${s.timestamp.valid ? '' : ' — INVALID'}`);
  if (s.timestamp?.qualified) out.push(`              ${describeTimestampQualification(s.timestamp.qualified)}`);
  out.push(
    `  integrity   ${s.integrity.valid ? `ok (${s.integrity.digestAlgorithm} over the signed bytes)` : `FAILED: ${s.integrity.reason ?? ''}`}`,
  );
  const algorithm = s.signatureValue.key
    ? `${s.signatureValue.algorithm}, ${s.signatureValue.key}`
    : s.signatureValue.algorithm;
  out.push(
    `  signature   ${s.signatureValue.valid ? `ok (${algorithm})` : `FAILED: ${s.signatureValue.reason ?? ''} (${algorithm})`}`,
  );
  if (s.coverage) {
    const c = s.coverage;
    out.push(
      `  coverage    ${c.wholeFile ? 'the whole file' : `revision ${c.revision} of ${c.revisions} (${c.signedBytes} bytes)`}`,
    );
    for (const u of c.appended)
      out.push(
        `              + revision ${u.revision}: ${u.kind === 'unsigned' ? 'UNSIGNED update' : u.kind}${u.pageContentChanged ? ' — CHANGES PAGE CONTENT' : ''}`,
      );
  }
  if (s.chain) out.push(...chainLines(s.chain, 'chain'));
  if (s.timestamp?.chain) out.push(...chainLines(s.timestamp.chain, 'TSA chain'));
  if (s.level) out.push(`  level       ${s.level}`);
  if (s.qualification) out.push(`  qualified   ${describeQualification(s.qualification)}`);
  if (s.certification)
    out.push(`  certifies   ${s.certification.permits.replace('-', ' ')} after it (DocMDP P=${s.certification.level})`);
  for (const p of s.problems) out.push(`  ✗ ${p}`);
  for (const w of s.warnings) out.push(`  ! ${w}`);
  for (const c of s.counterSignatures ?? []) out.push(...describe(c, true).map((line) => `    ${line}`));
  return out;
}

function describeEvidenceRecord(record: EvidenceRecordReport): string[] {
  const mark = record.status === 'valid' ? '✓ verified' : record.status === 'invalid' ? '✗ INVALID' : '? NOT VERIFIED';
  const out = [`Evidence record ${record.name}: ${mark}${record.reason ? ` (${record.reason})` : ''}`];
  if (record.covers.length > 0) out.push(`  covers      ${record.covers.join(', ')}`);
  if (record.timestamp)
    out.push(
      `  timestamp   ${record.timestamp.time || '?'} by ${record.timestamp.tsa}${record.timestamp.valid ? '' : ' — INVALID'}`,
    );
  out.push(`  checked     ${record.checked} of ${record.archiveTimestamps} archive timestamp(s)`);
  for (const p of record.problems) out.push(`  ✗ ${p}`);
  return out;
}

function chainLines(chain: ChainReport, label: string): string[] {
  const out = [`  ${label.padEnd(11)} ${chain.trusted ? 'trusted' : 'NOT trusted'} (checked at ${chain.checkedAt})`];
  chain.certificates.forEach((cert, i) => {
    const rev = chain.revocation[i];
    const status = !rev
      ? ''
      : rev.source === 'trust-anchor'
        ? 'trust anchor'
        : rev.source === 'none'
          ? `revocation unknown${rev.unestablished ? ` (${rev.unestablished.subIndication})` : ''}`
          : `${rev.status} (${rev.source}${rev.url ? ` ${rev.url}` : ''}${rev.cached ? `, cached: fetched ${rev.cached}` : ''})${rev.unestablished ? ` — not established (${rev.unestablished.subIndication})` : ''}`;
    out.push(`              ${i === 0 ? '' : '← '}${cert.subject} — ${status}`);
  });
  return out;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
