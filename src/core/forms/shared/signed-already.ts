/**
 * `--skip-existing`: whether an output already there is what signing its input would make — a valid
 * signature over that input, by the same certificate. Existence alone is not enough: an output left
 * by another run, another signer or another version of the input is not skipped. Pure apart from
 * the files passed in.
 */
import { createHash } from 'node:crypto';
import { HASH_NAME_BY_OID } from '../../cms/oids.js';
import { bytesEqual, parseSignedData } from '../../cms/parse.js';
import { verifySignerInfo } from '../../cms/verify-signer.js';
import type { ByteSource } from '../../ports.js';
import { READ_CHUNK_BYTES, type DocumentFiles, type DocumentSource, type SignJob } from '../../documents.js';

export type ExistingSignature = { signed: true } | { signed: false; reason: string };

/**
 * Whether `cms` is a valid signature over `content` (small bytes: an ASiC manifest) by the holder
 * of `signerCertificate`, the content hashed with the CMS's own digest algorithm.
 */
export function signedOverBytes(
  cms: Uint8Array,
  signerCertificate: Uint8Array,
  content: Uint8Array,
): ExistingSignature {
  let algorithm: string | undefined;
  try {
    algorithm = HASH_NAME_BY_OID[parseSignedData(cms).digestAlgorithm];
  } catch {
    return { signed: false, reason: 'its signature is not a CMS SignedData' };
  }
  if (!algorithm) return { signed: false, reason: 'its signature uses a digest esign does not know' };
  return checkCms(cms, signerCertificate, new Uint8Array(createHash(algorithm).update(content).digest()));
}

export function checkCms(cms: Uint8Array, signerCertificate: Uint8Array, contentDigest: Uint8Array): ExistingSignature {
  let parsed;
  try {
    parsed = parseSignedData(cms);
  } catch {
    return { signed: false, reason: 'its signature is not a CMS SignedData' };
  }
  if (!parsed.signerCertificate || !bytesEqual(parsed.signerCertificate, signerCertificate))
    return { signed: false, reason: 'it is signed with another certificate' };
  const check = verifySignerInfo(parsed, { contentDigest });
  return check.valid ? { signed: true } : { signed: false, reason: check.reason };
}

/** Whether `length` bytes of `a` from `aStart` equal the first `length` bytes of `b`. */
export async function sameBytes(a: ByteSource, aStart: number, b: ByteSource, length: number): Promise<boolean> {
  for (let offset = 0; offset < length; offset += READ_CHUNK_BYTES) {
    const size = Math.min(READ_CHUNK_BYTES, length - offset);
    const [left, right] = await Promise.all([a.read(aStart + offset, size), b.read(offset, size)]);
    if (left.length !== size || !bytesEqual(left, right)) return false;
  }
  return true;
}

/** Opens a job's input and its existing output, and closes both once `check` has looked at them. */
export async function withInputAndOutput(
  job: SignJob,
  files: DocumentFiles,
  check: (input: DocumentSource, output: DocumentSource) => Promise<ExistingSignature>,
): Promise<ExistingSignature> {
  const input = await files.open(job.input);
  try {
    const output = await files.open(job.output);
    try {
      return await check(input, output);
    } finally {
      await output.close();
    }
  } finally {
    await input.close();
  }
}
