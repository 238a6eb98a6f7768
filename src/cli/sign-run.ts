/**
 * `esign sign`, the batch: expand inputs → check every input → choose the credential → a pipeline
 * of windows (one approval each: prepare, authorize and sign, timestamps, write), the next window
 * prepared while the current one is signed. Loaded only when signing, so the heavy modules (pkijs,
 * the PDF core) never slow down other commands.
 */
import { X509Certificate } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseSignaturePolicy } from '../core/forms/shared/xades/policy.js';
import { EsignError, isEsignError } from '../core/errors.js';
import type { SignatureLevel } from '../core/profile.js';
import type { CredentialInfo } from '../core/csc/shapes.js';
import {
  completeDocument,
  MAX_HASHES_PER_AUTHORIZATION,
  mapConcurrently,
  signBatch,
  type BatchResult,
  type OpenedDocument,
  type PreparedDocument,
  type SignJob,
  type SignOptions,
  type UpdateCheck,
} from '../core/sign-workflow.js';
import { assertAbsent, outputExists } from '../io/atomic-write.js';
import { batchDocuments, createOutputDir, fileSystemDocuments } from '../io/document-files.js';
import { formOfKind, oneForManyForm } from '../io/forms/registry.js';
import type { Context, ResolvedProfile } from './context.js';
import { expandInputs, jobsOf, planJobs, type JobList } from './inputs.js';
import { BatchTally } from './batch-tally.js';
import { outputUploader } from './output-uploader.js';
import type { SignCommandOptions } from './sign-options.js';
import { appearanceLines, assertAppearanceDrawable, loadAppearanceAssets } from './appearance-assets.js';
import { PdfPasswords } from './pdf-password.js';
import { authorizationFactors } from './credential-factors.js';
import { assertRequirement, credentialQualifier, type CredentialQualifier, type Requirement } from './trusted-lists.js';
import { createCscClient, withCompleteChain } from './service-clients.js';

import { chooseCredential, chooseLevel, readyToAuthorize, report, requirementFrom } from './sign-common.js';
import { longTermExtender } from './sign-long-term.js';

/** Documents prepared at once within a window, so that one file's open, copy and fsync overlap another's. */
const PREPARE_CONCURRENCY = 4;
/** Inputs checked per slice of the check before the sign-in. */
const CHECK_SLICE = 64;
/** Outputs completed (tail written, fsynced, renamed) at once: the file system joins their flushes. */
const COMPLETE_CONCURRENCY = 8;

