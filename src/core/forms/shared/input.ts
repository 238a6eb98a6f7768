/** Opening a job's input, as every form does before approval and in its window. */
import type { DigestName } from '../../cms/algorithms.js';
import type { DocumentFiles, DocumentSource, OpenedDocument, PreparedDocument, SignJob } from '../../documents.js';
import { EsignError, naming } from '../../errors.js';
import type { SigningCredential } from '../../ports.js';

/**
 * Opens a job's input for the check before any browser step; `read` (a PDF's structure) runs on it,
 * and it is closed when that fails. Everything that can refuse a document fails here, named.
 */
export async function openInput(
  job: SignJob,
  files: DocumentFiles,
  read?: (source: DocumentSource) => Promise<OpenedDocument>,
): Promise<OpenedDocument> {
  const source = await files.open(job.input).catch((error: unknown) => {
    throw naming(job.input, error);
  });
  try {
    if (!read) return { source };
    return await read(source);
  } catch (error) {
    await source.close();
    throw naming(job.input, error);
  }
}

/** How a form prepares its document from the open input (and what its check read of it, if still current). */
export type PrepareFrom = (
  source: DocumentSource,
  held: OpenedDocument | undefined,
  signer: Uint8Array,
  digest: DigestName,
) => Promise<PreparedDocument>;

/**
 * Prepares one document: `opened` (from the check) is taken over and closed; without it, or when
 * the file changed since, the input is opened here. Failures are named after the input.
 */
export async function prepareInput(
  job: SignJob,
  credential: SigningCredential,
  files: DocumentFiles,
  opened: OpenedDocument | undefined,
  prepare: PrepareFrom,
): Promise<PreparedDocument> {
  try {
    return await prepareOne(job, credential, files, opened, prepare);
  } catch (error) {
    throw naming(job.input, error);
  }
}

async function prepareOne(
  job: SignJob,
  credential: SigningCredential,
  files: DocumentFiles,
  opened: OpenedDocument | undefined,
  prepare: PrepareFrom,
): Promise<PreparedDocument> {
  // A document checked before the sign-in may have been saved again since (minutes, with a person
  // at the browser): then it is read as it is now, as one opened only here would be.
  let held = opened;
  if (held && !(await held.source.unchanged())) {
    await held.source.close();
    held = undefined;
  }
  const source = held?.source ?? (await files.open(job.input));
  try {
    const signer = credential.certificates[0];
    if (!signer)
      throw new EsignError(
        'CREDENTIAL_UNSUPPORTED_KEY',
        `The credential ${credential.credentialID} has no certificate.`,
      );
    return await prepare(source, held, signer, credential.scheme.digest);
  } finally {
    await source.close();
  }
}
