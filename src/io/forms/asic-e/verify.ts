/** `esign verify FILE.asice`: each manifest's signature and the files it names, the archive manifests, the files no signature covers. */
import { createHash } from 'node:crypto';
import { ARCHIVE_MANIFEST, isArchiveManifest } from '../../../core/forms/asic-e/archive-manifest.js';
import { parseManifest } from '../../../core/forms/asic-e/manifest.js';
import { containerStatus, invalid, markContainerModified } from '../../../core/forms/shared/asic-container-rules.js';
import { timestampReport, type ContainerVerifyOptions } from '../../../core/forms/shared/timestamp-report.js';
import { verifyCades } from '../../../core/verify/cades.js';
import {
  codeOf,
  worstOfSignatures,
  type SignatureReport,
  type VerificationReport,
} from '../../../core/verify/types.js';
import type { OpenContainer } from '../../zip-container.js';
import { documentsOf } from '../shared/asic-container.js';
import { verifyContainerXades, xadesSignatureFiles } from '../shared/xades-container.js';

/**
 * The archive manifests (EN 319 162-1 A.7), earlier ones first: each one's timestamp over it, and
 * every file it lists, which must still be there unchanged. A file changed after it was archived
 * fails the archive timestamp (HASH_FAILURE).
 */
async function checkArchives(
  container: OpenContainer,
  names: Set<string>,
  verifyOptions: ContainerVerifyOptions,
): Promise<SignatureReport[]> {
  const archives = [...names]
    .filter(isArchiveManifest)
    .sort((a, b) => Number(a === ARCHIVE_MANIFEST) - Number(b === ARCHIVE_MANIFEST) || (a < b ? -1 : a > b ? 1 : 0));
  const reports: SignatureReport[] = [];
  for (const name of archives) {
    const bytes = await container.readWhole(name);
    const manifest = parseManifest(bytes, name);
    if (!names.has(manifest.signature))
      throw invalid(`${name} is timestamped by ${manifest.signature}, which the container does not hold`);
    const token = await container.readWhole(manifest.signature);
    const covers = manifest.references.map((reference) => reference.name);
    const report = await timestampReport(token, covers, async (consume) => consume(bytes), verifyOptions);
    const changed: string[] = [];
    for (const reference of manifest.references) {
      if (!names.has(reference.name)) {
        changed.push(`${reference.name} was archived by ${name} and is gone`);
        continue;
      }
      const hash = createHash(reference.digest);
      for await (const chunk of container.read(reference.name)) hash.update(chunk);
      if (!Buffer.from(hash.digest()).equals(reference.digestValue))
        changed.push(`${reference.name} was changed after ${name} archived it`);
    }
    if (changed.length > 0) {
      Object.assign(report, {
        status: 'invalid',
        code: 'VERIFY_FAILED',
        indication: 'TOTAL-FAILED',
        subIndication: 'HASH_FAILURE',
      });
      report.problems.push(...changed);
    }
    reports.push(report);
  }
  return reports;
}