export async function runSign(files: string[], options: SignCommandOptions, ctx: Context): Promise<void> {
  if (options.prepare && options.complete)
    throw new EsignError('USAGE', '--prepare and --complete are two separate runs.', {
      hint: 'Run --prepare first, then --complete with the same --state.',
    });
  if ((options.prepare || options.complete) && !options.state)
    throw new EsignError('USAGE', 'The split flow needs --state FILE.', { hint: 'Add --state sign-state.json.' });
  if (options.prepare && options.upload)
    throw new EsignError('USAGE', '--upload goes with --complete, where the outputs are written, not with --prepare.', {
      hint: 'Run --prepare without it, then esign sign --complete --upload …',
    });
  if (options.overwrite && !options.upload)
    throw new EsignError('USAGE', '--overwrite replaces objects in your bucket, so it goes with --upload.', {
      hint: 'Add --upload, or use --force to replace local outputs.',
    });
  refuseMisplacedXmlOptions(options);
  if (options.skipExisting && (options.prepare || options.complete))
    throw new EsignError('USAGE', '--skip-existing resumes a batch signed in one run, not the split flow.', {
      hint: 'Run the batch without --prepare/--complete, or leave out --skip-existing.',
    });
  const requirement = await requirementFrom(options, ctx);
  if (options.complete) return (await import('./sign-split.js')).runSplitComplete(options, ctx);
  // A form of one output for many inputs (an ASiC-E) signs them all as one job: named, or the output given to add a signature to.
  const oneForMany = oneForManyForm(files, options.format);
  if (oneForMany && options.prepare && (options.level === 'B-LT' || options.level === 'B-LTA'))
    throw new EsignError('USAGE', `The split flow signs at B-B or B-T, not ${options.level}.`, {
      hint: 'Sign with --prepare/--complete at B-T, or sign the container in one run.',
    });
  const oneJob = oneForMany ? await oneForMany.jobFor!(files, options) : undefined;
  if (files.length === 0)
    throw new EsignError('USAGE', 'Name at least one file to sign.', { hint: 'esign sign contract.pdf' });
  const qualifier = await credentialQualifier(ctx);
  // Without lists nobody can tell: refused before anything else happens.
  if (requirement && !qualifier)
    await assertRequirement(requirement, options.credential ?? 'the credential', undefined);
  // Every signing run outside the split flow has an approval step: no work before it is known to be possible.
  if (!options.prepare) await ctx.assertBrowserStepPossible('approval of the signatures');

  // The profile is resolved (on the sandbox: its health asked over HTTP) while the inputs are
  // listed and checked; its errors still come first, and its line is printed before any of theirs.
  const profiling = ctx.profile({ storage: options.upload });
  profiling.catch(() => undefined);
  // At a terminal, where an encrypted input may ask for its password, it comes first: the two do not interleave.
  if (ctx.io.canPrompt) await profiling;
  const refused = new Map<number, unknown>();
  /** The first window's documents, by input: opened and parsed once. */
  const held = new Map<string, OpenedDocument>();
  try {
    let planned: JobList;
    let passwords: PdfPasswords;
    try {
      passwords = await PdfPasswords.from(options, ctx);
      // Before the inputs are listed: a directory of 100,000 names is the first garbage of a batch.
      if (files.length > 1 || !(await isRegularFile(files[0]!))) await keepHeapSmall();
      planned = oneJob ? jobsOf([oneJob]) : planJobs(await expandInputs(files), options);
      await checkInputs(planned, passwords, held, refused, options, ctx);
    } catch (error) {
      await profiling;
      throw error;
    }
    const profile = await profiling;
    // A job of several inputs counts its files, as a batch of them would.
    const tally = new BatchTally(oneJob ? (held.get(oneJob.input)?.files ?? 1) : planned.length, ctx);
    for (const [index, reason] of refused) tally.failed(planned.at(index).input, reason);
    await signChecked(planned.without(new Set(refused.keys())), held, tally, profile, options, passwords, ctx, {
      qualifier,
      requirement,
    });
  } finally {
    await Promise.all([...held.values()].map((opened) => opened.source.close()));
  }
}

/**
 * Everything that can refuse an input is checked before any browser step (the sign-in included),
 * file by file, without holding them: only the first window's documents stay open and parsed for
 * prepare (in `held`); the rest are opened again in their window (a batch of thousands would hold
 * as many handles). With --continue-on-error the refused are noted in `refused`, by index.
 */
async function checkInputs(
  planned: JobList,
  passwords: PdfPasswords,
  held: Map<string, OpenedDocument>,
  refused: Map<number, unknown>,
  options: SignCommandOptions,
  ctx: Context,
): Promise<void> {
  // The level does not change the update; the signer's name is not known yet (the appearance's size does not depend on it).
  const { pdf } = signOptionsFrom(options, 'B-B', ctx.clock.now());
  const appearance = await loadAppearanceAssets(pdf?.visible);
  assertAppearanceDrawable(pdf?.visible, appearance);
  // The check builds the update for what can refuse a document (the field, the box on its page, the
  // certification, PDF/A); the text is checked above and drawn, subset and all, before any approval.
  const boxOnly = pdf?.visible ? { ...pdf, visible: { ...pdf.visible, lines: [] } } : pdf;
  const check: UpdateCheck = { signingTime: ctx.clock.now(), pdf: boxOnly, appearance };
  const checkOne = async (job: SignJob, index: number): Promise<void> => {
    if (!options.force && !options.skipExisting && resolve(job.output) !== resolve(job.input))
      await assertAbsent(job.output);
    const form = formOfKind(job.kind);
    const opened = await passwords.open(job.input, (password) =>
      form.check(job, fileSystemDocuments, { password, update: check, now: ctx.clock.now() }),
    );
    for (const warning of opened.warnings ?? []) ctx.io.warn(`${job.input}: ${warning}`);
    if (index < MAX_HASHES_PER_AUTHORIZATION) held.set(job.input, opened);
    else await opened.source.close();
  };
  // A few files at a time, so one file's reads overlap another's; the outcomes are taken in order,
  // so the first bad input named is the first in the list.
  for (let start = 0; start < planned.length; start += CHECK_SLICE) {
    const slice = planned.slice(start, start + CHECK_SLICE);
    const outcomes = await mapConcurrently(slice, PREPARE_CONCURRENCY, (job, index) =>
      settle(checkOne(job, start + index)),
    );
    for (const [index, outcome] of outcomes.entries()) {
      if (outcome.status === 'fulfilled') continue;
      if (!options.continueOnError) throw outcome.reason;
      refused.set(start + index, outcome.reason);
    }
  }
}

