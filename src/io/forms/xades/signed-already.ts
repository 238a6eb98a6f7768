/**
 * `--skip-existing` of an enveloped XAdES: the output is the input as it is now with one signature
 * put before its root's end tag, and that signature checks out (the XAdES verifier) by the same
 * certificate.
 */
import { bytesEqual } from '../../../core/cms/parse.js';
import type { DocumentSource } from '../../../core/documents.js';
import type { ExistingSignature } from '../../../core/forms/shared/signed-already.js';
import { MAX_ENVELOPED_BYTES } from '../../../core/forms/xades/enveloped.js';
import { xmlSignedBy } from './verify.js';

export async function envelopedSignedAlready(
  input: DocumentSource,
  output: DocumentSource,
  signerCertificate: Uint8Array,
): Promise<ExistingSignature> {
  if (output.size > MAX_ENVELOPED_BYTES + 1024 * 1024 || input.size > MAX_ENVELOPED_BYTES)
    return { signed: false, reason: 'it is larger than an enveloped XML signature may be' };
  if (output.size <= input.size) return { signed: false, reason: 'it is not the input with a signature added' };
  const [original, signed] = await Promise.all([input.read(0, input.size), output.read(0, output.size)]);
  const { rootNameOf, signatureOffset } = await import('../../../core/forms/xades/enveloped.js');
  let offset: number;
  try {
    offset = signatureOffset(
      original,
      rootNameOf(Buffer.from(original.subarray(0, 64 * 1024)).toString('latin1')),
      input.path,
    );
  } catch {
    return { signed: false, reason: 'the input has no root end tag to sign before' };
  }
  const tail = original.length - offset;
  if (
    !bytesEqual(signed.subarray(0, offset), original.subarray(0, offset)) ||
    !bytesEqual(signed.subarray(signed.length - tail), original.subarray(offset))
  )
    return { signed: false, reason: 'it is not the input as it is now with a signature added' };
  return xmlSignedBy(signed, signerCertificate);
}
