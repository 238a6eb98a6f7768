/**
 * `esign sign`, the batch: expand inputs → choose the credential → prepare every document → one
 * browser step and one signHash per 50 hashes → timestamps → write outputs. Loaded only when
 * signing, so the heavy modules (pkijs, the PDF core) never slow down other commands.
 */
import { createHash, X509Certificate } from 'node:crypto';
import { EsignError, isEsignError } from '../core/errors.js';
import type { SignatureLevel } from '../core/profile.js';
import type { DigestName } from '../core/cms/algorithms.js';
import type { CredentialInfo } from '../core/csc/shapes.js';
import type { ExtensionResult } from '../core/ltv/index.js';
import type { SigningCredential, TimestampAuthority } from '../core/ports.js';
import {
  batches,
  completeDocument,
  MAX_HASHES_PER_AUTHORIZATION,
  fromHeader,
  openDocument,
  prepareDocument,
  signBatch,
  type BatchResult,
  type OpenedDocument,
  type PreparedDocument,
  type SignJob,
  type SignOptions,
  type SignedDocument,
  type ExtendSigned,
} from '../core/sign-workflow.js';
import { createOutputDir, fileSystemDocuments, writeDetachedSignature } from '../io/document-files.js';
import type { CscClient } from '../io/csc-client.js';
import type { Context, ResolvedProfile } from './context.js';
import { expandInputs, planJobs } from './inputs.js';
import { batchExitCode } from './command.js';
import { outputUploader } from './output-uploader.js';
import type { SignCommandOptions } from './sign-options.js';
import { PdfPasswords } from './pdf-password.js';
import { authorizationFactors } from './credential-factors.js';
import { createCscClient } from './service-clients.js';

interface Failure {
  input: string;
  error: EsignError;
}

export async function runSign(files: string[], options: SignCommandOptions, ctx: Context): Promise<void> {
  if (options.prepare && options.complete) throw new EsignError('USAGE', '--prepare and --complete are two separate runs.', { hint: 'Run --prepare first, then --complete with the same --state.' });
  if ((options.prepare || options.complete) && !options.state) throw new EsignError('USAGE', 'The split flow needs --state FILE.', { hint: 'Add --state sign-state.json.' });
  if (options.prepare && options.upload) throw new EsignError('USAGE', '--upload goes with --complete, where the outputs are written, not with --prepare.', { hint: 'Run --prepare without it, then esign sign --complete --upload …' });
  if (options.overwrite && !options.upload) throw new EsignError('USAGE', '--overwrite replaces objects in your bucket, so it goes with --upload.', { hint: 'Add --upload, or use --force to replace local outputs.' });
  if (options.complete) return (await import('./sign-split.js')).runSplitComplete(options, ctx);
  if (files.length === 0) throw new EsignError('USAGE', 'Name at least one file to sign.', { hint: 'esign sign contract.pdf' });
  // Every signing run outside the split flow has an approval step: no work before it is known to be possible.
  if (!options.prepare) await ctx.assertBrowserStepPossible('approval of the signatures');

  const profile = await ctx.profile({ storage: options.upload });
  const passwords = await PdfPasswords.from(options, ctx);
  const failures: Failure[] = [];
  const planned = planJobs(await expandInputs(files), options);
  // Check every PDF's structure before anyone is asked to approve anything. The first approval's
  // documents stay open and parsed for prepare; the rest are opened again then (a batch of
  // thousands would hold as many file handles).
  const jobs: SignJob[] = [];
  const held = new Map<SignJob, OpenedDocument>();
  try {
    for (const job of planned) {
      try {
        const opened = await passwords.open(job.input, (password) => openDocument(job, fileSystemDocuments, password));
        if (held.size < MAX_HASHES_PER_AUTHORIZATION) held.set(job, opened);
        else await opened.source.close();
        jobs.push(job);
      } catch (error) {
        if (!options.continueOnError) throw error;
        failures.push(failureOf(job, error));
      }
    }
    await signChecked(jobs, held, planned, failures, profile, options, passwords, ctx);
  } finally {
    await Promise.all([...held.values()].map((opened) => opened.source.close()));
  }
}

