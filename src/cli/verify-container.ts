/**
 * `esign verify FILE.asics`: the container's layout is checked first (mimetype first, stored, no
 * extra field; safe, unique, unencrypted entries; no ZIP bomb), then its signature over the one
 * document, streamed out of the ZIP. What no signature covers is reported apart.
 */
import { ASIC_S_MIMETYPE, checkMimetype, invalid } from '../core/asic/container-rules.js';
import { naming } from '../core/errors.js';
import { verifyCades } from '../core/verify/cades.js';
import type { VerificationReport } from '../core/verify/types.js';
import { FileByteSource } from '../io/file-source.js';
import { openContainer } from '../io/zip-container.js';
import type { Context } from './context.js';
import { finishVerify, type VerifyCommandOptions } from './commands/verify.js';

export async function runVerifyContainer(
  file: string,
  options: VerifyCommandOptions,
  trustAnchors: Uint8Array[],
  anchored: boolean,
  ctx: Context,
): Promise<void> {
  const source = await FileByteSource.open(file);
  try {
    const report = await verifyAsicS(source, file, trustAnchors).catch((error: unknown) => {
      throw naming(file, error);
    });
    await finishVerify(report, anchored, options, ctx);
  } finally {
    await source.close();
  }
}

async function verifyAsicS(
  source: FileByteSource,
  file: string,
  trustAnchors: Uint8Array[],
): Promise<VerificationReport> {
  checkMimetype(await source.read(0, 30 + 8 + 64), ASIC_S_MIMETYPE);
  const container = await openContainer(source);
  try {
    const documents = container.entries.filter(
      (entry) => entry.name !== 'mimetype' && !entry.name.startsWith('META-INF/'),
    );
    if (documents.length !== 1) throw invalid(`an ASiC-S holds one document, this one ${documents.length}`);
    const document = documents[0]!.name;
    if (!container.entries.some((entry) => entry.name === 'META-INF/signature.p7s'))
      throw invalid('it has no META-INF/signature.p7s');
    const p7s = await container.readWhole('META-INF/signature.p7s');
    const readContent = async (consume: (chunk: Uint8Array) => void): Promise<void> => {
      for await (const chunk of container.read(document)) consume(chunk);
    };
    const report = await verifyCades(p7s, file, readContent, { trustAnchors, now: new Date() });
    for (const signature of report.signatures) signature.covers = [document];
    return { ...report, packaging: 'asic-s', uncovered: [] };
  } finally {
    container.close();
  }
}
