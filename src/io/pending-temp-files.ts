import { rmSync } from 'node:fs';

/**
 * Temp paths in flight (each output's temp directory, the sandbox lock file), removed by the CLI's
 * SIGINT/SIGTERM handler. Kept tiny: main imports it.
 *
 * Each temp file lives in a fresh directory of its own (see atomic-write.ts) because a file
 * operation may still sit in libuv's thread pool when the signal arrives: an open that creates the
 * temp file, or the kernel copy into it, can run after the handler's sweep, even while the process
 * exits. Removing the file would not stop it from coming back; removing its directory does, as a
 * late create then fails with ENOENT.
 */
export const pendingTempFiles = new Set<string>();

export function removePendingTempFilesSync(): void {
  for (const path of pendingTempFiles) removeSync(path);
  pendingTempFiles.clear();
}

/**
 * rmSync's own retries only repeat the final rmdir; a file created in the directory after its
 * listing needs a fresh listing, so each attempt starts over.
 */
function removeSync(path: string): void {
  for (let attempt = 1; ; attempt++) {
    try {
      rmSync(path, { recursive: true, force: true });
      return;
    } catch {
      if (attempt === 20) return; // nothing more can be done on the way out
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, attempt);
    }
  }
}