/** A document of a window: prepared for signing, or already signed by an earlier run (--skip-existing). */
type WindowEntry = { prepared: PreparedDocument } | { skipped: SignJob };

async function signChecked(
  jobs: JobList,
  held: Map<string, OpenedDocument>,
  tally: BatchTally,
  profile: ResolvedProfile,
  options: SignCommandOptions,
  passwords: PdfPasswords,
  ctx: Context,
  qualification: { qualifier: CredentialQualifier | undefined; requirement: Requirement | undefined },
): Promise<void> {
  if (options.outputDir && !options.prepare && jobs.length > 0) await createOutputDir(options.outputDir);
  const level = chooseLevel(options.level, profile);
  const longTerm = level === 'B-LT' || level === 'B-LTA';
  if (longTerm) refuseLongTermFor(level, options);
  prepareAppearanceAhead(options, ctx);
  const signing = await createCscClient(ctx, profile, await authorizationFactors(options, ctx));
  // The split flow and the TSA client load only when used: a plain B-B run is the one to keep quick.
  const split = options.prepare ? await import('./sign-split.js') : undefined;
  if (split && (await split.splitServiceSignIn(signing, options, ctx))) return;
  const credential = await withCompleteChain(
    await chooseCredential(options.credential ?? profile.settings.credential, signing, ctx, options.digest),
    profile,
    ctx,
  );
  const { qualifier, requirement } = qualification;
  // Before the approval and before any hash goes to the service.
  if (requirement)
    await assertRequirement(
      requirement,
      credential.credentialID,
      qualifier?.(credential.certificates, ctx.clock.now()),
    );
  if (!split) await readyToAuthorize(credential, signing, ctx);
  const signOptions: SignOptions = {
    ...signOptionsFrom(options, level, ctx.clock.now(), signerName(credential), credential.credentialID),
    pdfPassword: (input) => passwords.for(input),
    // --continue-on-error: a file of a job of several inputs that cannot be read is named and left out, as a batch leaves it out.
    leaveOut: (input, error) => {
      if (!options.continueOnError || (isEsignError(error) && /^(USAGE|INTERRUPTED)$/.test(error.code))) throw error;
      tally.failed(input, error);
    },
  };
  signOptions.appearance = await loadAppearanceAssets(signOptions.pdf?.visible);
  // The signer's name comes from the certificate: a character the font lacks is refused before any approval.
  assertAppearanceDrawable(signOptions.pdf?.visible, signOptions.appearance);
  if (split) return split.runSplitPrepare([...jobs], credential, signOptions, signing, options, ctx);
  const tsa = level === 'B-B' ? undefined : (await import('./service-clients.js')).createTsaClient(ctx, profile);
  const extender = longTerm ? await longTermExtender(ctx, level, tsa, passwords) : undefined;
  // Storage is opened before anyone approves anything, so a missing login shows at once.
  const upload = options.upload ? await outputUploader(ctx, jobs, options.overwrite) : undefined;
  const progress = await tally.showProgress();
  const signer = credential.certificates[0];
  const documents = batchDocuments();

  /** Outputs prepared and not yet committed or failed: what a stop must remove. */
  const pending = new Set<PreparedDocument>();
  /**
   * A document that did not make it: its temp output goes; the run stops unless --continue-on-error,
   * and even then when the failure would only repeat for every later step (the person refused or
   * did not answer, the profile is wrong, the disk is full, Ctrl-C).
   */
  const fail = async (job: SignJob, error: unknown, document?: PreparedDocument): Promise<void> => {
    if (document) {
      pending.delete(document);
      await document.output?.abort();
    }
    if (
      !options.continueOnError ||
      (isEsignError(error) && (/^(AUTH_|CONFIG_|USAGE$|INTERRUPTED$)/.test(error.code) || error.details?.['diskFull']))
    )
      throw error;
    tally.failed(job.input, error);
  };
  const prepareOne = async (job: SignJob): Promise<WindowEntry> => {
    const opened = held.get(job.input);
    held.delete(job.input);
    const form = formOfKind(job.kind);
    if (options.skipExisting && signer && (await outputExists(job.output))) {
      const existing = await form
        .alreadySigned(job, signer, fileSystemDocuments, passwords.for(job.input), credential.scheme.digest)
        .catch((error: unknown) => ({ signed: false as const, reason: errorText(error) }));
      if (existing.signed) {
        await opened?.source.close();
        return { skipped: job };
      }
      // A job of several inputs that adds a signature to its output goes on: the output is its input.
      const addsInPlace = job.inputs?.length === 1 && resolve(job.inputs[0]!) === resolve(job.output);
      if (!options.force && !addsInPlace) {
        await opened?.source.close();
        throw new EsignError(
          'OUTPUT_EXISTS',
          job.inputs
            ? `${job.output} already exists and holds no signature by ${credential.credentialID} over these files (${existing.reason}); esign does not overwrite it unasked.`
            : `${job.output} already exists and is not a signature of ${job.input} by ${credential.credentialID} (${existing.reason}); esign does not overwrite it unasked.`,
          {
            hint: job.inputs
              ? 'Pass --force as well to sign it again over the old container, or move the old one away.'
              : 'Pass --force as well to sign it again over the old output, or move the old output away.',
          },
        );
      }
    }
    const prepared = await form.prepare(job, credential, documents, signOptions, opened);
    pending.add(prepared);
    return { prepared };
  };
  /** Fills the next window: up to one approval's worth of documents to sign, skipping those already signed. */
  let cursor = 0;
  const prepareWindow = async (): Promise<PreparedDocument[]> => {
    const window: PreparedDocument[] = [];
    while (window.length < credential.signaturesPerApproval && cursor < jobs.length) {
      const take = jobs.slice(cursor, cursor + credential.signaturesPerApproval - window.length);
      cursor += take.length;
      const entries = await mapConcurrently(take, PREPARE_CONCURRENCY, (job) => settle(prepareOne(job)));
      for (const [index, entry] of entries.entries()) {
        const job = take[index]!;
        if (entry.status === 'rejected') await fail(job, entry.reason);
        else if ('skipped' in entry.value) tally.skipped(entry.value.skipped, credential.credentialID);
        else window.push(entry.value.prepared);
      }
    }
    return window;
  };
  const finishWindow = async (window: PreparedDocument[]): Promise<void> => {
    // The browser step prints its own lines; the progress comes back once the service has answered.
    progress.pause();
    // At B-LT/B-LTA each signature goes into its temp output as soon as its timestamp is in, while the
    // TSA works on the others; completion then reads it back, after the window's validation data.
    const writeAhead = extender
      ? async (index: number, result: BatchResult): Promise<BatchResult> => {
          // A form that keeps its validation data inside the signature builds it whole at completion.
          const form = formOfKind(window[index]!.job.kind);
          if (result.status === 'rejected' || !form.writeAhead) return result;
          return settle(form.writeAhead(window[index]!, credential, result.value));
        }
      : undefined;
    let results: BatchResult[];
    try {
      results = await signBatch(
        window,
        credential,
        signing,
        tsa,
        level,
        { signed: () => progress.resume() },
        writeAhead,
      );
    } catch (error) {
      progress.resume();
      for (const document of window) await fail(document.job, error, document);
      return;
    }
    const longTerm = await extender?.forWindow(credential.certificates, results);
    // What a document's completion needs is let go as soon as it is written (its signature and token,
    // its update around the placeholder), not when the last of the window's thousand is.
    const unwritten: (BatchResult | undefined)[] = results;
    const completed = await mapConcurrently(window, upload ? 1 : COMPLETE_CONCURRENCY, async (document, index) => {
      const result = unwritten[index]!;
      unwritten[index] = undefined;
      if (result.status === 'rejected') return result;
      return settle(
        (async () => {
          const written = await completeDocument(
            formOfKind(document.job.kind),
            document,
            credential,
            result.value,
            signOptions,
            { files: documents },
            longTerm,
          );
          pending.delete(document);
          document.update = undefined;
          document.outputHash = undefined;
          const extension = extender?.results.get(written.input);
          extender?.results.delete(written.input);
          const made = qualifier?.(credential.certificates, written.timestampTime ?? ctx.clock.now());
          progress.print(() => report(ctx, written, credential.credentialID, extension, made));
          if (upload) {
            // The upload draws its own progress bar; one animation at a time.
            progress.pause();
            await upload(written.output).finally(() => progress.resume());
          }
          tally.signed(written.contents?.files.length);
        })(),
      );
    });
    for (const [index, outcome] of completed.entries()) {
      if (outcome.status === 'rejected') await fail(window[index]!.job, outcome.reason, window[index]);
    }
  };

  // The pipeline: window k+1 is prepared while window k is approved, signed, timestamped and written.
  // Nothing of a window is kept after it, so memory stays flat however many files there are.
  let next = prepareWindow();
  next.catch(() => undefined);
  try {
    for (;;) {
      const window = await next;
      if (window.length === 0 && cursor >= jobs.length) break;
      next = cursor < jobs.length ? prepareWindow() : Promise.resolve([]);
      next.catch(() => undefined);
      if (window.length > 0) await finishWindow(window);
    }
  } catch (error) {
    await next.catch(() => undefined);
    await Promise.all([...pending].map((document) => document.output?.abort()));
    progress.fail();
    throw error;
  } finally {
    await documents.finish();
  }
  progress.stop();
  tally.finish();
}

