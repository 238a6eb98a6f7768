/**
 * `esign verify FILE.asics|FILE.asice`: the container's layout is checked first (mimetype first,
 * stored, no extra field; safe, unique, unencrypted entries; no ZIP bomb), then each signature:
 * an ASiC-S's over its one document, an ASiC-E's over its manifest, and every file that manifest
 * names, streamed out of the ZIP and hashed. The files no signature covers are reported apart, and
 * make an otherwise valid container VERIFY_MODIFIED: an unsigned file added to a signed container
 * is the classic attack on ASiC.
 */
import { ASIC_E_MIMETYPE, ASIC_S_MIMETYPE } from '../core/forms/shared/asic-container-rules.js';
import type { ContainerVerifyOptions } from '../core/forms/shared/timestamp-report.js';
import { naming } from '../core/errors.js';
import { verifyAsicE } from '../io/forms/asic-e/verify.js';
import { verifyAsicS } from '../io/forms/asic-s/verify.js';
import { extractDocuments, mimetypeWarnings } from '../io/forms/shared/asic-container.js';
import { FileByteSource } from '../io/file-source.js';
import { openContainer, type OpenContainer } from '../io/zip-container.js';
import type { Context } from './context.js';
import { finishVerify, type VerifyCommandOptions } from './commands/verify.js';

export async function runVerifyContainer(
  file: string,
  options: VerifyCommandOptions,
  verifyOptions: ContainerVerifyOptions,
  anchored: boolean,
  ctx: Context,
): Promise<void> {
  const source = await FileByteSource.open(file);
  let container: OpenContainer | undefined;
  try {
    const simple = /\.(asics|scs)$/i.test(file);
    const report = await (async () => {
      container = await openContainer(source);
      // Lenient on the layout others write (each bend a warning), strict on the type.
      const layout = await mimetypeWarnings(container, simple ? ASIC_S_MIMETYPE : ASIC_E_MIMETYPE);
      const verified = simple
        ? await verifyAsicS(container, file, verifyOptions)
        : await verifyAsicE(container, file, verifyOptions);
      const warnings = [...layout, ...(verified.warnings ?? [])];
      return warnings.length > 0 ? { ...verified, warnings } : verified;
    })().catch((error: unknown) => {
      throw naming(file, error);
    });
    await finishVerify(report, anchored, options, ctx, async (code) => {
      if (options.extract === undefined) return {};
      if (code !== null) {
        ctx.io.warn(`${file}: nothing was extracted to ${options.extract}: the container did not check out.`);
        return {};
      }
      await extractDocuments(container!, source, options.extract);
      return { extracted: options.extract };
    });
  } finally {
    container?.close();
    await source.close();
  }
}
