/**
 * `esign extend` of XAdES in an ASiC container (ASiC-E `META-INF/signatures*.xml`, also from a
 * `.bdoc` or `.sce`; ASiC-S `META-INF/signatures.xml`): each signatures file extended by
 * `extendXadesXml`, its references read from the container's entries; then the container rewritten
 * entry by entry in its order (each document streamed from the original, stored or deflated as it
 * was, its CRC checked as it is read), the signatures files replaced, into the output the caller
 * commits (temp file and rename). Loaded only when a container is extended.
 */
import { createHash } from 'node:crypto';
import { EsignError } from '../../../core/errors.js';
import type { FormExtension } from '../../../core/forms/form.js';
import type { XadesExtension } from '../../../core/forms/xades/extend.js';
import type { ExtensionResult } from '../../../core/ltv/extend.js';
import { containerXadesInput, xadesSignatureFiles } from './xades-container.js';

/** The extension result of a form that rewrites its output: what `extended` added, written by `write`. */
export function rewritten(
  extended: Omit<XadesExtension, 'bytes'>,
  write: NonNullable<ExtensionResult['rewrite']>,
): ExtensionResult {
  return {
    tail: new Uint8Array(0),
    rewrite: write,
    format: 'XAdES',
    signatures: extended.signatures,
    documentTimestamps: 0,
    added: extended.added,
    ...(extended.archiveTimestamp ? { archiveTimestamp: extended.archiveTimestamp } : {}),
    checks: extended.checks,
    warnings: extended.warnings,
  };
}

/** The extension of a container form whose `mimetype` is `mimetype` (written first, as the writer always does). */
export function xadesContainerExtension(mimetype: string): FormExtension {
  return {
    async extend(source, _copy, level, dependencies) {
      const [{ openContainer, writeZip }, { extendXadesXml }] = await Promise.all([
        import('../../zip-container.js'),
        import('../../../core/forms/xades/extend.js'),
      ]);
      const now = dependencies.now ?? new Date();
      const container = await openContainer(source);
      const total: Omit<XadesExtension, 'bytes'> = {
        signatures: 0,
        added: { certs: 0, ocsps: 0, crls: 0 },
        checks: [],
        warnings: [],
      };
      const replaced = new Map<string, Uint8Array>();
      try {
        const names = new Set(container.entries.map((entry) => entry.name));
        const signatureFiles = xadesSignatureFiles(names);
        if (signatureFiles.length === 0)
          throw new EsignError(
            'CONTAINER_INVALID',
            `${source.path} holds no XAdES signature (META-INF/*signatures*.xml) to extend.`,
            {
              hint: 'esign extend raises PDFs, XAdES XML files and XAdES containers; a container with CAdES is signed at B-LT/B-LTA when it is made (--level).',
            },
          );
        for (const file of signatureFiles) {
          const extended = await extendXadesXml(
            await containerXadesInput(container, source.path, file, (name) => !name.startsWith('META-INF/')),
            level,
            dependencies,
            now,
          );
          replaced.set(file, extended.bytes);
          total.signatures += extended.signatures;
          total.added.certs += extended.added.certs;
          total.added.ocsps += extended.added.ocsps;
          total.added.crls += extended.added.crls;
          total.checks.push(...extended.checks);
          for (const warning of extended.warnings) if (!total.warnings.includes(warning)) total.warnings.push(warning);
          if (extended.archiveTimestamp) total.archiveTimestamp = extended.archiveTimestamp;
        }
        const stored = names.has('mimetype')
          ? new TextDecoder().decode(await container.readWhole('mimetype', 1024)).trim()
          : mimetype;
        const entries = container.entries;
        return rewritten(total, async (output) => {
          const hash = createHash('sha256');
          try {
            const bytes = await writeZip(
              output,
              stored,
              entries
                .filter((entry) => entry.name !== 'mimetype' && !entry.name.endsWith('/'))
                .map((entry) => {
                  const compress = entry.compressionMethod !== 0;
                  const signature = replaced.get(entry.name);
                  return signature
                    ? { name: entry.name, bytes: signature, compress }
                    : {
                        name: entry.name,
                        // Opened when its turn comes, one entry at a time.
                        chunks: (async function* () {
                          yield* container.read(entry.name);
                        })(),
                        size: entry.uncompressedSize,
                        compress,
                      };
                }),
              now,
              (chunk) => hash.update(chunk),
            );
            return { bytes, sha256: hash.digest('hex') };
          } finally {
            container.close();
          }
        });
      } catch (error) {
        container.close();
        throw error;
      }
    },
  };
}
