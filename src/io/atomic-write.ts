import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { access, open, rename, rm, rmdir, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { EsignError } from '../core/errors.js';

import { pendingTempFiles } from './pending-temp-files.js';

export interface AtomicWriteOptions {
  /** Replace an existing target (default: refuse with OUTPUT_EXISTS). */
  overwrite?: boolean;
  mode?: number;
}

/**
 * A temp file for `target`, alone in a fresh hidden directory beside it: same file system, so the
 * final rename is atomic, and one directory to remove on interruption (pending-temp-files.ts says
 * why a directory). Created synchronously, so a signal handler never runs while it is half made.
 */
export class TempPath {
  private constructor(
    readonly dir: string,
    readonly file: string,
    /** In a directory shared by a batch's temp files, which the batch removes (SharedTempDir). */
    private readonly shared = false,
  ) {}

  static create(target: string, shared?: SharedTempDir): TempPath {
    if (shared) return new TempPath(shared.dir, join(shared.dir, basename(target)), true);
    const dir = createTempDir(target, `.${basename(target)}`);
    return new TempPath(dir, join(dir, basename(target)));
  }

  /** A new temp file for `target`, opened for writing; nothing is left behind when that fails. */
  static async open(
    target: string,
    mode: number,
    shared?: SharedTempDir,
  ): Promise<{ temp: TempPath; handle: FileHandle }> {
    const temp = TempPath.create(target, shared);
    try {
      return { temp, handle: await open(temp.file, 'wx', mode) };
    } catch (error) {
      await temp.discard();
      throw outputError(target, error);
    }
  }

  /** Renames the temp file onto `target` and removes the emptied directory. */
  async moveTo(target: string): Promise<void> {
    await rename(this.file, target);
    if (this.shared) return;
    await rmdir(this.dir).catch(() => undefined);
    pendingTempFiles.delete(this.dir);
  }

  async discard(): Promise<void> {
    if (this.shared) return rm(this.file, { force: true });
    await rm(this.dir, { recursive: true, force: true });
    pendingTempFiles.delete(this.dir);
  }
}

/**
 * One hidden directory for the temp files of a batch's outputs in one directory: a mkdir and an
 * rmdir per file cost more than writing a one-page PDF. Interrupted, the whole directory goes, so
 * the reason for a directory (a late create fails in it) holds; the batch removes it when done.
 */
export class SharedTempDir {
  private constructor(readonly dir: string) {}

  /** Created synchronously, as TempPath's own directories are. */
  static create(besideTarget: string): SharedTempDir {
    return new SharedTempDir(createTempDir(besideTarget, '.esign-batch'));
  }

  async remove(): Promise<void> {
    // Empty once every output is renamed out of it: rmdir, and rm's recursive walk only when not.
    await rmdir(this.dir).catch(() => rm(this.dir, { recursive: true, force: true }));
    pendingTempFiles.delete(this.dir);
  }
}

function createTempDir(target: string, stem: string): string {
  const dir = join(dirname(target), `${stem}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    throw outputError(target, error);
  }
  pendingTempFiles.add(dir);
  return dir;
}

/**
 * Writes through a temp file in the target's directory, fsyncs, then renames into place, so a
 * reader never sees a partial file and a failure leaves nothing behind. `write` gets the handle.
 */
export async function writeFileAtomically(
  target: string,
  write: (handle: FileHandle) => Promise<void>,
  options: AtomicWriteOptions = {},
): Promise<void> {
  if (!options.overwrite) await assertAbsent(target);
  const opened = await TempPath.open(target, options.mode ?? 0o644);
  const temp = opened.temp;
  let handle: FileHandle | undefined = opened.handle;
  try {
    await write(handle);
    await handle.sync();
    await handle.close();
    handle = undefined;
    if (!options.overwrite) await assertAbsent(target);
    await temp.moveTo(target);
  } catch (error) {
    await handle?.close().catch(() => undefined);
    await temp.discard();
    throw error instanceof EsignError ? error : outputError(target, error);
  }
}

export async function writeBytesAtomically(
  target: string,
  bytes: Uint8Array | string,
  options: AtomicWriteOptions = {},
): Promise<void> {
  await writeFileAtomically(target, async (handle) => void (await handle.writeFile(bytes)), options);
}

/** Whether something is at `target` already. */
export async function outputExists(target: string): Promise<boolean> {
  try {
    await access(target);
    return true;
  } catch {
    return false;
  }
}

/** Refuses with OUTPUT_EXISTS when something is at `target` already. */
export async function assertAbsent(target: string): Promise<void> {
  if (!(await outputExists(target))) return;
  throw new EsignError('OUTPUT_EXISTS', `${target} already exists; esign does not overwrite files unasked.`, {
    hint: 'Pass --force to replace it, or choose another --output / --output-dir.',
  });
}

export function outputError(target: string, error: unknown): EsignError {
  const code = (error as NodeJS.ErrnoException)?.code;
  const diskFull = code === 'ENOSPC' || code === 'EDQUOT';
  return new EsignError('OUTPUT_WRITE_FAILED', `Could not write ${target}${code ? ` (${code})` : ''}.`, {
    hint: diskFull
      ? 'Free some disk space and try again (with --skip-existing, the files already signed are kept).'
      : 'Check that the directory exists and is writable.',
    cause: error,
    // A full disk stops a batch even with --continue-on-error: every later file would fail the same way.
    ...(diskFull ? { details: { diskFull: true } } : {}),
  });
}