/**
 * The appearance's font subset, made while the run signs in and asks for the credential (the run
 * waits on the network there), when its text does not depend on the credential: --name given, and
 * no {credential} in --appearance-text. Drawing it later takes it from there (made again only if
 * the date's second turned meanwhile and brought a digit the text did not have).
 */
function prepareAppearanceAhead(options: SignCommandOptions, ctx: Context): void {
  const now = ctx.clock.now();
  const visible = signOptionsFrom(options, 'B-B', now).pdf?.visible;
  if (
    !visible ||
    signOptionsFrom(options, 'B-B', now, 'signer', 'credential').pdf?.visible?.lines.join('\n') !==
      visible.lines.join('\n')
  )
    return;
  setImmediate(
    () =>
      void loadAppearanceAssets(visible)
        .then((assets) => assets?.fonts.prepareSubset(visible.lines))
        .catch(() => undefined),
  );
}

/**
 * A batch makes garbage fast and keeps little alive (a window's prepared documents, a few KB each).
 * V8's defaults trade memory for speed there: its young generation grows to 32 MB and its old one
 * to three times what survives, which was most of a 10,000-file batch's 110 MB. Kept small, the
 * heap is collected more often and cheaply (a few ms each), and memory stays near 80 MB whatever
 * the number of files, at a few percent of throughput. Not for one file: it gains nothing, and V8
 * refuses compiled code cached under other flags, so a run that writes the launcher's code cache
 * after this would cost the next run its cache (and node:v8 is loaded only here).
 */
