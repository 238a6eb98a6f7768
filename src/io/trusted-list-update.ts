/**
 * `esign trust update` and `import`: fetch (or read) the LOTL and the national lists it points to,
 * check each signature, and keep each verified list in the cache. A list that fails is reported with
 * its reason and never replaces the copy that passed before it (the entry keeps `lastFailure`); the
 * others are still updated, against the LOTL verified before when this run's LOTL failed.
 */
import { EsignError, isEsignError } from '../core/errors.js';
import { LOTL_SIGNING_CERTIFICATES } from '../core/trusted-list/lotl-signers.js';
import type {
  AddedTrustedList,
  TrustedListCacheEntry,
  TrustedListPointer,
  TrustedListSnapshot,
} from '../core/trusted-list/model.js';
import { readTrustedList, TEST_LIST_RULES_URI } from '../core/trusted-list/parse.js';
import { isExpired } from '../core/trusted-list/state.js';
import { MAX_TRUSTED_LIST_BYTES } from '../core/trusted-list/xml-signature.js';
import type { HttpClient, HttpResponse } from './http.js';
import type { TrustedListCache } from './trusted-list-cache.js';

/** The Commission's published address of the LOTL. */
export const DEFAULT_LOTL_URL = 'https://ec.europa.eu/tools/lotl/eu-lotl.xml';
/** How many national lists are fetched at once. */
export const LIST_CONCURRENCY = 6;
const MAX_REDIRECTS = 5;

export interface TrustListSources {
  http: HttpClient;
  cache: TrustedListCache;
  now: () => Date;
  /** The certificates trusted to sign the LOTL (default: those the Official Journal announced). */
  lotlSigners?: readonly string[];
  /** Only a sandbox profile accepts the sandbox's TEST lists. */
  acceptTestLists: boolean;
}

export interface ListOutcome {
  territory: string;
  /** updated: a new verified copy; unchanged: the server said 304 or the same bytes came; failed: see reason. */
  state: 'updated' | 'unchanged' | 'failed';
  source: string;
  sequenceNumber?: number;
  /** One line: what failed and why. */
  reason?: string;
  code?: string;
}

export interface UpdateOptions {
  lotlUrl: string;
  /** Only these national lists; all when absent. */
  territories?: readonly string[];
  onProgress?: (done: number, total: number) => void;
}

/** Fetches the LOTL then every list it points to; one outcome per list, the LOTL first. */
export async function updateTrustedLists(sources: TrustListSources, options: UpdateOptions): Promise<ListOutcome[]> {
  const lotlOutcome = await fetchAndKeep(sources, 'EU', options.lotlUrl, (bytes) =>
    verifyLotl(sources, bytes, options.lotlUrl),
  );
  const cachedLotl = (await sources.cache.read('EU'))?.snapshot;
  // A LOTL that failed this time left the copy verified before: while that one is current, its pointers
  // still say who signs each national list, so those are updated all the same (the LOTL is named as failed).
  const lotl =
    lotlOutcome.state === 'failed' && cachedLotl && isExpired(cachedLotl, sources.now()) ? undefined : cachedLotl;
  if (!lotl) return [lotlOutcome];
  const wanted = options.territories?.length ? new Set(options.territories) : undefined;
  const pointers = lotl.pointers.filter(
    (pointer) => pointer.territory !== 'EU' && (!wanted || wanted.has(pointer.territory)),
  );
  let done = 0;
  options.onProgress?.(done, pointers.length);
  const outcomes = await mapWithConcurrency(pointers, LIST_CONCURRENCY, async (pointer) => {
    const outcome = await fetchAndKeep(
      sources,
      pointer.territory,
      pointer.location,
      (bytes) => verifyNational(sources, bytes, pointer, pointer.location),
      (kept) => pointer.signingCertificates.includes(kept.signerCertificate),
    );
    options.onProgress?.(++done, pointers.length);
    return outcome;
  });
  // The lists added with `esign trust add` are updated too (all of them: --territories names EU ones).
  const added = wanted ? [] : await addedLists(sources);
  for (const list of added) outcomes.push(await fetchAndKeepAdded(sources, list));
  const missing = [...(wanted ?? [])].filter((territory) => !pointers.some((p) => p.territory === territory));
  const notListed = missing.map((territory): ListOutcome => ({
    territory,
    state: 'failed',
    source: lotl.source,
    reason: `${territory}: the LOTL points to no list for this territory`,
    code: 'TRUST_LIST_WRONG_TERRITORY',
  }));
  return [lotlOutcome, ...outcomes, ...notListed];
}

/**
 * `esign trust import`: each file is recognised by its content (a LOTL, or the national list of the
 * territory it names) and checked as if fetched: the LOTL against the shipped certificates, a national
 * list against the LOTL in the cache (or imported in the same run, which is why LOTLs go first).
 */
