import { mkdir, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { TrustedListCacheEntry } from '../core/trusted-list/model.js';
import { writeBytesAtomically } from './atomic-write.js';
import { cacheDir } from './paths.js';

/**
 * The verified trusted lists, one JSON file per list (`EU.json` for the LOTL, `BE.json`, …) in
 * `trusted-lists/` of the cache dir. Each file is replaced atomically, so an interrupted update
 * leaves every list as it was.
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
    let names: string[];
    try {
      names = (await readdir(this.dir)).filter((name) => /^[A-Z]{2}\.json$/.test(name)).sort();
    } catch {
      return [];
    }
    const entries: TrustedListCacheEntry[] = [];
    for (const name of names) {
      const entry = await this.read(name.slice(0, -'.json'.length));
      if (entry) entries.push(entry);
    }
    return entries;
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
    await writeBytesAtomically(this.pathOf(entry.territory), JSON.stringify(entry), { overwrite: true });
  }

  private pathOf(territory: string): string {
    if (!/^[A-Z]{2}$/.test(territory)) throw new Error(`not a territory code: ${territory}`);
    return join(this.dir, `${territory}.json`);
  }
}
