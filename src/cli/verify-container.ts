/**
 * `esign verify FILE.asics|FILE.asice`: the container's layout is checked first (mimetype first,
 * stored, no extra field; safe, unique, unencrypted entries; no ZIP bomb), then each signature:
 * an ASiC-S's over its one document, an ASiC-E's over its manifest, and every file that manifest
 * names, streamed out of the ZIP and hashed. The files no signature covers are reported apart, and
 * make an otherwise valid container VERIFY_MODIFIED: an unsigned file added to a signed container
 * is the classic attack on ASiC.
 */
import { createHash, X509Certificate } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ASIC_E_MIMETYPE, ASIC_S_MIMETYPE, checkMimetype, invalid } from '../core/forms/shared/asic-container-rules.js';
import { parseManifest } from '../core/forms/asic-e/manifest.js';
import { ARCHIVE_MANIFEST, isArchiveManifest } from '../core/forms/asic-e/archive-manifest.js';
import { naming } from '../core/errors.js';
import { verifyCades } from '../core/verify/cades.js';
import { checkTimestampOver, type ReadSignedBytes } from '../core/verify/cms-check.js';
import { revocationMaterial } from '../core/verify/revocation.js';
import {
  codeOf,
  noFindings,
  verdict,
  worst,
  type SignatureReport,
  type VerifyOptions,
  type VerificationReport,
} from '../core/verify/types.js';
import { assertUnchanged, writeChunksAtomically } from '../io/document-files.js';
import { FileByteSource } from '../io/file-source.js';
import { openContainer, type OpenContainer } from '../io/zip-container.js';
import type { Context } from './context.js';
import { finishVerify, type VerifyCommandOptions } from './commands/verify.js';

type ContainerVerifyOptions = Omit<VerifyOptions, 'password'>;

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
      checkMimetype(await source.read(0, 30 + 8 + 64), simple ? ASIC_S_MIMETYPE : ASIC_E_MIMETYPE);
      container = await openContainer(source);
      return simple ? verifyAsicS(container, file, verifyOptions) : verifyAsicE(container, file, verifyOptions);
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

/**
 * Writes the container's documents into `dir` (created; an existing file is never replaced), each
 * through a temp file renamed into place, streamed out of the ZIP. Only called once every
 * signature checked out and no document is uncovered; the names were checked safe when it opened.
 */
async function extractDocuments(container: OpenContainer, source: FileByteSource, dir: string) {
  await mkdir(dir, { recursive: true });
  for (const name of documentsOf(container)) {
    const target = join(dir, ...name.split('/'));
    await mkdir(dirname(target), { recursive: true });
    await writeChunksAtomically(target, container.read(name), () => assertUnchanged(source));
  }
}

/** The entries outside META-INF/: the container's documents. */
function documentsOf(container: OpenContainer): string[] {
  return container.entries
    .map((entry) => entry.name)
    .filter((name) => name !== 'mimetype' && !name.startsWith('META-INF/') && !name.endsWith('/'));
}

async function verifyAsicS(
  container: OpenContainer,
  file: string,
  verifyOptions: ContainerVerifyOptions,
): Promise<VerificationReport> {
  const documents = documentsOf(container);
  if (documents.length !== 1) throw invalid(`an ASiC-S holds one document, this one ${documents.length}`);
  const document = documents[0]!;
  const readContent = async (consume: (chunk: Uint8Array) => void): Promise<void> => {
    for await (const chunk of container.read(document)) consume(chunk);
  };
  const has = (name: string) => container.entries.some((entry) => entry.name === name);
  if (!has('META-INF/signature.p7s')) {
    if (!has('META-INF/timestamp.tst'))
      throw invalid('it has neither META-INF/signature.p7s nor META-INF/timestamp.tst');
    const token = await container.readWhole('META-INF/timestamp.tst');
    return verifyTimestamped(token, document, file, readContent, verifyOptions);
  }
  const p7s = await container.readWhole('META-INF/signature.p7s');
  const report = await verifyCades(p7s, file, readContent, verifyOptions);
  for (const signature of report.signatures) signature.covers = [document];
  return { ...report, packaging: 'asic-s', uncovered: [] };
}