async function signChecked(
  jobs: SignJob[],
  held: Map<SignJob, OpenedDocument>,
  planned: SignJob[],
  failures: Failure[],
  profile: ResolvedProfile,
  options: SignCommandOptions,
  passwords: PdfPasswords,
  ctx: Context,
): Promise<void> {
  if (options.outputDir && !options.prepare && jobs.length > 0) await createOutputDir(options.outputDir);
  const level = chooseLevel(options.level, profile);
  const longTerm = level === 'B-LT' || level === 'B-LTA';
  if (longTerm) refuseLongTermFor(jobs, level, options);
  const signing = await createCscClient(ctx, profile, await authorizationFactors(options, ctx));
  // The split flow and the TSA client load only when used: a plain B-B run is the one to keep quick.
  const split = options.prepare ? await import('./sign-split.js') : undefined;
  if (split && (await split.splitServiceSignIn(signing, options, ctx))) return;
  const credential = await chooseCredential(options.credential ?? profile.settings.credential, signing, ctx, options.digest);
  if (!split) await readyToAuthorize(credential, signing, ctx);
  const signOptions: SignOptions = { ...signOptionsFrom(options, level, ctx.clock.now(), signerName(credential)), pdfPassword: (input) => passwords.for(input) };
  if (split) return split.runSplitPrepare(jobs, credential, signOptions, signing, options, ctx);
  const tsa = level === 'B-B' ? undefined : (await import('./service-clients.js')).createTsaClient(ctx, profile);
  const extender = longTerm ? await longTermExtender(ctx, level, tsa, passwords) : undefined;
  // Storage is opened before anyone approves anything, so a missing login shows at once.
  const upload = options.upload ? await outputUploader(ctx, jobs, options.overwrite) : undefined;

  let spinner = await ctx.io.spinner(`Preparing ${jobs.length} file${jobs.length === 1 ? '' : 's'}…`);
  const prepared: PreparedDocument[] = [];
  const signed: SignedDocument[] = [];
  /**
   * A document that did not make it: its temp output goes; the run stops unless --continue-on-error,
   * and even then when the failure would only repeat for every later step (the person refused or
   * did not answer, the profile is wrong, Ctrl-C).
   */
  const fail = async (document: PreparedDocument, error: unknown): Promise<void> => {
    await document.output?.abort();
    if (!options.continueOnError || (isEsignError(error) && /^(AUTH_|CONFIG_|USAGE$|INTERRUPTED$)/.test(error.code))) throw error;
    failures.push(failureOf(document.job, error));
  };
  try {
    for (const [index, job] of jobs.entries()) {
      spinner.update(`Hashing ${index + 1}/${jobs.length}: ${job.input}`);
      try {
        const opened = held.get(job);
        held.delete(job);
        prepared.push(await prepareDocument(job, credential, fileSystemDocuments, signOptions, opened));
      } catch (error) {
        if (!options.continueOnError) throw error;
        failures.push(failureOf(job, error));
      }
    }
    const steps = batches(prepared, credential.signaturesPerApproval);
    for (const [stepIndex, batch] of steps.entries()) {
      // The browser step prints its own lines; the spinner comes back once the service has answered.
      spinner.stop();
      let results: BatchResult[];
      try {
        results = await signBatch(batch, credential, signing, tsa, level, {
          signed: async () => {
            spinner = await ctx.io.spinner(`Signed ${batch.length} (step ${stepIndex + 1}/${steps.length})${level === 'B-B' ? '' : '; timestamping…'}`);
          },
          timestamped: (done, total) => spinner.update(`Timestamping ${done}/${total} (step ${stepIndex + 1}/${steps.length})`),
        });
      } catch (error) {
        for (const document of batch) await fail(document, error);
        continue;
      }
      // From here each written file prints its own line (and an upload may draw its progress bar).
      spinner.stop();
      for (const [index, document] of batch.entries()) {
        const result = results[index]!;
        if (result.status === 'rejected') {
          await fail(document, result.reason);
          continue;
        }
        try {
          const written = await completeDocument(document, credential, result.value, signOptions, writeDetachedSignature, extender?.extend);
          report(ctx, written, credential.credentialID, extender?.results.get(written.input));
          await upload?.(written.output);
          signed.push(written);
        } catch (error) {
          await fail(document, error);
        }
      }
    }
  } catch (error) {
    await Promise.all(prepared.map((document) => document.output?.abort()));
    spinner.fail();
    throw error;
  }
  spinner.stop();
  for (const failure of failures) {
    ctx.io.result({ input: failure.input, error: { code: failure.error.code, message: failure.error.message, hint: failure.error.hint } }, () => `✗ ${failure.input}: ${failure.error.message}`);
  }
  if (failures.length > 0) {
    process.exitCode = batchExitCode(signed.length, failures.map((failure) => failure.error));
    ctx.io.error(`esign: ${signed.length} of ${planned.length} files signed; ${failures.length} failed (see above).`);
  }
}

