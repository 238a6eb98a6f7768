/**
 * ASiC-E: many files in one ZIP under one signature over a manifest that lists them
 * (`bundle.asice`: `mimetype`, the files, `META-INF/ASiCManifest*.xml`, `META-INF/signature*.p7s`).
 * One output for many inputs, one approval of one hash; a container signed again gets a parallel
 * signature with a manifest of its own. At B-LTA an ASiCArchiveManifest and its timestamp cover
 * the whole container.
 */
import { basename, dirname, join, resolve } from 'node:path';
import { EsignError } from '../../../core/errors.js';
import type { SignatureForm } from '../../../core/forms/form.js';
import { ASIC_E_MIMETYPE } from '../../../core/forms/shared/asic-container-rules.js';

/** The signing steps of one file: an ASiC-E is signed as one container (cli/sign-asice.ts), never file by file. */
const notPerFile = async (): Promise<never> => {
  throw new EsignError('INTERNAL', 'An ASiC-E is one container, not a job per file.');
};

export const asicE: SignatureForm = {
  name: 'asice',
  kind: 'asice',
  declares: { outputs: 'one-for-many', parallel: true, longTerm: 'signature', passwords: false, extract: 'documents' },
  report: { format: 'CAdES', packaging: 'asic-e', validationDataKey: 'validationData' },

  outputFor: (input, outputDir) => join(outputDir ?? dirname(input), `${basename(resolve(input))}.asice`),
  addsTo: (input) => /\.(asice|sce)$/i.test(input),

  check: notPerFile,
  prepare: notPerFile,
  complete: notPerFile,
  alreadySigned: notPerFile,

  async verify({ file, source }, options) {
    // The ZIP reader and the verification load only when a container is verified.
    const [{ verifyAsicE }, { verifyContainer }] = await Promise.all([
      import('./verify.js'),
      import('../shared/asic-container.js'),
    ]);
    return verifyContainer(source, file, ASIC_E_MIMETYPE, options, verifyAsicE);
  },
};
