/**
 * `--skip-existing`: whether an output already there is what signing its input would make — a valid
 * signature over that input, by the same certificate. Existence alone is not enough: an output left
 * by another run, another signer or another version of the input is not skipped. Pure apart from
 * the files passed in.
 */
import { asicsSignedAlready, type OpenAsicS } from './forms/asic-s/signed-already.js';
import { cadesSignedAlready } from './forms/cades-detached/signed-already.js';
import { envelopingSignedAlready } from './forms/cades-enveloping/signed-already.js';
import { pdfSignedAlready } from './forms/pades/signed-already.js';
import type { ExistingSignature } from './forms/shared/signed-already.js';
import type { DocumentFiles, SignJob } from './documents.js';

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
