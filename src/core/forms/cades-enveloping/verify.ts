/**
 * Enveloping CAdES (`.p7m`), verifying: each SignerInfo checked on its own as a detached signature
 * over the range of the file that holds the content (read once per signer, streamed), in DER or in
 * BER (indefinite lengths, the content in segments) as much signing software writes it.
 */
import { envelopedContent, readEnveloping, type EnvelopedContent } from '../../cms/enveloping.js';
import { READ_CHUNK_BYTES } from '../../documents.js';
import { oneSignerEach } from '../../cms/signed-data.js';
import { naming } from '../../errors.js';
import type { ByteSource } from '../../ports.js';
import { verifyCades } from '../../verify/cades.js';
import { codeOf, worst, type VerificationReport, type VerifyOptions } from '../../verify/types.js';

/** The report of a .p7m in `source`, and where its content lies (for `--extract`). */
export async function verifyEnveloping(
  source: ByteSource & { chunks(start: number, end: number): AsyncIterable<Uint8Array> },
  file: string,
  verifyOptions: Omit<VerifyOptions, 'password'>,
): Promise<{ report: VerificationReport; enveloped: EnvelopedContent }> {
  const enveloped = await readEnveloping(source, { ber: true }).catch((error: unknown) => {
    throw naming(file, error);
  });
  const readContent = async (consume: (chunk: Uint8Array) => void): Promise<void> => {
    if (enveloped.segmentsEnd !== undefined)
      for await (const chunk of envelopedContent(source, enveloped, READ_CHUNK_BYTES)) consume(chunk);
    else for await (const chunk of source.chunks(enveloped.offset, enveloped.offset + enveloped.length)) consume(chunk);
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
  // An archive-time-stamp-v2 covers the encapContentInfo as it lies in the file, content inside.
  const readEncapsulated = async (consume: (chunk: Uint8Array) => void): Promise<void> => {
    for await (const chunk of source.chunks(enveloped.encapsulated.start, enveloped.encapsulated.end)) consume(chunk);
  };
  for (const signer of signers)
    reports.push(await verifyCades(signer, file, readContent, verifyOptions, readEncapsulated));
  const signatures = reports.map((one, index) => ({ ...one.signatures[0]!, index: index + 1 }));
  // Each report's status counts its counter-signatures too.
  const status =
    signatures.length === 0
      ? 'no-signatures'
      : worst(reports.flatMap((one) => (one.status === 'no-signatures' ? [] : [one.status])));
  const report: VerificationReport = {
    file,
    kind: 'cades',
    packaging: 'enveloping',
    signatures,
    status,
    code: status === 'no-signatures' ? 'VERIFY_NO_SIGNATURES' : codeOf(status),
    checkedAt: now.toISOString(),
  };
  return { report, enveloped };
}
