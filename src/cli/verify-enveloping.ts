/**
 * `esign verify FILE.p7m [--extract OUT]`: an enveloping CAdES is checked as a detached signature
 * over the range of the file that holds its content (read once, streamed); the content is written
 * out only when every signature checks out, from the same open file, and only if the file did not
 * change meanwhile.
 */
import { envelopedContent } from '../core/cms/enveloping.js';
import { verifyEnveloping } from '../core/forms/cades-enveloping/verify.js';
import type { VerifyOptions } from '../core/verify/types.js';
import { READ_CHUNK_BYTES } from '../core/sign-workflow.js';
import { assertUnchanged, writeChunksAtomically } from '../io/document-files.js';
import { FileByteSource } from '../io/file-source.js';
import type { Context } from './context.js';
import { finishVerify, type VerifyCommandOptions } from './commands/verify.js';

export async function runVerifyEnveloping(
  file: string,
  options: VerifyCommandOptions,
  verifyOptions: Omit<VerifyOptions, 'password'>,
  anchored: boolean,
  ctx: Context,
): Promise<void> {
  const source = await FileByteSource.open(file);
  try {
    const { report, enveloped } = await verifyEnveloping(source, file, verifyOptions);
    await finishVerify(report, anchored, options, ctx, async (code) => {
      if (options.extract === undefined) return {};
      if (code !== null) {
        ctx.io.warn(`${file}: its content was not extracted to ${options.extract}: the signature did not check out.`);
        return {};
      }
      const content = envelopedContent(source, enveloped, READ_CHUNK_BYTES);
      await writeChunksAtomically(options.extract, content, () => assertUnchanged(source));
      return { extracted: options.extract };
    });
  } finally {
    await source.close();
  }
}
