/**
 * Evidence records (RFC 4998, ERS; as ASiC keeps them in `META-INF/evidencerecord.ers`): parsed,
 * and each archive timestamp checked as far as esign can: the first one's reduced hash tree must
 * hold the hash of a data object and reduce to the imprint of its timestamp token, which must check
 * out as any timestamp does; each later one of the first chain (a timestamp renewal, RFC 4998 §5.2)
 * must cover the timeStamp before it. What is not checked (later chains: hashtree renewal) leaves
 * the record `unverified`, and the report says so. XML evidence records (RFC 6283) are checked the
 * same way by `xml-evidence-record.ts`.
 */
import { compareBytes, decode, isContext, octets, oid, sequenceItems, type Block } from '../../cms/der.js';
import type { ContainerVerifyOptions } from './timestamp-report.js';
import { hashBytes, hashTreeRoot, invalid, judgeFirstChain, type DataObject } from './evidence-record-common.js';
import { verifyXmlEvidenceRecord, xmlRecordDigestOids } from './xml-evidence-record.js';

export type { DataObject } from './evidence-record-common.js';
import { parseTimeStampToken } from '../../tsp/response.js';
import { digestAlgorithm, createDigest, type DigestAlgorithm } from '../../verify/algorithms.js';
import type { ReadSignedBytes } from '../../verify/cms-check.js';
import type { EvidenceRecordReport } from '../../verify/types.js';
import { parseManifest, type Manifest } from '../asic-e/manifest.js';
import { DIGEST_OID } from '../../cms/algorithms.js';

interface ArchiveTimeStamp {
  readonly digestOid: string | undefined;
  readonly groups: Uint8Array[][];
  readonly token: Uint8Array;
}

/** Whether an entry name is an evidence record ASiC keeps (EN 319 162-1: `META-INF/evidencerecord*.ers` or `.xml`; not the ASiCEvidenceRecordManifest that names what it covers). */
export function isEvidenceRecordName(name: string): boolean {
  return /^META-INF\/evidencerecord[^/]*\.(ers|xml)$/i.test(name);
}

/** Whether an entry name is an ASiCEvidenceRecordManifest (EN 319 162-1: the files an ASiC-E evidence record covers). */
export function isEvidenceRecordManifestName(name: string): boolean {
  return /^META-INF\/ASiCEvidenceRecordManifest[^/]*\.xml$/i.test(name);
}

/**
 * An evidence record of an ASiC with its ASiCEvidenceRecordManifest (the one whose SigReference
 * names it): the record covers the files the manifest names, each of which must be in the
 * container with the digest the manifest gives; a file gone or changed makes the record invalid.
 * Without a manifest, in an ASiC-S, every file of the container but the evidence records is a data
 * object it may cover (an ASiC-S of more than one document: invalid); in an ASiC-E, a record no
 * manifest names covers nothing (invalid), as DSS reads it. `data` holds every file of the container but this record (another record may be covered).
 */
