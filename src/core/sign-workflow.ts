/**
 * The signing workflow, one window at a time: prepare its documents (read once: hash and copy),
 * authorize and sign its hashes (one approval), timestamp, then complete every output. A batch runs
 * these windows as a pipeline (sign-run.ts). Pure apart from its ports: files, the remote signer
 * and the TSA are passed in.
 */
import { createHash } from 'node:crypto';
import type { DigestName } from './cms/algorithms.js';
import { MAX_HASHES_PER_AUTHORIZATION } from './csc/shapes.js';
import type { CompletionOutputs, PreparedDocument, SignedDocument, SignedValue, SignOptions } from './documents.js';
import { EsignError, isEsignError } from './errors.js';
import type { LongTermWindow, SignatureForm } from './forms/form.js';
import type { RemoteSigner, SigningCredential, TimestampAuthority, TimestampResult } from './ports.js';
import type { SignatureLevel } from './profile.js';

export * from './documents.js';
export { MAX_HASHES_PER_AUTHORIZATION };

/**
 * Writes the signed output of a prepared document through its form (the signature put in; at
 * B-LT/B-LTA with `longTerm`, its validation data and archive timestamp where the form keeps them).
 */
export async function completeDocument(
  form: SignatureForm,
  prepared: PreparedDocument,
  credential: SigningCredential,
  value: SignedValue,
  options: SignOptions,
  outputs: CompletionOutputs,
  longTerm?: LongTermWindow,
): Promise<SignedDocument> {
  const base = {
    input: prepared.job.input,
    output: prepared.job.output,
    kind: prepared.job.kind,
    level: options.level,
    timestampTime: value.timestampTime,
  };
  return { ...base, ...(await form.complete(prepared, credential, value, options, outputs, longTerm)) };
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
  return timestampSignatures(signatures, tsa, level, progress, {
    digest: credential.scheme.digest,
    stamped,
    covers: timestampCovers(prepared),
  });
}

/** What each prepared document's signature timestamp covers: its form's choice (`PreparedDocument.timestampCovers`), else the value. */
export function timestampCovers(
  prepared: readonly Pick<PreparedDocument, 'timestampCovers'>[],
): (index: number, signature: Uint8Array) => Uint8Array {
  return (index, signature) => prepared[index]?.timestampCovers?.(signature) ?? signature;
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
    covers,
  }: {
    concurrency?: number;
    digest?: DigestName;
    /** Called with each document's outcome as soon as it is settled, in its slot; what it returns is the document's result. */
    stamped?: (index: number, result: BatchResult) => Promise<BatchResult>;
    /** The bytes the timestamp of the `index`th signature covers, when not the signature value itself (XAdES). */
    covers?: (index: number, signature: Uint8Array) => Uint8Array;
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
      const stamp = await timestampSignature(tsa, covers ? covers(index, signature) : signature, digest);
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