export async function verifyAsicE(
  container: OpenContainer,
  file: string,
  verifyOptions: ContainerVerifyOptions,
): Promise<VerificationReport> {
  const names = new Set(container.entries.map((entry) => entry.name));
  const manifests = [...names].filter((name) => /^META-INF\/ASiCManifest[^/]*\.xml$/i.test(name)).sort();
  const { now } = verifyOptions;
  const signatures: SignatureReport[] = [];
  /** Each signature's manifest and signature file, which an archive timestamp must cover for B-LTA. */
  const signatureFiles: string[][] = [];
  const covered = new Set<string>();
  /** Read though they bend EN 319 162-1: a manifest naming a file of META-INF/. */
  const warnings: string[] = [];
  let missing = false;
  for (const manifestName of manifests) {
    const manifestBytes = await container.readWhole(manifestName);
    const manifest = parseManifest(manifestBytes, manifestName);
    if (!names.has(manifest.signature))
      throw invalid(`${manifestName} is signed by ${manifest.signature}, which the container does not hold`);
    for (const reference of manifest.references)
      if (reference.name.startsWith('META-INF/'))
        warnings.push(
          `${manifestName} names ${reference.name}, a file of META-INF/ (EN 319 162-1 has it name documents), read anyway`,
        );
    const p7s = await container.readWhole(manifest.signature);
    const readManifest = async (consume: (chunk: Uint8Array) => void) => consume(manifestBytes);
    // A time assertion (EN 319 162-1 4.4.3.2: META-INF/timestamp*.tst over an ASiCManifest) is a timestamp token, not a CAdES signature.
    const report = /\.tst$/i.test(manifest.signature)
      ? { signatures: [await timestampReport(p7s, [], readManifest, verifyOptions)] }
      : await verifyCades(p7s, file, readManifest, verifyOptions);
    const changed: string[] = [];
    const gone: string[] = [];
    for (const reference of manifest.references) {
      if (!names.has(reference.name)) {
        gone.push(`${manifestName} names ${reference.name}, which the container does not hold`);
        continue;
      }
      const hash = createHash(reference.digest);
      for await (const chunk of container.read(reference.name)) hash.update(chunk);
      if (Buffer.from(hash.digest()).equals(reference.digestValue)) covered.add(reference.name);
      else changed.push(`${reference.name} was changed: its ${reference.digest} is not the one ${manifestName} gives`);
    }
    // Each SignerInfo of the signature file is a signature over the manifest, and over what it names.
    for (const signature of report.signatures) {
      signature.index = signatures.length + 1;
      signature.covers = manifest.references.map((reference) => reference.name);
      if (changed.length > 0) {
        Object.assign(signature, {
          status: 'invalid',
          code: 'VERIFY_FAILED',
          indication: 'TOTAL-FAILED',
          subIndication: 'HASH_FAILURE',
        });
        signature.problems.push(...changed);
        delete signature.level;
      }
      if (gone.length > 0) {
        signature.problems.push(...gone);
        markContainerModified(signature);
        missing = true;
      }
      signatures.push(signature);
      signatureFiles.push([manifestName, manifest.signature]);
    }
  }
  // XAdES signature files (META-INF/signatures*.xml): each reference names an entry.
  const xadesFiles = xadesSignatureFiles(names);
  for (const signatureFile of xadesFiles) {
    for (const { report, covered: intact, missing: gone } of await verifyContainerXades(
      container,
      file,
      signatureFile,
      verifyOptions,
    )) {
      report.index = signatures.length + 1;
      for (const name of intact) covered.add(name);
      if (gone.length > 0) {
        report.problems.push(
          ...gone.map((name) => `${signatureFile} names ${name}, which the container does not hold`),
        );
        markContainerModified(report);
        missing = true;
      }
      signatures.push(report);
      signatureFiles.push([signatureFile]);
    }
  }
  const archives = await checkArchives(container, names, verifyOptions);
  signatures.forEach((signature, index) => {
    const archived = archives.some(
      (archive) => archive.status === 'valid' && signatureFiles[index]!.every((name) => archive.covers?.includes(name)),
    );
    if (signature.level === 'B-LT' && archived) signature.level = 'B-LTA';
  });
  const uncovered = documentsOf(container).filter((name) => !covered.has(name));
  if (uncovered.length > 0)
    for (const signature of signatures) {
      signature.warnings.push(`the container also holds files this signature does not cover: ${uncovered.join(', ')}`);
      markContainerModified(signature);
    }
  archives.forEach((archive, index) => (archive.index = signatures.length + 1 + index));
  signatures.push(...archives);
  const status =
    signatures.length === 0
      ? 'no-signatures'
      : containerStatus(worstOfSignatures(signatures), missing || uncovered.length > 0);
  return {
    file,
    kind: manifests.length === 0 && xadesFiles.length > 0 ? 'xades' : 'cades',
    packaging: 'asic-e',
    signatures,
    uncovered,
    ...(warnings.length > 0 ? { warnings } : {}),
    status,
    code: status === 'no-signatures' ? 'VERIFY_NO_SIGNATURES' : codeOf(status),
    checkedAt: now.toISOString(),
  };
}
