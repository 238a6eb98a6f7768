/**
 * `esign verify FILE.p7m [--extract OUT]`: an enveloping CAdES is checked as a detached signature
 * over the range of the file that holds its content (read once, streamed); the content is written
 * out only when every signature checks out, from the same open file, and only if the file did not
 * change meanwhile.
 */
import { naming } from '../core/errors.js';
import { oneSignerEach } from '../core/cms/signed-data.js';
import { codeOf, worst, type VerificationReport, type VerifyOptions } from '../core/verify/types.js';
import { readEnveloping } from '../core/cms/enveloping.js';
import { READ_CHUNK_BYTES } from '../core/sign-workflow.js';
import { verifyCades } from '../core/verify/cades.js';
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
    const enveloped = await readEnveloping(source).catch((error: unknown) => {
      throw naming(file, error);
    });
    const readContent = async (consume: (chunk: Uint8Array) => void): Promise<void> => {
      for await (const chunk of source.chunks(enveloped.offset, enveloped.offset + enveloped.length)) consume(chunk);
    };
    // Each SignerInfo (a parallel signature adds one) is checked on its own over the same content.
    const { now } = verifyOptions;
    let signers: Uint8Array[];
    try {
      signers = oneSignerEach(enveloped.detached);
    } catch (error) {
      throw naming(file, error);
    }
    const reports = [];
    for (const signer of signers) reports.push(await verifyCades(signer, file, readContent, verifyOptions));
    const signatures = reports.map((one, index) => ({ ...one.signatures[0]!, index: index + 1 }));
    const status = signatures.length === 0 ? 'no-signatures' : worst(signatures.map((signature) => signature.status));
    const report: VerificationReport = {
      file,
      kind: 'cades',
      packaging: 'enveloping',
      signatures,
      status,
      code: status === 'no-signatures' ? 'VERIFY_NO_SIGNATURES' : codeOf(status),
      checkedAt: now.toISOString(),
    };
    await finishVerify(report, anchored, options, ctx, async (code) => {
      if (options.extract === undefined) return {};
      if (code !== null) {
        ctx.io.warn(`${file}: its content was not extracted to ${options.extract}: the signature did not check out.`);
        return {};
      }
      const content = (async function* () {
        for (let offset = 0; offset < enveloped.length; offset += READ_CHUNK_BYTES)
          yield await source.read(enveloped.offset + offset, Math.min(READ_CHUNK_BYTES, enveloped.length - offset));
      })();
      await writeChunksAtomically(options.extract, content, () => assertUnchanged(source));
      return { extracted: options.extract };
    });
  } finally {
    await source.close();
  }
}
