/**
 * Global setup of the integration and interop projects: one sandbox data dir whose keys (the PKI's
 * fourteen and the identity provider's signing key) every test sandbox of the run starts from
 * (startTestSandbox copies it), instead of each generating them again: about 3 s of CPU each. The
 * end-entity certificates are still issued per sandbox, for its own port and today's dates.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox } from '../../src/sandbox/index.js';

/** What a template holds: the folders with the keys; the rest of a data dir is per sandbox. */
export const TEMPLATE_FOLDERS = ['pki', 'identity'];

export async function setup(): Promise<(() => Promise<void>) | undefined> {
  // Both projects may run in one vitest run: the first to start makes the template for both.
  if (process.env['ESIGN_TEST_SANDBOX_TEMPLATE']) return undefined;
  const dir = await mkdtemp(join(tmpdir(), 'esign-sandbox-template-'));
  const sandbox = await startSandbox({ dataDir: dir, s3: false });
  await sandbox.close();
  for (const name of await readdir(dir))
    if (!TEMPLATE_FOLDERS.includes(name)) await rm(join(dir, name), { recursive: true, force: true });
  process.env['ESIGN_TEST_SANDBOX_TEMPLATE'] = dir;
  return async () => {
    delete process.env['ESIGN_TEST_SANDBOX_TEMPLATE'];
    await rm(dir, { recursive: true, force: true });
  };
}
