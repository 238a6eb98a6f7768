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
import { createHash } from 'node:crypto';
import { hashSource, type PreparedDocument, type SignedValue, type SignOptions } from '../../../core/documents.js';
import type { LongTermWindow } from '../../../core/forms/form.js';
import type { AsicSXadesState } from '../../../core/forms/asic-s/xades.js';
import { prepareInput } from '../../../core/forms/shared/input.js';
import type { SigningCredential } from '../../../core/ports.js';

/** Where an ASiC-S keeps its XAdES signature (EN 319 162-1 §4.3.3). */
const ASIC_S_XADES_ENTRY = 'META-INF/signatures.xml';

/** Completes an ASiC-S with XAdES: `META-INF/signatures.xml` with its unsigned properties by level, beside the document. */
async function completeXades(
  prepared: PreparedDocument,
  credential: SigningCredential,
  value: SignedValue,
  options: SignOptions,
  longTerm: LongTermWindow | undefined,
): Promise<{ bytes: number; sha256: string; format: 'XAdES' }> {
  const { xades } = prepared.state as AsicSXadesState;
  const [{ unsignedValuesOf }, { signaturesDocument }, { writeAsicS }] = await Promise.all([
    import('../../../core/forms/shared/xades/unsigned.js'),
    import('../../../core/forms/shared/xades/asic.js'),
    import('./files.js'),
  ]);
  const input = prepared.job.input;
  // At B-LTA the archive timestamp covers the document's bytes, read again.
  const references = async () => {
    const hash = createHash(credential.scheme.digest);
    const source = await fileSystemDocuments.open(input);
    try {
      await hashSource(source, hash);
    } finally {
      await source.close();
    }
    return hash;
  };
  const values = await unsignedValuesOf(input, xades, references, value, longTerm);
  const written = await writeAsicS(
    fileSystemDocuments,
    {
      input,
      output: prepared.job.output,
      cms: new Uint8Array(0),
      contentDigest: prepared.contentDigest!,
      digest: credential.scheme.digest,
      overwrite: options.overwrite,
      mtime: options.signingTime,
    },
    (output) => (prepared.output = output),
    { name: ASIC_S_XADES_ENTRY, bytes: signaturesDocument(xades, value.signature, values) },
  );
  return { ...written, format: 'XAdES' };
}

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

  check: cmsCheckAndPrepare().check,
  async prepare(job, credential, files, options, opened) {
    if (options.asicSignature !== 'xades') return cmsCheckAndPrepare().prepare(job, credential, files, options, opened);
    // XAdES inside (META-INF/signatures.xml): the XML code loads only then.
    const { prepareAsicSXades } = await import('../../../core/forms/asic-s/xades.js');
    return prepareInput(job, credential, files, opened, (source) =>
      prepareAsicSXades(job, source, credential, options),
    );
  },

  async complete(prepared, credential, value, options, _outputs, longTerm) {
    if ((prepared.state as Partial<AsicSXadesState> | undefined)?.xades)
      return completeXades(prepared, credential, value, options, longTerm);
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

  /** `esign extend` of a container with XAdES: its signatures files extended, the container rewritten. */
  extension: {
    async extend(source, copy, level, dependencies) {
      const { xadesContainerExtension } = await import('../shared/xades-extend.js');
      return xadesContainerExtension(ASIC_S_MIMETYPE).extend(source, copy, level, dependencies);
    },
  },
};