/** An ASiC-S whose evidence is a timestamp token over the document: reported as a document timestamp. */
async function verifyTimestamped(
  token: Uint8Array,
  document: string,
  file: string,
  readContent: ReadSignedBytes,
  verifyOptions: ContainerVerifyOptions,
): Promise<VerificationReport> {
  const report = await timestampReport(token, [document], readContent, verifyOptions);
  return {
    file,
    kind: 'cades',
    packaging: 'asic-s',
    signatures: [report],
    uncovered: [],
    status: report.status,
    code: report.code,
    checkedAt: verifyOptions.now.toISOString(),
  };
}

/** A timestamp token as the evidence over some bytes (an ASiC-S's document, an ASiC-E's archive manifest). */
async function timestampReport(
  token: Uint8Array,
  covers: string[],
  readContent: ReadSignedBytes,
  { trustAnchors, now, trustedLists }: ContainerVerifyOptions,
): Promise<SignatureReport> {
  const ctx = {
    anchors: trustAnchors.map((der) => new X509Certificate(der)),
    extraCerts: [],
    revocation: revocationMaterial([], []),
    now,
    ...(trustedLists ? { trustedLists } : {}),
  };
  const report: SignatureReport = {
    index: 1,
    kind: 'docTimeStamp',
    integrity: { valid: false, digestAlgorithm: 'unknown' },
    signatureValue: { valid: false, algorithm: 'timestamp token' },
    covers,
    status: 'invalid',
    code: 'VERIFY_FAILED',
    indication: 'TOTAL-FAILED',
    problems: [],
    warnings: [],
  };
  const findings = { ...noFindings(), problems: report.problems };
  await checkTimestampOver(token, readContent, ctx, report, findings);
  Object.assign(report, verdict(findings));
  if (report.status === 'valid') delete report.subIndication;
  report.problems.push(
    ...findings.untrusted,
    ...findings.weak.map((weakness) => `algorithm not acceptable: ${weakness}`),
  );
  return report;
}

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

async function verifyAsicE(
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
  for (const manifestName of manifests) {
    const manifestBytes = await container.readWhole(manifestName);
    const manifest = parseManifest(manifestBytes, manifestName);
    if (!names.has(manifest.signature))
      throw invalid(`${manifestName} is signed by ${manifest.signature}, which the container does not hold`);
    for (const reference of manifest.references)
      if (!names.has(reference.name) || reference.name.startsWith('META-INF/'))
        throw invalid(`${manifestName} names ${reference.name}, which the container does not hold`);
    const p7s = await container.readWhole(manifest.signature);
    const report = await verifyCades(p7s, file, async (consume) => consume(manifestBytes), verifyOptions);
    const signature = report.signatures[0]!;
    signature.index = signatures.length + 1;
    signature.covers = manifest.references.map((reference) => reference.name);
    const changed: string[] = [];
    for (const reference of manifest.references) {
      const hash = createHash(reference.digest);
      for await (const chunk of container.read(reference.name)) hash.update(chunk);
      if (Buffer.from(hash.digest()).equals(reference.digestValue)) covered.add(reference.name);
      else changed.push(`${reference.name} was changed: its ${reference.digest} is not the one ${manifestName} gives`);
    }
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
    signatures.push(signature);
    signatureFiles.push([manifestName, manifest.signature]);
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
      if (signature.status === 'valid' || signature.status === 'weak')
        Object.assign(signature, {
          status: 'modified',
          code: 'VERIFY_MODIFIED',
          indication: 'INDETERMINATE',
          subIndication: 'SIG_CONSTRAINTS_FAILURE',
        });
    }
  archives.forEach((archive, index) => (archive.index = signatures.length + 1 + index));
  signatures.push(...archives);
  const status = signatures.length === 0 ? 'no-signatures' : worst(signatures.map((signature) => signature.status));
  return {
    file,
    kind: 'cades',
    packaging: 'asic-e',
    signatures,
    uncovered,
    status,
    code: status === 'no-signatures' ? 'VERIFY_NO_SIGNATURES' : codeOf(status),
    checkedAt: now.toISOString(),
  };
}
