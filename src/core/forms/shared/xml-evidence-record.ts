/**
 * XML evidence records (RFC 6283, XMLERS; `META-INF/evidencerecord.xml` in an ASiC), checked as DSS
 * checks them: parsed by the secure XML core; a data object that is XML is hashed canonical (the
 * chain's CanonicalizationMethod, by xml-crypto), any other as its bytes (an XML file's bytes are
 * accepted too); the first archive timestamp's hash tree must hold the hash of a data object and
 * reduce (each Sequence in Order: the value from below added, sorted, concatenated, hashed; one value
 * passes up as it is) to the imprint of its timestamp token, which must check out as any timestamp
 * does; each later one of the first chain (a timestamp renewal, RFC 6283 §4.1) must cover the
 * canonical TimeStamp element before it. A later chain (hash-tree renewal) leaves it `unverified`.
 */
import { EsignError } from '../../errors.js';
import { childElements, childrenNamed, attribute, textOf } from '../../xml/dom.js';
import { MAX_XML_DOCUMENT_BYTES, parseSecureXml, type SecureParseOptions } from '../../xml/secure-parse.js';
import type { XmlElement } from '../../xml/types/xml-libs.js';
import { createDigest, type DigestAlgorithm } from '../../verify/algorithms.js';
import type { EvidenceRecordReport } from '../../verify/types.js';
import { canonicalization, xmlDigest, type Canonicalization } from './xades/read-algorithms.js';
import { canonicalize, Unsupported } from './xades/read-c14n.js';
import { hashBytes, hashTreeRoot, invalid, judgeFirstChain, type DataObject } from './evidence-record-common.js';
import type { ContainerVerifyOptions } from './timestamp-report.js';

export const ERS_NS = 'urn:ietf:params:xml:ns:ers';

/** 10 MB: an evidence record is a few timestamps and hashes. */
const MAX_RECORD_BYTES = 10 * 1024 * 1024;

interface XmlArchiveTimeStamp {
  readonly groups: Uint8Array[][];
  readonly token: Uint8Array;
  /** Its TimeStamp element, which a timestamp renewal covers canonical. */
  readonly timeStamp: XmlElement;
}

interface XmlChain {
  readonly digestUri: string;
  readonly digest: DigestAlgorithm | undefined;
  readonly c14nUri: string;
  readonly c14n: Canonicalization | undefined;
  readonly stamps: XmlArchiveTimeStamp[];
}

const rules: SecureParseOptions = { maxBytes: MAX_RECORD_BYTES, refuse: (_kind, reason) => new Error(reason) };

/** The chains of an XML evidence record, in Order; throws one line when it is not one. */
export function parseXmlEvidenceRecord(bytes: Uint8Array): XmlChain[] {
  const root = parseSecureXml(bytes, rules).documentElement;
  if (!root || root.namespaceURI !== ERS_NS || root.localName !== 'EvidenceRecord')
    throw new Error(`its root is not an EvidenceRecord in ${ERS_NS}`);
  const [sequence, ...more] = childrenNamed(root, ERS_NS, 'ArchiveTimeStampSequence');
  if (!sequence || more.length > 0) throw new Error('an EvidenceRecord holds one ArchiveTimeStampSequence');
  const chains = inOrder(childrenNamed(sequence, ERS_NS, 'ArchiveTimeStampChain'), 'ArchiveTimeStampChain').map(
    (chain) => {
      const digestUri = algorithmOf(chain, 'DigestMethod');
      const c14nUri = algorithmOf(chain, 'CanonicalizationMethod');
      const stamps = inOrder(childrenNamed(chain, ERS_NS, 'ArchiveTimeStamp'), 'ArchiveTimeStamp').map(
        archiveTimeStamp,
      );
      if (stamps.length === 0) throw new Error('an ArchiveTimeStampChain without an ArchiveTimeStamp');
      return { digestUri, digest: xmlDigest(digestUri), c14nUri, c14n: canonicalization(c14nUri), stamps };
    },
  );
  if (chains.length === 0) throw new Error('it holds no archive timestamp');
  return chains;
}

/** The digest algorithms (OIDs) an XML evidence record hashes with, or undefined when it does not parse. */
export function xmlRecordDigestOids(bytes: Uint8Array): string[] | undefined {
  try {
    return parseXmlEvidenceRecord(bytes).flatMap((chain) => (chain.digest ? [chain.digest.oid] : []));
  } catch {
    return undefined;
  }
}

export async function verifyXmlEvidenceRecord(
  report: EvidenceRecordReport,
  bytes: Uint8Array,
  data: readonly DataObject[],
  options: ContainerVerifyOptions,
): Promise<EvidenceRecordReport> {
  let chains: XmlChain[];
  try {
    chains = parseXmlEvidenceRecord(bytes);
  } catch (error) {
    return invalid(report, `not an XML evidence record esign reads: ${oneLine(error)}`);
  }
  report.archiveTimestamps = chains.reduce((sum, chain) => sum + chain.stamps.length, 0);
  const chain = chains[0]!;
  const { digest, c14n } = chain;
  if (!digest) return { ...report, reason: `its digest method ${chain.digestUri} is not one esign implements` };
  if (!c14n) return { ...report, reason: `its canonicalization method ${chain.c14nUri} is not one esign implements` };
  const first = chain.stamps[0]!;
  const firstGroup = first.groups[0];
  let hashes: { object: DataObject; hashes: Uint8Array[] }[];
  try {
    hashes = await Promise.all(
      data.map(async (object) => ({ object, hashes: await dataObjectHashes(object, digest, c14n) })),
    );
  } catch (error) {
    if (error instanceof Unsupported) return { ...report, reason: oneLine(error) };
    throw error;
  }
  // Without a hash tree the token covers one data object: the container's one file.
  const covered = hashes.filter((entry) =>
    firstGroup ? entry.hashes.some((hash) => firstGroup.some((value) => equal(value, hash))) : hashes.length === 1,
  );
  // The first covers the data; each later one the canonical TimeStamp before it (RFC 6283 §4.1).
  let stamps: { token: Uint8Array; roots: Uint8Array[] }[];
  try {
    stamps = chain.stamps.map((ats, index) => ({
      token: ats.token,
      roots: (index === 0
        ? covered.flatMap((entry) => entry.hashes)
        : [
            hashBytes(
              digest,
              utf8(canonicalize({ node: chain.stamps[index - 1]!.timeStamp, excluded: [], comments: false }, c14n)),
            ),
          ]
      ).flatMap((start) => hashTreeRoot(ats.groups, start, digest)),
    }));
  } catch (error) {
    if (error instanceof Unsupported) return { ...report, reason: oneLine(error) };
    throw error;
  }
  const covers = covered.map(({ object }) => object.name);
  return judgeFirstChain(report, stamps, covers, chains.length - 1, options);
}

