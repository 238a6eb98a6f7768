/**
 * ASiC-S: one document and its detached CAdES in a ZIP (`NAME.asics`: `mimetype`, the document,
 * `META-INF/signature.p7s`). Its long-term data goes into the signature. The ZIP code loads only
 * when a container is written or read.
 */
import { basename, dirname, join } from 'node:path';
import { EsignError } from '../../../core/errors.js';
import type { SignatureForm } from '../../../core/forms/form.js';
import { asicsSignedAlready } from '../../../core/forms/asic-s/signed-already.js';
import { ASIC_S_MIMETYPE } from '../../../core/forms/shared/asic-container-rules.js';
import { withCmsLongTerm } from '../../../core/forms/shared/cms-long-term.js';
import { cmsCheckAndPrepare } from '../../../core/forms/shared/cms-form.js';
import { signedDataOf } from '../../../core/forms/shared/cms-signature.js';
import { withInputAndOutput } from '../../../core/forms/shared/signed-already.js';
import { fileSystemDocuments } from '../../document-files.js';

export const asicS: SignatureForm = {
  name: 'asics',
  kind: 'asics',
  declares: {
    outputs: 'one-per-input',
    parallel: false,
    longTerm: 'signature',
    passwords: false,
    extract: 'documents',
  },
  report: { format: 'CAdES', packaging: 'asic-s', validationDataKey: 'validationData' },

  outputFor: (input, outputDir) => join(outputDir ?? dirname(input), `${basename(input)}.asics`),
  addsTo: () => false,

  ...cmsCheckAndPrepare(),

  async complete(prepared, credential, value, options, _outputs, longTerm) {
    const cms = signedDataOf(prepared, credential, await withCmsLongTerm(prepared, credential, value, longTerm));
    if (!prepared.contentDigest) throw new EsignError('INTERNAL', 'An ASiC-S was completed without its writer.');
    // The ASiC writer, and the ZIP library under it, load only when a container is written.
    const { writeAsicS } = await import('./files.js');
    return writeAsicS(
      fileSystemDocuments,
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
  },

  alreadySigned: (job, signerCertificate, files) =>
    withInputAndOutput(job, files, async (input, output) => {
      // The ZIP reader loads only then.
      const { readAsicS } = await import('./files.js');
      return asicsSignedAlready(input, job.input, await readAsicS(output), signerCertificate);
    }),

  async verify({ file, source }, options) {
    // The ZIP reader and the verification load only when a container is verified.
    const [{ verifyAsicS }, { verifyContainer }] = await Promise.all([
      import('./verify.js'),
      import('../shared/asic-container.js'),
    ]);
    return verifyContainer(source, file, ASIC_S_MIMETYPE, options, verifyAsicS);
  },
};
