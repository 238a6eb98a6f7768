/**
 * CAdES B-LTA (ETSI EN 319 122-1 §5.5.2, §5.5.3): the archive-time-stamp-v3 unsigned attribute, a
 * timestamp token over the signature as it then is, whose own SignerInfo carries an
 * ats-hash-index-v3: a digest of each certificate, each RevocationInfoChoice and each unsigned
 * attribute value the SignedData held. Its message imprint is the hash of, in this order, the
 * eContentType, the hash of the signed content, the SignerInfo's fields from version to signature
 * (each as encoded), and that ATSHashIndexV3. Later certificates, revocation data and attributes
 * may be added without breaking it; a value it indexes must stay.
 *
 * Verification also reads the forms others wrote before: an archive-time-stamp-v3 whose token
 * carries the older ats-hash-index (ETSI TS 101 733 v2.2.1: each unsigned attribute hashed whole),
 * and the archive-time-stamp-v2 (TS 101 733 Annex K, CAdES 2.x), a timestamp over the
 * encapContentInfo, the detached content, the certificates and crls fields and the SignerInfo with
 * the unsigned attributes it found — with and without their SET's tag and length, which CAdES's
 * versions disagreed on.
 */
import { createHash } from 'node:crypto';
import type { DigestName } from './algorithms.js';
import { DIGEST_OID } from './algorithms.js';
import {
  Asn1StructureError,
  concatBytes,
  decode,
  definiteEncoding,
  encoded,
  explicitInner,
  isContext,
  objectIdentifier,
  octetString,
  oid,
  sequence,
  sequenceItems,
  setItems,
  tlv,
  type Block,
} from './der.js';
import { addUnsignedAttribute, OID_ARCHIVE_TIMESTAMP_V3 } from './signed-data.js';

export { OID_ARCHIVE_TIMESTAMP_V3 };
import { attribute } from './signed-attributes.js';
import { EsignError } from '../errors.js';

/** id-aa-ATSHashIndex-v3 (EN 319 122-1 §5.5.2). */
export const OID_ATS_HASH_INDEX_V3 = '0.4.0.19122.1.5';
/** id-aa-ATSHashIndex (ETSI TS 101 733 v2.2.1), the index before v3. */
export const OID_ATS_HASH_INDEX = '0.4.0.1733.2.5';
/** id-aa-ets-archiveTimestampV2 (TS 101 733 §6.4.1, RFC 5126). */
export const OID_ARCHIVE_TIMESTAMP_V2 = '1.2.840.113549.1.9.16.2.48';

/** The parts of a one-signer SignedData that an archive-time-stamp-v3 covers, each as encoded. */
export interface ArchivedParts {
  eContentType: Uint8Array;
  /** version, sid, digestAlgorithm, signedAttrs, signatureAlgorithm, signature. */
  signerInfoFields: Uint8Array[];
  certificates: Uint8Array[];
  revocations: Uint8Array[];
  /** Each unsigned attribute: its type (encoded OID), each value, and the attribute whole as encoded. */
  unsignedAttributes: { type: string; typeDer: Uint8Array; values: Uint8Array[]; encoded: Uint8Array }[];
  /** What an archive-time-stamp-v2 covers: the encapContentInfo, and the certificates and crls fields whole. */
  encapContentInfo: Uint8Array;
  certificatesField: Uint8Array | undefined;
  crlsField: Uint8Array | undefined;
}