/**
 * Before any document is prepared: the credential's authorization can happen in this run — its
 * PIN and OTP can be had, or, for a browser approval, a person can finish it here.
 */
export async function readyToAuthorize(credential: SigningCredential, signing: CscClient, ctx: Context): Promise<void> {
  if (credential.authMode === 'oauth2code') await ctx.assertBrowserStepPossible('approval of the signatures', { approval: true });
  await signing.readyToAuthorize(credential);
}

function failureOf(job: SignJob, error: unknown): Failure {
  if (isEsignError(error)) return { input: job.input, error };
  return { input: job.input, error: new EsignError('INTERNAL', `Unexpected error while signing ${job.input}: ${(error as Error)?.message ?? String(error)}.`, { cause: error }) };
}

export function chooseLevel(requested: SignatureLevel | undefined, profile: ResolvedProfile): SignatureLevel {
  if (requested) return requested;
  if (profile.settings.level) return profile.settings.level as SignatureLevel;
  return (profile.settings.tsaUrls?.length ?? 0) > 0 ? 'B-T' : 'B-B';
}

/** The signer's common name, for the visible appearance. */
export function signerName(credential: CredentialInfo): string {
  const certificate = credential.certificates[0];
  if (!certificate) return credential.credentialID;
  const subject = new X509Certificate(certificate).subject;
  return /(?:^|\n)CN=([^\n]+)/.exec(subject)?.[1] ?? credential.credentialID;
}

export function signOptionsFrom(options: SignCommandOptions, level: SignatureLevel, signingTime: Date, signer = ''): SignOptions {
  const pdf: SignOptions['pdf'] = {
    reason: options.reason,
    location: options.location,
    contactInfo: options.contactInfo,
    name: options.name,
    fieldName: options.field,
  };
  if (options.visible) {
    const lines = [`Digitally signed by ${options.name ?? signer}`, `Date: ${signingTime.toISOString().replace('T', ' ').slice(0, 19)} UTC`];
    if (options.reason) lines.push(`Reason: ${options.reason}`);
    if (options.location) lines.push(`Location: ${options.location}`);
    pdf.visible = { page: options.page ?? 1, rect: options.rect ?? [36, 36, 286, 106], lines };
  }
  return { level, signingTime, pdf, overwrite: options.force };
}

/**
 * The credential to sign with: the one named, else the only enabled one, else a prompt on a TTY.
 * It must be enabled; its chain comes from credentials/info.
 */