export async function verifyEvidenceRecordWithManifest(
  name: string,
  bytes: Uint8Array,
  data: readonly DataObject[],
  manifests: readonly { readonly name: string; readonly bytes: Uint8Array }[],
  options: ContainerVerifyOptions,
  packaging: 'asic-e' | 'asic-s' = 'asic-s',
): Promise<EvidenceRecordReport> {
  let manifest: { readonly name: string } | undefined;
  let parsed: Manifest | undefined;
  for (const candidate of manifests) {
    try {
      const read = parseManifest(candidate.bytes, candidate.name);
      if (read.signature === name) [manifest, parsed] = [candidate, read];
    } catch (error) {
      // A manifest that does not parse and names this record: the record's evidence is unreadable.
      if (new TextDecoder().decode(candidate.bytes).includes(name)) {
        const others = data.filter((object) => !isEvidenceRecordName(object.name));
        const report = await verifyEvidenceRecord(name, bytes, others, options);
        return invalid(report, (error as Error).message.replace(/\.$/, ''));
      }
    }
  }
  // Without a manifest, the record covers the container's files, other evidence records aside:
  // in an ASiC-S its one document; an ASiC-E's record covers only what a manifest names (as DSS reads it).
  if (!manifest || !parsed) {
    const others = data.filter((object) => !isEvidenceRecordName(object.name));
    const report = await verifyEvidenceRecord(name, bytes, others, options);
    if (packaging === 'asic-e')
      return invalid(
        { ...report, covers: [] },
        `an ASiC-E's evidence record covers what its ASiCEvidenceRecordManifest names (EN 319 162-1), and no META-INF/ASiCEvidenceRecordManifest*.xml names ${name}`,
      );
    const documents = others.filter((object) => !object.name.startsWith('META-INF/'));
    return documents.length > 1
      ? invalid(report, `an ASiC-S holds one document; this one holds ${documents.length}`)
      : report;
  }
  const problems: string[] = [];
  const objects: DataObject[] = [];
  const recordDigests = /\.xml$/i.test(name) ? xmlRecordDigestOids(bytes) : digestOidsOf(bytes);
  for (const reference of parsed.references) {
    // The record hashes what the manifest names with its own algorithm: the manifest must give that digest (as DSS has it).
    if (recordDigests && !recordDigests.includes(DIGEST_OID[reference.digest]))
      problems.push(
        `${manifest.name} gives ${reference.name} a ${reference.digest} digest, an algorithm the record does not hash with (${recordDigests.map(digestName).join(', ')})`,
      );
    const object = data.find((candidate) => candidate.name === reference.name);
    if (!object) {
      problems.push(`${manifest.name} names ${reference.name}, which the container does not hold`);
      continue;
    }
    const hash = createDigest({ oid: DIGEST_OID[reference.digest], name: reference.digest, hash: reference.digest });
    await object.read((chunk) => hash.update(chunk));
    if (compareBytes(new Uint8Array(hash.digest()), reference.digestValue) !== 0)
      problems.push(`${reference.name} was changed: its ${reference.digest} is not the one ${manifest.name} gives`);
    objects.push(object);
  }
  const report = await verifyEvidenceRecord(name, bytes, objects, options);
  // Each file the manifest names must be one the record covers (as DSS matches manifest entries to the tree).
  if (report.covers.length > 0)
    for (const object of objects)
      if (!report.covers.includes(object.name))
        problems.push(`${object.name}, which ${manifest.name} names, has its hash in no hash tree of the record`);
  return problems.reduce(invalid, report);
}

export async function verifyEvidenceRecord(
  name: string,
  bytes: Uint8Array,
  data: readonly DataObject[],
  options: ContainerVerifyOptions,
): Promise<EvidenceRecordReport> {
  const report: EvidenceRecordReport = {
    name,
    status: 'unverified',
    covers: [],
    archiveTimestamps: 0,
    checked: 0,
    problems: [],
  };
  if (/\.xml$/i.test(name)) return verifyXmlEvidenceRecord(report, bytes, data, options);
  let chains: ArchiveTimeStamp[][];
  let digestOids: string[];
  try {
    ({ chains, digestOids } = parseEvidenceRecord(bytes));
  } catch (error) {
    return invalid(report, `not an evidence record esign reads: ${(error as Error).message}`);
  }
  report.archiveTimestamps = chains.reduce((sum, chain) => sum + chain.length, 0);
  const first = chains[0]![0]!;
  let digest: DigestAlgorithm | undefined;
  try {
    digest = digestAlgorithm(first.digestOid ?? parseTimeStampToken(first.token).tstInfo.messageImprint.hashAlgorithm);
  } catch (error) {
    return invalid(report, `its archive timestamp is unreadable: ${(error as Error).message}`);
  }
  if (!digest)
    return { ...report, reason: `its digest algorithm ${first.digestOid ?? '?'} is not one esign implements` };
  // RFC 4998 §3: digestAlgorithms lists every algorithm the record hashes with.
  if (!digestOids.includes(digest.oid))
    return invalid(
      report,
      `its archive timestamp hashes with ${digest.name}, which the record's digestAlgorithms (${digestOids.map(digestName).join(', ')}) does not list`,
    );
  // The data objects whose hashes the first hash tree holds.
  const hashes = await Promise.all(data.map(async (object) => ({ object, hash: await hashOf(object.read, digest) })));
  const firstGroup = first.groups[0];
  // Without a hash tree the token's imprint is the hash of the one data object it covers.
  const imprint = firstGroup ? undefined : imprintOf(first.token);
  const covered = hashes.filter(({ hash }) =>
    firstGroup
      ? firstGroup.some((value) => compareBytes(value, hash) === 0)
      : imprint === undefined || compareBytes(imprint, hash) === 0,
  );
  // The first covers the data; each later one the timeStamp before it (RFC 4998 §5.2).
  const stamps = chains[0]!.map((ats, index) => ({
    token: ats.token,
    roots: (index === 0 ? covered.map(({ hash }) => hash) : [hashBytes(digest, chains[0]![index - 1]!.token)]).flatMap(
      (start) => hashTreeRoot(ats.groups, start, digest),
    ),
  }));
  const covers = covered.map(({ object }) => object.name);
  return judgeFirstChain(report, stamps, covers, chains.length - 1, options);
}

