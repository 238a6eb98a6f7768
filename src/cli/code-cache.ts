/**
 * The files of the V8 code cache that the launchers keep on Node 20 (src/cli/launch.ts for the npm
 * package, src/cli/sea-launch.ts for the single executable). A cache file is keyed by the code it
 * was made from and the Node that made it, one per command (it holds the functions its run
 * compiled), and only ever speeds things up: a missing, stale, damaged or foreign cache means an
 * ordinary compile.
 */
import { hash } from 'node:crypto';
import {
  closeSync,
  fstatSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { cacheDir } from '../io/paths.js';
import { commandNameIn } from './command-name.js';

// A cache file is the SHA-256 of the V8 data, then the data: V8 (release builds) does not check
// the data itself, and a damaged payload behind an intact header crashes the process.
const DIGEST_BYTES = 32;
// Caches of other builds or Node versions unused for this long are removed.
const DAY_MS = 24 * 3600 * 1000;
const STALE_MS = 30 * DAY_MS;

/** Where the V8 caches go (`<cache dir>/v8`), or nowhere: with --verbose, NODE_DISABLE_COMPILE_CACHE, or no home. */
export function codeCacheRoot(argv: string[], env: NodeJS.ProcessEnv): string | undefined {
  if (argv.includes('--verbose') || argv.includes('-v') || env['NODE_DISABLE_COMPILE_CACHE']) return undefined;
  try {
    return join(cacheDir(env), 'v8');
  } catch {
    // a user without a home, HOME unset
    return undefined;
  }
}

/**
 * Which cache a run uses: its command (`sign-visible` for `sign --visible`); `help` for any help (a cache written by `sign --help` would
 * hold little of what a sign needs, and is never replaced); `version` for --version.
 */
export function cacheName(argv: string[]): string {
  const args = argv.slice(2);
  const firstWord = args.find((arg) => !arg.startsWith('-'));
  if (args.includes('--help') || args.includes('-h') || firstWord === 'help') return 'help';
  const command = commandNameIn(args);
  // A visible signature runs the font code an invisible one never compiles: its own cache.
  if (command !== undefined)
    return /^[a-z][a-z-]{0,23}$/.test(command) ? `${command}${args.includes('--visible') ? '-visible' : ''}` : 'other';
  return args.includes('--version') || args.includes('-V') ? 'version' : 'help';
}

/** The V8 data of a cache file that is ours, private and intact; otherwise undefined. */
export function readCache(file: string): Buffer | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const { uid, mode } = fstatSync(fd);
    // Code that runs as this user: only from a file this user owns and nobody else may write
    // (POSIX; Windows reports every file as 0666 and has no uid).
    if (process.platform !== 'win32' && ((process.getuid && uid !== process.getuid()) || (mode & 0o022) !== 0))
      return undefined;
    const content = readFileSync(fd);
    const data = content.subarray(DIGEST_BYTES);
    return content.length > DIGEST_BYTES && hash('sha256', data, 'buffer').equals(content.subarray(0, DIGEST_BYTES))
      ? data
      : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Keeps a cache in use from looking stale to another build's clean-up (its mtime, at most daily). */
export function markUsed(dir: string): void {
  try {
    if (Date.now() - statSync(dir).mtimeMs > DAY_MS) utimesSync(dir, new Date(), new Date());
  } catch {
    // only the clean-up's view of it
  }
}

/**
 * Writes `file` (in `root/key/`) atomically, 0600 in 0700 dirs, then removes the caches of other
 * keys unused for 30 days. Never throws: a read-only or full disk costs the next run a compile.
 */
export function writeCache(data: Buffer, root: string, key: string, file: string): void {
  const temp = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const fd = openSync(temp, 'w', 0o600);
    try {
      writeFileSync(fd, Buffer.concat([hash('sha256', data, 'buffer'), data]));
      // On disk before it has the name: a power cut must not leave a named file of zeros.
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, file);
    for (const entry of readdirSync(root)) {
      const path = join(root, entry);
      if (entry !== key && Date.now() - statSync(path).mtimeMs > STALE_MS)
        rmSync(path, { recursive: true, force: true });
    }
  } catch {
    try {
      rmSync(temp, { force: true });
    } catch {
      // nothing was written there either
    }
  }
}
