import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tempDir } from './tmp.js';

/**
 * Three inputs in a fresh temp dir: a PDF, a text file (signed as a detached .p7s) and a PDF. With
 * ESIGN_CSC_MAX_SIGNATURES 2 they need two authorizations.
 */
export async function batchInputs(): Promise<string[]> {
  const dir = await tempDir();
  const files = [join(dir, 'a.pdf'), join(dir, 'notes.txt'), join(dir, 'b.pdf')];
  const sample = await readFile(new URL('../../samples/contract.pdf', import.meta.url));
  await writeFile(files[0]!, sample);
  await writeFile(files[1]!, 'release notes\n');
  await writeFile(files[2]!, sample);
  return files;
}

/**
 * A run whose service sign-in removes `victim`: the global options (a `--browser` command that
 * removes it, then follows the URL, which the sandbox approves at once) and an environment with a
 * fresh ESIGN_CONFIG_DIR, so that the sign-in happens after the inputs were listed and checked and
 * before they are read to be signed.
 */
export async function removedAtSignIn(
  dir: string,
  victim: string,
  env: Record<string, string>,
): Promise<{ globals: string[]; env: Record<string, string> }> {
  const browser = join(dir, 'browser.sh');
  await writeFile(browser, `#!/bin/sh\nrm -f '${victim}'\nexec curl -sfL -o /dev/null "$1"\n`, { mode: 0o755 });
  return { globals: ['--browser', browser], env: { ...env, ESIGN_CONFIG_DIR: await tempDir() } };
}
