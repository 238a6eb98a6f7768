/** What ASiC-S and ASiC-E verification share: the container's documents, and writing them out for `--extract`. */
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { assertUnchanged, writeChunksAtomically } from '../../document-files.js';
import { mimetypeLayout } from '../../../core/forms/shared/asic-container-rules.js';
import type { VerifiedFile } from '../../../core/forms/form.js';
import { naming } from '../../../core/errors.js';
import type { VerificationReport } from '../../../core/verify/types.js';
import type { DocumentSource } from '../../../core/documents.js';
import { openContainer, type OpenContainer } from '../../zip-container.js';

/**
 * Writes the container's documents into `dir` (created; an existing file is never replaced), each
 * through a temp file renamed into place, streamed out of the ZIP. Only called once every
 * signature checked out and no document is uncovered; the names were checked safe when it opened.
 */
export async function extractDocuments(container: OpenContainer, source: DocumentSource, dir: string) {
  await mkdir(dir, { recursive: true });
  for (const name of documentsOf(container)) {
    const target = join(dir, ...name.split('/'));
    await mkdir(dirname(target), { recursive: true });
    await writeChunksAtomically(target, container.read(name), () => assertUnchanged(source));
  }
}

/** The entries outside META-INF/: the container's documents. */
export function documentsOf(container: OpenContainer): string[] {
  return container.entries
    .map((entry) => entry.name)
    .filter((name) => name !== 'mimetype' && !name.startsWith('META-INF/') && !name.endsWith('/'));
}

/**
 * The container's `mimetype` against the type `expected`: refused when it is missing or of another
 * type; each way its layout bends EN 319 162-1 A.1 (not first, compressed, an extra field, trailing
 * white space) returned as a warning for the report.
 */
export async function mimetypeWarnings(container: OpenContainer, expected: string): Promise<string[]> {
  if (!container.entries.some((entry) => entry.name === 'mimetype')) return mimetypeLayout(undefined, expected);
  const header = await container.localHeader('mimetype');
  const content = new TextDecoder().decode(await container.readWhole('mimetype', 1024));
  return mimetypeLayout({ first: header.offset === 0, content, ...header }, expected);
}

/**
 * `esign verify` of an ASiC container: its entries checked as it opens (safe, unique, unencrypted
 * names; no ZIP bomb), its `mimetype` read leniently (each bend of the layout a warning in the
 * report, another type refused), then `verify` over the open ZIP, which stays open for `--extract`
 * until `close`.
 */
export async function verifyContainer(
  source: DocumentSource,
  file: string,
  mimetype: string,
  verify: (container: OpenContainer) => Promise<VerificationReport>,
): Promise<VerifiedFile> {
  let container: OpenContainer | undefined;
  try {
    const report = await (async () => {
      container = await openContainer(source);
      // Lenient on the layout others write (each bend a warning), strict on the type.
      const layout = await mimetypeWarnings(container, mimetype);
      const verified = await verify(container);
      const warnings = [...layout, ...(verified.warnings ?? [])];
      return warnings.length > 0 ? { ...verified, warnings } : verified;
    })().catch((error: unknown) => {
      throw naming(file, error);
    });
    const opened = container!;
    return {
      report,
      extract: {
        refused: (path, target) => `${path}: nothing was extracted to ${target}: the container did not check out.`,
        write: (target) => extractDocuments(opened, source, target),
      },
      close: () => opened.close(),
    };
  } catch (error) {
    container?.close();
    throw error;
  }
}
