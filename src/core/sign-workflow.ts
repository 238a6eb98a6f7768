/**
 * The signing workflow, one window at a time: prepare its documents (read once: hash and copy),
 * authorize and sign its hashes (one approval), timestamp, then complete every output. A batch runs
 * these windows as a pipeline (sign-run.ts). Pure apart from its ports: files, the remote signer
 * and the TSA are passed in.
 */
import { createHash } from 'node:crypto';
import type { DigestName } from './cms/algorithms.js';
import { MAX_HASHES_PER_AUTHORIZATION } from './csc/shapes.js';
import {
  type CompletionOutputs,
  type DocumentFiles,
  type ExtendSigned,
  type OpenedDocument,
  type PreparedDocument,
  type SignedDocument,
  type SignedValue,
  type SignJob,
  type SignOptions,
  type UpdateCheck,
} from './documents.js';
import { EsignError, isEsignError, naming } from './errors.js';
import { completeAsicS } from './forms/asic-s/sign.js';
import { completeDetached } from './forms/cades-detached/sign.js';
import { writeEnveloping } from './forms/cades-enveloping/sign.js';
import { completePdf, extendWritten, openPdf, preparePdf } from './forms/pades/sign.js';
import { prepareCms, signedDataOf } from './forms/shared/cms-signature.js';
import type { RemoteSigner, SigningCredential, TimestampAuthority, TimestampResult } from './ports.js';
import type { SignatureLevel } from './profile.js';

export * from './documents.js';
export { MAX_HASHES_PER_AUTHORIZATION };

/**
 * Opens an input and, for a PDF, reads its cross-reference data; with `check`, also builds its
 * signature's update once (reading every object the update needs: catalog, AcroForm, fields, the
 * page, DocMDP) and drops it. Everything that can refuse a document fails here, before any browser step.
 */
export async function openDocument(
  job: SignJob,
  files: DocumentFiles,
  password?: string,
  check?: UpdateCheck,
): Promise<OpenedDocument> {
  const source = await files.open(job.input).catch((error: unknown) => {
    throw naming(job.input, error);
  });
  try {
    if (job.kind !== 'pdf') return { source };
    return await openPdf(source, password, check);
  } catch (error) {
    await source.close();
    throw naming(job.input, error);
  }
}

/**
 * Prepares one document: reads it once, hashing it (and, for a PDF, copying it to the temp output).
 * `opened` (from openDocument) is taken over and closed; without it the input is opened here.
 */
export async function prepareDocument(
  job: SignJob,
  credential: SigningCredential,
  files: DocumentFiles,
  options: SignOptions,
  opened?: OpenedDocument,
): Promise<PreparedDocument> {
  try {
    return await prepareOne(job, credential, files, options, opened);
  } catch (error) {
    throw naming(job.input, error);
  }
}

async function prepareOne(
  job: SignJob,
  credential: SigningCredential,
  files: DocumentFiles,
  options: SignOptions,
  opened?: OpenedDocument,
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
    const digest = credential.scheme.digest;
    if (job.kind !== 'pdf') return await prepareCms(job, source, signer, digest, options);
    return await preparePdf(job, source, held?.pdf, credential, files, options, signer, digest);
  } finally {
    await source.close();
  }
}

/** Writes the signed output of a prepared document. */
export async function completeDocument(
  prepared: PreparedDocument,
  credential: SigningCredential,
  value: SignedValue,
  options: SignOptions,
  outputs: CompletionOutputs,
  extend?: ExtendSigned,
): Promise<SignedDocument> {
  const base = {
    input: prepared.job.input,
    output: prepared.job.output,
    kind: prepared.job.kind,
    level: options.level,
    timestampTime: value.timestampTime,
  };
  if (prepared.signedSize !== undefined) return extendWritten(prepared, value, base, extend);
  if (prepared.job.kind === 'p7m')
    return { ...base, ...(await writeEnveloping(prepared, credential, value, options, outputs.files)) };
  const cms = signedDataOf(prepared, credential, value);
  if (prepared.job.kind === 'asics')
    return { ...base, ...(await completeAsicS(prepared, credential, cms, options, outputs)) };
  if (prepared.job.kind === 'cades') return { ...base, ...(await completeDetached(prepared, cms, options, outputs)) };
  return { ...base, ...(await completePdf(prepared, cms, value, extend)) };
}

/** Splits a list into authorization batches of at most 50. */
export function batches<T>(items: readonly T[], size = MAX_HASHES_PER_AUTHORIZATION): T[][] {
  const result: T[][] = [];
  for (let index = 0; index < items.length; index += size) result.push(items.slice(index, index + size));
  return result;
}

