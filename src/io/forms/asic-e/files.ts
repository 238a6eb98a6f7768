/** The ASiC-E file: every document (at prepare), then its manifests and signatures (at complete), written through a temp file. */
import { ASIC_E_MIMETYPE } from '../../../core/forms/shared/asic-container-rules.js';
import type { DigestName } from '../../../core/cms/algorithms.js';
import type { DocumentFiles, SignOptions } from '../../../core/documents.js';
import { startContainer, type ContainerWriting, type FileToWrite } from '../shared/asic-writer.js';

/** Starts an ASiC-E: `mimetype`, the documents under their names, each hashed with `digest` as it is written. */
export async function startAsicE(
  files: DocumentFiles,
  container: { output: string; overwrite: boolean; mtime: Date },
  documents: readonly FileToWrite[],
  digest: DigestName,
  leaveOut?: SignOptions['leaveOut'],
): Promise<ContainerWriting> {
  return startContainer(files, { ...container, mimetype: ASIC_E_MIMETYPE }, documents, digest, leaveOut);
}