/** Reads what an archive timestamp covers from a ContentInfo(SignedData) with one SignerInfo. */
export function archivedParts(cmsDer: Uint8Array): ArchivedParts {
  try {
    const [, content] = sequenceItems(decode(cmsDer, 'ContentInfo'), 'ContentInfo');
    const [, , encap, ...rest] = sequenceItems(explicitInner(content, 0, 'ContentInfo content'), 'SignedData');
    const [eContentType] = sequenceItems(encap, 'encapContentInfo');
    const certificatesField = rest.find((block) => isContext(block, 0));
    const crlsField = rest.find((block) => isContext(block, 1));
    const signerInfos = setItems(rest[rest.length - 1], 'signerInfos');
    if (signerInfos.length !== 1) throw new Asn1StructureError('signerInfos: expected one SignerInfo');
    const fields = sequenceItems(signerInfos[0], 'SignerInfo');
    const unsigned = fields.find((field) => isContext(field, 1));
    const itemsOf = (block: Block | undefined) => (block?.items ?? []).map(encoded);
    return {
      eContentType: encoded(eContentType as Block),
      // Signed attributes are signed, and covered, in DER whatever encoding carried them.
      signerInfoFields: fields
        .filter((field) => !isContext(field, 1))
        .map((field) => (isContext(field, 0) ? definiteEncoding(field) : encoded(field))),
      certificates: itemsOf(certificatesField),
      revocations: itemsOf(crlsField),
      encapContentInfo: encoded(encap as Block),
      certificatesField: certificatesField ? encoded(certificatesField) : undefined,
      crlsField: crlsField ? encoded(crlsField) : undefined,
      unsignedAttributes: (unsigned?.items ?? []).map((item) => {
        const [type, values] = sequenceItems(item, 'Attribute');
        return {
          type: oid(type, 'attrType'),
          typeDer: encoded(type as Block),
          values: setItems(values, 'attrValues').map(encoded),
          encoded: encoded(item),
        };
      }),
    };
  } catch (error) {
    if (error instanceof Asn1StructureError)
      throw new EsignError('CMS_BAD_STRUCTURE', `Cannot read the signature to archive: ${error.message}.`, {
        cause: error,
      });
    throw error;
  }
}

/** `digest`: node:crypto's name (verification reads tokens over any digest it knows; esign writes SHA-2). */
const hash = (digest: string, ...parts: Uint8Array[]): Uint8Array => {
  const h = createHash(digest);
  for (const part of parts) h.update(part);
  return new Uint8Array(h.digest());
};

/** ATSHashIndexV3 over the parts as they are now (hashIndAlgorithm left at its DEFAULT for SHA-256). */
export function atsHashIndexV3(parts: ArchivedParts, digest: DigestName): Uint8Array {
  const hashes = (items: Uint8Array[]) => sequence(...items.map((item) => octetString(hash(digest, item))));
  return sequence(
    ...(digest === 'sha256' ? [] : [sequence(objectIdentifier(DIGEST_OID[digest]))]),
    hashes(parts.certificates),
    hashes(parts.revocations),
    hashes(parts.unsignedAttributes.flatMap((attr) => attr.values.map((value) => concat(attr.typeDer, value)))),
  );
}

/** The message imprint of an archive-time-stamp-v3 over `parts`, with `index` as its ats-hash-index-v3. */
export function archiveTimestampImprint(
  parts: ArchivedParts,
  contentHash: Uint8Array,
  index: Uint8Array,
  digest: string,
): Uint8Array {
  return hash(digest, parts.eContentType, contentHash, ...parts.signerInfoFields, index);
}

/** What to ask the TSA for to archive a signature: the imprint, and the index the token must then carry. */
export function archiveTimestampRequest(
  cmsDer: Uint8Array,
  contentHash: Uint8Array,
  digest: DigestName,
): { imprint: Uint8Array; index: Uint8Array } {
  const parts = archivedParts(cmsDer);
  const index = atsHashIndexV3(parts, digest);
  return { imprint: archiveTimestampImprint(parts, contentHash, index, digest), index };
}

/** The TSA's token with the ats-hash-index-v3 among its SignerInfo's unsigned attributes (its signature is untouched). */
export function archiveTimestampToken(token: Uint8Array, index: Uint8Array): Uint8Array {
  return addUnsignedAttribute(token, attribute(OID_ATS_HASH_INDEX_V3, index), 'the archive timestamp');
}

export interface ArchiveTimestampCheck {
  /** Why the token does not archive the signature as it is, if it does not. */
  problem?: string;
  /** The imprint the token must carry (when its index could be read and checked). */
  imprint?: Uint8Array;
}

/**
 * Recomputes what an archive-time-stamp-v3 token in `cmsDer` must have stamped: its ats-hash-index-v3
 * (or the older ats-hash-index), read from the token, every entry of which must still be found in
 * the SignedData, and the imprint over the SignedData's parts and that index. The token's own
 * signature and imprint are the caller's. `digest` is the imprint's hash (node:crypto's name), and
 * `hashNameOf` names an index's hashIndAlgorithm.
 */
