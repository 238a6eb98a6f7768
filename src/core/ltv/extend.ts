/**
 * Raising a signed PDF to PAdES B-LT or B-LTA by appending incremental updates: a DSS update with
 * the validation data of every signature and timestamp (only what the DSS does not hold yet), and
 * for B-LTA a document timestamp over everything before it, followed (when the new timestamp's TSA
 * publishes revocation data) by a DSS update for that TSA, ready for a later refresh.
 *
 * The original bytes are never read as a whole: the caller passes the SHA-256 state over them.
 */
import type { Hash } from 'node:crypto';
import { EsignError } from '../errors.js';
import { buildDssUpdate, prepareSignature, readPdf, spliceContents } from '../pdf/index.js';
import type { PdfOpenOptions } from '../pdf/index.js';
import type { DssMaterial, PdfDocument } from '../pdf/index.js';
import { decodeStream } from '../pdf/filters.js';
import { PdfStream } from '../pdf/objects.js';
import type { OutputFile } from '../documents.js';
import type { ByteSource, TimestampAuthority } from '../ports.js';
import { findSignatures } from './pdf-signatures.js';
import type { KnownSignature } from './pdf-signatures.js';
import { itemDigest as hex } from './item-digest.js';
import { collectValidationData, RevocationCache, targetsOf, tokenTarget } from './validation-data.js';
import type { ChainTarget, RevocationCheck, RevocationFetcher, ValidationData } from './validation-data.js';

export type LongTermLevel = 'B-LT' | 'B-LTA';

export interface ExtendDependencies {
  fetcher: RevocationFetcher;
  /** Needed for B-LTA. */
  tsa?: TimestampAuthority;
  /** The password of an encrypted PDF, when it needs one (or the owner's, for its permissions). */
  password?: string;
  /** The batch window's certificates and revocation data, shared by its documents; else this document's own. */
  cache?: RevocationCache;
  /** The signature just made (sign at B-LT/B-LTA), taken as built rather than parsed back from the document. */
  known?: KnownSignature;
  /**
   * The largest document timestamp token a batch window has had so far: the next placeholder is
   * sized to it (plus a margin) rather than to DOC_TIMESTAMP_CONTENTS, and it is raised as tokens come.
   */
  tokenRoom?: { bytes: number };
  /** The time signatures are checked at before they are extended (XAdES); from the clock. */
  now?: Date;
  /**
   * Certificates that may complete a chain the file leaves short (the profile's trust anchors): a
   * root that neither the file nor a caIssuers URL gives, so that its CA's CRL is still collected.
   * Only those a chain reaches are added to the file.
   */
  issuers?: readonly Uint8Array[];
}

export interface ExtensionResult {
  /** The bytes to append after the document (a form that appends: PAdES). Empty with `rewrite`. */
  tail: Uint8Array;
  /**
   * A form whose output is not the input with bytes appended (an XML document, whose signature
   * grows inside it; a container, rewritten entry by entry): writes the whole output into `output`
   * (the temp file the caller commits, or aborts), and says how much it wrote and its SHA-256.
   */
  rewrite?: (output: OutputFile) => Promise<{ bytes: number; sha256: string }>;
  /** What was extended, where the form's own report does not say it (an ASiC's signatures: XAdES). */
  format?: 'PAdES' | 'XAdES';
  signatures: number;
  documentTimestamps: number;
  added: { certs: number; ocsps: number; crls: number };
  /** genTime of the new document timestamp (B-LTA). */
  archiveTimestamp?: Date;
  checks: RevocationCheck[];
  warnings: string[];
}

/** Room for a document timestamp token; grown and retried when a TSA's token is bigger. */
export const DOC_TIMESTAMP_CONTENTS = 12_288;
/** Beyond the largest token seen: a TSA's tokens differ by a few bytes (serial number, nonce, genTime's fraction). */
const TOKEN_MARGIN = 1_024;