/**
 * The hashes a data object may have in the tree: of its bytes (streamed), and of its canonical form
 * when it is XML of at most 50 MB (as DSS hashes it, RFC 6283 §3.1.2; only such a file is held).
 */
async function dataObjectHashes(
  object: DataObject,
  digest: DigestAlgorithm,
  c14n: Canonicalization,
): Promise<Uint8Array[]> {
  const hash = createDigest(digest);
  let held: Uint8Array[] | undefined;
  let size = 0;
  await object.read((chunk) => {
    hash.update(chunk);
    if (size === 0) held = looksLikeXml(chunk) ? [] : undefined;
    size += chunk.length;
    if (held && size > MAX_XML_DOCUMENT_BYTES) held = undefined;
    held?.push(new Uint8Array(chunk));
  });
  const raw = new Uint8Array(hash.digest());
  if (!held) return [raw];
  let canonical: string;
  try {
    const doc = parseSecureXml(Buffer.concat(held), { maxBytes: MAX_XML_DOCUMENT_BYTES, refuse: rules.refuse });
    canonical = canonicalize({ node: doc, excluded: [], comments: false }, c14n);
  } catch (error) {
    if (error instanceof Unsupported) throw error;
    return [raw]; // Not XML after all (or XML esign refuses): its bytes are the data object.
  }
  return [hashBytes(digest, utf8(canonical)), raw];
}

function looksLikeXml(bytes: Uint8Array): boolean {
  const head = new TextDecoder()
    .decode(bytes.subarray(0, 64))
    .replace(/^\uFEFF/, '')
    .trimStart();
  return head.startsWith('<');
}

function archiveTimeStamp(element: XmlElement): XmlArchiveTimeStamp {
  const [tree, ...trees] = childrenNamed(element, ERS_NS, 'HashTree');
  if (trees.length > 0) throw new Error('an ArchiveTimeStamp with more than one HashTree');
  const groups = tree
    ? inOrder(childrenNamed(tree, ERS_NS, 'Sequence'), 'Sequence').map((sequence) => {
        const values = childrenNamed(sequence, ERS_NS, 'DigestValue').map((value) => base64(value, 'a DigestValue'));
        if (values.length === 0) throw new Error('a hash tree Sequence without a DigestValue');
        return values;
      })
    : [];
  const [timeStamp, ...others] = childrenNamed(element, ERS_NS, 'TimeStamp');
  if (!timeStamp || others.length > 0) throw new Error('an ArchiveTimeStamp holds one TimeStamp');
  const [token, ...tokens] = childrenNamed(timeStamp, ERS_NS, 'TimeStampToken');
  if (!token || tokens.length > 0) throw new Error('a TimeStamp holds one TimeStampToken');
  const type = attribute(token, 'Type');
  if (type !== undefined && type !== 'RFC3161')
    throw new Error(`a TimeStampToken of Type ${type.slice(0, 40)}, not RFC3161`);
  return { groups, token: base64(token, 'a TimeStampToken'), timeStamp };
}

/** Elements sorted by their Order attribute (1, 2, …: each once, none missing). */
function inOrder(elements: XmlElement[], what: string): XmlElement[] {
  const orders = elements.map((element) => {
    const order = attribute(element, 'Order');
    if (!order || !/^\d{1,6}$/.test(order)) throw new Error(`an ${what} without a numeric Order`);
    return Number(order);
  });
  const sorted = elements.map((element, i) => ({ element, order: orders[i]! })).sort((a, b) => a.order - b.order);
  if (sorted.some(({ order }, i) => order !== i + 1))
    throw new Error(`its ${what} Order values are not 1 to ${elements.length}`);
  return sorted.map(({ element }) => element);
}

function algorithmOf(chain: XmlElement, name: string): string {
  const [method, ...more] = childrenNamed(chain, ERS_NS, name);
  const uri = attribute(method, 'Algorithm');
  if (!uri || more.length > 0) throw new Error(`an ArchiveTimeStampChain holds one ${name} with its Algorithm`);
  return uri;
}

function base64(element: XmlElement, what: string): Uint8Array {
  if (childElements(element).length > 0) throw new Error(`${what} holds elements`);
  const text = textOf(element).replace(/\s+/g, '');
  if (text.length === 0 || text.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(text))
    throw new Error(`${what} is not base64`);
  return new Uint8Array(Buffer.from(text, 'base64'));
}

const utf8 = (text: string) => new TextEncoder().encode(text);
const equal = (a: Uint8Array, b: Uint8Array) => Buffer.compare(a, b) === 0;

function oneLine(error: unknown): string {
  const message = error instanceof EsignError || error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]!.replace(/\.$/, '');
}
