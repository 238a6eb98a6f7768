/** The ASiC-S files: written around a signed document (or a timestamped one), and read back for `--skip-existing`. */
import { basename } from 'node:path';
import { ASIC_S_MIMETYPE } from '../../../core/forms/shared/asic-container-rules.js';
import { containerDocuments } from '../../../core/forms/shared/recognize.js';
import type { AsicSContents } from '../../../core/forms/asic-s/signed-already.js';
import type { ByteSource } from '../../../core/ports.js';
import type { AsicSToWrite, DocumentFiles, OutputFile } from '../../../core/documents.js';
import { openContainer } from '../../zip-container.js';
import { writeContainer, type SignedFile } from '../shared/asic-writer.js';

/** An ASiC-S: `mimetype`, the document under its own name, `META-INF/signature.p7s` (or with XAdES, `signature` given: `META-INF/signatures.xml`). */
export async function writeAsicS(
  files: DocumentFiles,
  job: AsicSToWrite,
  registerOutput: (output: OutputFile) => void,
  signature: { name: string; bytes: Uint8Array } = { name: 'META-INF/signature.p7s', bytes: job.cms },
): Promise<{ bytes: number; sha256: string }> {
  const document = { path: job.input, digest: job.digest, digestValue: job.contentDigest };
  return writeOneDocument(files, job, document, signature, registerOutput);
}

/** An ASiC-S with a timestamp instead of a signature: `mimetype`, the document, `META-INF/timestamp.tst`. */
export async function writeTimestampedAsicS(
  files: DocumentFiles,
  job: { input: string; output: string; token: Uint8Array; sha256: Uint8Array; overwrite: boolean; mtime: Date },
): Promise<{ bytes: number; sha256: string }> {
  const document = { path: job.input, digest: 'sha256' as const, digestValue: job.sha256 };
  return writeOneDocument(files, job, document, { name: 'META-INF/timestamp.tst', bytes: job.token }, () => undefined);
}

async function writeOneDocument(
  files: DocumentFiles,
  job: { output: string; overwrite: boolean; mtime: Date },
  document: Omit<SignedFile, 'name'>,
  metadata: { name: string; bytes: Uint8Array },
  registerOutput: (output: OutputFile) => void,
): Promise<{ bytes: number; sha256: string }> {
  return writeContainer(
    files,
    {
      output: job.output,
      overwrite: job.overwrite,
      mimetype: ASIC_S_MIMETYPE,
      documents: [{ ...document, name: basename(document.path) }],
      metadata: [metadata],
      mtime: job.mtime,
    },
    registerOutput,
  );
}

/** An ASiC-S output as `--skip-existing` reads it: its documents and `META-INF/signature.p7s`, if there. */
export async function readAsicS(source: ByteSource): Promise<AsicSContents> {
  const container = await openContainer(source);
  const names = container.entries.map((entry) => entry.name);
  try {
    return {
      documents: containerDocuments(names),
      read: (name) => container.read(name),
      signature: names.includes('META-INF/signature.p7s')
        ? await container.readWhole('META-INF/signature.p7s', 1024 * 1024)
        : undefined,
      close: async () => container.close(),
    };
  } catch (error) {
    container.close();
    throw error;
  }
}
