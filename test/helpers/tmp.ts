import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { sadsIn } from './secret-ledger.js';

/** A fresh temp dir removed when the current test finishes. */
export async function tempDir(prefix = 'esign-test-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  onTestFinished(() => removeChecked(dir));
  return dir;
}

/** A temp dir for a whole file (beforeAll/afterAll); the caller removes it with the returned function. */
export async function tempDirForFile(prefix = 'esign-test-'): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, remove: () => removeChecked(dir) };
}

/** Files larger than this are outputs and inputs, not where a SAD could be saved by mistake. */
const SCANNED_FILE_LIMIT = 16 * 1024 * 1024;

/**
 * Removes a temp dir after checking that no SAD issued in this worker was written into it: the
 * config dirs, state files and outputs of every test live in such dirs (issue 9 item 4).
 */
async function removeChecked(dir: string): Promise<void> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  const found: string[] = [];
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const size = await stat(path).then(
      (info) => info.size,
      () => Infinity,
    );
    if (size <= SCANNED_FILE_LIMIT && sadsIn(await readFile(path).catch(() => Buffer.alloc(0))).length > 0)
      found.push(path);
  }
  await rm(dir, { recursive: true, force: true });
  if (found.length > 0) throw new Error(`a SAD was written to disk: ${found.join(', ')}`);
}
