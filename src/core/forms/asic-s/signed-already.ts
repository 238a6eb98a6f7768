/** `--skip-existing` for an ASiC-S: it holds the input alone, as it is now, and the signer's signature over it. */
import { createHash } from 'node:crypto';
import { bytesEqual } from '../../cms/parse.js';
import type { ByteSource } from '../../ports.js';
import { hashSource } from '../../documents.js';
import { checkCms, type ExistingSignature } from '../shared/signed-already.js';

/** An ASiC-S as `--skip-existing` reads it (the ZIP reader is in src/io): its documents and its signature, if any. */
export interface AsicSContents {
  documents: string[];
  read(name: string): AsyncIterable<Uint8Array>;
  signature: Uint8Array | undefined;
  close(): Promise<void>;
}
export type OpenAsicS = (output: ByteSource) => Promise<AsicSContents>;

export async function asicsSignedAlready(
  input: ByteSource,
  inputPath: string,
  container: AsicSContents,
  signerCertificate: Uint8Array,
): Promise<ExistingSignature> {
  try {
    const name = inputPath.split(/[\\/]/).at(-1)!;
    if (container.documents.length !== 1 || container.documents[0] !== name)
      return { signed: false, reason: `it does not hold ${name} alone` };
    if (!container.signature) return { signed: false, reason: 'it holds no signature' };
    const [held, now] = [createHash('sha256'), createHash('sha256')];
    for await (const chunk of container.read(name)) held.update(chunk);
    await hashSource(input, now);
    const digest = new Uint8Array(now.digest());
    if (!bytesEqual(new Uint8Array(held.digest()), digest))
      return { signed: false, reason: 'it does not hold the input as it is now' };
    return checkCms(container.signature, signerCertificate, digest);
  } finally {
    await container.close();
  }
}
