/**
 * Signing an ASiC-E, as the shared batch pipeline runs it: one job whose inputs are every file (a
 * directory's files recursively, named relative to its parent), or the container a parallel
 * signature is added to. `check` walks the inputs and checks their names before any approval;
 * `prepare` reads each file once, writing it into the container's temp output as it hashes it, and
 * builds the manifest and the signed attributes over the digests; `complete` puts the signature in
 * (at B-LT its validation data, at B-LTA an archive manifest and its timestamp over the whole
 * container) and finishes the container: the META-INF entries, the central directory, one fsync
 * and the rename. Loaded only when a container is signed (it reaches the ZIP code).
 */
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  ARCHIVE_MANIFEST,
  buildArchiveManifest,
  metadataMimeType,
  planArchive,
} from '../../../core/forms/asic-e/archive-manifest.js';
import { buildManifest, mimeTypeOf, parseManifest } from '../../../core/forms/asic-e/manifest.js';
import type { DigestName } from '../../../core/cms/algorithms.js';
import { withValidationData } from '../../../core/cms/long-term.js';
import { buildSignedAttributes } from '../../../core/cms/signed-attributes.js';
import { buildSignedData } from '../../../core/cms/signed-data.js';
import type { DocumentFiles, OpenedDocument, PreparedDocument, SignJob, SignOptions } from '../../../core/documents.js';
import { EsignError } from '../../../core/errors.js';
import type { LongTermWindow, SignatureForm } from '../../../core/forms/form.js';
import type { ExistingSignature } from '../../../core/forms/shared/signed-already.js';
import type { SigningCredential } from '../../../core/ports.js';
import type { ContainerWriting, FileToWrite, SignedFile } from '../shared/asic-writer.js';
import {
  addedOutputFor,
  containerFiles,
  hashedFile,
  openExisting,
  outputFor,
  type ExistingContainer,
  type OutputOptions,
} from './container-files.js';
import { startAsicE } from './files.js';
import { signedAlready } from './signed-already.js';
import type { XadesContainerState } from './xades-sign.js';
import { holdsXades } from '../../../core/forms/asic-e/xades-names.js';

type Entry = { name: string; bytes: Uint8Array };

/** What `check` found: the files to put in (a new container), or that a signature is added to the one given. */
interface Checked {
  files?: { path: string; name: string }[];
}

/** What `prepare` leaves for `complete`: the files as hashed (and written), the container added to, the manifest. */
export interface Prepared {
  files: readonly SignedFile[];
  /** The container in its temp output, its documents written: complete finishes it. */
  writing: ContainerWriting;
  existing?: ExistingContainer;
  manifest: Uint8Array;
  manifestName: string;
  signatureName: string;
  /** XAdES (`signaturesN.xml`): the signature prepared; the manifest above is then only what --complete compares. */
  xades?: XadesContainerState;
}

/** `esign sign bundle.asice`: one input, a container already, to add a parallel signature to. */
async function addsSignature(form: Pick<SignatureForm, 'addsTo'>, inputs: readonly string[]): Promise<boolean> {
  return (
    inputs.length === 1 && form.addsTo(inputs[0]!) && Boolean((await stat(inputs[0]!).catch(() => undefined))?.isFile())
  );
}

const inputsOf = (job: SignJob): string[] => job.inputs ?? [job.input];

export async function jobFor(
  form: Pick<SignatureForm, 'addsTo' | 'kind'>,
  inputs: string[],
  options: OutputOptions,
): Promise<SignJob> {
  if (inputs.length === 0)
    throw new EsignError('USAGE', 'Name at least one file or directory to put in the container.', {
      hint: 'esign sign a.pdf b.xml docs/ --format asice -o bundle.asice',
    });
  const output = (await addsSignature(form, inputs)) ? addedOutputFor(inputs[0]!, options) : outputFor(inputs, options);
  return { input: inputs.join(' '), output, kind: form.kind, inputs };
}

export async function check(
  form: Pick<SignatureForm, 'addsTo'>,
  job: SignJob,
  files: DocumentFiles,
): Promise<OpenedDocument> {
  const inputs = inputsOf(job);
  if (await addsSignature(form, inputs)) {
    // Its layout checked as verify checks it; held open again by prepare.
    const existing = await openExisting(inputs[0]!);
    const count = existing.documents.length;
    await existing.close();
    return { source: await files.open(inputs[0]!), files: count, state: {} satisfies Checked };
  }
  const listed = await containerFiles(inputs, job.output);
  return {
    source: await files.open(listed[0]!.path),
    files: listed.length,
    state: { files: listed } satisfies Checked,
  };
}

/** `--skip-existing`: each file hashed with `digest`, and a container's documents, read from it. */
async function hashedFiles(
  listed: readonly { path: string; name: string }[],
  existing: ExistingContainer | undefined,
  container: string,
  digest: DigestName,
): Promise<SignedFile[]> {
  const signed: SignedFile[] = [];
  for (const file of listed) signed.push(await hashedFile(file, digest));
  for (const document of existing?.documents ?? []) {
    const hash = createHash(digest);
    for await (const chunk of existing!.read(document.name)) hash.update(chunk);
    signed.push({
      path: `${container}:${document.name}`,
      name: document.name,
      digest,
      digestValue: new Uint8Array(hash.digest()),
      compress: document.compress,
      chunks: () => existing!.read(document.name),
    });
  }
  return signed;
}

