/** `--skip-existing` for an enveloping CAdES `.p7m`: it holds the input as it is now, signed by the signer. */
import { createHash } from 'node:crypto';
import { readEnveloping } from '../../cms/enveloping.js';
import type { ByteSource } from '../../ports.js';
import { hashSource, rangeOf } from '../../documents.js';
import { checkCms, sameBytes, type ExistingSignature } from '../shared/signed-already.js';

export async function envelopingSignedAlready(
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
