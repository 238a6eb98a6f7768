/**
 * The split flow for CI and remote approval: `--prepare` computes the hashes and prints the
 * approval URL, saving what is needed to finish; `--complete` re-reads the inputs, checks they
 * still give the same hashes, exchanges the code for the SAD and writes the outputs. Where no
 * person can sign in to the signing service during `--prepare` (CI) and no service token is
 * cached, `--prepare` first saves a pending sign-in and prints its URL; the same command with
 * `--redirect-url` finishes it and goes on. The state file holds no token and no SAD; it does hold
 * the `state` and PKCE verifier of the pending step, so it is mode 0600.
 */
import { chmod, readFile, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { EsignError } from '../core/errors.js';
import { DIGEST_NAMES, type DigestName } from '../core/cms/algorithms.js';
import type { CredentialInfo } from '../core/csc/shapes.js';
import type { SigningCredential } from '../core/ports.js';
import { SIGNATURE_LEVELS, type SignatureLevel } from '../core/profile.js';
import { loadAppearanceAssets } from './appearance-assets.js';
import {
  batches,
  completeDocument,
  hashSource,
  mapConcurrently,
  timestampCovers,
  timestampSignatures,
  type DocumentFiles,
  type PreparedDocument,
  type SignJob,
  type SignOptions,
} from '../core/sign-workflow.js';
import { writeBytesAtomically } from '../io/atomic-write.js';
import type { CscClient } from '../io/csc-client.js';
import { createOutputDir, fileSystemDocuments } from '../io/document-files.js';
import { formOfKind, formOfPreparedContainer } from '../io/forms/registry.js';
import { checkRedirect, constantTimeEqual, randomState } from '../io/loopback.js';
import { createCscClient, createTsaClient, withCompleteChain } from './service-clients.js';
import type { Context } from './context.js';
import { DEFAULT_REDIRECT_URI } from './context.js';
import { outputUploader } from './output-uploader.js';
import type { SignCommandOptions } from './sign-options.js';
import { PdfPasswords } from './pdf-password.js';
import { authorizationFactors } from './credential-factors.js';
import { report } from './sign-common.js';
import { credentialQualifier } from './trusted-lists.js';

/** 3: a visible signature's fonts are a list (`fontFiles`, --font repeatable): a state file of 2 names one `fontFile` this run would not read. */
const STATE_VERSION = 3;

/** A browser step begun in one run and finished in another. */
interface PendingAuthorization {
  state: string;
  redirectUri: string;
  codeVerifier: string;
}

/** The state file while the service sign-in is pending. */
interface SignInState {
  version: number;
  kind: 'service-sign-in';
  profile: string;
  signIn: PendingAuthorization;
  /** What the signatures were asked to be when the sign-in began (state files of 0.1 have none). */
  options?: Partial<Record<RememberedOption, unknown>>;
  createdAt: string;
}

/**
 * The options of the `--prepare` run that began a sign-in, which its second run (the same command
 * with --redirect-url) must repeat: without them it would prepare other signatures than the ones
 * asked for (an invisible one for a --visible). Secrets and files are not among them.
 */
const REMEMBERED_OPTIONS = [
  'credential',
  'output',
  'outputDir',
  'force',
  'level',
  'digest',
  'reason',
  'location',
  'contactInfo',
  'name',
  'field',
  'visible',
  'page',
  'rect',
  'font',
  'image',
  'imagePosition',
  'appearanceText',
  'certify',
  'continueOnError',
  'skipExisting',
  'upload',
  'overwrite',
  'format',
] as const satisfies ReadonlyArray<keyof SignCommandOptions>;
type RememberedOption = (typeof REMEMBERED_OPTIONS)[number];

function rememberedOptions(command: SignCommandOptions): Partial<Record<RememberedOption, unknown>> {
  return Object.fromEntries(
    REMEMBERED_OPTIONS.filter((key) => command[key] !== undefined).map((key) => [key, command[key]]),
  );
}

/** Refuses a second run that leaves out or changes an option the first one gave; options it adds are its own. */
function assertSameOptions(
  then: Partial<Record<RememberedOption, unknown>>,
  command: SignCommandOptions,
  state: string,
): void {
  const now = rememberedOptions(command);
  const flag = (key: string) => `--${key.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`;
  const shown = (value: unknown) =>
    value === true ? '' : ` ${Array.isArray(value) ? value.join(',') : JSON.stringify(value)}`;
  const changed = (Object.keys(then) as RememberedOption[]).filter(
    (key) => then[key] !== false && JSON.stringify(then[key]) !== JSON.stringify(now[key]),
  );
  if (changed.length === 0) return;
  throw new EsignError(
    'USAGE',
    `The sign-in in ${state} was begun by a --prepare run with ${changed.map((key) => `${flag(key)}${shown(then[key])}`).join(', ')}; this run ${changed.length === 1 ? 'has it' : 'has them'} otherwise, and would prepare other signatures.`,
    {
      hint: 'Run the first --prepare command again, as it was, adding --redirect-url; or start afresh without --redirect-url.',
    },
  );
}

/** The state file once the hashes wait for approval. */
interface SplitState {
  version: number;
  kind: 'approval';
  profile: string;
  credentialID: string;
  /** How --complete authorizes: browser approvals (oauth2code, the default) or credentials/authorize. */
  authMode?: CredentialInfo['authMode'];
  level: SignatureLevel;
  /** The signature's digest the hashes were made with. */
  digest?: DigestName;
  signingTime: string;
  pdf: SignOptions['pdf'];
  overwrite: boolean;
  /** XAdES: the signature policy (`--signature-policy`), and the signature of a new ASiC (`--asic-signature`). */
  signaturePolicy?: SignOptions['signaturePolicy'];
  asicSignature?: SignOptions['asicSignature'];
  /** One browser approval per ≤ 50 documents. */
  steps: ApprovalStep[];
  /**
   * The one job of a form of one output for many inputs (an ASiC-E: one step, one signature):
   * --complete prepares it again from `args`, its inputs, and the form checks it against the rest,
   * what its `splitState` kept (an ASiC-E's manifest, base64).
   */
  container?: PreparedContainer;
  createdAt: string;
}

/** What --complete needs to prepare again the one job of several inputs --prepare prepared, and to check it is the same. */
type PreparedContainer = { args: string[]; output: string } & Record<string, unknown>;

interface ApprovalStep {
  /** The browser approval pending for this step; none for a credential authorized with credentials/authorize. */
  authorization?: PendingAuthorization;
  jobs: Array<SignJob & { hash: string }>;
}

/** A DocumentFiles whose outputs go nowhere: `--prepare` only needs the hashes. */
const hashOnlyDocuments: DocumentFiles = {
  open: (path) => fileSystemDocuments.open(path),
  createOutput: async () => ({
    copyFrom: (source, hash) => hashSource(source, hash),
    write: async () => undefined,
    suspend: async () => undefined,
    commit: async () => undefined,
    abort: async () => undefined,
  }),
};

/** A cached service sign-in, or one that can happen in this run (without a browser, or a person at one). */
async function signedInOrCanSignIn(signing: CscClient, ctx: Context): Promise<boolean> {
  return !signing.signInNeedsBrowser() || (await signing.hasServiceToken()) || ctx.canAuthorizeHere();
}

/**
 * The service sign-in of `--prepare` when nobody can do it in this run: saves it as pending, prints
 * its URL and returns true (the run ends there). Given `--redirect-url` (or `--code`) for a pending
 * sign-in, finishes it and returns false, so `--prepare` goes on; likewise when a token is cached
 * or a browser step can happen here.
 */
export async function splitServiceSignIn(
  signing: CscClient,
  command: SignCommandOptions,
  ctx: Context,
): Promise<boolean> {
  const profile = await ctx.profile();
  if (profile.sandbox?.embedded) {
    throw new EsignError(
      'USAGE',
      'The split flow on the sandbox needs a running sandbox: its URLs would point at emulators that stop with this command.',
      {
        hint: 'Start one with `esign sandbox start`, then run this again.',
      },
    );
  }
  // The state file is read only to finish a sign-in; otherwise it is about to be written afresh.
  if (command.redirectUrl.length > 0 || command.code) {
    const pending = await readStateFile(command.state!);
    if (pending.kind !== 'service-sign-in') {
      throw new EsignError(
        'USAGE',
        `${command.state} holds prepared signatures, not a pending sign-in: --redirect-url goes with --complete.`,
        {
          hint: `Run: esign sign --complete --state ${command.state} --redirect-url URL`,
        },
      );
    }
    if (pending.profile !== profile.name) {
      throw new EsignError(
        'STATE_FILE_INVALID',
        `The sign-in in ${command.state} was started with profile ${pending.profile}, not ${profile.name}.`,
        { hint: `Pass --profile ${pending.profile}.` },
      );
    }
    if (pending.options) assertSameOptions(pending.options, command, command.state!);
    const { signIn } = pending;
    const [code] = codesFor(command, [signIn], 'sign-in to the signing service');
    await signing.finishServiceSignIn(code!, signIn.redirectUri, signIn.codeVerifier);
    return false;
  }
  if (await signedInOrCanSignIn(signing, ctx)) return false;
  const redirectUri = splitRedirectUri(profile.settings.redirectUri);
  const state = randomState();
  const { url, codeVerifier } = signing.startServiceSignIn(redirectUri, state);
  const saved: SignInState = {
    version: STATE_VERSION,
    kind: 'service-sign-in',
    profile: profile.name,
    signIn: { state, redirectUri, codeVerifier },
    options: rememberedOptions(command),
    createdAt: ctx.clock.now().toISOString(),
  };
  await saveState(command.state!, saved);
  const next = `esign sign --prepare --state ${command.state} --redirect-url "<the URL the browser was sent to>" FILES…`;
  ctx.io.essential({ state: command.state, signInUrl: url, redirectUri, next }, () =>
    [
      'No one can sign in to the signing service in this run, and no sign-in is cached here.',
      'Sign in at:',
      url,
      '',
      `Then run the same command again with the address the browser was sent to: ${next}`,
    ].join('\n'),
  );
  return true;
}

export async function runSplitPrepare(
  jobs: SignJob[],
  credential: CredentialInfo & SigningCredential,
  options: SignOptions,
  signing: CscClient,
  command: SignCommandOptions,
  ctx: Context,
): Promise<void> {
  const prepared = await mapConcurrently(jobs, 2, (job) =>
    formOfKind(job.kind).prepare(job, credential, hashOnlyDocuments, options),
  );
  // A job of several inputs is the run's one job: its inputs and what its form keeps, for --complete to prepare it again.
  const [only] = prepared;
  const container =
    only?.job.inputs && prepared.length === 1
      ? {
          args: only.job.inputs,
          output: only.job.output,
          ...formOfKind(only.job.kind).splitState?.(only),
        }
      : undefined;
  return savePrepared(prepared, credential, options, signing, command, ctx, container);
}

/** Saves the prepared signatures' hashes (and what a job of several inputs keeps) and prints what to approve. */
async function savePrepared(
  prepared: Pick<PreparedDocument, 'job' | 'toBeSigned'>[],
  credential: CredentialInfo & SigningCredential,
  options: Pick<SignOptions, 'level' | 'signingTime' | 'pdf' | 'overwrite' | 'signaturePolicy' | 'asicSignature'>,
  signing: CscClient,
  command: SignCommandOptions,
  ctx: Context,
  container?: PreparedContainer,
): Promise<void> {
  const profile = await ctx.profile();
  const base: Omit<SplitState, 'steps'> = {
    version: STATE_VERSION,
    kind: 'approval',
    profile: profile.name,
    credentialID: credential.credentialID,
    level: options.level,
    digest: credential.scheme.digest,
    signingTime: options.signingTime.toISOString(),
    pdf: options.pdf,
    overwrite: options.overwrite,
    ...(options.signaturePolicy ? { signaturePolicy: options.signaturePolicy } : {}),
    ...(options.asicSignature ? { asicSignature: options.asicSignature } : {}),
    ...(container ? { container } : {}),
    createdAt: ctx.clock.now().toISOString(),
  };
  if (credential.authMode !== 'oauth2code')
    return savePreparedForAuthorize(prepared, credential, { ...base, authMode: credential.authMode }, command, ctx);
  const redirectUri = splitRedirectUri(profile.settings.redirectUri);
  const urls: string[] = [];
  const steps: ApprovalStep[] = [];
  for (const batch of batches(prepared, credential.signaturesPerApproval)) {
    const hashes = batch.map((document) => document.toBeSigned.toBeSignedHash);
    const state = randomState();
    const { url, codeVerifier } = await signing.credentialAuthorizationUrl(
      credential.credentialID,
      hashes,
      redirectUri,
      state,
    );
    urls.push(url);
    steps.push({
      authorization: { state, redirectUri, codeVerifier },
      jobs: batch.map((document) => savedJob(document)),
    });
  }
  await saveState(command.state!, { ...base, steps });
  const approvals = steps.map((step, index) => ({
    authorizationUrl: urls[index]!,
    hashes: step.jobs.map((job) => ({ input: job.input, hash: job.hash })),
  }));
  const redirectArgs = steps.map((_, index) => `--redirect-url "<URL ${index + 1}>"`).join(' ');
  ctx.io.essential({ state: command.state, redirectUri, credential: credential.credentialID, approvals }, () =>
    [
      `Prepared ${prepared.length} file${prepared.length === 1 ? '' : 's'}; state saved in ${command.state}.`,
      ...approvals.flatMap((approval, index) => [
        '',
        `${steps.length > 1 ? `Approval ${index + 1} of ${steps.length}: approve` : 'Approve'} ${approval.hashes.length} signature${approval.hashes.length === 1 ? '' : 's'} with credential ${credential.credentialID} at:`,
        approval.authorizationUrl,
        'The SHA-256 values to be signed (base64), as the approval page lists them:',
        ...approval.hashes.map((entry) => `  ${entry.hash}  ${entry.input}`),
      ]),
      '',
      `Then, within 5 minutes of approving, run with the address${steps.length > 1 ? ' each approval' : ' the browser'} was sent to: esign sign --complete --state ${command.state} ${redirectArgs}`,
    ].join('\n'),
  );
}

/**
 * --prepare for a credential authorized with credentials/authorize (a seal): nothing to approve in
 * a browser; the state holds the hashes, never a PIN or OTP, and --complete authorizes each step.
 */
async function savePreparedForAuthorize(
  prepared: Pick<PreparedDocument, 'job' | 'toBeSigned'>[],
  credential: CredentialInfo & SigningCredential,
  base: Omit<SplitState, 'steps'>,
  command: SignCommandOptions,
  ctx: Context,
): Promise<void> {
  const steps: ApprovalStep[] = batches(prepared, credential.signaturesPerApproval).map((batch) => ({
    jobs: batch.map((document) => savedJob(document)),
  }));
  await saveState(command.state!, { ...base, steps });
  const files = prepared.length;
  ctx.io.essential(
    {
      state: command.state,
      credential: credential.credentialID,
      authorizedWith: 'credentials/authorize',
      steps: steps.map((step) => ({ hashes: step.jobs.map((job) => ({ input: job.input, hash: job.hash })) })),
    },
    () =>
      `Prepared ${files} file${files === 1 ? '' : 's'}; state saved in ${command.state}. The credential ${credential.credentialID} is authorized with its PIN${credential.otp ? ' and one-time password' : ''}, not in a browser: ` +
      `run esign sign --complete --state ${command.state} (with ESIGN_CREDENTIAL_PIN${credential.otp?.type === 'offline' ? ' and ESIGN_TOTP_SECRET' : ''} set, or at a terminal).`,
  );
}

/** A prepared document as the state file keeps it (a job's output is derived when asked, so named here). */
function savedJob(document: Pick<PreparedDocument, 'job' | 'toBeSigned'>): SignJob & { hash: string } {
  const { input, output, kind } = document.job;
  return { input, output, kind, hash: Buffer.from(document.toBeSigned.toBeSignedHash).toString('base64') };
}

/** A fixed port: the redirect is pasted back, and nothing needs to listen on it. */
function splitRedirectUri(configured = DEFAULT_REDIRECT_URI): string {
  return new URL(configured).port === '0' ? DEFAULT_REDIRECT_URI : configured;
}

async function saveState(path: string, state: SignInState | SplitState): Promise<void> {
  await writeBytesAtomically(path, JSON.stringify(state, null, 2) + '\n', { overwrite: true, mode: 0o600 });
  await chmod(path, 0o600);
}

export async function runSplitComplete(command: SignCommandOptions, ctx: Context): Promise<void> {
  const state = await readStateFile(command.state!);
  if (state.kind !== 'approval') {
    throw new EsignError('STATE_FILE_INVALID', `${command.state} holds a pending sign-in, not prepared signatures.`, {
      hint: `Finish it first: esign sign --prepare --state ${command.state} --redirect-url URL FILES…`,
    });
  }
  const profile = await ctx.profile();
  if (profile.name !== state.profile) {
    throw new EsignError(
      'STATE_FILE_INVALID',
      `The state file was prepared with profile ${state.profile}, not ${profile.name}.`,
      { hint: `Pass --profile ${state.profile}.` },
    );
  }
  const byBrowser = (state.authMode ?? 'oauth2code') === 'oauth2code';
  // The steps approved so far; the others stay in the state file for a later --complete.
  const codes = byBrowser
    ? codesFor(
        command,
        state.steps.map((step) => step.authorization!),
        'approval of the prepared signatures',
      )
    : state.steps.map(() => undefined);
  const chosen = state.steps.flatMap((step, index) =>
    byBrowser && codes[index] === undefined ? [] : [{ step, code: codes[index] }],
  );
  // The state never holds a PIN or OTP: they are given again here.
  const signing = await createCscClient(ctx, profile, byBrowser ? undefined : await authorizationFactors(command, ctx));
  // Checked before the codes are spent: each can be exchanged for a SAD only once.
  if (!(await signedInOrCanSignIn(signing, ctx))) {
    throw new EsignError(
      'AUTH_BROWSER_FAILED',
      'The sign-in to the signing service that --prepare used is not on this machine or has expired (it lasts an hour).',
      {
        hint: 'Run --complete where --prepare ran (the same ESIGN_CONFIG_DIR) within the hour, or run --prepare again.',
      },
    );
  }
  const credential = await withCompleteChain(
    signing.forSigning(await signing.credentialInfo(state.credentialID), state.digest),
    profile,
    ctx,
  );
  if (!byBrowser) await signing.readyToAuthorize(credential);
  // What the signatures are worth, as a one-step sign reports it (when verified lists are cached).
  const qualifier = await credentialQualifier(ctx);
  // Storage is opened before any code is spent, so a missing login shows at once.
  const upload = command.upload
    ? await outputUploader(
        ctx,
        chosen.flatMap(({ step }) => step.jobs),
        command.overwrite,
      )
    : undefined;
  // The state never holds a PDF password: it is given again here (ESIGN_PDF_PASSWORD, --password-file, the terminal).
  const passwords = await PdfPasswords.from(command, ctx);
  const options: SignOptions = {
    level: state.level,
    signingTime: new Date(state.signingTime),
    pdf: state.pdf,
    appearance: await loadAppearanceAssets(state.pdf?.visible),
    overwrite: state.overwrite || command.force,
    ...(state.signaturePolicy ? { signaturePolicy: state.signaturePolicy } : {}),
    ...(state.asicSignature === 'cades' || state.asicSignature === 'xades'
      ? { asicSignature: state.asicSignature }
      : {}),
  };
  const jobs = chosen.flatMap(({ step }) => step.jobs);
  for (const dir of new Set(jobs.map((job) => dirname(job.output)))) await createOutputDir(dir);
  const { container } = state;
  const prepared: PreparedDocument[] = [];
  let remaining = state.steps;
  try {
    // Every input is read again and must give the hash that was approved, before any code is spent.
    for (const job of jobs) {
      // The one job of several inputs: of the form that makes one output of them, its inputs kept apart.
      const form = container ? formOfPreparedContainer() : formOfKind(job.kind);
      const document = await passwords.open(job.input, (password) =>
        form.prepare(
          {
            input: job.input,
            output: job.output,
            kind: form.kind,
            ...(container ? { inputs: container.args } : {}),
          },
          credential,
          fileSystemDocuments,
          { ...options, pdfPassword: () => password },
        ),
      );
      prepared.push(document);
      if (container && form.splitCheck) form.splitCheck(container, document, job.hash);
      else if (Buffer.from(document.toBeSigned.toBeSignedHash).toString('base64') !== job.hash) {
        throw new EsignError('STATE_FILE_INVALID', `${job.input} changed since --prepare: its hash is different now.`, {
          hint: 'Run --prepare again and approve the new hashes.',
        });
      }
    }
    const tsa = options.level === 'B-B' ? undefined : createTsaClient(ctx, profile);
    let offset = 0;
    for (const { step, code } of chosen) {
      const documents = prepared.slice(offset, (offset += step.jobs.length));
      const hashes = documents.map((document) => document.toBeSigned.toBeSignedHash);
      const signatures = step.authorization
        ? await signing.signWithAuthorizationCode(
            credential,
            hashes,
            code!,
            step.authorization.redirectUri,
            step.authorization.codeVerifier,
          )
        : await signing.signHashes(credential, hashes);
      const values = await timestampSignatures(
        signatures,
        tsa,
        options.level,
        {},
        { digest: credential.scheme.digest, covers: timestampCovers(documents) },
      );
      for (const [position, document] of documents.entries()) {
        const value = values[position]!;
        if (value.status === 'rejected') throw value.reason;
        const result = await completeDocument(
          formOfKind(document.job.kind),
          document,
          credential,
          value.value,
          options,
          {
            files: fileSystemDocuments,
          },
        );
        const made = qualifier?.(credential.certificates, result.timestampTime ?? ctx.clock.now());
        report(ctx, result, credential.credentialID, undefined, made);
        await upload?.(result.output);
      }
      // A finished step leaves the state file, so that completing the others later never redoes it.
      remaining = remaining.filter((other) => other !== step);
      if (remaining.length > 0) await saveState(command.state!, { ...state, steps: remaining });
    }
  } catch (error) {
    await Promise.all(prepared.map((document) => document.output?.abort()));
    throw error;
  }
  if (remaining.length === 0) {
    // Done: the pending verifiers go with it.
    await rm(command.state!, { force: true });
  } else {
    ctx.io.essential(
      { state: command.state, remainingApprovals: remaining.length },
      () =>
        `${remaining.length} approval${remaining.length === 1 ? '' : 's'} of ${state.steps.length} still to complete: run esign sign --complete --state ${command.state} with their --redirect-url.`,
    );
  }
}

/**
 * The authorization code of each pending step, in their order (undefined for a step not given):
 * `--code` when there is one step, else a `--redirect-url` per approved step, matched to it by
 * `state`, in any order. At least one step must be given.
 */
function codesFor(
  command: SignCommandOptions,
  steps: readonly PendingAuthorization[],
  purpose: string,
): Array<string | undefined> {
  if (command.code && command.redirectUrl.length > 0)
    throw new EsignError('USAGE', 'Pass either --code or --redirect-url, not both.');
  if (command.code) {
    if (steps.length > 1)
      throw new EsignError('USAGE', `There are ${steps.length} approvals to finish; --code covers one.`, {
        hint: 'Pass --redirect-url for each approval instead.',
      });
    return [command.code];
  }
  if (command.redirectUrl.length === 0)
    throw new EsignError('USAGE', 'The split flow needs --redirect-url URL (or --code CODE).', {
      hint: 'Paste the address the browser was sent to after approving.',
    });
  const codes: Array<string | undefined> = steps.map(() => undefined);
  for (const raw of command.redirectUrl) {
    let params: URLSearchParams;
    try {
      params = new URL(raw).searchParams;
    } catch {
      throw new EsignError('USAGE', 'A --redirect-url is not a URL.', {
        hint: 'Paste the whole address from the browser bar.',
      });
    }
    const index = steps.findIndex((step) => constantTimeEqual(params.get('state') ?? '', step.state));
    // A state of no step is refused by checkRedirect (AUTH_STATE_MISMATCH), as is an `error` redirect.
    codes[Math.max(index, 0)] = checkRedirect(params, steps[Math.max(index, 0)]!.state, purpose).code;
  }
  return codes;
}

async function readStateFile(path: string): Promise<SignInState | SplitState> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new EsignError('STATE_FILE_INVALID', `Could not read the state file ${path}.`, {
      hint: 'Pass the file written by `esign sign --prepare`.',
      cause: error,
    });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new EsignError('STATE_FILE_INVALID', `The state file ${path} is not JSON.`, {
      hint: 'Run `esign sign --prepare` again.',
      cause: error,
    });
  }
  const state = parsed as Partial<Omit<SignInState, 'kind'> & Omit<SplitState, 'kind'>> & { kind?: string };
  const pending = (value: unknown): boolean => {
    const step = value as Partial<PendingAuthorization> | undefined;
    return (
      typeof step?.state === 'string' && typeof step.redirectUri === 'string' && typeof step.codeVerifier === 'string'
    );
  };
  const valid =
    state?.version === STATE_VERSION &&
    typeof state.profile === 'string' &&
    (state.kind === 'service-sign-in'
      ? pending(state.signIn)
      : state.kind === 'approval' &&
        typeof state.credentialID === 'string' &&
        Array.isArray(state.steps) &&
        state.steps.length > 0 &&
        state.steps.every(
          (step) =>
            Array.isArray(step?.jobs) &&
            ((state.authMode ?? 'oauth2code') === 'oauth2code'
              ? pending(step.authorization)
              : step.authorization === undefined),
        ) &&
        SIGNATURE_LEVELS.includes(state.level as SignatureLevel) &&
        (state.digest === undefined || DIGEST_NAMES.includes(state.digest)) &&
        (state.container === undefined ||
          (Array.isArray(state.container.args) &&
            state.container.args.every((arg) => typeof arg === 'string') &&
            typeof state.container.output === 'string')) &&
        typeof state.signingTime === 'string');
  if (!valid)
    throw new EsignError('STATE_FILE_INVALID', `${path} is not an esign state file of this version.`, {
      hint: 'Run `esign sign --prepare` again.',
    });
  return state as SignInState | SplitState;
}
