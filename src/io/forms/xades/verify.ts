/**
 * `esign verify` of XAdES: an XML file with enveloped or enveloping signatures, or a detached
 * signature given with `--signature` (its references name the file beside it). The form object
 * (`src/io/forms/xades/form.ts`) calls `verifyXades`; `--skip-existing` calls `xmlSignedBy`.
 * ASiC containers with XAdES are read by `verifyContainerXades` (from the ASiC forms' verify).
 */
import { X509Certificate } from 'node:crypto';
import { basename } from 'node:path';
import type { VerifiedFile, VerifyInput } from '../../../core/forms/form.js';
import type { ExistingSignature } from '../../../core/forms/shared/signed-already.js';
import { verifyXadesXml, type XadesSignatureResult } from '../../../core/forms/shared/xades/verify.js';
import { codeOf, worstOfSignatures, type VerificationReport, type VerifyOptions } from '../../../core/verify/types.js';
import { EsignError } from '../../../core/errors.js';
import { MAX_XML_DOCUMENT_BYTES } from '../../../core/xml/secure-parse.js';
import { summarize } from '../../../core/verify/chain.js';

/** Every XAdES signature of `input` (the XML file, or the file a detached `input.signature` covers). */
export async function verifyXades(input: VerifyInput, options: VerifyOptions): Promise<VerifiedFile> {
  const { file, source, signature } = input;
  const readContent = async (consume: (chunk: Uint8Array) => void): Promise<void> => {
    for await (const chunk of source.chunks(0, source.size)) consume(chunk);
  };
  let results: XadesSignatureResult[];
  if (signature) {
    // Detached: the references name the file by its name (as DSS and xmlsec1 write it).
    const names = new Set([file, basename(file), `./${basename(file)}`]);
    results = await verifyXadesXml(
      { name: file, bytes: signature, resolve: (name) => (names.has(name) ? readContent : undefined) },
      options,
    );
  } else {
    if (source.size > MAX_XML_DOCUMENT_BYTES)
      throw new EsignError(
        'XML_TOO_LARGE',
        `${file}: ${source.size} bytes, above the limit of ${MAX_XML_DOCUMENT_BYTES}`,
        {
          hint: 'XML over 50 MB is signed in an ASiC-E (--format asice), where it is hashed as bytes.',
        },
      );
    const bytes = await source.read(0, source.size);
    results = await verifyXadesXml({ name: file, bytes }, options);
  }
  for (const result of results)
    if (result.missing.length > 0) {
      result.report.problems.push(...result.missing.map((name) => `the signature covers ${name}, which was not given`));
      Object.assign(result.report, {
        status: 'invalid',
        code: 'VERIFY_FAILED',
        indication: 'INDETERMINATE',
        subIndication: 'SIG_CONSTRAINTS_FAILURE',
      });
      delete result.report.level;
    }
  return { report: xadesReport(file, results, options.now) };
}

/** The report of an XML file's (or a detached signature's) XAdES signatures. */
export function xadesReport(file: string, results: readonly XadesSignatureResult[], now: Date): VerificationReport {
  const signatures = results.map((result) => result.report);
  const status = signatures.length === 0 ? 'no-signatures' : worstOfSignatures(signatures);
  return {
    file,
    kind: 'xades',
    signatures,
    status,
    code: status === 'no-signatures' ? 'VERIFY_NO_SIGNATURES' : codeOf(status),
    checkedAt: now.toISOString(),
  };
}

/**
 * `--skip-existing`: whether `xml` (an XML file as it is now) carries a valid XAdES signature by
 * `signerCertificate` (DER) over its current content: every reference intact, the signature value
 * verified with that certificate's key.
 */
export async function xmlSignedBy(xml: Uint8Array, signerCertificate: Uint8Array): Promise<ExistingSignature> {
  let results: XadesSignatureResult[];
  try {
    results = await verifyXadesXml({ name: 'the output', bytes: xml }, { trustAnchors: [], now: new Date() });
  } catch (error) {
    return { signed: false, reason: error instanceof Error ? error.message : String(error) };
  }
  if (results.length === 0) return { signed: false, reason: 'it has no XML signature' };
  const wanted = summarize(new X509Certificate(signerCertificate));
  for (const { report } of results) {
    const intact = report.integrity.valid && report.signatureValue.valid;
    if (intact && report.signer?.serialNumber === wanted.serialNumber && report.signer.issuer === wanted.issuer)
      return { signed: true };
  }
  return { signed: false, reason: 'no intact XML signature by this signer over the file as it is now' };
}
