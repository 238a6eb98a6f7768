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