/** What a document of a batch got: its signature value (with its timestamp at B-T and above), or why not. */
export type BatchResult = PromiseSettledResult<SignedValue>;

export interface BatchProgress {
  /** The signing service answered (after the browser step): signatures are being timestamped. */
  signed?(count: number): void | Promise<void>;
  timestamped?(done: number, total: number): void;
}

/**
 * One signHash call for a batch (≤ 50 hashes, one browser step), then one timestamp per signature
 * value at B-T and above (at most `concurrency` at once). A failed signHash fails the batch; a failed
 * timestamp fails only its document.
 */
export async function signBatch(
  prepared: readonly PreparedDocument[],
  credential: SigningCredential,
  signer: RemoteSigner,
  tsa: TimestampAuthority | undefined,
  level: SignatureLevel,
  progress: BatchProgress = {},
  stamped?: (index: number, result: BatchResult) => Promise<BatchResult>,
): Promise<BatchResult[]> {
  const signatures = await signer.signHashes(
    credential,
    prepared.map((document) => document.toBeSigned.toBeSignedHash),
  );
  if (signatures.length !== prepared.length) {
    throw new EsignError(
      'CSC_BAD_RESPONSE',
      `The signing service returned ${signatures.length} signatures for ${prepared.length} hashes.`,
    );
  }
  await progress.signed?.(signatures.length);
  return timestampSignatures(signatures, tsa, level, progress, { digest: credential.scheme.digest, stamped });
}

/** Timestamp requests of one window in flight at once: enough to hide a TSA's round trip, few enough to be polite. */
export const TIMESTAMP_CONCURRENCY = 8;

/** The timestamps of B-T and above for signature values, each settled on its own; the imprint is of the signature's digest. */
export async function timestampSignatures(
  signatures: readonly Uint8Array[],
  tsa: TimestampAuthority | undefined,
  level: SignatureLevel,
  progress: BatchProgress = {},
  {
    concurrency = TIMESTAMP_CONCURRENCY,
    digest = 'sha256',
    stamped,
  }: {
    concurrency?: number;
    digest?: DigestName;
    /** Called with each document's outcome as soon as it is settled, in its slot; what it returns is the document's result. */
    stamped?: (index: number, result: BatchResult) => Promise<BatchResult>;
  } = {},
): Promise<BatchResult[]> {
  if (level === 'B-B') return signatures.map((signature) => ({ status: 'fulfilled', value: { signature } }));
  if (!tsa)
    throw new EsignError(
      'TSA_NOT_CONFIGURED',
      `Level ${level} needs a timestamping service, and the profile has none.`,
      { hint: 'Set tsaUrls, or sign with --level B-B.' },
    );
  let done = 0;
  return mapConcurrently(signatures, concurrency, async (signature, index): Promise<BatchResult> => {
    let result: BatchResult;
    try {
      const stamp = await timestampSignature(tsa, signature, digest);
      result = {
        status: 'fulfilled',
        value: {
          signature,
          timestampToken: stamp.token,
          timestampTime: stamp.genTime,
          ...(stamp.certificates ? { timestampCertificates: stamp.certificates } : {}),
        },
      };
    } catch (reason) {
      result = { status: 'rejected', reason };
    } finally {
      progress.timestamped?.(++done, signatures.length);
    }
    return stamped ? stamped(index, result) : result;
  });
}

/**
 * A timestamp over the signature value, its imprint of the signature's digest. A TSA that refuses
 * that hash algorithm (badAlg: the service's TSA accepts only SHA-256) is asked again with SHA-256,
 * which RFC 3161 and ETSI EN 319 122-1 allow whatever the signature's digest.
 */
async function timestampSignature(
  tsa: TimestampAuthority,
  signature: Uint8Array,
  digest: DigestName,
): Promise<TimestampResult> {
  const imprint = (name: DigestName) => new Uint8Array(createHash(name).update(signature).digest());
  try {
    return await tsa.timestamp(imprint(digest), digest);
  } catch (error) {
    const failInfo = isEsignError(error, 'TSA_REJECTED') ? error.details?.['failInfo'] : undefined;
    if (digest === 'sha256' || !Array.isArray(failInfo) || !failInfo.includes('badAlg')) throw error;
    return tsa.timestamp(imprint('sha256'), 'sha256');
  }
}

/** Maps with at most `limit` calls in flight, keeping order. */
export async function mapConcurrently<T, R>(
  items: readonly T[],
  limit: number,
  map: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await map(items[index] as T, index);
    }
  });
  await Promise.all(workers);
  return results;
}
