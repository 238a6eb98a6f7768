/**
 * Writing ASiC containers for signed documents: the input is streamed into the ZIP (read a second
 * time, after signing, and hashed again: the container holds exactly the bytes that were signed),
 * the whole container goes through a temp file and is renamed into place when complete.
 */
import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import { ASIC_S_MIMETYPE, worthCompressing } from '../core/asic/container-rules.js';
import {
  changedWhileSigning,
  READ_CHUNK_BYTES,
  type AsicSToWrite,
  type DocumentFiles,
  type OutputFile,
} from '../core/sign-workflow.js';
import { writeZip } from './zip-container.js';

/** An ASiC-S: `mimetype`, the document under its own name, `META-INF/signature.p7s`. */
export async function writeAsicS(
  files: DocumentFiles,
  job: AsicSToWrite,
  registerOutput: (output: OutputFile) => void,
): Promise<{ bytes: number; sha256: string }> {
  const source = await files.open(job.input);
  try {
    const output = await files.createOutput(job.output, { overwrite: job.overwrite });
    registerOutput(output);
    try {
      const contentHash = createHash(job.digest);
      const outputHash = createHash('sha256');
      const name = basename(job.input);
      const bytes = await writeZip(
        output,
        ASIC_S_MIMETYPE,
        [
          {
            name,
            size: source.size,
            compress: worthCompressing(name),
            hash: contentHash,
            chunks: (async function* () {
              for (let offset = 0; offset < source.size; offset += READ_CHUNK_BYTES)
                yield await source.read(offset, READ_CHUNK_BYTES);
            })(),
          },
          { name: 'META-INF/signature.p7s', bytes: job.cms, compress: false },
        ],
        job.mtime,
        (chunk) => outputHash.update(chunk),
      );
      if (!Buffer.from(contentHash.digest()).equals(job.contentDigest)) throw changedWhileSigning(job.input);
      await output.commit([]);
      return { bytes, sha256: outputHash.digest('hex') };
    } catch (error) {
      await output.abort();
      throw error;
    }
  } finally {
    await source.close();
  }
}
