/** ASiC-S, completing: the container written around the input and its detached CAdES. */
import { EsignError } from '../../errors.js';
import type { SigningCredential } from '../../ports.js';
import type { CompletionOutputs, PreparedDocument, SignOptions } from '../../documents.js';

/** Writes an ASiC-S around the input and its detached CAdES. */
export async function completeAsicS(
  prepared: PreparedDocument,
  credential: SigningCredential,
  cms: Uint8Array,
  options: SignOptions,
  outputs: CompletionOutputs,
): Promise<{ bytes: number; sha256: string }> {
  if (!outputs.writeAsicS || !prepared.contentDigest)
    throw new EsignError('INTERNAL', 'An ASiC-S was completed without its writer.');
  const written = await outputs.writeAsicS(
    {
      input: prepared.job.input,
      output: prepared.job.output,
      cms,
      contentDigest: prepared.contentDigest,
      digest: credential.scheme.digest,
      overwrite: options.overwrite,
      mtime: options.signingTime,
    },
    (output) => (prepared.output = output),
  );
  return written;
}
