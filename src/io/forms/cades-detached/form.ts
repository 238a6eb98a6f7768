/**
 * Detached CAdES: the signature of any file in `NAME.p7s` beside it, the file left as it is. Its
 * long-term data goes into the signature (the SignedData's certificates and crls, an
 * archive-time-stamp-v3).
 */
import { createHash } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import type { SignatureForm } from '../../../core/forms/form.js';
import { cadesSignedAlready } from '../../../core/forms/cades-detached/signed-already.js';
import { withCmsLongTerm } from '../../../core/forms/shared/cms-long-term.js';
import { cmsCheckAndPrepare } from '../../../core/forms/shared/cms-form.js';
import { signedDataOf } from '../../../core/forms/shared/cms-signature.js';
import { withInputAndOutput } from '../../../core/forms/shared/signed-already.js';
import { writeDetachedSignature } from '../../document-files.js';

export const cadesDetached: SignatureForm = {
  name: 'cades',
  kind: 'cades',
  declares: { outputs: 'one-per-input', parallel: false, longTerm: 'signature', passwords: false },
  report: { format: 'CAdES', validationDataKey: 'validationData' },

  outputFor: (input, outputDir) => join(outputDir ?? dirname(input), `${basename(input)}.p7s`),
  addsTo: () => false,

  ...cmsCheckAndPrepare(),

  async complete(prepared, credential, value, options, _outputs, longTerm) {
    const cms = signedDataOf(prepared, credential, await withCmsLongTerm(prepared, credential, value, longTerm));
    await writeDetachedSignature(prepared.job.output, cms, options.overwrite);
    return { bytes: cms.length, sha256: createHash('sha256').update(cms).digest('hex') };
  },

  alreadySigned: (job, signerCertificate, files) =>
    withInputAndOutput(job, files, (input, output) => cadesSignedAlready(input, output, signerCertificate)),

  async verify({ file, source, signature }, options) {
    const { verifyCades } = await import('../../../core/verify/cades.js');
    const readContent = async (consume: (chunk: Uint8Array) => void): Promise<void> => {
      for await (const chunk of source.chunks(0, source.size)) consume(chunk);
    };
    return { report: await verifyCades(signature ?? new Uint8Array(0), file, readContent, options) };
  },
};