/**
 * Computes what to append to `source` for `level`. `hash` is the SHA-256 state over all of
 * `source` (not yet digested; it is copied, never finished), or a function that produces it,
 * called only when a document timestamp needs it (after the revocation data is fetched).
 */
export async function extendPdf(
  source: ByteSource,
  hash: Hash | (() => Promise<Hash>),
  level: LongTermLevel,
  deps: ExtendDependencies,
): Promise<ExtensionResult> {
  if (level === 'B-LTA' && !deps.tsa) {
    throw new EsignError(
      'TSA_NOT_CONFIGURED',
      'Level B-LTA needs a timestamping service for the document timestamp, and the profile has none.',
      { hint: 'Set tsaUrls, or use --level B-LT.' },
    );
  }
  const open = { password: deps.password };
  const doc = await readPdf(source, open);
  const signatures = await findSignatures(doc, deps.known);
  if (signatures.length === 0) {
    throw new EsignError('PDF_NOT_SIGNED', 'The PDF has no signature or document timestamp to extend.', {
      hint: 'Sign it first: esign sign FILE --level B-LT.',
    });
  }
  const existing = await existingDss(doc);
  const cache = deps.cache ?? new RevocationCache(deps.fetcher);
  const data = await collectValidationData(
    targetsOf(signatures),
    deps.fetcher,
    [...existing.certs, ...(deps.issuers ?? [])],
    cache,
  );
  const added = { certs: 0, ocsps: 0, crls: 0 };
  const warnings = [...data.warnings];
  const checks = [...data.checks];

  let tail: Uint8Array<ArrayBufferLike> = new Uint8Array(0);
  const fresh = newMaterial(data, existing.digests);
  // B-LT needs a DSS; an LTA refresh of a file whose DSS already holds everything needs none.
  if (hasAny(fresh) || !existing.present) {
    tail = await buildDssUpdate(doc, fresh);
    count(added, fresh);
  }
  const result: ExtensionResult = {
    tail,
    signatures: signatures.filter((s) => s.kind === 'signature').length,
    documentTimestamps: signatures.length - signatures.filter((s) => s.kind === 'signature').length,
    added,
    checks,
    warnings,
  };
  if (level === 'B-LT') return result;

  const tsa = deps.tsa as TimestampAuthority;
  const stamped = await documentTimestamp(
    source,
    typeof hash === 'function' ? await hash() : hash,
    tail,
    tsa,
    open,
    deps.tokenRoom,
  );
  tail = concat(tail, stamped.update);
  result.archiveTimestamp = stamped.genTime;
  result.documentTimestamps++;

  // The new timestamp's own validation data, when its TSA publishes any beyond what is stored.
  const tsaData = await collectValidationData(
    stamped.target,
    deps.fetcher,
    [...existing.certs, ...data.certs, ...(deps.issuers ?? [])],
    cache,
  );
  warnings.push(...tsaData.warnings.filter((warning) => !warnings.includes(warning)));
  checks.push(...tsaData.checks);
  const known = new Set([...existing.digests, ...[...data.certs, ...data.ocsps, ...data.crls].map(hex)]);
  const tsaFresh = newMaterial(tsaData, known);
  if ((tsaFresh.ocsps?.length ?? 0) + (tsaFresh.crls?.length ?? 0) > 0) {
    const extended = await readPdf(appendedSource(source, tail), open);
    tail = concat(tail, await buildDssUpdate(extended, tsaFresh));
    count(added, tsaFresh);
  }
  result.tail = tail;
  return result;
}

