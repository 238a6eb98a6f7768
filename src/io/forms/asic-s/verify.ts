/** `esign verify FILE.asics`: its one document, and the signature (or the timestamp) over it. */
import { invalid } from '../../../core/forms/shared/asic-container-rules.js';
import { timestampReport, type ContainerVerifyOptions } from '../../../core/forms/shared/timestamp-report.js';
import { verifyCades } from '../../../core/verify/cades.js';
import type { ReadSignedBytes } from '../../../core/verify/cms-check.js';
import type { VerificationReport } from '../../../core/verify/types.js';
import type { OpenContainer } from '../../zip-container.js';
import { documentsOf } from '../shared/asic-container.js';
import { verifyContainerXades } from '../shared/xades-container.js';
import { markContainerModified } from '../../../core/forms/shared/asic-container-rules.js';
import { codeOf, worstOfSignatures } from '../../../core/verify/types.js';

export async function verifyAsicS(
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
  if (has('META-INF/signatures.xml')) return verifyAsicSXades(container, document, file, verifyOptions);
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

/** An ASiC-S with XAdES (META-INF/signatures.xml): its signatures over the one document. */
async function verifyAsicSXades(
  container: OpenContainer,
  document: string,
  file: string,
  verifyOptions: ContainerVerifyOptions,
): Promise<VerificationReport> {
  const results = await verifyContainerXades(container, file, 'META-INF/signatures.xml', verifyOptions);
  const signatures = results.map(({ report, covered }) => {
    if (!covered.includes(document)) {
      report.problems.push(`META-INF/signatures.xml does not cover ${document}, the container's document`);
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
    uncovered: signatures.some((signature) => signature.covers?.includes(document)) ? [] : [document],
    status,
    code: status === 'no-signatures' ? 'VERIFY_NO_SIGNATURES' : codeOf(status),
    checkedAt: verifyOptions.now.toISOString(),
  };
}
