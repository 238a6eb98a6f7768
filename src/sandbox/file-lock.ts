/**
 * A lock file for the sandbox data dir, which several esign processes may share at once (a running
 * `esign sandbox start` and commands that start their own emulators, or parallel commands on a
 * fresh machine). Taken with an exclusive create and holding the owner's pid. A lock whose owner
 * is gone (killed, or interrupted before it could clean up), or older than STALE_MS, is broken.
 */
import { closeSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { pendingTempFiles } from '../io/pending-temp-files.js';

const STALE_MS = 60_000;
const RETRY_MS = 20;

function tryTake(path: string): boolean {
  try {
    const fd = openSync(path, 'wx', 0o600);
    writeSync(fd, String(process.pid));
    closeSync(fd);
    // Ctrl-C exits through main's signal handler, which removes pending temp files: the lock too.
    pendingTempFiles.add(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    if (isStale(path)) breakLock(path);
    return false;
  }
}

function isStale(path: string): boolean {
  try {
    if (Date.now() - statSync(path).mtimeMs > STALE_MS) return true;
    const owner = Number(readFileSync(path, 'utf8'));
    if (!Number.isInteger(owner) || owner <= 0) return false; // being written this very moment
    process.kill(owner, 0);
    return false;
  } catch (error) {
    // ESRCH: the owner is gone. ENOENT: released meanwhile (nothing to break). EPERM: alive, not ours.
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** Moves the stale lock aside before removing it, so that two waiters never remove a fresh one. */
function breakLock(path: string): void {
  const aside = `${path}.${process.pid}.stale`;
  try {
    renameSync(path, aside);
    rmSync(aside, { force: true });
  } catch {
    // Another waiter broke it first.
  }
}

function release(path: string): void {
  rmSync(path, { force: true });
  pendingTempFiles.delete(path);
}

/** Runs `work` holding the lock file `path`. */
export async function withFileLock<T>(path: string, work: () => Promise<T>): Promise<T> {
  while (!tryTake(path)) await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
  try {
    return await work();
  } finally {
    release(path);
  }
}

/** The synchronous form, for a few file operations that must not interleave with another process's. */
export function withFileLockSync<T>(path: string, work: () => T): T {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  while (!tryTake(path)) Atomics.wait(pause, 0, 0, RETRY_MS);
  try {
    return work();
  } finally {
    release(path);
  }
}