/** Adds a document timestamp after `source` + `tail`: placeholder, hash of its ByteRange, token, splice. */
async function documentTimestamp(
  source: ByteSource,
  hash: Hash,
  tail: Uint8Array,
  tsa: TimestampAuthority,
  open: PdfOpenOptions,
  room: { bytes: number } | undefined,
): Promise<{ update: Uint8Array; token: Uint8Array; genTime: Date; target: ChainTarget[] }> {
  const doc = await readPdf(appendedSource(source, tail), open);
  let contentsSize = room && room.bytes > 0 ? room.bytes + TOKEN_MARGIN : DOC_TIMESTAMP_CONTENTS;
  for (let attempt = 0; attempt < 3; attempt++) {
    const placeholder = await prepareSignature(doc, { kind: 'docTimeStamp', contentsSize });
    const [, a, b] = placeholder.byteRange;
    const local = (offset: number): number => offset - placeholder.originalSize;
    const digest = hash
      .copy()
      .update(tail)
      .update(placeholder.update.subarray(0, local(a)))
      .update(placeholder.update.subarray(local(b)))
      .digest();
    const stamp = await tsa.timestamp(new Uint8Array(digest));
    if (room) room.bytes = Math.max(room.bytes, stamp.token.length);
    if (stamp.token.length <= contentsSize)
      return {
        update: spliceContents(placeholder, stamp.token),
        token: stamp.token,
        genTime: stamp.genTime,
        target: tokenTarget(stamp.token, stamp),
      };
    contentsSize = stamp.token.length + 2_048;
  }
  throw new EsignError(
    'PDF_PLACEHOLDER_TOO_SMALL',
    'The document timestamp token kept growing beyond the room reserved for it.',
    { hint: 'This is a bug; please report it with the TSA URL.' },
  );
}

interface ExistingDss {
  present: boolean;
  certs: Uint8Array[];
  /** SHA-256 (hex) of every certificate, OCSP response and CRL already stored. */
  digests: Set<string>;
}

/** What the document's DSS already holds (decoded streams), so that nothing is stored twice. */
export async function existingDss(doc: PdfDocument): Promise<ExistingDss> {
  const { dict: catalog } = await doc.catalog();
  const dss = await doc.resolveDict(catalog.get('DSS'));
  const result: ExistingDss = { present: dss !== undefined, certs: [], digests: new Set() };
  if (!dss) return result;
  for (const key of ['Certs', 'OCSPs', 'CRLs']) {
    for (const ref of (await doc.resolveArray(dss.get(key))) ?? []) {
      const stream = await doc.resolve(ref);
      if (!(stream instanceof PdfStream)) continue;
      let data: Uint8Array;
      try {
        data = decodeStream(stream);
      } catch {
        continue;
      }
      result.digests.add(hex(data));
      if (key === 'Certs') result.certs.push(data);
    }
  }
  return result;
}

function newMaterial(data: ValidationData, known: Set<string>): DssMaterial {
  const keep = (items: Uint8Array[]): Uint8Array[] => items.filter((item) => !known.has(hex(item)));
  return { certs: keep(data.certs), ocsps: keep(data.ocsps), crls: keep(data.crls) };
}

function hasAny(material: DssMaterial): boolean {
  return (material.certs?.length ?? 0) + (material.ocsps?.length ?? 0) + (material.crls?.length ?? 0) > 0;
}

function count(added: ExtensionResult['added'], material: DssMaterial): void {
  added.certs += material.certs?.length ?? 0;
  added.ocsps += material.ocsps?.length ?? 0;
  added.crls += material.crls?.length ?? 0;
}

/** `source` followed by `tail`, as one ByteSource (to read the document as it will be). */
export function appendedSource(source: ByteSource, tail: Uint8Array): ByteSource {
  if (tail.length === 0) return source;
  return {
    size: source.size + tail.length,
    async read(offset: number, length: number): Promise<Uint8Array> {
      const end = Math.min(offset + length, source.size + tail.length);
      if (end <= offset) return new Uint8Array(0);
      if (end <= source.size) return source.read(offset, end - offset);
      if (offset >= source.size) return tail.subarray(offset - source.size, end - source.size);
      const head = await source.read(offset, source.size - offset);
      return concat(head, tail.subarray(0, end - source.size));
    },
  };
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}
