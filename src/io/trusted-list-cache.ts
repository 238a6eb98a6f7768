import { readFileSync, statSync, type BigIntStats } from 'node:fs';
import { mkdir, readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import {
  attachIndex,
  indexTrustedList,
  isTrustedListIndex,
  type TrustedListIndex,
} from '../core/qualification/list-index.js';
import type { TrustedListCacheEntry } from '../core/trusted-list/model.js';
import { writeBytesAtomically } from './atomic-write.js';
import { cacheDir } from './paths.js';

/** A cached list known by its index; its entry reads the list itself only when something asks for it. */
export interface IndexedTrustedList {
  index: TrustedListIndex;
  entry: TrustedListCacheEntry;
}

/**
 * The verified trusted lists, one JSON file per list (`EU.json` for the LOTL, `BE.json`, …) in
 * `trusted-lists/` of the cache dir, each with its small index beside it (`BE.index.json`,
 * src/core/qualification/list-index.ts). Each file is replaced atomically, so an interrupted update
 * leaves every list as it was; an index records which list file it was made from (size, time,
 * inode), so one that does not match its list (a crash between the two writes, a cache written by
 * an esign before indexes) is made again from the list when read.
 */
export class TrustedListCache {
  constructor(readonly dir: string) {}

  /**
   * The cache of the real lists, or with `sandbox` the sandbox's TEST lists, kept apart in
   * `trusted-lists/sandbox/` so that a sandbox update never replaces a real list (and a real profile
   * never reads a TEST one).
   */
  static at(env: NodeJS.ProcessEnv = process.env, options: { sandbox?: boolean } = {}): TrustedListCache {
    const dir = join(cacheDir(env), 'trusted-lists');
    return new TrustedListCache(options.sandbox ? join(dir, 'sandbox') : dir);
  }

  /** Every entry in the cache, by territory; none when the cache does not exist. */
  async entries(): Promise<TrustedListCacheEntry[]> {
    const entries: TrustedListCacheEntry[] = [];
    for (const territory of await this.territories()) {
      const entry = await this.read(territory);
      if (entry) entries.push(entry);
    }
    return entries;
  }

  /**
   * Every list in the cache, by territory, from its index: an entry's list is read (synchronously)
   * the first time one of its fields is asked for, so that a verification reads only the lists that
   * may name the certificates at hand. A missing or stale index is made again from its list.
   */
  async indexed(): Promise<IndexedTrustedList[]> {
    const found: IndexedTrustedList[] = [];
    for (const territory of await this.territories()) {
      const list = await this.indexedList(territory);
      if (list) found.push(list);
    }
    return found;
  }

  async read(territory: string): Promise<TrustedListCacheEntry | undefined> {
    try {
      return JSON.parse(await readFile(this.pathOf(territory), 'utf8')) as TrustedListCacheEntry;
    } catch {
      return undefined;
    }
  }

  async write(entry: TrustedListCacheEntry): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const path = this.pathOf(entry.territory);
    await writeBytesAtomically(path, JSON.stringify(entry), { overwrite: true });
    // A failed index write leaves the old one, whose stamp no longer matches: it is made again when read.
    await stampOf(path)
      .then((stamp) => this.writeIndex(indexTrustedList(entry, stamp)))
      .catch(() => undefined);
  }

  private async territories(): Promise<string[]> {
    try {
      return (await readdir(this.dir))
        .filter((name) => LIST_FILE.test(name))
        .sort()
        .map((name) => name.slice(0, -'.json'.length));
    } catch {
      return [];
    }
  }

  private async indexedList(territory: string): Promise<IndexedTrustedList | undefined> {
    const path = this.pathOf(territory);
    // Synchronous: a few dozen small files, read faster than through the thread pool.
    let stamp: string;
    try {
      stamp = stampOfSync(path);
    } catch {
      return undefined;
    }
    let stored: unknown;
    try {
      stored = JSON.parse(readFileSync(this.indexPathOf(territory), 'utf8'));
    } catch {
      stored = undefined;
    }
    if (isTrustedListIndex(stored) && stored.stamp === stamp && stored.territory === territory)
      return { index: stored, entry: attachIndex(lazyEntry(territory, path), stored) };
    const entry = await this.read(territory);
    if (!entry) return undefined;
    const index = indexTrustedList(entry, stamp);
    // Best effort: a cache dir this run cannot write still verifies, reading the lists.
    await this.writeIndex(index).catch(() => undefined);
    return { index, entry: attachIndex(entry, index) };
  }

  private async writeIndex(index: TrustedListIndex): Promise<void> {
    await writeBytesAtomically(this.indexPathOf(index.territory), JSON.stringify(index), { overwrite: true });
  }

  private pathOf(territory: string): string {
    if (!LIST_KEY.test(territory)) throw new Error(`not a territory code: ${territory}`);
    return join(this.dir, `${territory}.json`);
  }

  private indexPathOf(territory: string): string {
    if (!LIST_KEY.test(territory)) throw new Error(`not a territory code: ${territory}`);
    return join(this.dir, `${territory}.index.json`);
  }
}

/** A list's key in the cache: a territory code (EU for the LOTL), or the lower-case name of a list added with `esign trust add`. */
export const LIST_KEY = /^(?:[A-Z]{2}|[a-z][a-z0-9-]{1,39})$/;
const LIST_FILE = /^(?:[A-Z]{2}|[a-z][a-z0-9-]{1,39})\.json$/;

/** Which file is at `path` (replaced atomically, a new inode; or rewritten: its stamp changes). */
async function stampOf(path: string): Promise<string> {
  return stampFrom(await stat(path, { bigint: true }));
}

function stampOfSync(path: string): string {
  return stampFrom(statSync(path, { bigint: true }));
}

/**
 * The list file's size, time and inode, and the Node version: the index keys names by the form Node
 * prints them in (name-key.ts), so another Node makes its indexes again rather than trust another form.
 */
function stampFrom(info: BigIntStats): string {
  return `${info.size}:${info.mtimeNs}:${info.ino}:node-${process.versions.node}`;
}

/** A cache entry whose fields read the list file the first time one is asked for (an empty entry if it has gone). */
function lazyEntry(territory: string, path: string): TrustedListCacheEntry {
  let loaded: TrustedListCacheEntry | undefined;
  const load = (): TrustedListCacheEntry => {
    if (!loaded)
      try {
        loaded = JSON.parse(readFileSync(path, 'utf8')) as TrustedListCacheEntry;
      } catch {
        loaded = { territory };
      }
    return loaded;
  };
  return {
    territory,
    get snapshot() {
      return load().snapshot;
    },
    get verifiedAt() {
      return load().verifiedAt;
    },
    get etag() {
      return load().etag;
    },
    get lastModified() {
      return load().lastModified;
    },
    get lastFailure() {
      return load().lastFailure;
    },
    get added() {
      return load().added;
    },
  };
}
