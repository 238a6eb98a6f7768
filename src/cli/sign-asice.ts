/**
 * `esign sign A B DIR --format asice -o bundle.asice`: one ASiC-E container of every file (a
 * directory's files recursively, named relative to its parent), one signature over its manifest,
 * so one approval for the whole container. Each file is read twice, streamed: hashed for the
 * manifest before the approval, then copied into the ZIP and hashed again. `esign sign X.asice`
 * adds a parallel signature with a manifest of its own.
 */
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { buildManifest, mimeTypeOf } from '../core/forms/asic-e/manifest.js';
import { holdsXades } from '../core/forms/asic-e/xades-names.js';
import { parseSignaturePolicy } from '../core/forms/shared/xades/policy.js';
import { buildSignedAttributes } from '../core/cms/signed-attributes.js';
import { buildSignedData } from '../core/cms/signed-data.js';
import { EsignError, isEsignError } from '../core/errors.js';
import { signBatch } from '../core/sign-workflow.js';
import {
  addedOutputFor,
  containerFiles,
  hashedFile,
  openExisting,
  outputFor,
  type ExistingContainer,
} from '../io/forms/asic-e/container-files.js';
import { writeAsicE } from '../io/forms/asic-e/files.js';
import { oneForManyForm } from '../io/forms/registry.js';
import { signedAlready } from '../io/forms/asic-e/signed-already.js';
import type { SignedFile } from '../io/forms/shared/asic-writer.js';
import { assertAbsent, outputExists } from '../io/atomic-write.js';
import { createOutputDir, fileSystemDocuments } from '../io/document-files.js';
import type { Context } from './context.js';
import { BatchTally } from './batch-tally.js';
import { authorizationFactors } from './credential-factors.js';
import { outputUploader } from './output-uploader.js';
import { createCscClient, createTsaClient, withCompleteChain } from './service-clients.js';
import type { SignCommandOptions } from './sign-options.js';
import type { ContainerCompletion } from './sign-split.js';
import { chooseCredential, chooseLevel, formatBytes, readyToAuthorize, requirementFrom } from './sign-common.js';
import { assertRequirement, credentialQualifier, type CredentialQualifier, type Requirement } from './trusted-lists.js';
import { describeQualification } from '../core/qualification/describe.js';

export async function runSignAsicE(
  args: string[],
  options: SignCommandOptions,
  ctx: Context,
  completing?: ContainerCompletion,
): Promise<void> {
  if (options.prepare && (options.level === 'B-LT' || options.level === 'B-LTA'))
    throw new EsignError('USAGE', `The split flow signs at B-B or B-T, not ${options.level}.`, {
      hint: 'Sign with --prepare/--complete at B-T, or sign the container in one run.',
    });
  if (args.length === 0)
    throw new EsignError('USAGE', 'Name at least one file or directory to put in the container.', {
      hint: 'esign sign a.pdf b.xml docs/ --format asice -o bundle.asice',
    });
  // `esign sign bundle.asice`: a parallel signature, with a manifest of its own, over every document in it.
  const adding = oneForManyForm(args) !== undefined && Boolean((await stat(args[0]!).catch(() => undefined))?.isFile());
  const output = adding ? addedOutputFor(args[0]!, options) : outputFor(args, options);
  const requirement = await requirementFrom(options, ctx);
  const qualifier = await credentialQualifier(ctx);
  // Without lists nobody can tell: refused before anything else happens.
  if (requirement && !qualifier)
    await assertRequirement(requirement, options.credential ?? 'the credential', undefined);
  // The split flow's approval happens elsewhere: in the browser between --prepare and --complete.
  if (!options.prepare && !completing) await ctx.assertBrowserStepPossible('approval of the signatures');
  const existing = adding ? await openExisting(args[0]!) : undefined;
  try {
    const replacing = adding && resolve(output) === resolve(args[0]!);
    // With --skip-existing an output there is looked into once the signer is known.
    if (!options.force && !options.skipExisting && !replacing) await assertAbsent(output);
    if (options.outputDir && !options.prepare) await createOutputDir(dirname(output));
    // The profile is resolved once: with --upload, with the storage it needs (the sandbox's S3).
    await ctx.profile({ storage: options.upload });
    await signContainer(args, output, existing, replacing, options, ctx, completing, { qualifier, requirement });
  } finally {
    await existing?.close();
  }
}

