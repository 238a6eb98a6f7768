/**
 * CAdES B-LTA (ETSI EN 319 122-1 §5.5.2, §5.5.3): the archive-time-stamp-v3 unsigned attribute, a
 * timestamp token over the signature as it then is, whose own SignerInfo carries an
 * ats-hash-index-v3: a digest of each certificate, each RevocationInfoChoice and each unsigned
 * attribute value the SignedData held. Its message imprint is the hash of, in this order, the
 * eContentType, the hash of the signed content, the SignerInfo's fields from version to signature
 * (each as encoded), and that ATSHashIndexV3. Later certificates, revocation data and attributes
 * may be added without breaking it; a value it indexes must stay.
 */
import { createHash } from 'node:crypto';
import type { DigestName } from './algorithms.js';
import { DIGEST_OID } from './algorithms.js';
import {
  Asn1StructureError,
  decode,
  encoded,
  explicitInner,
  isContext,
  objectIdentifier,
  octetString,
  oid,
  sequence,
  sequenceItems,
  setItems,
  type Block,
} from './der.js';
import { addUnsignedAttribute, OID_ARCHIVE_TIMESTAMP_V3 } from './signed-data.js';

export { OID_ARCHIVE_TIMESTAMP_V3 };
import { attribute } from './signed-attributes.js';
import { EsignError } from '../errors.js';

/** id-aa-ATSHashIndex-v3 (EN 319 122-1 §5.5.2). */
export const OID_ATS_HASH_INDEX_V3 = '0.4.0.19122.1.5';

/** The parts of a one-signer SignedData that an archive-time-stamp-v3 covers, each as encoded. */
export interface ArchivedParts {
  eContentType: Uint8Array;
  /** version, sid, digestAlgorithm, signedAttrs, signatureAlgorithm, signature. */
  signerInfoFields: Uint8Array[];
  certificates: Uint8Array[];
  revocations: Uint8Array[];
  /** Each unsigned attribute: its type (encoded OID) and each value. */
  unsignedAttributes: { type: string; typeDer: Uint8Array; values: Uint8Array[] }[];
}

/** Reads what an archive timestamp covers from a ContentInfo(SignedData) with one SignerInfo. */
export function archivedParts(cmsDer: Uint8Array): ArchivedParts {
  try {
    const [, content] = sequenceItems(decode(cmsDer, 'ContentInfo'), 'ContentInfo');
    const [, , encap, ...rest] = sequenceItems(explicitInner(content, 0, 'ContentInfo content'), 'SignedData');
    const [eContentType] = sequenceItems(encap, 'encapContentInfo');
    const signerInfos = setItems(rest[rest.length - 1], 'signerInfos');
    if (signerInfos.length !== 1) throw new Asn1StructureError('signerInfos: expected one SignerInfo');
    const fields = sequenceItems(signerInfos[0], 'SignerInfo');
    const unsigned = fields.find((field) => isContext(field, 1));
    const itemsOf = (block: Block | undefined) => (block?.items ?? []).map(encoded);
    return {
      eContentType: encoded(eContentType as Block),
      signerInfoFields: fields.filter((field) => !isContext(field, 1)).map(encoded),
      certificates: itemsOf(rest.find((block) => isContext(block, 0))),
      revocations: itemsOf(rest.find((block) => isContext(block, 1))),
      unsignedAttributes: (unsigned?.items ?? []).map((item) => {
        const [type, values] = sequenceItems(item, 'Attribute');
        return {
          type: oid(type, 'attrType'),
          typeDer: encoded(type as Block),
          values: setItems(values, 'attrValues').map(encoded),
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

const hash = (digest: DigestName, ...parts: Uint8Array[]): Uint8Array => {
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
  digest: DigestName,
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
 * (read from the token), every entry of which must still be found in the SignedData, and the imprint
 * over the SignedData's parts and that index. The token's own signature and imprint are the caller's.
 */
export function expectedArchiveImprint(
  cmsDer: Uint8Array,
  tokenDer: Uint8Array,
  contentHash: Uint8Array,
  digest: DigestName,
): ArchiveTimestampCheck {
  let index: Uint8Array;
  let indexed: { algorithm: DigestName; groups: Uint8Array[][] };
  try {
    const tokenParts = archivedParts(tokenDer);
    const value = tokenParts.unsignedAttributes.find((attr) => attr.type === OID_ATS_HASH_INDEX_V3)?.values[0];
    if (!value) return { problem: 'it has no ats-hash-index-v3 attribute' };
    index = value;
    indexed = readIndex(value);
  } catch (error) {
    return { problem: `its ats-hash-index-v3 is unreadable (${(error as Error).message})` };
  }
  if (indexed.algorithm !== digest)
    return { problem: `its ats-hash-index-v3 uses ${indexed.algorithm}, its imprint ${digest}` };
  const parts = archivedParts(cmsDer);
  const present = [
    parts.certificates,
    parts.revocations,
    parts.unsignedAttributes
      .filter((attr) => !(attr.type === OID_ARCHIVE_TIMESTAMP_V3 && attr.values.some((v) => sameBytes(v, tokenDer))))
      .flatMap((attr) => attr.values.map((value) => concat(attr.typeDer, value))),
  ].map((group) => new Set(group.map((item) => Buffer.from(hash(digest, item)).toString('hex'))));
  const names = ['certificate', 'revocation data', 'unsigned attribute'];
  for (const [at, group] of indexed.groups.entries())
    for (const entry of group)
      if (!present[at]!.has(Buffer.from(entry).toString('hex')))
        return { problem: `a ${names[at]} it archived is no longer in the signature` };
  return { imprint: archiveTimestampImprint(parts, contentHash, index, digest) };
}

const DIGEST_BY_OID: Record<string, DigestName> = Object.fromEntries(
  Object.entries(DIGEST_OID).map(([name, id]) => [id, name as DigestName]),
);

function readIndex(der: Uint8Array): { algorithm: DigestName; groups: Uint8Array[][] } {
  const items = sequenceItems(decode(der, 'ATSHashIndexV3'), 'ATSHashIndexV3');
  let algorithm: DigestName = 'sha256';
  if (items.length === 4) {
    const id = oid(sequenceItems(items.shift(), 'hashIndAlgorithm')[0], 'hashIndAlgorithm');
    const named = DIGEST_BY_OID[id];
    if (!named) throw new Asn1StructureError(`the hash algorithm ${id} is not one esign checks`);
    algorithm = named;
  }
  if (items.length !== 3) throw new Asn1StructureError('ATSHashIndexV3: expected three hash lists');
  return { algorithm, groups: items.map((group) => sequenceItems(group, 'hash index').map((item) => item.content)) };
}

/** The content type's digest of the imprint algorithm the TSA used, as esign names it. */
export function digestNameOf(oidText: string): DigestName | undefined {
  return DIGEST_BY_OID[oidText];
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
