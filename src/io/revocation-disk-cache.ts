/**
 * esign's on-disk cache of the OCSP responses and CRLs `esign verify` fetched (issue 49, item 8), as
 * DSS's file-cached online sources and browsers keep them: one file per answer under
 * `<cache dir>/revocation/` (ESIGN_CACHE_DIR, else ESIGN_CONFIG_DIR/cache, else the platform's
 * cache dir), the directory 0700 and each file 0600, written to a temporary file and renamed into
 * place, the whole bounded in size (the oldest entries go first). Nothing here is ever an error for
 * the command: an entry that cannot be read or does not parse is removed and counts as absent; a
 * cache that cannot be written is skipped (a debug line says why). Keys and freshness:
 * src/core/ltv/revocation-cache-entry.ts.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  decodeRevocationEntry,
  encodeRevocationEntry,
  revocationCacheKey,
  type CachedRevocation,
  type CachedRevocationKind,
} from '../core/ltv/revocation-cache-entry.js';
import { cacheDir } from './paths.js';

/** The cache's size bound: past it, the oldest entries are removed. */
export const REVOCATION_CACHE_MAX_BYTES = 32 * 1024 * 1024;
/** A temporary file older than this is one a killed run left: removed when the cache is pruned. */
const STALE_TEMP_MS = 60 * 60_000;

export interface RevocationDiskCacheOptions {
  maxBytes?: number;
  debug?: (line: string) => void;
}

export class RevocationDiskCache {
  private readonly maxBytes: number;
  /** The bytes the directory holds, known after the first prune of the run. */
  private total: number | undefined;
  private ready: Promise<boolean> | undefined;

  constructor(
    readonly dir: string,
    private readonly options: RevocationDiskCacheOptions = {},
  ) {
    this.maxBytes = options.maxBytes ?? REVOCATION_CACHE_MAX_BYTES;
  }

  /** The cache of `env`'s cache dir. */
  static of(env: NodeJS.ProcessEnv, options: RevocationDiskCacheOptions = {}): RevocationDiskCache {
    return new RevocationDiskCache(join(cacheDir(env), 'revocation'), options);
  }

  /** The file of an entry. */
  pathOf(kind: CachedRevocationKind, url: string, request?: Uint8Array): string {
    return join(this.dir, `${revocationCacheKey(kind, url, request)}.json`);
  }

  /** The entry for this answer, if one is kept and parses; a broken one is removed. Freshness is the caller's. */
  async read(kind: CachedRevocationKind, url: string, request?: Uint8Array): Promise<CachedRevocation | undefined> {
    const path = this.pathOf(kind, url, request);
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch {
      return undefined;
    }
    const entry = decodeRevocationEntry(text, { kind, url });
    if (!entry) {
      this.debug(`revocation cache: ${path} is not a usable entry; removed`);
      await this.forget(kind, url, request);
    }
    return entry;
  }

  /** Removes an entry (one that no longer checks out, or a broken one). */
  async forget(kind: CachedRevocationKind, url: string, request?: Uint8Array): Promise<void> {
    await unlink(this.pathOf(kind, url, request)).catch(() => undefined);
  }

  /** Keeps an answer: a temporary file of mode 0600, renamed over the entry; then the size bound. */
  async write(entry: CachedRevocation, request?: Uint8Array): Promise<void> {
    const text = encodeRevocationEntry(entry);
    if (text.length > this.maxBytes / 4) {
      this.debug(
        `revocation cache: the ${entry.kind} answer of ${entry.url} (${text.length} bytes) is too large to keep`,
      );
      return;
    }
    if (!(await this.prepare())) return;
    const path = this.pathOf(entry.kind, entry.url, request);
    const temp = join(this.dir, `.${randomBytes(8).toString('hex')}.tmp`);
    try {
      const before = await stat(path).then(
        (info) => info.size,
        () => 0,
      );
      await writeFile(temp, text, { mode: 0o600, flag: 'wx' });
      await rename(temp, path);
      if (this.total !== undefined) this.total += text.length - before;
    } catch (error) {
      await unlink(temp).catch(() => undefined);
      this.debug(`revocation cache: cannot write ${path}: ${(error as Error).message}`);
      return;
    }
    if (this.total === undefined || this.total > this.maxBytes) await this.prune();
  }

  /** The directory, 0700 (made once per run); false when it cannot be had. */
  private prepare(): Promise<boolean> {
    this.ready ??= (async () => {
      try {
        await mkdir(this.dir, { recursive: true, mode: 0o700 });
        await chmod(this.dir, 0o700);
        return true;
      } catch (error) {
        this.debug(`revocation cache: cannot use ${this.dir}: ${(error as Error).message}`);
        return false;
      }
    })();
    return this.ready;
  }

  /** Removes the oldest entries until the cache is within its bound, and temporary files a killed run left. */
  private async prune(): Promise<void> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return;
    }
    const now = Date.now();
    const entries: { path: string; size: number; mtimeMs: number }[] = [];
    for (const name of names) {
      const path = join(this.dir, name);
      const info = await stat(path).catch(() => undefined);
      if (!info?.isFile()) continue;
      if (name.endsWith('.tmp')) {
        if (now - info.mtimeMs > STALE_TEMP_MS) await unlink(path).catch(() => undefined);
        continue;
      }
      if (name.endsWith('.json')) entries.push({ path, size: info.size, mtimeMs: info.mtimeMs });
    }
    let total = entries.reduce((sum, entry) => sum + entry.size, 0);
    entries.sort((a, b) => a.mtimeMs - b.mtimeMs);
    for (const entry of entries) {
      if (total <= this.maxBytes) break;
      await unlink(entry.path).catch(() => undefined);
      total -= entry.size;
    }
    this.total = total;
  }

  private debug(line: string): void {
    this.options.debug?.(line);
  }
}
