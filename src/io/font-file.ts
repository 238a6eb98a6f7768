/**
 * A font file read in place: esign's TrueType reader asks for the table directory, the tables it
 * uses and the glyphs a subset draws (some 60 KB of the 629 KB default font), not the whole file;
 * only fontkit reads it all. A font is loaded once per run, so the file stays open until the run
 * ends: a file replaced meanwhile is still read as it was opened.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { EsignError } from '../core/errors.js';
import type { FontBytes } from '../core/pdf/truetype.js';

/**
 * Opens `path` for positioned reads of at most its first `limit` bytes (a larger file reads as cut
 * there). Throws the file system's error (its `code`) when it cannot be opened, or is a directory.
 */
export function openFontFile(path: string, limit: number): FontBytes {
  const fd = openSync(path, 'r');
  const stat = fstatSync(fd);
  if (stat.isDirectory()) {
    closeSync(fd);
    throw Object.assign(new Error(`${path} is a directory`), { code: 'EISDIR' });
  }
  const size = Math.min(stat.size, limit);
  return {
    size,
    read(offset, length) {
      const wanted = Math.max(0, Math.min(length, size - offset));
      const bytes = Buffer.allocUnsafe(wanted);
      let done = 0;
      try {
        while (done < wanted) {
          const got = readSync(fd, bytes, done, wanted - done, offset + done);
          if (got === 0) break;
          done += got;
        }
      } catch (error) {
        throw new EsignError(
          'USAGE',
          `Cannot read the font ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}).`,
          { hint: 'Check the file, or give another font with --font FILE.' },
        );
      }
      return bytes.subarray(0, done);
    },
  };
}
