/** What ASiC-S and ASiC-E verification share: the container's documents, and writing them out for `--extract`. */
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { assertUnchanged, writeChunksAtomically } from '../../document-files.js';
import { ASIC_E_MIMETYPE, mimetypeLayout } from '../../../core/forms/shared/asic-container-rules.js';
import { containerDocuments } from '../../../core/forms/shared/recognize.js';
import type { VerifiedFile } from '../../../core/forms/form.js';
import { naming } from '../../../core/errors.js';
import type { VerificationReport } from '../../../core/verify/types.js';
import {
  isEvidenceRecordManifestName,
  isEvidenceRecordName,
  verifyEvidenceRecordWithManifest,
} from '../../../core/forms/shared/evidence-record.js';
import type { ContainerVerifyOptions } from '../../../core/forms/shared/timestamp-report.js';
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
  return containerDocuments(container.entries.map((entry) => entry.name));
}

/**
 * The container's `mimetype` against the type `expected`: refused when of another type; when
 * missing, read by its layout as DSS does (a warning), or refused when nothing under META-INF/
 * signs it (a plain ZIP); each way its layout bends EN 319 162-1 A.1 (not first, compressed, an extra field, trailing
 * white space) returned as a warning for the report.
 */
export async function mimetypeWarnings(container: OpenContainer, expected: string): Promise<string[]> {
  if (!container.entries.some((entry) => entry.name === 'mimetype'))
    return mimetypeLayout(
      undefined,
      expected,
      container.entries.map((entry) => entry.name),
    );
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
  /** Its evidence records (`META-INF/evidencerecord.ers`) are verified and reported with them too. */
  options: ContainerVerifyOptions,
  verify: (container: OpenContainer, file: string, options: ContainerVerifyOptions) => Promise<VerificationReport>,
): Promise<VerifiedFile> {
  let container: OpenContainer | undefined;
  try {
    const report = await (async () => {
      container = await openContainer(source);
      // Lenient on the layout others write (each bend a warning), strict on the type.
      const layout = await mimetypeWarnings(container, mimetype);
      const base = await verify(container, file, options);
      const records = await evidenceRecords(container, options, mimetype === ASIC_E_MIMETYPE ? 'asic-e' : 'asic-s');
      const verified = records.evidenceRecords ? { ...base, evidenceRecords: records.evidenceRecords } : base;
      const warnings = [...layout, ...(base.warnings ?? []), ...(records.warnings ?? [])];
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

/**
 * The container's evidence records, each verified over the container's files as far as esign can
 * (`verifyEvidenceRecord`); one not valid is also a warning of the report, never silently left out.
 */
async function evidenceRecords(
  container: OpenContainer,
  options: ContainerVerifyOptions,
  packaging: 'asic-e' | 'asic-s',
): Promise<Pick<VerificationReport, 'evidenceRecords' | 'warnings'>> {
  const names = container.entries.map((entry) => entry.name);
  const records = names.filter(isEvidenceRecordName);
  if (records.length === 0) return {};
  const data = names
    .filter((name) => name !== 'mimetype' && !name.endsWith('/'))
    .map((name) => ({
      name,
      read: async (consume: (chunk: Uint8Array) => void) => {
        for await (const chunk of container.read(name)) consume(chunk);
      },
    }));
  // An ASiCEvidenceRecordManifest names what the record whose name its SigReference gives covers.
  const manifests = [];
  for (const name of names.filter(isEvidenceRecordManifestName))
    manifests.push({ name, bytes: await container.readWhole(name) });
  const reports = [];
  for (const name of records)
    reports.push(
      await verifyEvidenceRecordWithManifest(
        name,
        await container.readWhole(name),
        data.filter((object) => object.name !== name),
        manifests,
        options,
        packaging,
      ),
    );
  const warnings = reports
    .filter((record) => record.status !== 'valid')
    .map((record) =>
      record.status === 'unverified'
        ? `evidence record ${record.name} NOT VERIFIED: ${record.reason ?? ''}`
        : `evidence record ${record.name} ${record.status === 'untrusted' ? 'UNTRUSTED' : 'INVALID'}: ${record.problems.join('; ')}`,
    );
  return { evidenceRecords: reports, ...(warnings.length > 0 ? { warnings } : {}) };
}
