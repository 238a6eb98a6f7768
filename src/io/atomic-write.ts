import { randomBytes } from 'node:crypto';
import { access, open, rename, rm, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { EsignError } from '../core/errors.js';

import { pendingTempFiles } from './pending-temp-files.js';

export { pendingTempFiles };

export interface AtomicWriteOptions {
  /** Replace an existing target (default: refuse with OUTPUT_EXISTS). */
  overwrite?: boolean;
  mode?: number;
}

/**
 * Writes through a temp file in the target's directory, fsyncs, then renames into place, so a
 * reader never sees a partial file and a failure leaves nothing behind. `write` gets the handle.
 */
export async function writeFileAtomically(target: string, write: (handle: FileHandle) => Promise<void>, options: AtomicWriteOptions = {}): Promise<void> {
  if (!options.overwrite) await assertAbsent(target);
  const temp = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  pendingTempFiles.add(temp);
  let handle: FileHandle | undefined;
  try {
    try {
      handle = await open(temp, 'wx', options.mode ?? 0o644);
    } catch (error) {
      throw outputError(target, error);
    }
    await write(handle);
    await handle.sync();
    await handle.close();
    handle = undefined;
    if (!options.overwrite) await assertAbsent(target);
    await rename(temp, target);
  } catch (error) {
    await handle?.close().catch(() => undefined);
    await rm(temp, { force: true });
    throw error instanceof EsignError ? error : outputError(target, error);
  } finally {
    pendingTempFiles.delete(temp);
  }
}

export async function writeBytesAtomically(target: string, bytes: Uint8Array | string, options: AtomicWriteOptions = {}): Promise<void> {
  await writeFileAtomically(target, async (handle) => void (await handle.writeFile(bytes)), options);
}

/** Refuses with OUTPUT_EXISTS when something is at `target` already. */
export async function assertAbsent(target: string): Promise<void> {
  try {
    await access(target);
  } catch {
    return;
  }
  throw new EsignError('OUTPUT_EXISTS', `${target} already exists; esign does not overwrite files unasked.`, {
    hint: 'Pass --force to replace it, or choose another --output / --output-dir.',
  });
}

export function outputError(target: string, error: unknown): EsignError {
  const code = (error as NodeJS.ErrnoException)?.code;
  return new EsignError('OUTPUT_WRITE_FAILED', `Could not write ${target}${code ? ` (${code})` : ''}.`, {
    hint: code === 'ENOSPC' ? 'Free some disk space and try again.' : 'Check that the directory exists and is writable.',
    cause: error,
  });
}
