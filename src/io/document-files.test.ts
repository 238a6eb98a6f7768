import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fileSystemDocuments } from './document-files.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'esign-document-files-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

describe('TempOutput.copyFrom', () => {
  it('copies the original, hashes exactly the bytes written, and appends the tail on commit', async () => {
    const input = join(dir, 'in.pdf');
    const original = Buffer.alloc(9 * 1024 * 1024 + 17, 7); // above the early-fsync size
    await writeFile(input, original);
    const source = await fileSystemDocuments.open(input);
    const output = await fileSystemDocuments.createOutput(join(dir, 'out.pdf'), { overwrite: false });
    const hash = createHash('sha256');
    await output.copyFrom(source, hash);
    await source.close();
    expect(hash.copy().digest('hex')).toBe(sha256(original));
    await output.commit(Buffer.from('tail'));
    expect(sha256(await readFile(join(dir, 'out.pdf')))).toBe(sha256(Buffer.concat([original, Buffer.from('tail')])));
    expect((await readdir(dir)).sort()).toEqual(['in.pdf', 'out.pdf']);
  });

  it('copies the file it opened, not the one its name leads to after an atomic save', async () => {
    const input = join(dir, 'in.pdf');
    await writeFile(input, 'AAAA the document that was parsed AAAA');
    const source = await fileSystemDocuments.open(input);
    await writeFile(join(dir, 'other.pdf'), 'BBBB a same-size replacement!!!!! BBBB');
    await rename(join(dir, 'other.pdf'), input);
    const output = await fileSystemDocuments.createOutput(join(dir, 'out.pdf'), { overwrite: false });
    const hash = createHash('sha256');
    await output.copyFrom(source, hash);
    await source.close();
    await output.commit(new Uint8Array());
    const written = await readFile(join(dir, 'out.pdf'), 'utf8');
    expect(written).toBe('AAAA the document that was parsed AAAA');
    expect(hash.digest('hex')).toBe(sha256(Buffer.from(written)));
  });

  it('refuses a file written to after it was opened (and parsed), same size or not', async () => {
    const input = join(dir, 'in.pdf');
    await writeFile(input, 'AAAA the document that was parsed AAAA');
    const source = await fileSystemDocuments.open(input);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await writeFile(input, 'CCCC rewritten in place, same size! CCCC'.slice(0, 38));
    const output = await fileSystemDocuments.createOutput(join(dir, 'out.pdf'), { overwrite: false });
    await expect(output.copyFrom(source, createHash('sha256'))).rejects.toMatchObject({
      code: 'INPUT_UNREADABLE',
      message: expect.stringContaining('changed while esign was signing it'),
    });
    await output.abort();
    await source.close();
    expect(await readdir(dir)).toEqual(['in.pdf']);
  });
});
