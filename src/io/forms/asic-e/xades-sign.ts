/**
 * The XAdES signature of an ASiC-E, prepared and completed: over the files as hashed (each by its
 * entry name), then `META-INF/signaturesN.xml` with its unsigned properties by level, and for a new
 * container the ODF `META-INF/manifest.xml`. At B-LTA the ArchiveTimeStamp covers every file's bytes
 * (read again, streamed) with the signature. Loaded only when a container gets XAdES.
 */
import { createHash } from 'node:crypto';
import {
  draftContainerSignature,
  nextSignatureName,
  ODF_MANIFEST,
  odfManifest,
  signaturesDocument,
} from '../../../core/forms/asic-e/xades.js';
import { READ_CHUNK_BYTES, type DocumentFiles, type SignedValue, type ToBeSigned } from '../../../core/documents.js';
import type { LongTermWindow } from '../../../core/forms/form.js';
import {
  signatureTimestampInput,
  toBeSignedOf,
  type SignaturePolicy,
  type XadesDraft,
} from '../../../core/forms/shared/xades/signature.js';
import { unsignedValuesOf } from '../../../core/forms/shared/xades/unsigned.js';
import type { SigningCredential } from '../../../core/ports.js';
import type { SignedFile } from '../shared/asic-writer.js';

export interface XadesContainerState {
  readonly draft: XadesDraft;
  readonly signatureName: string;
  /** A new container's ODF manifest (a container signed again keeps its own). */
  readonly manifest?: Uint8Array;
}

/** What is signed: the files as hashed, under a new `signaturesN.xml` (the next free number among `existing`'s entries). */
export function prepareXadesContainer(
  files: readonly SignedFile[],
  existing: readonly string[] | undefined,
  credential: Pick<SigningCredential, 'certificates' | 'scheme'>,
  signingTime: Date,
  policy: SignaturePolicy | undefined,
): { toBeSigned: ToBeSigned; timestampCovers: (signature: Uint8Array) => Uint8Array; state: XadesContainerState } {
  const draft = draftContainerSignature(files, credential, signingTime, policy);
  return {
    toBeSigned: toBeSignedOf(draft),
    timestampCovers: (signature) => signatureTimestampInput(draft, signature),
    state: {
      draft,
      signatureName: nextSignatureName(existing ?? []),
      ...(existing ? {} : { manifest: odfManifest(files.map((file) => file.name)) }),
    },
  };
}

/** The META-INF entries the signature adds: the manifest of a new container, and the signature. */
export async function xadesContainerEntries(
  state: XadesContainerState,
  files: readonly SignedFile[],
  documents: DocumentFiles,
  value: SignedValue,
  input: string,
  longTerm: Pick<LongTermWindow, 'level' | 'validationData' | 'archiveTimestamp'> | undefined,
): Promise<{ name: string; bytes: Uint8Array }[]> {
  const digest = state.draft.scheme.digest;
  const references = async () => {
    // Each reference gives its file's bytes as they are (no transforms), in the order signed.
    const hash = createHash(digest);
    for (const file of files) {
      if (file.chunks) {
        for await (const chunk of file.chunks()) hash.update(chunk);
        continue;
      }
      const source = await documents.open(file.path);
      try {
        for (let offset = 0; offset < source.size; offset += READ_CHUNK_BYTES)
          hash.update(await source.read(offset, READ_CHUNK_BYTES));
      } finally {
        await source.close();
      }
    }
    return hash;
  };
  const values = await unsignedValuesOf(input, state.draft, references, value, longTerm);
  return [
    ...(state.manifest ? [{ name: ODF_MANIFEST, bytes: state.manifest }] : []),
    { name: state.signatureName, bytes: signaturesDocument(state.draft, value.signature, values) },
  ];
}
