/**
 * Our own writer of XML evidence records (RFC 6283) for tests: chains of archive timestamps, each
 * with its hash tree (Sequences of DigestValues, Order 1, 2, …) and RFC 3161 token, written without
 * whitespace between elements so that the canonical form of an element is known by hand.
 */

export const ERS_NS = 'urn:ietf:params:xml:ns:ers';
export const SHA256_URI = 'http://www.w3.org/2001/04/xmlenc#sha256';
export const C14N_URI = 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315';

export interface XmlArchiveTimeStampSpec {
  /** The hash tree's Sequences, bottom first; none: no HashTree. */
  readonly groups?: readonly (readonly Uint8Array[])[];
  readonly token: Uint8Array;
}

export interface XmlChainSpec {
  readonly digest?: string;
  readonly c14n?: string;
  readonly stamps: readonly XmlArchiveTimeStampSpec[];
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

/** The TimeStamp element of an archive timestamp, as this writer puts it (and as inclusive c14n gives it on its own: the ERS namespace declared on it). */
export function timeStampElement(token: Uint8Array, declareNamespace = false): string {
  const ns = declareNamespace ? ` xmlns="${ERS_NS}"` : '';
  return `<TimeStamp${ns}><TimeStampToken Type="RFC3161">${b64(token)}</TimeStampToken></TimeStamp>`;
}

export function xmlEvidenceRecord(chains: readonly XmlChainSpec[]): string {
  const chain = (spec: XmlChainSpec, order: number) =>
    `<ArchiveTimeStampChain Order="${order}">` +
    `<DigestMethod Algorithm="${spec.digest ?? SHA256_URI}"/>` +
    `<CanonicalizationMethod Algorithm="${spec.c14n ?? C14N_URI}"/>` +
    spec.stamps
      .map(
        (stamp, i) =>
          `<ArchiveTimeStamp Order="${i + 1}">` +
          (stamp.groups
            ? `<HashTree>${stamp.groups
                .map(
                  (group, j) =>
                    `<Sequence Order="${j + 1}">${group.map((value) => `<DigestValue>${b64(value)}</DigestValue>`).join('')}</Sequence>`,
                )
                .join('')}</HashTree>`
            : '') +
          timeStampElement(stamp.token) +
          `</ArchiveTimeStamp>`,
      )
      .join('') +
    `</ArchiveTimeStampChain>`;
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n<EvidenceRecord xmlns="${ERS_NS}" Version="1.0">` +
    `<ArchiveTimeStampSequence>${chains.map((spec, i) => chain(spec, i + 1)).join('')}</ArchiveTimeStampSequence>` +
    `</EvidenceRecord>\n`
  );
}
