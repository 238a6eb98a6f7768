/** Enveloping CAdES (`.p7m`), completing: the SignedData written around the content, streamed. */
import { createHash } from 'node:crypto';
import { addedSignerAround, signedDataAround, signedDataParts } from '../../cms/signed-data.js';
import type { SigningCredential } from '../../ports.js';
import {
  changedWhileSigning,
  READ_CHUNK_BYTES,
  type DocumentFiles,
  type PreparedDocument,
  type SignedValue,
  type SignOptions,
} from '../../documents.js';
import { signedDataInput } from '../shared/cms-signature.js';

/**
 * Writes an enveloping .p7m: the SignedData's head (every length computed from the content's size),
 * the input streamed in, the certificates and SignerInfo after it. The content is read a second time
 * here and must hash to what was signed, so the output holds exactly the signed bytes; no more than
 * a chunk of it is in memory at once.
 */
export async function writeEnveloping(
  prepared: PreparedDocument,
  credential: SigningCredential,
  value: SignedValue,
  options: SignOptions,
  files: DocumentFiles,
): Promise<{ bytes: number; sha256: string }> {
  const { job, inputSize, contentDigest, enveloped } = prepared;
  const parts = signedDataParts(signedDataInput(prepared, credential, value));
  const { offset: start, length } = enveloped ?? { offset: 0, length: inputSize };
  const { head, tail } = enveloped
    ? addedSignerAround(enveloped.detached, parts, length)
    : signedDataAround(parts, length);
  const source = await files.open(job.input);
  try {
    if (source.size !== inputSize) throw changedWhileSigning(job.input);
    // A parallel signature replaces the .p7m it is added to (a temp file renamed over it).
    const output = await files.createOutput(job.output, { overwrite: options.overwrite || enveloped !== undefined });
    prepared.output = output;
    try {
      const outputHash = createHash('sha256').update(head);
      const contentHash = createHash(credential.scheme.digest);
      await output.write(head);
      let writing: Promise<void> = Promise.resolve();
      for (let offset = 0; offset < length; offset += READ_CHUNK_BYTES) {
        const chunk = await source.read(start + offset, Math.min(READ_CHUNK_BYTES, length - offset));
        contentHash.update(chunk);
        outputHash.update(chunk);
        await writing;
        writing = output.write(chunk);
      }
      await writing;
      if (!contentDigest || !Buffer.from(contentHash.digest()).equals(contentDigest))
        throw changedWhileSigning(job.input);
      outputHash.update(tail);
      await output.commit(tail);
      return { bytes: head.length + length + tail.length, sha256: outputHash.digest('hex') };
    } catch (error) {
      await output.abort();
      throw error;
    }
  } finally {
    await source.close();
  }
}
