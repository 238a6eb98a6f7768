/**
 * The split flow for CI and remote approval: `--prepare` computes the hashes and prints the
 * approval URL, saving what is needed to finish; `--complete` re-reads the inputs, checks they
 * still give the same hashes, exchanges the code for the SAD and writes the outputs. The state
 * file holds no token and no SAD (mode 0600 all the same: it names the files and the `state`).
 */
import { chmod, readFile } from 'node:fs/promises';
import { EsignError } from '../core/errors.js';
import type { CredentialInfo } from '../core/csc/shapes.js';
import { SIGNATURE_LEVELS, type SignatureLevel } from '../core/profile.js';
import { completeDocument, hashSource, mapConcurrently, prepareDocument, type DocumentFiles, type PreparedDocument, type SignJob, type SignOptions } from '../core/sign-workflow.js';
import { writeBytesAtomically } from '../io/atomic-write.js';
import type { CscClient } from '../io/csc-client.js';
import { fileSystemDocuments, writeDetachedSignature } from '../io/document-files.js';
import { checkRedirect, randomState } from '../io/loopback.js';
import { createTsaClient } from '../io/tsa-client.js';
import { createHash } from 'node:crypto';
import type { Context } from './context.js';
import { DEFAULT_REDIRECT_URI } from './context.js';
import type { SignCommandOptions } from './commands/sign.js';

const STATE_VERSION = 1;