export async function importTrustedLists(
  sources: TrustListSources,
  files: ReadonlyArray<{ path: string; bytes: Uint8Array }>,
): Promise<ListOutcome[]> {
  const lotls = files.filter((file) => looksLikeLotl(file.bytes));
  const outcomes: ListOutcome[] = [];
  for (const file of [...lotls, ...files.filter((file) => !lotls.includes(file))]) {
    const territory = looksLikeLotl(file.bytes) ? 'EU' : territoryNamedIn(file.bytes);
    if (!territory) {
      outcomes.push(failure('??', file.path, error('TRUST_LIST_MALFORMED', `${file.path}: not a trusted list`)));
      continue;
    }
    const verify = async (bytes: Uint8Array): Promise<TrustedListSnapshot> => {
      if (territory === 'EU') return verifyLotl(sources, bytes, file.path);
      const lotl = (await sources.cache.read('EU'))?.snapshot;
      const pointer = lotl?.pointers.find((p) => p.territory === territory);
      if (!pointer) {
        // Still checked, so that unsafe or broken XML is named as such rather than as unvouched for.
        try {
          readTrustedList(bytes, [], file.path, territory);
        } catch (failure) {
          if (!isEsignError(failure, 'TRUST_LIST_SIGNER_UNTRUSTED')) throw failure;
        }
        throw error(
          'TRUST_LIST_SIGNER_UNTRUSTED',
          `${file.path}: no verified LOTL gives the signers of ${territory}'s list`,
          'Import or update the LOTL first (esign trust import eu-lotl.xml, or esign trust update).',
        );
      }
      return verifyNational(sources, bytes, pointer, file.path);
    };
    outcomes.push(await keep(sources, territory, file.path, file.bytes, verify, {}));
  }
  return outcomes;
}

/**
 * `esign trust add`: a TS 119 612 list the LOTL does not point to (a third country's, an
 * organisation's own), fetched and checked against its own signing certificates, then cached and
 * updated with the others under its name. It must be a national-style list, not a LOTL.
 */
export async function addTrustedList(sources: TrustListSources, list: AddedTrustedList): Promise<ListOutcome> {
  return fetchAndKeepAdded(sources, list);
}

async function addedLists(sources: TrustListSources): Promise<AddedTrustedList[]> {
  const lists: AddedTrustedList[] = [];
  for (const { index, entry } of await sources.cache.indexed()) if (index.added && entry.added) lists.push(entry.added);
  return lists;
}

function fetchAndKeepAdded(sources: TrustListSources, list: AddedTrustedList): Promise<ListOutcome> {
  const verify = async (bytes: Uint8Array): Promise<TrustedListSnapshot> => {
    refuseTestBytes(sources, bytes, list.name, list.url);
    const snapshot = readTrustedList(bytes, list.signerCertificates, list.url, list.name);
    if (snapshot.isLotl)
      throw error(
        'TRUST_LIST_WRONG_TERRITORY',
        `${list.name}: ${list.url} is a list of lists, not a trusted list`,
        'Give the address of a TS 119 612 trusted list; the EU LOTL is lotlUrl (esign trust update).',
      );
    refuseTestList(sources, snapshot, list.name);
    return snapshot;
  };
  return fetchAndKeep(
    sources,
    list.name,
    list.url,
    verify,
    (kept) => list.signerCertificates.includes(kept.signerCertificate),
    { added: list },
  );
}

async function fetchAndKeep(
  sources: TrustListSources,
  territory: string,
  url: string,
  verify: (bytes: Uint8Array) => Promise<TrustedListSnapshot>,
  stillTrusted: (kept: TrustedListSnapshot) => boolean = () => true,
  extra: Pick<TrustedListCacheEntry, 'added'> = {},
): Promise<ListOutcome> {
  const previous = await sources.cache.read(territory);
  const conditional: Record<string, string> = {};
  // A 304 keeps the cached copy, so ask for one only while its signer is still the one trusted.
  if (previous?.snapshot?.source === url && stillTrusted(previous.snapshot)) {
    if (previous.etag) conditional['if-none-match'] = previous.etag;
    if (previous.lastModified) conditional['if-modified-since'] = previous.lastModified;
  }
  let response: HttpResponse;
  try {
    response = await get(sources.http, url, territory, conditional);
  } catch (cause) {
    return recordFailure(sources, territory, url, previous, cause, extra);
  }
  if (response.status === 304 && previous?.snapshot) {
    return { territory, state: 'unchanged', source: url, sequenceNumber: previous.snapshot.sequenceNumber };
  }
  if (response.status !== 200)
    return recordFailure(sources, territory, url, previous, statusError(territory, url, response), extra);
  // A portal's or a maintenance page comes as a 200 too; named as such, not by the first thing XML refuses in it.
  const contentType = response.headers.get('content-type') ?? '';
  if (/^\s*text\/html\b/i.test(contentType)) {
    const reason = error(
      'TRUST_LIST_MALFORMED',
      `${territory}: ${url} answered a web page (${contentType}), not a list`,
    );
    return recordFailure(sources, territory, url, previous, reason, extra);
  }
  return keep(
    sources,
    territory,
    url,
    response.body,
    verify,
    {
      etag: response.headers.get('etag') ?? undefined,
      lastModified: response.headers.get('last-modified') ?? undefined,
    },
    extra,
  );
}

