/**
 * `esign verify` of XAdES: an XML file with enveloped or enveloping signatures, or a detached
 * signature given with `--signature`. The form object (`src/io/forms/xades/form.ts`, the writer's)
 * calls `verifyXades`; `--skip-existing` calls `xmlSignedBy`.
 */
import type { VerifiedFile, VerifyInput } from '../../../core/forms/form.js';
import type { ExistingSignature } from '../../../core/forms/shared/signed-already.js';
import type { VerifyOptions } from '../../../core/verify/types.js';
import { EsignError } from '../../../core/errors.js';

/** Every XAdES signature of `input` (the XML file, or the files a detached `input.signature` names). */
export async function verifyXades(input: VerifyInput, options: VerifyOptions): Promise<VerifiedFile> {
  void options;
  throw new EsignError('INTERNAL', `${input.file}: XAdES verification is not built yet.`);
}

/**
 * `--skip-existing`: whether `xml` (an XML file as it is now) carries a valid XAdES signature by
 * `signerCertificate` (DER) over its current content.
 */
export async function xmlSignedBy(xml: Uint8Array, signerCertificate: Uint8Array): Promise<ExistingSignature> {
  void xml;
  void signerCertificate;
  return { signed: false, reason: 'XAdES verification is not built yet' };
}