/** The digest algorithms an evidence record lists, or undefined when it does not parse (judged then by `verifyEvidenceRecord`). */
function digestOidsOf(bytes: Uint8Array): string[] | undefined {
  try {
    return parseEvidenceRecord(bytes).digestOids;
  } catch {
    return undefined;
  }
}

function digestName(oid: string): string {
  return digestAlgorithm(oid)?.name ?? oid;
}

/** The message imprint of a timestamp token, if it parses (a token that does not is judged by `timestampReport`). */
function imprintOf(token: Uint8Array): Uint8Array | undefined {
  try {
    return parseTimeStampToken(token).tstInfo.messageImprint.hashedMessage;
  } catch {
    return undefined;
  }
}

async function hashOf(read: ReadSignedBytes, digest: DigestAlgorithm): Promise<Uint8Array> {
  const hash = createDigest(digest);
  await read((chunk) => hash.update(chunk));
  return new Uint8Array(hash.digest());
}

/**
 * EvidenceRecord ::= SEQUENCE { version INTEGER, digestAlgorithms SEQUENCE OF AlgorithmIdentifier,
 * cryptoInfos [0] OPTIONAL, encryptionInfo [1] OPTIONAL, archiveTimeStampSequence }: the chains of
 * archive timestamps, each ArchiveTimeStamp ::= SEQUENCE { digestAlgorithm [0] OPTIONAL,
 * attributes [1] OPTIONAL, reducedHashtree [2] SEQUENCE OF PartialHashtree OPTIONAL, timeStamp ContentInfo }.
 */
export function parseEvidenceRecord(bytes: Uint8Array): { digestOids: string[]; chains: ArchiveTimeStamp[][] } {
  const items = sequenceItems(decode(bytes, 'EvidenceRecord'), 'EvidenceRecord');
  if (items.length < 3) throw new Error('an EvidenceRecord has a version, digest algorithms and archive timestamps');
  const digestOids = sequenceItems(items[1], 'digestAlgorithms').map((algorithm) =>
    oid(sequenceItems(algorithm, 'AlgorithmIdentifier')[0], 'digestAlgorithm'),
  );
  const chains = sequenceItems(items.at(-1), 'ArchiveTimeStampSequence').map((chain) =>
    sequenceItems(chain, 'ArchiveTimeStampChain').map(archiveTimeStamp),
  );
  if (chains.length === 0 || chains.some((chain) => chain.length === 0))
    throw new Error('it holds no archive timestamp');
  return { digestOids, chains };
}

function archiveTimeStamp(block: Block): ArchiveTimeStamp {
  const fields = sequenceItems(block, 'ArchiveTimeStamp');
  const token = fields.at(-1);
  if (!token || isContext(token, 0) || isContext(token, 1) || isContext(token, 2))
    throw new Error('an ArchiveTimeStamp without its timeStamp');
  const algorithm = fields.find((field) => isContext(field, 0));
  const tree = fields.find((field) => isContext(field, 2));
  return {
    digestOid: algorithm ? oid(algorithm.items[0]?.items[0] ?? algorithm.items[0], 'digestAlgorithm') : undefined,
    groups: tree
      ? contextSequence(tree).map((group) =>
          sequenceItems(group, 'PartialHashtree').map((value) => octets(value, 'a hash value')),
        )
      : [],
    token: token.encoded,
  };
}

/** The items of an IMPLICIT [n] SEQUENCE OF (or of an EXPLICIT one, as some writers tag it). */
function contextSequence(block: Block): Block[] {
  const items = block.items;
  return items.length === 1 && items[0]!.tagNumber === 16 && items[0]!.items.every((item) => item.tagNumber === 16)
    ? items[0]!.items
    : items;
}
