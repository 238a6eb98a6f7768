/**
 * A lock file for the sandbox data dir, which several esign processes may share at once (a running
 * `esign sandbox start` and commands that start their own emulators, or parallel commands on a
 * fresh machine). Taken with an exclusive create; a lock older than STALE_MS is from a process that
 * died holding it and is broken.
 */
import { closeSync, openSync, rmSync, statSync, writeSync } from 'node:fs';

const STALE_MS = 60_000;
const RETRY_MS = 20;

function tryTake(path: string): boolean {
  try {
    const fd = openSync(path, 'wx', 0o600);
    writeSync(fd, String(process.pid));
    closeSync(fd);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const age = (() => {
      try {
        return Date.now() - statSync(path).mtimeMs;
      } catch {
        return Infinity; // released meanwhile
      }
    })();
    if (age > STALE_MS) rmSync(path, { force: true });
    return false;
  }
}

/** Runs `work` holding the lock file `path`. */
export async function withFileLock<T>(path: string, work: () => Promise<T>): Promise<T> {
  while (!tryTake(path)) await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
  try {
    return await work();
  } finally {
    rmSync(path, { force: true });
  }
}

/** The synchronous form, for a few file operations that must not interleave with another process's. */
export function withFileLockSync<T>(path: string, work: () => T): T {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  while (!tryTake(path)) Atomics.wait(pause, 0, 0, RETRY_MS);
  try {
    return work();
  } finally {
    rmSync(path, { force: true });
  }
}
