/**
 * What the runs of `esign sign` share (the batch, the split flow, an ASiC-E's container): choosing
 * the level and the credential, the readiness of its authorization, `--require`, and the line (or
 * --json object) each signed output gets.
 */
import { EsignError } from '../core/errors.js';
import type { SignatureLevel } from '../core/profile.js';
import type { DigestName } from '../core/cms/algorithms.js';
import type { CredentialInfo } from '../core/csc/shapes.js';
import type { ExtensionResult } from '../core/ltv/index.js';
import type { SigningCredential } from '../core/ports.js';
import type { OutputContents, SignedDocument } from '../core/sign-workflow.js';
import { formOfKind } from '../io/forms/registry.js';
import type { CscClient } from '../io/csc-client.js';
import type { Context, ResolvedProfile } from './context.js';
import type { SignCommandOptions } from './sign-options.js';
import { describeQualification } from '../core/qualification/describe.js';
import type { Qualification } from '../core/qualification/determine.js';
import { requirementOf, type Requirement } from './trusted-lists.js';

/**
 * Before any document is prepared: the credential's authorization can happen in this run — its
 * PIN and OTP can be had, or, for a browser approval, a person can finish it here.
 */
export async function readyToAuthorize(credential: SigningCredential, signing: CscClient, ctx: Context): Promise<void> {
  if (credential.authMode === 'oauth2code')
    await ctx.assertBrowserStepPossible('approval of the signatures', { approval: true });
  await signing.readyToAuthorize(credential);
}

export function chooseLevel(requested: SignatureLevel | undefined, profile: ResolvedProfile): SignatureLevel {
  if (requested) return requested;
  if (profile.settings.level) return profile.settings.level as SignatureLevel;
  return (profile.settings.tsaUrls?.length ?? 0) > 0 ? 'B-T' : 'B-B';
}

/**
 * The credential to sign with: the one named, else the only enabled one, else a prompt on a TTY.
 * It must be enabled; its chain comes from credentials/info.
 */
export async function chooseCredential(
  named: string | undefined,
  signing: CscClient,
  ctx: Context,
  digest?: DigestName,
): Promise<CredentialInfo & SigningCredential> {
  let id = named;
  if (!id) {
    const ids = await signing.listCredentialIDs();
    const infos = await Promise.all(ids.map((candidate) => signing.credentialInfo(candidate)));
    const enabled = infos.filter((info) => info.status === 'enabled');
    if (enabled.length === 1) return signing.forSigning(enabled[0]!, digest);
    if (enabled.length === 0)
      throw new EsignError('CREDENTIAL_NOT_FOUND', 'You have no enabled signing credential.', {
        hint: 'Ask the service operator, or check `esign credentials list`.',
      });
    if (!ctx.io.canPrompt) {
      throw new EsignError('CREDENTIAL_AMBIGUOUS', `You have ${enabled.length} enabled credentials and no default.`, {
        hint: `Pass --credential ID (one of ${enabled.map((info) => info.credentialID).join(', ')}), or set a default with \`esign credentials use ID\`.`,
      });
    }
    const { select } = await import('@inquirer/prompts');
    id = await select({
      message: 'Sign with which credential?',
      choices: enabled.map((info) => ({ name: info.credentialID, value: info.credentialID })),
    });
  }
  const info = await signing.credentialInfo(id);
  if (info.status !== 'enabled') {
    throw new EsignError('CREDENTIAL_DISABLED', `The credential ${id} is disabled and cannot sign.`, {
      hint: 'Choose another with --credential (see `esign credentials list`).',
    });
  }
  return signing.forSigning(info, digest);
}

/** The line (or --json object) of a signed document; the split flow's --complete reports the same. */
export function report(
  ctx: Context,
  result: SignedDocument,
  credentialID: string,
  extension: ExtensionResult | undefined,
  qualification: Qualification | undefined,
): void {
  const { contents } = result;
  // A job of several inputs is named by its output.
  for (const warning of extension?.warnings ?? [])
    ctx.io.warn(`${contents ? result.output : result.input}: ${warning}`);
  const { packaging, validationDataKey } = formOfKind(result.kind).report;
  const format = result.format ?? formOfKind(result.kind).report.format;
  if (contents) return reportContents(ctx, result, contents, credentialID, extension, qualification);
  ctx.io.result(
    {
      input: result.input,
      output: result.output,
      format,
      ...(packaging ? { packaging } : {}),
      credential: credentialID,
      level: result.level,
      bytes: result.bytes,
      sha256: result.sha256,
      ...(result.timestampTime ? { timestamp: result.timestampTime.toISOString() } : {}),
      ...(extension
        ? {
            [validationDataKey]: extension.added,
            ...(extension.archiveTimestamp ? { archiveTimestamp: extension.archiveTimestamp.toISOString() } : {}),
            warnings: extension.warnings,
          }
        : {}),
      ...(qualification ? { qualification } : {}),
    },
    () =>
      `✓ ${result.input} → ${result.output} (${format} ${result.level}, ${formatBytes(result.bytes)})` +
      (qualification ? `; ${describeQualification(qualification)}` : ''),
  );
}

/** The line (or --json object) of the output of a job of several inputs: the files it holds, named. */
function reportContents(
  ctx: Context,
  result: SignedDocument,
  contents: OutputContents,
  credentialID: string,
  extension: ExtensionResult | undefined,
  qualification: Qualification | undefined,
): void {
  const { packaging, validationDataKey } = formOfKind(result.kind).report;
  const format = contents.format ?? formOfKind(result.kind).report.format;
  ctx.io.result(
    {
      input: result.input,
      output: result.output,
      format,
      ...(packaging ? { packaging } : {}),
      files: contents.files,
      credential: credentialID,
      level: result.level,
      bytes: result.bytes,
      sha256: result.sha256,
      ...(result.timestampTime ? { timestamp: result.timestampTime.toISOString() } : {}),
      ...(extension ? { [validationDataKey]: extension.added, warnings: extension.warnings } : {}),
      ...(extension?.archiveTimestamp ? { archiveTimestamp: extension.archiveTimestamp.toISOString() } : {}),
      ...(qualification ? { qualification } : {}),
    },
    () =>
      `✓ ${contents.files.length} file(s) → ${result.output} (${contents.label}, ${format} ${result.level}, ${formatBytes(result.bytes)})` +
      (qualification ? `; ${describeQualification(qualification)}` : ''),
  );
}

/** What --require (or ESIGN_REQUIRE) asks of the signature this run makes. */
export function requirementFrom(options: SignCommandOptions, ctx: Context): Promise<Requirement | undefined> {
  return requirementOf(
    options.require ?? ctx.env['ESIGN_REQUIRE'],
    options.require !== undefined ? '--require' : 'ESIGN_REQUIRE',
  );
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 * 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  return `${(bytes / 1024 / 1024 / 1024).toFixed(2)} GiB`;
}
