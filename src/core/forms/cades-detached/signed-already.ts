/** `--skip-existing` for a detached CAdES `.p7s`: the signer's valid signature over the input as it is now. */
import { createHash } from 'node:crypto';
import type { ByteSource } from '../../ports.js';
import { hashSource } from '../../documents.js';
import { checkCms, type ExistingSignature } from '../shared/signed-already.js';

/** A detached signature larger than this is not one esign wrote (a chain and a token are a few KB). */
const MAX_P7S_BYTES = 1024 * 1024;

export async function cadesSignedAlready(
  input: ByteSource,
  output: ByteSource,
  signerCertificate: Uint8Array,
): Promise<ExistingSignature> {
  if (output.size > MAX_P7S_BYTES) return { signed: false, reason: 'it is too large to be a detached signature' };
  const hash = createHash('sha256');
  await hashSource(input, hash);
  return checkCms(await output.read(0, output.size), signerCertificate, new Uint8Array(hash.digest()));
}