async function keepHeapSmall(): Promise<void> {
  const { setFlagsFromString } = await import('node:v8');
  setFlagsFromString('--semi-space-growth-factor=1');
  setFlagsFromString('--heap-growing-percent=25');
}

async function isRegularFile(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isFile() ?? false;
}

function settle<T>(promise: Promise<T>): Promise<PromiseSettledResult<T>> {
  return promise.then(
    (value) => ({ status: 'fulfilled', value }),
    (reason: unknown) => ({ status: 'rejected', reason }),
  );
}

function errorText(error: unknown): string {
  return isEsignError(error) ? error.message : ((error as Error)?.message ?? String(error));
}

/** The signer's common name, for the visible appearance. */
export function signerName(credential: CredentialInfo): string {
  const certificate = credential.certificates[0];
  if (!certificate) return credential.credentialID;
  const subject = new X509Certificate(certificate).subject;
  return /(?:^|\n)CN=([^\n]+)/.exec(subject)?.[1] ?? credential.credentialID;
}

export function signOptionsFrom(
  options: SignCommandOptions,
  level: SignatureLevel,
  signingTime: Date,
  signer = '',
  credentialID = '',
): SignOptions {
  const pdf: SignOptions['pdf'] = {
    reason: options.reason,
    location: options.location,
    contactInfo: options.contactInfo,
    name: options.name,
    fieldName: options.field,
    certify: options.certify === undefined ? undefined : CERTIFY_LEVEL[options.certify],
  };
  const appearanceOnly = [
    options.font?.length && '--font',
    options.image && '--image',
    options.appearanceText !== undefined && '--appearance-text',
  ].filter(Boolean);
  if (!options.visible && appearanceOnly.length > 0)
    throw new EsignError(
      'USAGE',
      `${appearanceOnly.join(', ')} shape${appearanceOnly.length > 1 ? '' : 's'} a visible signature.`,
      { hint: 'Add --visible.' },
    );
  if (options.visible) {
    const values = {
      name: options.name ?? signer,
      date: `${signingTime.toISOString().replace('T', ' ').slice(0, 19)} UTC`,
      reason: options.reason ?? '',
      location: options.location ?? '',
      credential: credentialID,
    };
    pdf.visible = {
      page: options.page ?? 1,
      rect: options.rect ?? [36, 36, 286, 106],
      lines: appearanceLines(options.appearanceText, values),
      ...(options.font?.length ? { fontFiles: options.font } : {}),
      ...(options.image ? { image: { file: options.image, position: options.imagePosition ?? 'left' } } : {}),
    };
  }
  return {
    level,
    signingTime,
    pdf,
    overwrite: options.force,
    ...(options.signaturePolicy ? { signaturePolicy: parseSignaturePolicy(options.signaturePolicy) } : {}),
    ...(options.asicSignature ? { asicSignature: options.asicSignature } : {}),
  };
}

