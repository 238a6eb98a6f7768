/**
 * Enveloping CAdES: the file inside its signature, `NAME.p7m`. A `.p7m` signed again gets a parallel
 * SignerInfo, replacing it (atomically) or written to --output-dir. `esign verify --extract` writes
 * the content out once every signature checks out.
 */
import { basename, dirname, extname, join } from 'node:path';
import { envelopedContent } from '../../../core/cms/enveloping.js';
import type { SignatureForm } from '../../../core/forms/form.js';
import { writeEnveloping } from '../../../core/forms/cades-enveloping/sign.js';
import { envelopingSignedAlready } from '../../../core/forms/cades-enveloping/signed-already.js';
import { withCmsLongTerm } from '../../../core/forms/shared/cms-long-term.js';
import { cmsCheckAndPrepare } from '../../../core/forms/shared/cms-form.js';
import { withInputAndOutput } from '../../../core/forms/shared/signed-already.js';
import { READ_CHUNK_BYTES } from '../../../core/documents.js';
import { assertUnchanged, writeChunksAtomically } from '../../document-files.js';

/** Whether a file is a .p7m: signing it adds a parallel signature rather than wrapping it in a new one. */
const isEnveloping = (input: string): boolean => extname(input).toLowerCase() === '.p7m';

export const cadesEnveloping: SignatureForm = {
  name: 'p7m',
  kind: 'p7m',
  declares: { outputs: 'one-per-input', parallel: true, longTerm: 'signature', passwords: false, extract: 'content' },
  report: { format: 'CAdES', packaging: 'enveloping', validationDataKey: 'validationData' },

  outputFor(input, outputDir) {
    const dir = outputDir ?? dirname(input);
    const name = basename(input);
    // A .p7m signed as a .p7m gets a parallel signature, in place (replaced atomically) or in outputDir.
    return isEnveloping(input) ? join(dir, name) : join(dir, `${name}.p7m`);
  },
  addsTo: isEnveloping,

  ...cmsCheckAndPrepare(isEnveloping),

  async complete(prepared, credential, value, options, outputs, longTerm) {
    const signed = await withCmsLongTerm(prepared, credential, value, longTerm);
    return writeEnveloping(prepared, credential, signed, options, outputs.files);
  },

  alreadySigned: (job, signerCertificate, files) =>
    withInputAndOutput(job, files, (input, output) => envelopingSignedAlready(input, output, signerCertificate)),

  async verify({ file, source }, options) {
    const { verifyEnveloping } = await import('../../../core/forms/cades-enveloping/verify.js');
    const { report, enveloped } = await verifyEnveloping(source, file, options);
    return {
      report,
      extract: {
        refused: (path, target) =>
          `${path}: its content was not extracted to ${target}: the signature did not check out.`,
        async write(target) {
          const content = envelopedContent(source, enveloped, READ_CHUNK_BYTES);
          await writeChunksAtomically(target, content, () => assertUnchanged(source));
        },
      },
    };
  },
};
