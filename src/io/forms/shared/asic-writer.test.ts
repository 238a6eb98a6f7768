import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { DocumentFiles, DocumentSource, OutputFile } from '../../../core/documents.js';
import { ASIC_E_MIMETYPE } from '../../../core/forms/shared/asic-container-rules.js';
import { bytesSource } from '../../../core/pdf/byte-source.js';
import { openContainer } from '../../zip-container.js';
import { startContainer } from './asic-writer.js';

/** Files in memory that count the bytes read of each, and an output in memory that records what happened to it. */
function memoryFiles(contents: Record<string, Uint8Array>, { readInto = false } = {}) {
  const read = new Map<string, number>();
  /** The buffers read into, as a file source reads (when `readInto`). */
  const targets = new Set<ArrayBufferLike>();
  const output = { chunks: [] as Uint8Array[], committed: false, aborted: false };
  const files: DocumentFiles = {
    async open(path) {
      const bytes = contents[path];
      if (!bytes) throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
      const source: DocumentSource = {
        path,
        size: bytes.length,
        read: async (offset, length) => {
          const chunk = bytes.subarray(offset, offset + length);
          read.set(path, (read.get(path) ?? 0) + chunk.length);
          return chunk;
        },
        unchanged: async () => true,
        close: async () => undefined,
        ...(readInto && {
          readInto: async (target: Uint8Array, offset: number) => {
            const chunk = bytes.subarray(offset, offset + target.length);
            target.set(chunk);
            targets.add(target.buffer);
            read.set(path, (read.get(path) ?? 0) + chunk.length);
            return target.subarray(0, chunk.length);
          },
        }),
      };
      return source;
    },
    async createOutput() {
      const file: OutputFile = {
        copyFrom: async () => undefined,
        // A copy, made later as a file's write makes one: the caller may use the bytes again once write resolves, not before.
        write: async (bytes) => {
          await new Promise((resolve) => setImmediate(resolve));
          output.chunks.push(...(bytes instanceof Uint8Array ? [bytes] : bytes).map((piece) => Buffer.from(piece)));
        },
        suspend: async () => undefined,
        commit: async () => void (output.committed = true),
        abort: async () => void (output.aborted = true),
      };
      return file;
    },
  };
  return { files, read, targets, output, bytes: () => new Uint8Array(Buffer.concat(output.chunks)) };
}

const target = {
  output: 'x.asice',
  overwrite: false,
  mimetype: ASIC_E_MIMETYPE,
  mtime: new Date('2026-01-02T03:04:05Z'),
};

describe('a container started at prepare and finished at complete', () => {
  it('reads each file once: its digest, its entry and the output hash come from that one read', async () => {
    const big = new Uint8Array(randomBytes(9 * 1024 * 1024 + 5)); // three chunks, stored (random)
    const text = new Uint8Array(Buffer.from('<a>text that deflates</a>\n'.repeat(2000)));
    const memory = memoryFiles({ 'big.bin': big, 'doc.xml': text });
    const writing = await startContainer(
      memory.files,
      target,
      [
        { path: 'big.bin', name: 'big.bin' },
        { path: 'doc.xml', name: 'docs/doc.xml' },
      ],
      'sha256',
    );
    expect(Object.fromEntries(memory.read)).toEqual({ 'big.bin': big.length, 'doc.xml': text.length });
    expect(writing.documents.map((file) => [file.name, Buffer.from(file.digestValue).toString('hex')])).toEqual([
      ['big.bin', createHash('sha256').update(big).digest('hex')],
      ['docs/doc.xml', createHash('sha256').update(text).digest('hex')],
    ]);
    expect(memory.output.committed).toBe(false);
    const signature = new Uint8Array(Buffer.from('signature'));
    const written = await writing.finish([{ name: 'META-INF/signature001.p7s', bytes: signature }]);
    expect(Object.fromEntries(memory.read)).toEqual({ 'big.bin': big.length, 'doc.xml': text.length });
    expect(memory.output.committed).toBe(true);
    const zip = memory.bytes();
    expect(written).toEqual({ bytes: zip.length, sha256: createHash('sha256').update(zip).digest('hex') });
    const container = await openContainer(bytesSource(zip));
    try {
      expect(container.entries.map((entry) => [entry.name, entry.compressionMethod])).toEqual([
        ['mimetype', 0],
        ['big.bin', 0],
        ['docs/doc.xml', 8],
        ['META-INF/signature001.p7s', 0],
      ]);
      expect(Buffer.from(await container.readWhole('big.bin', big.length)).equals(big)).toBe(true);
      expect(Buffer.from(await container.readWhole('docs/doc.xml', text.length)).equals(text)).toBe(true);
    } finally {
      container.close();
    }
  });

  it('reads a large file into a few buffers used again once written: the container holds every byte, in order', async () => {
    const big = new Uint8Array(randomBytes(48 * 1024 * 1024 + 3)); // 13 chunks, stored (random)
    const small = new Uint8Array(randomBytes(5 * 1024 * 1024));
    const memory = memoryFiles({ 'big.bin': big, 'small.bin': small }, { readInto: true });
    const named = (path: string) => ({ path, name: path });
    const writing = await startContainer(memory.files, target, [named('big.bin'), named('small.bin')], 'sha256');
    expect(writing.documents.map((file) => Buffer.from(file.digestValue).toString('hex'))).toEqual([
      createHash('sha256').update(big).digest('hex'),
      createHash('sha256').update(small).digest('hex'),
    ]);
    await writing.finish([{ name: 'META-INF/signature001.p7s', bytes: new Uint8Array(Buffer.from('signature')) }]);
    // 13 chunks after the first (read apart, to choose stored or deflated) went through fewer buffers.
    expect(memory.targets.size).toBeGreaterThan(0);
    expect(memory.targets.size).toBeLessThan(8);
    const container = await openContainer(bytesSource(memory.bytes()));
    const entries = [await container.readWhole('big.bin', big.length), await container.readWhole('small.bin')];
    container.close();
    expect(entries.map((bytes) => createHash('sha256').update(bytes).digest('hex'))).toEqual(
      [big, small].map((bytes) => createHash('sha256').update(bytes).digest('hex')),
    );
  });

  it('leaves out a file it cannot open through leaveOut, and without it fails and removes the temp output', async () => {
    const memory = memoryFiles({ 'a.txt': new Uint8Array(Buffer.from('a')) });
    const left: string[] = [];
    const writing = await startContainer(
      memory.files,
      target,
      [
        { path: 'gone.txt', name: 'gone.txt' },
        { path: 'a.txt', name: 'a.txt' },
      ],
      'sha256',
      (input) => left.push(input),
    );
    expect(left).toEqual(['gone.txt']);
    expect(writing.documents.map((file) => file.name)).toEqual(['a.txt']);
    await writing.abort();
    expect(memory.output.aborted).toBe(true);

    const strict = memoryFiles({ 'a.txt': new Uint8Array(Buffer.from('a')) });
    await expect(
      startContainer(strict.files, target, [{ path: 'gone.txt', name: 'gone.txt' }], 'sha256'),
    ).rejects.toThrow(/ENOENT/);
    expect(strict.output.aborted).toBe(true);
    expect(strict.output.committed).toBe(false);
  });
});