async function keep(
  sources: TrustListSources,
  territory: string,
  source: string,
  bytes: Uint8Array,
  verify: (bytes: Uint8Array) => Promise<TrustedListSnapshot>,
  validators: { etag?: string | undefined; lastModified?: string | undefined },
  extra: Pick<TrustedListCacheEntry, 'added'> = {},
): Promise<ListOutcome> {
  const previous = await sources.cache.read(territory);
  let snapshot: TrustedListSnapshot;
  try {
    snapshot = await verify(bytes);
  } catch (cause) {
    return recordFailure(sources, territory, source, previous, cause, extra);
  }
  const entry: TrustedListCacheEntry = {
    territory,
    ...extra,
    snapshot,
    verifiedAt: sources.now().toISOString(),
    ...(validators.etag ? { etag: validators.etag } : {}),
    ...(validators.lastModified ? { lastModified: validators.lastModified } : {}),
  };
  await sources.cache.write(entry);
  const same = previous?.snapshot?.sha256 === snapshot.sha256;
  return { territory, state: same ? 'unchanged' : 'updated', source, sequenceNumber: snapshot.sequenceNumber };
}

async function recordFailure(
  sources: TrustListSources,
  territory: string,
  source: string,
  previous: TrustedListCacheEntry | undefined,
  cause: unknown,
  extra: Pick<TrustedListCacheEntry, 'added'> = {},
): Promise<ListOutcome> {
  const outcome = failure(territory, source, cause);
  // A list being added for the first time that fails is not kept: there is nothing verified to keep.
  if (extra.added && !previous) return outcome;
  await sources.cache.write({
    ...(previous ?? { territory }),
    territory,
    lastFailure: { at: sources.now().toISOString(), reason: outcome.reason! },
  });
  return outcome;
}

function failure(territory: string, source: string, cause: unknown): ListOutcome {
  const message = cause instanceof Error ? cause.message : String(cause);
  const reason = message.startsWith(`${territory}:`) ? message : `${territory}: ${message}`;
  return {
    territory,
    state: 'failed',
    source,
    reason: reason.split('\n')[0]!,
    code: isEsignError(cause) ? cause.code : 'INTERNAL',
  };
}

/**
 * The LOTL, checked against the shipped certificates; when its signer is not one of them, the pivot
 * LOTLs it names are followed from the oldest: each one that a trusted certificate signed hands trust
 * over to the certificates its own pointer to the LOTL gives (TS 119 612 §D.5, key rotation).
 */
async function verifyLotl(sources: TrustListSources, bytes: Uint8Array, source: string): Promise<TrustedListSnapshot> {
  refuseTestBytes(sources, bytes, 'EU', source);
  const shipped = sources.lotlSigners ?? LOTL_SIGNING_CERTIFICATES;
  let lotl: TrustedListSnapshot;
  try {
    lotl = readTrustedList(bytes, shipped, source, 'EU');
  } catch (failure) {
    if (!isEsignError(failure, 'TRUST_LIST_SIGNER_UNTRUSTED')) throw failure;
    lotl = await verifyLotlThroughPivots(sources, bytes, source, shipped, failure);
  }
  if (!lotl.isLotl) throw error('TRUST_LIST_WRONG_TERRITORY', `EU: ${source} is a national list, not the LOTL`);
  refuseTestList(sources, lotl, 'EU');
  return lotl;
}

async function verifyLotlThroughPivots(
  sources: TrustListSources,
  bytes: Uint8Array,
  source: string,
  shipped: readonly string[],
  failure: EsignError,
): Promise<TrustedListSnapshot> {
  // The pivots are read from the unverified LOTL, but each one must itself verify before it counts.
  const pivots = pivotsNamedIn(bytes);
  if (pivots.length === 0) throw failure;
  let trusted = shipped;
  for (const pivotUrl of [...pivots].reverse()) {
    try {
      const response = await get(sources.http, pivotUrl, 'EU', {});
      if (response.status !== 200) continue;
      const pivot = readTrustedList(response.body, trusted, pivotUrl, `EU pivot ${pivotUrl}`);
      const handover = pivot.pointers.find((pointer) => pointer.territory === 'EU');
      if (handover?.signingCertificates.length) trusted = handover.signingCertificates;
    } catch {
      // A pivot that cannot be fetched or checked hands nothing over; the next one may.
    }
  }
  try {
    return readTrustedList(bytes, trusted, source, 'EU');
  } catch {
    throw failure;
  }
}

