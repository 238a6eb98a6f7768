/** `--skip-existing` for a PAdES output: an incremental update of the input whose new signature is the signer's over it. */
import { headerOffset, readPdf } from '../../pdf/document.js';
import { cmsPrefix, hashByteRange, listSignatureFields } from '../../pdf/signatures.js';
import type { ByteSource } from '../../ports.js';
import { checkCms, sameBytes, type ExistingSignature } from '../shared/signed-already.js';

export async function pdfSignedAlready(
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
