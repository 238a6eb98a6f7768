/**
 * Reading an enveloping CMS (a `.p7m`: the content inside the SignedData) without holding the
 * content: its headers are read one by one from the file, which gives where the content lies; the
 * rest (certificates, SignerInfos) is small and read whole. The signature is then checked as a
 * detached one over that range of the file.
 */
import { EsignError } from '../errors.js';
import type { ByteSource } from '../ports.js';
import { Tag, explicit, objectIdentifier, sequence } from './der.js';
import { OID } from './oids.js';

export interface EnvelopedContent {
  /** Where the content's octets start in the file, and how many there are. */
  offset: number;
  length: number;
  /** The same SignedData without its eContent: a detached signature of those octets. */
  detached: Uint8Array;
}

/** Certificates, CRLs and SignerInfos of a .p7m esign reads: far more than any chain and tokens need. */
const MAX_SIGNER_PART_BYTES = 16 * 1024 * 1024;

interface Header {
  tag: number;
  /** Offset of the content octets, and their number. */
  start: number;
  length: number;
  end: number;
}

export async function readEnveloping(source: ByteSource): Promise<EnvelopedContent> {
  const header = async (at: number, tags: readonly number[], what: string): Promise<Header> => {
    const bytes = await source.read(at, 10);
    const tag = bytes[0];
    if (tag === undefined || !tags.includes(tag)) throw bad(`${what} is missing`);
    const first = bytes[1];
    if (first === undefined) throw bad(`it ends inside the ${what}`);
    let length = first;
    let size = 2;
    if (first === 0x80)
      throw bad(`the ${what} has an indefinite length (BER)`, 'Write it again with definite lengths (DER).');
    if (first > 0x80) {
      const count = first & 0x7f;
      if (count > 7) throw bad(`the ${what} is too long`);
      length = 0;
      for (let index = 0; index < count; index++) {
        const byte = bytes[2 + index];
        if (byte === undefined) throw bad(`it ends inside the ${what}`);
        length = length * 256 + byte;
      }
      size += count;
    }
    const end = at + size + length;
    if (end > source.size) throw bad(`it ends inside the ${what} (truncated)`);
    return { tag, start: at + size, length, end };
  };
  const whole = async (h: Header, at: number): Promise<Uint8Array> => source.read(at, h.end - at);

  const contentInfo = await header(0, [Tag.sequence], 'ContentInfo');
  if (contentInfo.end !== source.size) throw bad(`${source.size - contentInfo.end} bytes follow the ContentInfo`);
  const contentType = await header(contentInfo.start, [Tag.objectIdentifier], 'content type');
  const signedDataOid = objectIdentifier(OID.signedData);
  if (!sameBytes(await whole(contentType, contentInfo.start), signedDataOid)) throw bad('it is not a SignedData');
  const wrapper = await header(contentType.end, [0xa0], 'SignedData wrapper');
  const signedData = await header(wrapper.start, [Tag.sequence], 'SignedData');
  const version = await header(signedData.start, [Tag.integer], 'SignedData version');
  const digestAlgorithms = await header(version.end, [Tag.set], 'digest algorithms');
  if (digestAlgorithms.length > 4096) throw bad('its digest algorithms are not a short list');
  const encap = await header(digestAlgorithms.end, [Tag.sequence], 'encapsulated content');
  const eContentType = await header(encap.start, [Tag.objectIdentifier], 'eContentType');
  if (eContentType.end === encap.end)
    throw new EsignError('CMS_BAD_STRUCTURE', 'It is a detached signature: the content is not inside it.', {
      hint: 'Verify it against its content: esign verify CONTENT --signature FILE.p7m',
    });
  const eContent = await header(eContentType.end, [0xa0], 'eContent');
  const octets = await header(eContent.start, [Tag.octetString, 0x24], 'content');
  if (octets.tag !== Tag.octetString)
    throw bad('its content is a constructed OCTET STRING (BER)', 'Write it again with definite lengths (DER).');
  if (octets.end !== eContent.end || eContent.end !== encap.end)
    throw bad('its encapsulated content holds more than one OCTET STRING');
  const rest = signedData.end - encap.end;
  if (signedData.end !== wrapper.end || wrapper.end !== contentInfo.end) throw bad('its lengths do not agree');
  if (rest > MAX_SIGNER_PART_BYTES) throw bad('its certificates and signatures are larger than 16 MiB');
  const detached = sequence(
    signedDataOid,
    explicit(
      0,
      sequence(
        await source.read(signedData.start, digestAlgorithms.end - signedData.start),
        sequence(await whole(eContentType, encap.start)),
        await source.read(encap.end, rest),
      ),
    ),
  );
  return { offset: octets.start, length: octets.length, detached };
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, index) => byte === b[index]);
}

function bad(
  reason: string,
  hint = 'The .p7m is damaged or is not a CMS SignedData with its content inside.',
): EsignError {
  return new EsignError('CMS_BAD_STRUCTURE', `Not a readable enveloping CMS (.p7m): ${reason}.`, { hint });
}
