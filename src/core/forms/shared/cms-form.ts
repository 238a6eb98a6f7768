/** What the CAdES-based forms (.p7s, .p7m, ASiC-S) do alike before completion: check and prepare. */
import type { SignatureForm } from '../form.js';
import { prepareCms } from './cms-signature.js';
import { openInput, prepareInput } from './input.js';

/**
 * The check and the prepare of a CMS form: nothing to read before approval but that the file opens;
 * in its window the input hashed once (the content of a .p7m it `addsTo`) under signed attributes.
 */
export function cmsCheckAndPrepare(
  addsTo: (input: string) => boolean = () => false,
): Pick<SignatureForm, 'check' | 'prepare'> {
  return {
    check: (job, files) => openInput(job, files),
    prepare: (job, credential, files, options, opened) =>
      prepareInput(job, credential, files, opened, (source, _held, signer, digest) =>
        prepareCms(job, source, signer, digest, options, addsTo(job.input)),
      ),
  };
}
