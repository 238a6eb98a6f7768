import { mkdtemp, open, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TempPath, writeBytesAtomically } from './atomic-write.js';
import { pendingTempFiles, removePendingTempFilesSync } from './pending-temp-files.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'esign-atomic-write-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe('TempPath', () => {
  it('puts the temp file alone in a hidden directory beside the target, registered until moved', async () => {
    const target = join(dir, 'out.pdf');
    const temp = TempPath.create(target);
    expect(pendingTempFiles.has(temp.dir)).toBe(true);
    expect(temp.file).toBe(join(temp.dir, 'out.pdf'));
    expect((await readdir(dir))[0]).toMatch(/^\.out\.pdf\.[0-9a-f]{12}\.tmp$/);
    await (await open(temp.file, 'wx')).close();
    await temp.moveTo(target);
    expect(pendingTempFiles.has(temp.dir)).toBe(false);
    expect(await readdir(dir)).toEqual(['out.pdf']);
  });

  it('after the interrupt sweep, a create that was still queued fails instead of leaving a file', async () => {
    const temp = TempPath.create(join(dir, 'out.pdf'));
    await (await open(temp.file, 'wx')).close();
    removePendingTempFilesSync();
    expect(pendingTempFiles.size).toBe(0);
    await expect(open(temp.file, 'wx')).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await readdir(dir)).toEqual([]);
  });
});

describe('writeBytesAtomically', () => {
  it('writes the whole file with the asked mode and leaves no temp directory', async () => {
    const target = join(dir, 'token.json');
    await writeBytesAtomically(target, '{"a":1}\n', { mode: 0o600 });
    expect(await readFile(target, 'utf8')).toBe('{"a":1}\n');
    expect((await stat(target)).mode & 0o777).toBe(0o600);
    expect(await readdir(dir)).toEqual(['token.json']);
  });

  it('refuses an existing target unless asked to overwrite, and leaves nothing behind', async () => {
    const target = join(dir, 'out.txt');
    await writeBytesAtomically(target, 'first');
    await expect(writeBytesAtomically(target, 'second')).rejects.toMatchObject({ code: 'OUTPUT_EXISTS' });
    await writeBytesAtomically(target, 'third', { overwrite: true });
    expect(await readFile(target, 'utf8')).toBe('third');
    expect(await readdir(dir)).toEqual(['out.txt']);
  });
});