export function expectedArchiveImprint(
  cmsDer: Uint8Array,
  tokenDer: Uint8Array,
  contentHash: Uint8Array,
  digest: string,
  hashNameOf: (oid: string) => string | undefined = (id) => DIGEST_BY_OID[id],
): ArchiveTimestampCheck {
  let index: Uint8Array;
  let indexed: { algorithm: string; groups: Uint8Array[][] };
  let older: boolean;
  try {
    const tokenParts = archivedParts(tokenDer);
    const valueOf = (type: string) => tokenParts.unsignedAttributes.find((attr) => attr.type === type)?.values[0];
    const v3 = valueOf(OID_ATS_HASH_INDEX_V3);
    const value = v3 ?? valueOf(OID_ATS_HASH_INDEX);
    if (!value) return { problem: 'it has neither an ats-hash-index-v3 nor an ats-hash-index attribute' };
    older = v3 === undefined;
    index = value;
    indexed = readIndex(value, hashNameOf);
  } catch (error) {
    return { problem: `its ats-hash-index is unreadable (${(error as Error).message})` };
  }
  if (indexed.algorithm !== digest)
    return { problem: `its ats-hash-index uses ${indexed.algorithm}, its imprint ${digest}` };
  const parts = archivedParts(cmsDer);
  // v3 indexes each attribute value after its type; the older index each attribute whole.
  const attributes = parts.unsignedAttributes.filter(
    (attr) => !(attr.type === OID_ARCHIVE_TIMESTAMP_V3 && attr.values.some((v) => sameBytes(v, tokenDer))),
  );
  const present = [
    parts.certificates,
    parts.revocations,
    older
      ? attributes.map((attr) => attr.encoded)
      : attributes.flatMap((attr) => attr.values.map((value) => concat(attr.typeDer, value))),
  ].map((group) => new Set(group.map((item) => Buffer.from(hash(digest, item)).toString('hex'))));
  const names = ['a certificate', 'a revocation data', 'an unsigned attribute'];
  for (const [at, group] of indexed.groups.entries())
    for (const entry of group)
      if (!present[at]!.has(Buffer.from(entry).toString('hex')))
        return { problem: `${names[at]} it archived is no longer in the signature` };
  return { imprint: archiveTimestampImprint(parts, contentHash, index, digest) };
}

/**
 * What an archive-time-stamp-v2 in `cmsDer` covers around the content (TS 101 733 Annex K): the
 * encapContentInfo as encoded comes `before` it (a detached signature's content follows it there),
 * and `after` it the certificates and crls fields, the SignerInfo's fields and its unsigned
 * attributes but the archive timestamps not older than this one (`isOlder` tells) — in two forms:
 * the attributes' SET with its tag and length (TS 101 733 v2.2.1) and without (v1.8.3).
 */
export function archiveV2Coverage(
  cmsDer: Uint8Array,
  tokenDer: Uint8Array,
  isOlder: (otherToken: Uint8Array) => boolean,
): { before: Uint8Array; after: [Uint8Array, Uint8Array] } {
  const parts = archivedParts(cmsDer);
  const kept = parts.unsignedAttributes.filter(
    (attr) =>
      !(
        (attr.type === OID_ARCHIVE_TIMESTAMP_V2 || attr.type === OID_ARCHIVE_TIMESTAMP_V3) &&
        attr.values.some((value) => sameBytes(value, tokenDer) || !isOlder(value))
      ),
  );
  const common = [
    ...(parts.certificatesField ? [parts.certificatesField] : []),
    ...(parts.crlsField ? [parts.crlsField] : []),
    ...parts.signerInfoFields,
  ];
  const attributes = kept.map((attr) => attr.encoded);
  return {
    before: parts.encapContentInfo,
    after: [
      concatBytes([...common, ...(attributes.length > 0 ? [tlv(0xa1, ...attributes)] : [])]),
      concatBytes([...common, ...attributes]),
    ],
  };
}

const DIGEST_BY_OID: Record<string, DigestName> = Object.fromEntries(
  Object.entries(DIGEST_OID).map(([name, id]) => [id, name as DigestName]),
);

function readIndex(
  der: Uint8Array,
  hashNameOf: (oid: string) => string | undefined,
): { algorithm: string; groups: Uint8Array[][] } {
  const items = sequenceItems(decode(der, 'ATSHashIndexV3'), 'ATSHashIndexV3');
  let algorithm = 'sha256';
  if (items.length === 4) {
    const id = oid(sequenceItems(items.shift(), 'hashIndAlgorithm')[0], 'hashIndAlgorithm');
    const named = hashNameOf(id);
    if (!named) throw new Asn1StructureError(`the hash algorithm ${id} is not one esign checks`);
    algorithm = named;
  }
  if (items.length !== 3) throw new Asn1StructureError('ATSHashIndexV3: expected three hash lists');
  return { algorithm, groups: items.map((group) => sequenceItems(group, 'hash index').map((item) => item.content)) };
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, index) => byte === b[index]);
}