/**
 * `--signature-policy` is XAdES's (an enveloped one, or inside a container that gets XAdES), and
 * `--asic-signature` a container's: refused with any other form.
 */
export function refuseMisplacedXmlOptions(options: SignCommandOptions): void {
  const container = options.format === 'asice' || options.format === 'asics';
  if (options.asicSignature && options.format && !container)
    throw new EsignError(
      'USAGE',
      `--asic-signature chooses the signature inside an ASiC, not a ${options.format} one.`,
      {
        hint: 'Use it with --format asice or --format asics.',
      },
    );
  if (!options.signaturePolicy) return;
  parseSignaturePolicy(options.signaturePolicy);
  const xades =
    options.format === 'xades' ||
    (options.format === 'asice' && options.asicSignature !== 'cades') ||
    (options.format === 'asics' && options.asicSignature === 'xades');
  if (!xades)
    throw new EsignError('USAGE', '--signature-policy applies to XAdES signatures only.', {
      hint: 'Use it with --format xades, --format asice, or --format asics --asic-signature xades.',
    });
}

const CERTIFY_LEVEL = { 'no-changes': 1, 'form-filling': 2, annotations: 3 } as const;

/** B-LT and B-LTA are written for every format, but not through the split flow (extend after --complete). */
function refuseLongTermFor(level: SignatureLevel, options: SignCommandOptions): void {
  if (options.prepare) {
    throw new EsignError('USAGE', `The split flow signs at B-B or B-T; level ${level} is added afterwards.`, {
      hint: `Sign with --prepare/--complete at B-T, then run \`esign extend FILE.pdf --level ${level}\` (a PDF), or sign other files at ${level} in one run.`,
    });
  }
}