/** A container's documents, to be written into the container that adds a signature to it. */
const documentsOf = (existing: ExistingContainer, container: string): FileToWrite[] =>
  existing.documents.map((document) => ({
    path: `${container}:${document.name}`,
    name: document.name,
    compress: document.compress,
    chunks: () => existing.read(document.name),
  }));

export async function prepare(
  form: Pick<SignatureForm, 'addsTo'>,
  job: SignJob,
  credential: SigningCredential,
  documents: DocumentFiles,
  options: SignOptions,
  opened?: OpenedDocument,
): Promise<PreparedDocument> {
  await opened?.source.close();
  const inputs = inputsOf(job);
  const checked = opened?.state as Checked | undefined;
  const adding = checked ? checked.files === undefined : await addsSignature(form, inputs);
  const signer = credential.certificates[0];
  if (!signer)
    throw new EsignError('CREDENTIAL_UNSUPPORTED_KEY', `The credential ${credential.credentialID} has no certificate.`);
  const existing = adding ? await openExisting(inputs[0]!) : undefined;
  let writing: ContainerWriting | undefined;
  try {
    // XAdES (signaturesN.xml) in a new container unless --asic-signature cades; one signed again keeps its form.
    const existingNames = existing?.metadata.map((entry) => entry.name);
    const xadesInside = existingNames ? holdsXades(existingNames) : options.asicSignature !== 'cades';
    if (existingNames && xadesInside && options.asicSignature === 'cades') throw keepsItsForm(inputs[0]!, 'XAdES');
    if (existingNames && !xadesInside && options.asicSignature === 'xades') throw keepsItsForm(inputs[0]!, 'CAdES');
    const listed = existing
      ? documentsOf(existing, inputs[0]!)
      : (checked?.files ?? (await containerFiles(inputs, job.output)));
    // Adding a signature replaces the container atomically (a temp file renamed over it).
    const overwrite = options.overwrite || (adding && resolve(job.output) === resolve(inputs[0]!));
    // Each file read once: hashed as it goes into the temp output (one that cannot be opened left out through leaveOut).
    writing = await startAsicE(
      documents,
      { output: job.output, overwrite, mtime: options.signingTime },
      listed,
      credential.scheme.digest,
      options.leaveOut,
    );
    const files = writing.documents;
    if (files.length === 0) throw new EsignError('INPUT_NOT_FOUND', `${inputs[0]} holds no files to sign.`);
    const digest = credential.scheme.digest;
    const number = String(existing?.number ?? 1).padStart(3, '0');
    const signatureName = `META-INF/signature${number}.p7s`;
    const manifestName = existing ? `META-INF/ASiCManifest${number}.xml` : 'META-INF/ASiCManifest.xml';
    const manifest = buildManifest({
      signature: signatureName,
      references: files.map((file) => ({ ...file, mimeType: mimeTypeOf(file.name) })),
    });
    if (xadesInside) {
      const { prepareXadesContainer } = await import('./xades-sign.js');
      const xades = prepareXadesContainer(
        files,
        existingNames,
        credential,
        options.signingTime,
        options.signaturePolicy,
      );
      const state: Prepared = { files, writing, existing, manifest, manifestName, signatureName, xades: xades.state };
      return {
        job,
        toBeSigned: xades.toBeSigned,
        inputSize: manifest.length,
        timestampCovers: xades.timestampCovers,
        output: writing.output,
        state,
      };
    }
    const toBeSigned = buildSignedAttributes({
      contentDigest: new Uint8Array(createHash(digest).update(manifest).digest()),
      digest,
      signerCertificate: signer,
      signingTime: options.signingTime,
    });
    const state: Prepared = { files, writing, existing, manifest, manifestName, signatureName };
    return { job, toBeSigned, inputSize: manifest.length, output: writing.output, state };
  } catch (error) {
    await writing?.abort();
    await existing?.close();
    throw error;
  }
}

const keepsItsForm = (container: string, form: 'XAdES' | 'CAdES') =>
  new EsignError('USAGE', `${container} holds ${form} signatures, so a signature added to it is ${form} too.`, {
    hint: 'Leave out --asic-signature when adding a signature to a container.',
  });

