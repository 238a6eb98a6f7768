/** The ASiC-E file: every document, then its manifests and signatures, written through a temp file. */
import { ASIC_E_MIMETYPE } from '../../../core/forms/shared/asic-container-rules.js';
import type { DocumentFiles } from '../../../core/documents.js';
import { writeContainer, type ContainerToWrite } from '../shared/asic-writer.js';

/** An ASiC-E: `mimetype`, the documents under their names, then the manifests and signatures. */
export async function writeAsicE(
  files: DocumentFiles,
  container: Omit<ContainerToWrite, 'mimetype'>,
): Promise<{ bytes: number; sha256: string }> {
  return writeContainer(files, { ...container, mimetype: ASIC_E_MIMETYPE }, () => undefined);
}