async function verifyNational(
  sources: TrustListSources,
  bytes: Uint8Array,
  pointer: TrustedListPointer,
  source: string,
): Promise<TrustedListSnapshot> {
  refuseTestBytes(sources, bytes, pointer.territory, source);
  const list = readTrustedList(bytes, pointer.signingCertificates, source, pointer.territory);
  if (list.isLotl || list.territory !== pointer.territory) {
    throw error(
      'TRUST_LIST_WRONG_TERRITORY',
      `${pointer.territory}: ${source} is the list of ${list.territory}, not of ${pointer.territory}`,
    );
  }
  refuseTestList(sources, list, pointer.territory);
  return list;
}

function refuseTestList(sources: TrustListSources, list: TrustedListSnapshot, territory: string): void {
  if (list.test && !sources.acceptTestLists) throw testRefused(territory, list.source);
}

/** Refusing needs no signature: a list that says TEST is turned away before it is checked at all. */
function refuseTestBytes(sources: TrustListSources, bytes: Uint8Array, territory: string, source: string): void {
  if (!sources.acceptTestLists && Buffer.from(bytes).includes(TEST_LIST_RULES_URI)) {
    throw testRefused(territory, source);
  }
}

function testRefused(territory: string, source: string): EsignError {
  return error(
    'TRUST_LIST_TEST_REFUSED',
    `${territory}: ${source} is a sandbox TEST list, refused outside a sandbox profile`,
    'Point lotlUrl at the real LOTL (unset it for the default), or use the sandbox profile.',
  );
}

/** A GET that follows redirects itself (lists move between hosts); lists are signed, so http:// is allowed. */
async function get(
  http: HttpClient,
  url: string,
  territory: string,
  headers: Record<string, string>,
): Promise<HttpResponse> {
  let current = url;
  for (let hop = 0; ; hop++) {
    const response = await http.request({
      method: 'GET',
      url: current,
      headers,
      retry: 'idempotent',
      service: `trusted list server of ${territory}`,
      signedContentOverHttp: true,
      maxBytes: MAX_TRUSTED_LIST_BYTES,
    });
    const location = response.headers.get('location');
    if (response.status < 300 || response.status >= 400 || response.status === 304 || !location) return response;
    if (hop >= MAX_REDIRECTS) throw error('HTTP_BAD_RESPONSE', `${territory}: too many redirects from ${url}`);
    current = new URL(location, current).toString();
  }
}

/** A list server's answer other than 200 or 304, after the HTTP client's retries: unavailable (5xx, 429) or refused. */
function statusError(territory: string, url: string, response: HttpResponse): EsignError {
  const { status } = response;
  if (status === 429)
    return error('HTTP_RATE_LIMITED', `${territory}: ${url} is rate limited (HTTP 429); try again later`);
  if (status >= 500)
    return error('HTTP_SERVER_ERROR', `${territory}: ${url} is unavailable (HTTP ${status}); try again later`);
  return error('HTTP_CLIENT_ERROR', `${territory}: ${url} answered HTTP ${status}`);
}

function error(code: ConstructorParameters<typeof EsignError>[0], message: string, hint?: string): EsignError {
  return new EsignError(code, message, hint ? { hint } : {});
}

const decoder = new TextDecoder();

/** A quick look at the (unverified) head of a file: is it the LOTL? Verification decides the rest. */
function looksLikeLotl(bytes: Uint8Array): boolean {
  // The list's own TSLType comes first; pointers further down name the types of other lists.
  const type = /<(?:[\w.-]+:)?TSLType>([^<]*)</.exec(decoder.decode(bytes.subarray(0, 64 * 1024)));
  return /EUlistofthelists\s*$/.test(type?.[1] ?? '');
}

function territoryNamedIn(bytes: Uint8Array): string | undefined {
  const head = decoder.decode(bytes.subarray(0, 64 * 1024));
  return /<(?:[\w.-]+:)?SchemeTerritory>\s*([A-Z]{2})\s*</.exec(head)?.[1];
}

function pivotsNamedIn(bytes: Uint8Array): string[] {
  const info = /<(?:[\w.-]+:)?SchemeInformationURI>([\s\S]*?)<\/(?:[\w.-]+:)?SchemeInformationURI>/.exec(
    decoder.decode(bytes.subarray(0, 256 * 1024)),
  );
  if (!info) return [];
  return [...info[1]!.matchAll(/<(?:[\w.-]+:)?URI[^>]*>\s*([^<\s]+\.xml)\s*</gi)].map((match) => match[1]!);
}

async function mapWithConcurrency<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
