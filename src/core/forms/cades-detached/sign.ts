/** Detached CAdES (`.p7s`), completing: the CMS written whole. */
import { createHash } from 'node:crypto';
import type { CompletionOutputs, PreparedDocument, SignOptions } from '../../documents.js';

/** Writes a detached CAdES `.p7s`: the CMS whole. */
export async function completeDetached(
  prepared: PreparedDocument,
  cms: Uint8Array,
  options: SignOptions,
  outputs: CompletionOutputs,
): Promise<{ bytes: number; sha256: string }> {
  await outputs.writeDetached(prepared.job.output, cms, options.overwrite);
  return { bytes: cms.length, sha256: createHash('sha256').update(cms).digest('hex') };
}
