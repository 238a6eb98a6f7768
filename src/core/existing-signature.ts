/**
 * `--skip-existing`: whether an output already there is what signing its input would make — a valid
 * signature over that input, by the same certificate. Existence alone is not enough: an output left
 * by another run, another signer or another version of the input is not skipped. Pure apart from
 * the files passed in.
 */
import { createHash } from 'node:crypto';
import { readEnveloping } from './cms/enveloping.js';
import { HASH_NAME_BY_OID } from './cms/oids.js';
import { bytesEqual, parseSignedData } from './cms/parse.js';
import { verifySignerInfo } from './cms/verify-signer.js';
import { headerOffset, readPdf } from './pdf/document.js';
import { cmsPrefix, hashByteRange, listSignatureFields } from './pdf/signatures.js';
import type { ByteSource } from './ports.js';
import { hashSource, rangeOf, READ_CHUNK_BYTES, type DocumentFiles, type SignJob } from './sign-workflow.js';

export type ExistingSignature = { signed: true } | { signed: false; reason: string };

/** An ASiC-S as `--skip-existing` reads it (the ZIP reader is in src/io): its documents and its signature, if any. */
export interface AsicSContents {
  documents: string[];
  read(name: string): AsyncIterable<Uint8Array>;
  signature: Uint8Array | undefined;
  close(): Promise<void>;
}
export type OpenAsicS = (output: ByteSource) => Promise<AsicSContents>;

/** A detached signature larger than this is not one esign wrote (a chain and a token are a few KB). */
const MAX_P7S_BYTES = 1024 * 1024;

export async function existingSignature(
  job: SignJob,
  signerCertificate: Uint8Array,
  files: DocumentFiles,
  password?: string,
  openAsicS?: OpenAsicS,
): Promise<ExistingSignature> {
  const input = await files.open(job.input);
  try {
    const output = await files.open(job.output);
    try {
      if (job.kind === 'pdf') return await pdfSignedAlready(input, output, signerCertificate, password);
      if (job.kind === 'p7m') return await envelopingSignedAlready(input, output, signerCertificate);
      if (job.kind === 'asics' && openAsicS)
        return await asicsSignedAlready(input, job.input, await openAsicS(output), signerCertificate);
      return await cadesSignedAlready(input, output, signerCertificate);
    } finally {
      await output.close();
    }
  } finally {
    await input.close();
  }
}

async function pdfSignedAlready(
  input: ByteSource,
  output: ByteSource,
  signerCertificate: Uint8Array,
  password?: string,
): Promise<ExistingSignature> {
  const start = await headerOffset(input);
  const original = input.size - start;
  if (output.size <= original) return { signed: false, reason: 'it is not an update of the input' };
  if (!(await sameBytes(input, start, output, original)))
    return { signed: false, reason: 'it does not begin with the input as it is now' };
  const document = await readPdf(output, { password });
  for (const field of await listSignatureFields(document)) {
    const range = field.byteRange;
    // The signature of the update appended to the input: its hole lies after the original bytes.
    if (!range || range.length !== 4 || range[0] !== 0 || (range[1] as number) < original || !field.contents) continue;
    const [, a, b, c] = range as [number, number, number, number];
    if (b + c > output.size || b <= a) continue;
    return checkCms(cmsPrefix(field.contents), signerCertificate, await hashByteRange(output, range));
  }
  return { signed: false, reason: 'it holds no signature over the input' };
}

async function cadesSignedAlready(
  input: ByteSource,
  output: ByteSource,
  signerCertificate: Uint8Array,
): Promise<ExistingSignature> {
  if (output.size > MAX_P7S_BYTES) return { signed: false, reason: 'it is too large to be a detached signature' };
  const hash = createHash('sha256');
  await hashSource(input, hash);
  return checkCms(await output.read(0, output.size), signerCertificate, new Uint8Array(hash.digest()));
}

async function envelopingSignedAlready(
  input: ByteSource,
  output: ByteSource,
  signerCertificate: Uint8Array,
): Promise<ExistingSignature> {
  let enveloped;
  try {
    enveloped = await readEnveloping(output);
  } catch {
    return { signed: false, reason: 'it is not an enveloping CMS' };
  }
  const content = rangeOf(output, enveloped.offset, enveloped.length);
  if (content.size !== input.size || !(await sameBytes(input, 0, content, input.size)))
    return { signed: false, reason: 'it does not hold the input as it is now' };
  const hash = createHash('sha256');
  await hashSource(input, hash);
  return checkCms(enveloped.detached, signerCertificate, new Uint8Array(hash.digest()));
}

async function asicsSignedAlready(
  input: ByteSource,
  inputPath: string,
  container: AsicSContents,
  signerCertificate: Uint8Array,
): Promise<ExistingSignature> {
  try {
    const name = inputPath.split(/[\\/]/).at(-1)!;
    if (container.documents.length !== 1 || container.documents[0] !== name)
      return { signed: false, reason: `it does not hold ${name} alone` };
    if (!container.signature) return { signed: false, reason: 'it holds no signature' };
    const [held, now] = [createHash('sha256'), createHash('sha256')];
    for await (const chunk of container.read(name)) held.update(chunk);
    await hashSource(input, now);
    const digest = new Uint8Array(now.digest());
    if (!bytesEqual(new Uint8Array(held.digest()), digest))
      return { signed: false, reason: 'it does not hold the input as it is now' };
    return checkCms(container.signature, signerCertificate, digest);
  } finally {
    await container.close();
  }
}

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

function checkCms(cms: Uint8Array, signerCertificate: Uint8Array, contentDigest: Uint8Array): ExistingSignature {
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
async function sameBytes(a: ByteSource, aStart: number, b: ByteSource, length: number): Promise<boolean> {
  for (let offset = 0; offset < length; offset += READ_CHUNK_BYTES) {
    const size = Math.min(READ_CHUNK_BYTES, length - offset);
    const [left, right] = await Promise.all([a.read(aStart + offset, size), b.read(offset, size)]);
    if (left.length !== size || !bytesEqual(left, right)) return false;
  }
  return true;
}