async function signContainer(
  args: string[],
  output: string,
  existing: ExistingContainer | undefined,
  replacing: boolean,
  options: SignCommandOptions,
  ctx: Context,
  completing: ContainerCompletion | undefined,
  { qualifier, requirement }: { qualifier: CredentialQualifier | undefined; requirement: Requirement | undefined },
): Promise<void> {
  const files = existing ? [] : await containerFiles(args, output);
  const number = String(existing?.number ?? 1).padStart(3, '0');
  const signatureName = `META-INF/signature${number}.p7s`;
  const manifestName = existing ? `META-INF/ASiCManifest${number}.xml` : 'META-INF/ASiCManifest.xml';
  const profile = await ctx.profile();
  const level = chooseLevel(options.level, profile);
  if (options.outputDir) await createOutputDir(options.outputDir);
  const signing = await createCscClient(ctx, profile, await authorizationFactors(options, ctx));
  const split = options.prepare ? await import('./sign-split.js') : undefined;
  if (split && (await split.splitServiceSignIn(signing, options, ctx))) return;
  const credential = await withCompleteChain(
    await chooseCredential(options.credential ?? profile.settings.credential, signing, ctx, options.digest),
    profile,
    ctx,
  );
  // Before the approval and before any hash goes to the service, as for every other format.
  if (requirement)
    await assertRequirement(
      requirement,
      credential.credentialID,
      qualifier?.(credential.certificates, ctx.clock.now()),
    );
  if (!split && !completing) await readyToAuthorize(credential, signing, ctx);
  const signer = credential.certificates[0];
  if (!signer)
    throw new EsignError('CREDENTIAL_UNSUPPORTED_KEY', `The credential ${credential.credentialID} has no certificate.`);
  const digest = credential.scheme.digest;

  const signed: SignedFile[] = [];
  // --continue-on-error: a file that cannot be read is named and left out of the container, as a batch leaves it out.
  const tally = options.continueOnError && files.length > 0 ? new BatchTally(files.length, ctx) : undefined;
  for (const file of files) {
    try {
      signed.push(await hashedFile(file, digest));
    } catch (error) {
      if (!tally || (isEsignError(error) && /^(USAGE|INTERRUPTED)$/.test(error.code))) throw error;
      tally.failed(file.path, error);
    }
  }
  if (tally && signed.length === 0) return tally.finish();
  for (const document of existing?.documents ?? []) {
    const hash = createHash(digest);
    for await (const chunk of existing!.read(document.name)) hash.update(chunk);
    signed.push({
      path: `${args[0]}:${document.name}`,
      name: document.name,
      digest,
      digestValue: new Uint8Array(hash.digest()),
      compress: document.compress,
      chunks: () => existing!.read(document.name),
    });
  }
  if (signed.length === 0) throw new EsignError('INPUT_NOT_FOUND', `${args[0]} holds no files to sign.`);
  if (options.skipExisting && (await outputExists(output))) {
    const already = await signedAlready(output, signed, signer);
    if (already.signed) {
      ctx.io.result(
        { input: args.join(' '), output, credential: credential.credentialID, skipped: true },
        () => `↷ ${output} already holds a signature by ${credential.credentialID} over these files; skipped`,
      );
      return tally?.finish();
    }
    if (!options.force && !replacing)
      throw new EsignError(
        'OUTPUT_EXISTS',
        `${output} already exists and holds no signature by ${credential.credentialID} over these files (${already.reason}); esign does not overwrite it unasked.`,
        { hint: 'Pass --force as well to sign it again over the old container, or move the old one away.' },
      );
  }
  // Storage is opened before anyone approves anything, so a missing login shows at once.
  const upload = options.upload ? await outputUploader(ctx, [{ output }], options.overwrite) : undefined;
  // XAdES (signaturesN.xml) in a new container unless --asic-signature cades; a container signed again keeps its form.
  const existingNames = existing?.metadata.map((entry) => entry.name);
  const xades = existingNames ? holdsXades(existingNames) : options.asicSignature !== 'cades';
  if (existingNames && options.asicSignature && (options.asicSignature === 'xades') !== xades)
    throw new EsignError(
      'USAGE',
      `${args[0]} holds ${xades ? 'XAdES' : 'CAdES'} signatures, so a signature added to it is ${xades ? 'XAdES' : 'CAdES'} too.`,
      { hint: 'Leave out --asic-signature when adding a signature to a container.' },
    );
  const signingTime = completing?.signingTime ?? ctx.clock.now();
  const policy = options.signaturePolicy ? parseSignaturePolicy(options.signaturePolicy) : undefined;
  const xadesSigning = xades ? await import('../io/forms/asic-e/xades-sign.js') : undefined;
  const xadesPrepared = xadesSigning?.prepareXadesContainer(signed, existingNames, credential, signingTime, policy);
  // With XAdES the manifest is written nowhere: the split flow compares it to name the files changed since --prepare.
  const manifest = buildManifest({
    signature: xadesPrepared?.state.signatureName ?? signatureName,
    references: signed.map((file) => ({ ...file, mimeType: mimeTypeOf(file.name) })),
  });
  const signedAttributes =
    xadesPrepared?.toBeSigned ??
    buildSignedAttributes({
      contentDigest: new Uint8Array(createHash(digest).update(manifest).digest()),
      digest,
      signerCertificate: signer,
      signingTime,
    });
  // --prepare: the manifest and the hash to approve are saved; --complete makes this container again and signs it.
  if (split) {
    await split.savePrepared(
      [{ job: { input: args.join(' '), output, kind: 'cades' }, toBeSigned: signedAttributes }],
      credential,
      { level, signingTime, overwrite: options.force || replacing },
      signing,
      options,
      ctx,
      {
        args,
        output,
        manifest: Buffer.from(manifest).toString('base64'),
        ...(xades ? {} : { asicSignature: 'cades' as const }),
        ...(options.signaturePolicy ? { signaturePolicy: options.signaturePolicy } : {}),
      },
    );
    return tally?.finish();
  }
  const tsa = level === 'B-B' ? undefined : createTsaClient(ctx, profile);
  const [result] = completing
    ? [
        {
          status: 'fulfilled' as const,
          value: await completing.sign(signedAttributes.toBeSignedHash, manifest, xadesPrepared?.timestampCovers),
        },
      ]
    : await signBatch(
        [
          {
            job: { input: manifestName, output, kind: 'cades' },
            toBeSigned: signedAttributes,
            inputSize: manifest.length,
            ...(xadesPrepared ? { timestampCovers: xadesPrepared.timestampCovers } : {}),
          },
        ],
        credential,
        signing,
        tsa,
        level,
      );
  if (!result || result.status === 'rejected') throw result?.reason;
  const value = result.value;
  const longTermLevel = level === 'B-LT' || level === 'B-LTA' ? level : undefined;
  const longTerm = tsa && longTermLevel ? await import('./asice-long-term.js') : undefined;
  let extended: Awaited<ReturnType<NonNullable<typeof longTerm>['validationDataFor']>> | undefined;
  let archiveTimestamp: Date | undefined;
  let metadata: { name: string; bytes: Uint8Array }[];
  if (xadesSigning && xadesPrepared) {
    // XAdES: the validation data and archive timestamp go into the signature's unsigned properties.
    const entries = await xadesSigning.xadesContainerEntries(
      xadesPrepared.state,
      signed,
      fileSystemDocuments,
      value,
      output,
      longTerm && tsa && longTermLevel
        ? {
            level: longTermLevel,
            validationData: async (_input, signedValue) => {
              extended = await longTerm.validationDataFor(
                ctx,
                longTermLevel,
                tsa,
                credential.certificates,
                xadesPrepared.state.signatureName,
                signedValue,
              );
              return extended.validationData;
            },
            archiveTimestamp: async (_input, imprint, archiveDigest) => {
              const stamp = await tsa.timestamp(imprint, archiveDigest);
              archiveTimestamp = stamp.genTime;
              return stamp;
            },
          }
        : undefined,
    );
    metadata = [...(existing?.metadata ?? []), ...entries];
  } else {
    // B-LT: the validation data in the signature; B-LTA: an archive manifest and timestamp over the whole container.
    extended =
      longTerm && tsa && longTermLevel
        ? await longTerm.validationDataFor(ctx, longTermLevel, tsa, credential.certificates, signatureName, value)
        : undefined;
    const cms = buildSignedData({
      signedAttributesDer: signedAttributes.der,
      signatureValue: value.signature,
      scheme: credential.scheme,
      certificates: credential.certificates,
      unsignedAttributes: value.timestampToken ? { signatureTimeStampToken: value.timestampToken } : undefined,
      ...(extended ? { validationData: extended.validationData } : {}),
    });
    metadata = [
      ...(existing?.metadata ?? []),
      { name: manifestName, bytes: manifest },
      { name: signatureName, bytes: cms },
    ];
    const archived =
      longTerm && tsa && level === 'B-LTA'
        ? await longTerm.archiveContainer(ctx, signed, metadata, digest, tsa)
        : undefined;
    if (archived) {
      metadata = archived.metadata;
      archiveTimestamp = archived.archiveTimestamp;
    }
  }
  for (const warning of extended?.warnings ?? []) ctx.io.warn(`${output}: ${warning}`);
  const written = await writeAsicE(fileSystemDocuments, {
    output,
    // Adding a signature replaces the container atomically (a temp file renamed over it).
    overwrite: options.force || replacing,
    documents: signed,
    metadata,
    mtime: signingTime,
  });
  const qualification = qualifier?.(credential.certificates, value.timestampTime ?? ctx.clock.now());
  ctx.io.result(
    {
      input: args.join(' '),
      output,
      format: xades ? 'XAdES' : 'CAdES',
      packaging: 'asic-e',
      files: signed.map((file) => file.name),
      credential: credential.credentialID,
      level,
      bytes: written.bytes,
      sha256: written.sha256,
      ...(value.timestampTime ? { timestamp: value.timestampTime.toISOString() } : {}),
      ...(extended ? { validationData: extended.added, warnings: extended.warnings } : {}),
      ...(archiveTimestamp ? { archiveTimestamp: archiveTimestamp.toISOString() } : {}),
      ...(qualification ? { qualification } : {}),
    },
    () =>
      `✓ ${signed.length} file(s) → ${output} (ASiC-E, ${existing ? `signature ${existing.number}, ` : ''}${xades ? 'XAdES' : 'CAdES'} ${level}, ${formatBytes(written.bytes)})` +
      (qualification ? `; ${describeQualification(qualification)}` : ''),
  );
  await upload?.(output);
  if (tally) {
    for (let count = 0; count < signed.length; count++) tally.signed();
    tally.finish();
  }
}
