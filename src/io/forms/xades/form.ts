/**
 * Enveloped XAdES (`--format xades`): the signature of an XML document inside it, as the last child
 * of its root element (`invoice.xml` → `invoice-signed.xml`), every other byte of the document kept.
 * Its long-term data goes into the signature (CertificateValues, RevocationValues, an
 * ArchiveTimeStamp). The XML libraries and the XAdES code load only when an XML file is signed or
 * verified (`--help` and a PDF sign never load them).
 */
import { basename, dirname, extname, join } from 'node:path';
import type { SignatureForm } from '../../../core/forms/form.js';
import { openInput, prepareInput } from '../../../core/forms/shared/input.js';
import { withInputAndOutput } from '../../../core/forms/shared/signed-already.js';
import type { CheckedXml } from '../../../core/forms/xades/enveloped-sign.js';

const signing = () => import('../../../core/forms/xades/enveloped-sign.js');

export const xades: SignatureForm = {
  name: 'xades',
  kind: 'xades',
  declares: { outputs: 'one-per-input', parallel: false, longTerm: 'signature', passwords: false },
  report: { format: 'XAdES', packaging: 'enveloped', validationDataKey: 'validationData' },

  outputFor(input, outputDir) {
    const name = basename(input);
    const extension = extname(name) || '.xml';
    const stem = extname(name) ? name.slice(0, -extname(name).length) : name;
    return join(outputDir ?? dirname(input), `${stem}-signed${extension}`);
  },
  addsTo: () => false,

  // The document read at the check goes to prepare in `state` (read and decoded once).
  check: (job, files) =>
    openInput(job, files, async (source) => ({ source, state: await (await signing()).checkEnveloped(source) })),

  prepare: (job, credential, files, options, opened) =>
    prepareInput(job, credential, files, opened, async (source, held) =>
      (await signing()).prepareEnveloped(job, source, credential, options, held?.state as CheckedXml | undefined),
    ),

  async complete(prepared, _credential, value, options, outputs, longTerm) {
    return (await signing()).completeEnveloped(prepared, value, options, outputs.files, longTerm);
  },

  alreadySigned: (job, signerCertificate, files) =>
    withInputAndOutput(job, files, async (input, output) => {
      const { envelopedSignedAlready } = await import('./signed-already.js');
      return envelopedSignedAlready(input, output, signerCertificate);
    }),

  async verify(input, options) {
    const { verifyXades } = await import('./verify.js');
    return verifyXades(input, options);
  },

  extension: {
    async extend(source, copy, level, dependencies) {
      const { xmlExtension } = await import('./extend.js');
      return xmlExtension.extend(source, copy, level, dependencies);
    },
  },
};
