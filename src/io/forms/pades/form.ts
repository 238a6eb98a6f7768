/**
 * PAdES: the signature in the PDF, in an incremental update (`contract.pdf` → `contract-signed.pdf`).
 * Its long-term data goes into the document (a DSS update, a document timestamp), so `esign extend`
 * can add it later too. The pure part is in src/core/forms/pades/.
 */
import { basename, dirname, extname, join } from 'node:path';
import { certificationLevel } from '../../../core/pdf/placeholder.js';
import type { SignatureForm } from '../../../core/forms/form.js';
import { completePdf, extendWritten, openPdf, preparePdf, writeSignature } from '../../../core/forms/pades/sign.js';
import { pdfSignedAlready } from '../../../core/forms/pades/signed-already.js';
import { signedDataOf } from '../../../core/forms/shared/cms-signature.js';
import { openInput, prepareInput } from '../../../core/forms/shared/input.js';
import { withInputAndOutput } from '../../../core/forms/shared/signed-already.js';

export const pades: SignatureForm = {
  name: 'pades',
  kind: 'pdf',
  declares: { outputs: 'one-per-input', parallel: false, longTerm: 'document', passwords: true },
  report: { format: 'PAdES', validationDataKey: 'dss' },

  outputFor(input, outputDir) {
    const name = basename(input);
    return join(outputDir ?? dirname(input), `${name.slice(0, -extname(name).length)}-signed${extname(name)}`);
  },
  addsTo: () => false,

  async check(job, files, { password, update, now }) {
    const opened = await openInput(job, files, (source) => openPdf(source, password, update));
    if (now && opened.pdf && (await certificationLevel(opened.pdf, (await opened.pdf.catalog()).dict)) !== undefined) {
      // Only a warning: a document verify cannot read through is still signed as it would have been.
      // Verify's code loads only here: most documents are not certified, and it is not small.
      const { brokenCertification } = await import('../../../core/forms/pades/verify.js');
      const broken = await brokenCertification(opened.source, job.input, { now, password }).catch(() => undefined);
      if (broken)
        opened.warnings = [`its certification is already broken (${broken}); a new signature does not mend it.`];
    }
    return opened;
  },

  prepare: (job, credential, files, options, opened) =>
    prepareInput(job, credential, files, opened, (source, held, signer, digest) =>
      preparePdf(job, source, held?.pdf, credential, files, options, signer, digest),
    ),

  writeAhead: writeSignature,

  async complete(prepared, credential, value, _options, _outputs, longTerm) {
    if (prepared.signedSize !== undefined) return extendWritten(prepared, value, longTerm?.extendDocument);
    return completePdf(prepared, signedDataOf(prepared, credential, value), value, longTerm?.extendDocument);
  },

  alreadySigned: (job, signerCertificate, files, password) =>
    withInputAndOutput(job, files, (input, output) => pdfSignedAlready(input, output, signerCertificate, password)),

  async verify({ file, source }, options) {
    const { verifyPdf } = await import('../../../core/forms/pades/verify.js');
    return { report: await verifyPdf(source, file, options) };
  },

  extension: {
    async extend(source, copy, level, dependencies) {
      const { extendPdf } = await import('../../../core/ltv/index.js');
      return extendPdf(source, copy, level, dependencies);
    },
  },
};