export async function chooseCredential(named: string | undefined, signing: CscClient, ctx: Context, digest?: DigestName): Promise<CredentialInfo & SigningCredential> {
  let id = named;
  if (!id) {
    const ids = await signing.listCredentialIDs();
    const infos = await Promise.all(ids.map((candidate) => signing.credentialInfo(candidate)));
    const enabled = infos.filter((info) => info.status === 'enabled');
    if (enabled.length === 1) return signing.forSigning(enabled[0]!, digest);
    if (enabled.length === 0) throw new EsignError('CREDENTIAL_NOT_FOUND', 'You have no enabled signing credential.', { hint: 'Ask the service operator, or check `esign credentials list`.' });
    if (!ctx.io.canPrompt) {
      throw new EsignError('CREDENTIAL_AMBIGUOUS', `You have ${enabled.length} enabled credentials and no default.`, {
        hint: `Pass --credential ID (one of ${enabled.map((info) => info.credentialID).join(', ')}), or set a default with \`esign credentials use ID\`.`,
      });
    }
    const { select } = await import('@inquirer/prompts');
    id = await select({ message: 'Sign with which credential?', choices: enabled.map((info) => ({ name: info.credentialID, value: info.credentialID })) });
  }
  const info = await signing.credentialInfo(id);
  if (info.status !== 'enabled') {
    throw new EsignError('CREDENTIAL_DISABLED', `The credential ${id} is disabled and cannot sign.`, {
      hint: 'Choose another with --credential (see `esign credentials list`).',
    });
  }
  return signing.forSigning(info, digest);
}

function report(ctx: Context, result: SignedDocument, credentialID: string, extension?: ExtensionResult): void {
  for (const warning of extension?.warnings ?? []) ctx.io.warn(`${result.input}: ${warning}`);
  ctx.io.result(
    {
      input: result.input,
      output: result.output,
      format: result.kind === 'pdf' ? 'PAdES' : 'CAdES',
      credential: credentialID,
      level: result.level,
      bytes: result.bytes,
      sha256: result.sha256,
      ...(result.timestampTime ? { timestamp: result.timestampTime.toISOString() } : {}),
      ...(extension ? { dss: extension.added, ...(extension.archiveTimestamp ? { archiveTimestamp: extension.archiveTimestamp.toISOString() } : {}), warnings: extension.warnings } : {}),
    },
    () => `✓ ${result.input} → ${result.output} (${result.kind === 'pdf' ? 'PAdES' : 'CAdES'} ${result.level}, ${formatBytes(result.bytes)})`,
  );
}

/** B-LT and B-LTA are PAdES levels: PDFs only, and not through the split flow (extend after --complete). */
function refuseLongTermFor(jobs: readonly SignJob[], level: SignatureLevel, options: SignCommandOptions): void {
  if (options.prepare) {
    throw new EsignError('USAGE', `The split flow signs at B-B or B-T; level ${level} is added afterwards.`, { hint: `Sign with --prepare/--complete at B-T, then run \`esign extend FILE --level ${level}\`.` });
  }
  const other = jobs.find((job) => job.kind !== 'pdf');
  if (other) {
    throw new EsignError('USAGE', `Level ${level} applies to PDFs (PAdES) only; ${other.input} would get a CAdES signature.`, { hint: 'Sign other files with --level B-T, or sign the PDFs separately.' });
  }
}

/**
 * The long-term extension of each signed PDF, run before its output is committed: the signed
 * document is read as the unchanged input followed by the new tail, so nothing is re-read whole.
 */
async function longTermExtender(
  ctx: Context,
  level: 'B-LT' | 'B-LTA',
  tsa: TimestampAuthority | undefined,
  passwords: PdfPasswords,
): Promise<{ extend: ExtendSigned; results: Map<string, ExtensionResult> }> {
  const [{ extendPdf, appendedSource }, { createRevocationClient }] = await Promise.all([import('../core/ltv/index.js'), import('../io/revocation-client.js')]);
  const fetcher = createRevocationClient(ctx);
  const results = new Map<string, ExtensionResult>();
  const extend: ExtendSigned = async ({ input, inputStart, inputSize, tail, hash }) => {
    const opened = await fileSystemDocuments.open(input);
    const source = inputStart > 0 ? fromHeader(opened, inputStart) : opened;
    try {
      if (source.size !== inputSize) throw new EsignError('INPUT_UNREADABLE', `${input} changed while it was being signed.`, { hint: 'Sign it again once nothing else writes to it.' });
      const result = await extendPdf(appendedSource(source, tail), hash, level, { fetcher, tsa, password: passwords.for(input) });
      results.set(input, result);
      return result.tail;
    } finally {
      await source.close();
    }
  };
  return { extend, results };
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 * 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  return `${(bytes / 1024 / 1024 / 1024).toFixed(2)} GiB`;
}


export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

