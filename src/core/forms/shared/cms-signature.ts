/** The CMS of the CAdES-based forms (and of PAdES's /Contents): prepared over a digest of the content, built once signed. */
import { createHash } from 'node:crypto';
import type { DigestName } from '../../cms/algorithms.js';
import { readEnveloping } from '../../cms/enveloping.js';
import { buildSignedAttributes } from '../../cms/signed-attributes.js';
import { buildSignedData, type SignedDataInput } from '../../cms/signed-data.js';
import type { SigningCredential } from '../../ports.js';
import {
  changedWhileSigning,
  hashSource,
  rangeOf,
  type DocumentSource,
  type PreparedDocument,
  type SignedValue,
  type SignJob,
  type SignOptions,
} from '../../documents.js';

/**
 * Prepares a CAdES signature (a .p7s, a .p7m, an ASiC-S): the input hashed once (a .p7m's content,
 * when a parallel signature is added to it), and the signed attributes over that digest.
 */
export async function prepareCms(
  job: SignJob,
  source: DocumentSource,
  signer: Uint8Array,
  digest: DigestName,
  options: SignOptions,
  /** Whether the input is a .p7m a parallel signature is added to: its content is what is hashed. */
  addingTo = false,
): Promise<PreparedDocument> {
  const hash = createHash(digest);
  const enveloped = addingTo ? await readEnveloping(source) : undefined;
  await hashSource(enveloped ? rangeOf(source, enveloped.offset, enveloped.length) : source, hash);
  // What was hashed is the file as it was opened; a write meanwhile would make a false signature.
  if (!(await source.unchanged())) throw changedWhileSigning(source.path);
  const contentDigest = new Uint8Array(hash.digest());
  const signedAttributes = buildSignedAttributes({
    contentDigest,
    digest,
    signerCertificate: signer,
    signingTime: options.signingTime,
  });
  return {
    job,
    toBeSigned: signedAttributes,
    inputSize: source.size,
    contentDigest,
    ...(enveloped ? { enveloped: { ...enveloped, fileSize: source.size } } : {}),
  };
}

export function signedDataOf(
  prepared: PreparedDocument,
  credential: SigningCredential,
  value: SignedValue,
): Uint8Array {
  return buildSignedData(signedDataInput(prepared, credential, value));
}

/** What a prepared document's CMS is built from, once it is signed (and timestamped, and given its validation data). */
export function signedDataInput(
  prepared: Pick<PreparedDocument, 'toBeSigned'>,
  credential: SigningCredential,
  value: SignedValue,
): SignedDataInput {
  return {
    signedAttributesDer: prepared.toBeSigned.der,
    signatureValue: value.signature,
    scheme: credential.scheme,
    certificates: credential.certificates,
    unsignedAttributes: value.timestampToken
      ? {
          signatureTimeStampToken: value.timestampToken,
          ...(value.archiveTimestampToken ? { archiveTimeStampV3Token: value.archiveTimestampToken } : {}),
        }
      : undefined,
    ...(value.validationData ? { validationData: value.validationData } : {}),
  };
}