interface SplitState {
  version: number;
  profile: string;
  credentialID: string;
  level: SignatureLevel;
  signingTime: string;
  pdf: SignOptions['pdf'];
  overwrite: boolean;
  jobs: Array<SignJob & { hash: string }>;
  authorization: { state: string; redirectUri: string };
  createdAt: string;
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

export async function runSplitPrepare(
  jobs: SignJob[],
  credential: CredentialInfo,
  options: SignOptions,
  signing: CscClient,
  command: SignCommandOptions,
  ctx: Context,
): Promise<void> {
  if (jobs.length > 50) throw new EsignError('CSC_TOO_MANY_HASHES', `One approval covers at most 50 signatures; ${jobs.length} files were given.`, { hint: 'Split the files over several --prepare runs.' });
  const prepared = await mapConcurrently(jobs, 2, (job) => prepareDocument(job, credential, hashOnlyDocuments, options));
  const profile = await ctx.profile();
  const configured = profile.settings.redirectUri ?? DEFAULT_REDIRECT_URI;
  const redirectUri = new URL(configured).port === '0' ? DEFAULT_REDIRECT_URI : configured;
  const state: SplitState = {
    version: STATE_VERSION,
    profile: profile.name,
    credentialID: credential.credentialID,
    level: options.level,
    signingTime: options.signingTime.toISOString(),
    pdf: options.pdf,
    overwrite: options.overwrite,
    jobs: prepared.map((document) => ({ ...document.job, hash: Buffer.from(document.signedAttributes.toBeSignedHash).toString('base64') })),
    authorization: { state: randomState(), redirectUri },
    createdAt: ctx.clock.now().toISOString(),
  };
  const hashes = prepared.map((document) => document.signedAttributes.toBeSignedHash);
  const url = signing.credentialAuthorizationUrl(credential.credentialID, hashes, redirectUri, state.authorization.state);
  await writeBytesAtomically(command.state!, JSON.stringify(state, null, 2) + '\n', { overwrite: true, mode: 0o600 });
  await chmod(command.state!, 0o600);
  ctx.io.result({ state: command.state, authorizationUrl: url, redirectUri, credential: credential.credentialID, hashes: state.jobs.map((job) => ({ input: job.input, hash: job.hash })) }, () =>
    [
      `Prepared ${jobs.length} file${jobs.length === 1 ? '' : 's'}; state saved in ${command.state}.`,
      `Approve ${jobs.length} signature${jobs.length === 1 ? '' : 's'} with credential ${credential.credentialID} at:`,
      url,
      '',
      `Then, within 5 minutes of approving, run: esign sign --complete --state ${command.state} --redirect-url "<the URL the browser was sent to>"`,
    ].join('\n'),
  );
}

export async function runSplitComplete(command: SignCommandOptions, ctx: Context): Promise<void> {
  const state = await readState(command.state!);
  const profile = await ctx.profile();
  if (profile.name !== state.profile) {
    throw new EsignError('STATE_FILE_INVALID', `The state file was prepared with profile ${state.profile}, not ${profile.name}.`, { hint: `Pass --profile ${state.profile}.` });
  }
  const code = codeFrom(command, state);
  const { createCscClient } = await import('../io/csc-client.js');
  const signing = await createCscClient(ctx, profile);
  const credential = await signing.credentialInfo(state.credentialID);
  const options: SignOptions = { level: state.level, signingTime: new Date(state.signingTime), pdf: state.pdf, overwrite: state.overwrite || command.force };
  const prepared: PreparedDocument[] = [];
  try {
    for (const job of state.jobs) {
      const document = await prepareDocument({ input: job.input, output: job.output, kind: job.kind }, credential, fileSystemDocuments, options);
      prepared.push(document);
      if (Buffer.from(document.signedAttributes.toBeSignedHash).toString('base64') !== job.hash) {
        throw new EsignError('STATE_FILE_INVALID', `${job.input} changed since --prepare: its hash is different now.`, { hint: 'Run --prepare again and approve the new hashes.' });
      }
    }
    const hashes = prepared.map((document) => document.signedAttributes.toBeSignedHash);
    const signatures = await signing.signWithAuthorizationCode(credential, hashes, code, state.authorization.redirectUri);
    const tsa = options.level === 'B-B' ? undefined : createTsaClient(ctx, profile);
    const values = await mapConcurrently(signatures, 4, async (signature) => {
      if (!tsa) return { signature };
      const stamp = await tsa.timestamp(new Uint8Array(createHash('sha256').update(signature).digest()));
      return { signature, timestampToken: stamp.token, timestampTime: stamp.genTime };
    });
    for (const [index, document] of prepared.entries()) {
      const result = await completeDocument(document, credential, values[index]!, options, writeDetachedSignature);
      ctx.io.result({ input: result.input, output: result.output, credential: credential.credentialID, level: result.level, bytes: result.bytes, sha256: result.sha256 }, () => `✓ ${result.input} → ${result.output} (${result.level})`);
    }
  } catch (error) {
    await Promise.all(prepared.map((document) => document.output?.abort()));
    throw error;
  }
}

function codeFrom(command: SignCommandOptions, state: SplitState): string {
  if (command.code && command.redirectUrl) throw new EsignError('USAGE', 'Pass either --code or --redirect-url, not both.');
  if (command.code) return command.code;
  if (!command.redirectUrl) throw new EsignError('USAGE', '--complete needs --redirect-url URL (or --code CODE).', { hint: 'Paste the address the browser was sent to after approving.' });
  let params: URLSearchParams;
  try {
    params = new URL(command.redirectUrl).searchParams;
  } catch {
    throw new EsignError('USAGE', 'The --redirect-url is not a URL.', { hint: 'Paste the whole address from the browser bar.' });
  }
  return checkRedirect(params, state.authorization.state, 'approval of the prepared signatures').code;
}

async function readState(path: string): Promise<SplitState> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    throw new EsignError('STATE_FILE_INVALID', `Could not read the state file ${path}.`, { hint: 'Pass the file written by `esign sign --prepare`.', cause: error });
  }
  const state = parsed as Partial<SplitState>;
  if (
    state?.version !== STATE_VERSION ||
    typeof state.credentialID !== 'string' ||
    !Array.isArray(state.jobs) ||
    !state.authorization ||
    !SIGNATURE_LEVELS.includes(state.level as SignatureLevel) ||
    typeof state.signingTime !== 'string'
  ) {
    throw new EsignError('STATE_FILE_INVALID', `${path} is not an esign state file of this version.`, { hint: 'Run `esign sign --prepare` again.' });
  }
  return state as SplitState;
}
