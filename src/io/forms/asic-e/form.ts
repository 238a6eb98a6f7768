/**
 * ASiC-E: many files in one ZIP under one signature over a manifest that lists them
 * (`bundle.asice`: `mimetype`, the files, `META-INF/ASiCManifest*.xml`, `META-INF/signature*.p7s`).
 * One output for many inputs, one approval of one hash; a container signed again gets a parallel
 * signature with a manifest of its own. At B-LTA an ASiCArchiveManifest and its timestamp cover
 * the whole container.
 */
import { basename, dirname, join, resolve } from 'node:path';
import type { SignatureForm } from '../../../core/forms/form.js';
import { ASIC_E_MIMETYPE } from '../../../core/forms/shared/asic-container-rules.js';
import { checkPreparedAgain } from '../../../core/forms/asic-e/split.js';
import type { PreparedDocument } from '../../../core/documents.js';

/** The signing steps (sign.ts), and the ZIP code under them, load only when a container is signed. */
const signing = () => import('./sign.js');

/** The manifest a prepared container's signature is over (sign.ts keeps it in `state`). */
const manifestOf = (prepared: PreparedDocument): Uint8Array => (prepared.state as { manifest: Uint8Array }).manifest;

export const asicE: SignatureForm = {
  name: 'asice',
  kind: 'asice',
  declares: { outputs: 'one-for-many', parallel: true, longTerm: 'signature', passwords: false, extract: 'documents' },
  report: { format: 'CAdES', packaging: 'asic-e', validationDataKey: 'validationData' },

  outputFor: (input, outputDir) => join(outputDir ?? dirname(input), `${basename(resolve(input))}.asice`),
  addsTo: (input) => /\.(asice|sce)$/i.test(input),

  async jobFor(inputs, options) {
    return (await signing()).jobFor(asicE, inputs, options);
  },
  async check(job, files) {
    return (await signing()).check(asicE, job, files);
  },
  async prepare(job, credential, files, options, opened) {
    return (await signing()).prepare(asicE, job, credential, files, options, opened);
  },
  async complete(prepared, credential, value, options, outputs, longTerm) {
    return (await signing()).complete(prepared, credential, value, options, outputs.files, longTerm);
  },
  async alreadySigned(job, signerCertificate, _files, _password, digest = 'sha256') {
    return (await signing()).alreadySigned(asicE, job, signerCertificate, digest);
  },
  splitState: (prepared) => ({ manifest: Buffer.from(manifestOf(prepared)).toString('base64') }),
  splitCheck(saved, prepared, approvedHash) {
    checkPreparedAgain(
      saved,
      {
        output: prepared.job.output,
        manifest: manifestOf(prepared),
        toBeSignedHash: prepared.toBeSigned.toBeSignedHash,
      },
      approvedHash,
    );
  },

  async verify({ file, source }, options) {
    // The ZIP reader and the verification load only when a container is verified.
    const [{ verifyAsicE }, { verifyContainer }] = await Promise.all([
      import('./verify.js'),
      import('../shared/asic-container.js'),
    ]);
    return verifyContainer(source, file, ASIC_E_MIMETYPE, options, verifyAsicE);
  },

  /** `esign extend` of a container with XAdES: its signatures files extended, the container rewritten. */
  extension: {
    async extend(source, copy, level, dependencies) {
      const { xadesContainerExtension } = await import('../shared/xades-extend.js');
      return xadesContainerExtension(ASIC_E_MIMETYPE).extend(source, copy, level, dependencies);
    },
  },
};
