/** What ASiC-S and ASiC-E verification share: the container's documents, and writing them out for `--extract`. */
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { assertUnchanged, writeChunksAtomically } from '../../document-files.js';
import type { FileByteSource } from '../../file-source.js';
import { mimetypeLayout } from '../../../core/forms/shared/asic-container-rules.js';
import type { OpenContainer } from '../../zip-container.js';

/**
 * Writes the container's documents into `dir` (created; an existing file is never replaced), each
 * through a temp file renamed into place, streamed out of the ZIP. Only called once every
 * signature checked out and no document is uncovered; the names were checked safe when it opened.
 */
export async function extractDocuments(container: OpenContainer, source: FileByteSource, dir: string) {
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
