import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ESIGN_BIN, esignShellLine, TESTING_EXECUTABLE } from './run-cli.js';

export const RELEASE_ARCHIVE = 'esign-linux-x64.tar.xz';

/**
 * Writes esign's release archive into `dir`, as a workflow or the action downloads it: the one
 * `npm run build:sea` made when ESIGN_BIN is that executable, else an archive of the same layout
 * whose `esign` is a script running the esign under test.
 */
export async function writeReleaseArchive(dir: string): Promise<void> {
  const built = join(dirname(ESIGN_BIN), RELEASE_ARCHIVE);
  if (TESTING_EXECUTABLE && existsSync(built)) {
    await copyFile(built, join(dir, RELEASE_ARCHIVE));
    return;
  }
  const staging = await mkdtemp(join(dir, '.staging-'));
  try {
    await mkdir(join(staging, 'esign-linux-x64'));
    await writeFile(join(staging, 'esign-linux-x64', 'esign'), `#!/bin/sh\nexec ${esignShellLine([])} "$@"\n`);
    await chmod(join(staging, 'esign-linux-x64', 'esign'), 0o755);
    const tar = spawnSync('tar', ['-cJf', join(dir, RELEASE_ARCHIVE), '-C', staging, 'esign-linux-x64'], {
      encoding: 'utf8',
    });
    if (tar.status !== 0) throw new Error(`tar: ${tar.stderr}`);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