export async function complete(
  prepared: PreparedDocument,
  credential: SigningCredential,
  value: Parameters<SignatureForm['complete']>[2],
  _options: SignOptions,
  files: DocumentFiles,
  longTerm: LongTermWindow | undefined,
): ReturnType<SignatureForm['complete']> {
  const state = prepared.state as Prepared;
  const { input } = prepared.job;
  if (state.xades) return completeXades(state, state.xades, value, files, input, longTerm);
  try {
    // B-LT: the validation data in the signature; B-LTA: an archive manifest and timestamp over the whole container.
    const validationData = longTerm ? await longTerm.validationData(input, value) : undefined;
    const cms = buildSignedData({
      signedAttributesDer: prepared.toBeSigned.der,
      signatureValue: value.signature,
      scheme: credential.scheme,
      certificates: credential.certificates,
      unsignedAttributes: value.timestampToken ? { signatureTimeStampToken: value.timestampToken } : undefined,
      ...(validationData ? { validationData } : {}),
    });
    const metadata = [
      ...(state.existing?.metadata ?? []),
      { name: state.manifestName, bytes: state.manifest },
      { name: state.signatureName, bytes: cms },
    ];
    const archived =
      longTerm?.level === 'B-LTA'
        ? await archiveContainer(longTerm, input, state.files, metadata, credential.scheme.digest)
        : metadata;
    const written = await state.writing.finish(archived);
    const number = state.existing ? `, signature ${state.existing.number}` : '';
    return { ...written, contents: { files: state.files.map((file) => file.name), label: `ASiC-E${number}` } };
  } finally {
    await state.existing?.close();
  }
}

/**
 * A container's XAdES signature completed: `signaturesN.xml` with its unsigned properties (at
 * B-LT/B-LTA the validation data and the ArchiveTimeStamp inside it), the ODF manifest of a new
 * container, and the container finished.
 */
async function completeXades(
  state: Prepared,
  xades: XadesContainerState,
  value: Parameters<SignatureForm['complete']>[2],
  files: DocumentFiles,
  input: string,
  longTerm: LongTermWindow | undefined,
): ReturnType<SignatureForm['complete']> {
  try {
    const { xadesContainerEntries } = await import('./xades-sign.js');
    const entries = await xadesContainerEntries(xades, state.files, files, value, input, longTerm);
    const written = await state.writing.finish([...(state.existing?.metadata ?? []), ...entries]);
    const number = state.existing ? `, ${xades.signatureName.slice('META-INF/'.length)}` : '';
    return {
      ...written,
      contents: { files: state.files.map((file) => file.name), label: `ASiC-E${number}`, format: 'XAdES' },
    };
  } finally {
    await state.existing?.close();
  }
}

/**
 * The container's META-INF entries with a new archive manifest and its timestamp (EN 319 162-1
 * §4.4.5, Annex A.7): the current archive manifest (if any) renamed, and the new one listing every
 * document (by the digest it was signed with) and every META-INF entry, hashed here.
 */
async function archiveContainer(
  longTerm: LongTermWindow,
  input: string,
  documents: readonly { name: string; digest: DigestName; digestValue: Uint8Array }[],
  metadata: readonly Entry[],
  digest: DigestName,
): Promise<Entry[]> {
  const plan = planArchive([...documents, ...metadata].map((entry) => entry.name));
  let kept = metadata.map((entry) =>
    plan.renamed && entry.name === plan.renamed.from ? { ...entry, name: plan.renamed.to } : entry,
  );
  // A renewal: the last archive timestamp gets its TSA's validation data before it is archived (A.7 item 2).
  const previous = plan.renamed ? kept.find((entry) => entry.name === plan.renamed!.to) : undefined;
  const previousToken = previous ? parseManifest(previous.bytes, previous.name).signature : undefined;
  const token = previousToken ? kept.find((entry) => entry.name === previousToken) : undefined;
  if (token) {
    const data = await longTerm.validationData(
      token.name,
      { signature: new Uint8Array(0), timestampToken: token.bytes },
      'timestamp',
    );
    const completed = withValidationData(token.bytes, data);
    kept = kept.map((entry) => (entry === token ? { ...entry, bytes: completed } : entry));
  }
  const manifest = buildArchiveManifest(plan.timestamp, [
    ...documents.map((document) => ({ ...document, mimeType: mimeTypeOf(document.name) })),
    ...kept.map((entry) => ({
      name: entry.name,
      mimeType: metadataMimeType(entry.name),
      digest,
      digestValue: new Uint8Array(createHash(digest).update(entry.bytes).digest()),
    })),
  ]);
  const stamp = await longTerm.archiveTimestamp(
    input,
    new Uint8Array(createHash(digest).update(manifest).digest()),
    digest,
  );
  return [...kept, { name: ARCHIVE_MANIFEST, bytes: manifest }, { name: plan.timestamp, bytes: stamp.token }];
}

/** `--skip-existing`: the container there already holds the signer's signature over exactly these files as they are now. */
export async function alreadySigned(
  form: Pick<SignatureForm, 'addsTo'>,
  job: SignJob,
  signer: Uint8Array,
  digest: DigestName,
): Promise<ExistingSignature> {
  const inputs = inputsOf(job);
  const existing = (await addsSignature(form, inputs)) ? await openExisting(inputs[0]!) : undefined;
  try {
    const listed = existing ? [] : await containerFiles(inputs, job.output);
    return await signedAlready(job.output, await hashedFiles(listed, existing, inputs[0]!, digest), signer);
  } finally {
    await existing?.close();
  }
}
