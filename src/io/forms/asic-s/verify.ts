/** `esign verify FILE.asics`: its one document, and the signature (or the timestamp) over it. */
import { containerStatus, invalid, markContainerModified } from '../../../core/forms/shared/asic-container-rules.js';
import { isEvidenceRecordName } from '../../../core/forms/shared/evidence-record.js';
import { timestampReport, type ContainerVerifyOptions } from '../../../core/forms/shared/timestamp-report.js';
import { verifyCades } from '../../../core/verify/cades.js';
import type { ReadSignedBytes } from '../../../core/verify/cms-check.js';
import { codeOf, worstOfSignatures, type VerificationReport } from '../../../core/verify/types.js';
import type { OpenContainer } from '../../zip-container.js';
import { documentsOf } from '../shared/asic-container.js';
import { verifyContainerXades } from '../shared/xades-container.js';

export async function verifyAsicS(
  container: OpenContainer,
  file: string,
  verifyOptions: ContainerVerifyOptions,
): Promise<VerificationReport> {
  const documents = documentsOf(container);
  if (documents.length === 0) throw invalid('an ASiC-S holds one document, this one none');
  const readerOf =
    (document: string): ReadSignedBytes =>
    async (consume) => {
      for await (const chunk of container.read(document)) consume(chunk);
    };
  const has = (name: string) => container.entries.some((entry) => entry.name === name);
  if (has('META-INF/signatures.xml')) return verifyAsicSXades(container, documents, file, verifyOptions);
  const timestamped = !has('META-INF/signature.p7s');
  if (timestamped && !has('META-INF/timestamp.tst')) {
    // Its evidence may be an evidence record alone (verified beside, by verifyContainer): no signature.
    if (container.entries.some((entry) => isEvidenceRecordName(entry.name))) return noSignatures(file, verifyOptions);
    throw invalid('it has neither META-INF/signature.p7s nor META-INF/timestamp.tst');
  }
  const evidence = await container.readWhole(timestamped ? 'META-INF/timestamp.tst' : 'META-INF/signature.p7s');
  const verifyOver = async (document: string): Promise<VerificationReport> => {
    if (timestamped) return verifyTimestamped(evidence, document, file, readerOf(document), verifyOptions);
    const report = await verifyCades(evidence, file, readerOf(document), verifyOptions);
    for (const signature of report.signatures) signature.covers = [document];
    return { ...report, packaging: 'asic-s', uncovered: [] };
  };
  if (documents.length === 1) return verifyOver(documents[0]!);
  // A document was added to (or changed in) an ASiC-S: the one the signature covers is found, and
  // the others are uncovered — a change to the container (VERIFY_MODIFIED), whatever the trust.
  let report: VerificationReport | undefined;
  for (const document of documents) {
    const over = await verifyOver(document);
    report ??= over;
    if (over.signatures.length > 0 && over.signatures.every((signature) => signature.integrity.valid)) {
      report = over;
      break;
    }
  }
  const covered = report!.signatures[0]?.covers?.[0];
  const uncovered = documents.filter((document) => document !== covered);
  for (const signature of report!.signatures) {
    signature.warnings.push(
      `an ASiC-S holds one document; this one also holds files its signature does not cover: ${uncovered.join(', ')}`,
    );
    markContainerModified(signature);
  }
  const status = containerStatus(worstOfSignatures(report!.signatures), true);
  return { ...report!, uncovered, status, code: codeOf(status) };
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

/**
 * An ASiC-S with XAdES (META-INF/signatures.xml): its signatures over the one document. A document
 * no signature covers (one added to the container) is a change to it: VERIFY_MODIFIED.
 */
async function verifyAsicSXades(
  container: OpenContainer,
  documents: readonly string[],
  file: string,
  verifyOptions: ContainerVerifyOptions,
): Promise<VerificationReport> {
  const results = await verifyContainerXades(container, file, 'META-INF/signatures.xml', verifyOptions);
  const covered = new Set(results.flatMap((result) => result.covered));
  const uncovered = documents.filter((document) => !covered.has(document));
  const signatures = results.map(({ report }) => {
    if (uncovered.length > 0) {
      report.problems.push(`META-INF/signatures.xml does not cover ${uncovered.join(', ')}, in the container`);
      markContainerModified(report);
    }
    return report;
  });
  const status = signatures.length === 0 ? 'no-signatures' : worstOfSignatures(signatures);
  return {
    file,
    kind: 'xades',
    packaging: 'asic-s',
    signatures,
    uncovered,
    status,
    code: status === 'no-signatures' ? 'VERIFY_NO_SIGNATURES' : codeOf(status),
    checkedAt: verifyOptions.now.toISOString(),
  };
}

function noSignatures(file: string, { now }: ContainerVerifyOptions): VerificationReport {
  return {
    file,
    kind: 'cades',
    packaging: 'asic-s',
    signatures: [],
    uncovered: [],
    status: 'no-signatures',
    code: 'VERIFY_NO_SIGNATURES',
    checkedAt: now.toISOString(),
  };
}
