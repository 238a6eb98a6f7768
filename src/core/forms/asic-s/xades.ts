/**
 * ASiC-S with XAdES (`--format asics --asic-signature xades`): the document and
 * `META-INF/signatures.xml`, one `ds:Reference` to the document by its name (its bytes hashed as
 * they are). Loaded only when an ASiC-S gets XAdES (it reaches the XML code).
 */
import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import {
  changedWhileSigning,
  hashSource,
  type DocumentSource,
  type PreparedDocument,
  type SignJob,
  type SignOptions,
} from '../../documents.js';
import type { SigningCredential } from '../../ports.js';
import { mimeTypeOf, uriOf } from '../shared/entry-names.js';
import { draftSignature, signatureTimestampInput, toBeSignedOf, type XadesDraft } from '../shared/xades/signature.js';

export interface AsicSXadesState {
  readonly xades: XadesDraft;
}

/** The document hashed once, and the signature over it up to its SignedInfo. */
export async function prepareAsicSXades(
  job: SignJob,
  source: DocumentSource,
  credential: SigningCredential,
  options: SignOptions,
): Promise<PreparedDocument> {
  const digest = credential.scheme.digest;
  const hash = createHash(digest);
  await hashSource(source, hash);
  if (!(await source.unchanged())) throw changedWhileSigning(source.path);
  const contentDigest = new Uint8Array(hash.digest());
  const name = basename(job.input);
  const draft = draftSignature({
    objects: [{ uri: uriOf(name), transforms: [], digest: contentDigest, mimeType: mimeTypeOf(name) }],
    certificates: credential.certificates,
    scheme: credential.scheme,
    signingTime: options.signingTime,
    ...(options.signaturePolicy ? { policy: options.signaturePolicy } : {}),
  });
  return {
    job,
    toBeSigned: toBeSignedOf(draft),
    inputSize: source.size,
    contentDigest,
    timestampCovers: (signature) => signatureTimestampInput(draft, signature),
    state: { xades: draft } satisfies AsicSXadesState,
  };
}
