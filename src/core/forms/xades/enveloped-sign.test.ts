import { describe, expect, it } from 'vitest';
import type { DocumentSource } from '../../documents.js';
import { readWhole } from './enveloped-sign.js';
import { MAX_ENVELOPED_BYTES } from './enveloped.js';

/** A source of `size` bytes that counts its reads (and allocates nothing for them). */
function sourceOf(size: number): DocumentSource & { reads: number } {
  return {
    path: 'big.xml',
    size,
    reads: 0,
    async read(offset: number, length: number) {
      this.reads++;
      return new Uint8Array(Math.max(0, Math.min(length, size - offset)));
    },
    unchanged: async () => true,
    close: async () => undefined,
  };
}

describe('readWhole', () => {
  it('refuses a document past the limit on its size, before reading anything', async () => {
    const source = sourceOf(MAX_ENVELOPED_BYTES + 1);
    await expect(readWhole(source)).rejects.toMatchObject({
      code: 'XML_TOO_LARGE',
      message: `big.xml is ${MAX_ENVELOPED_BYTES + 1} bytes, above the ${MAX_ENVELOPED_BYTES}-byte limit of an enveloped XML signature.`,
    });
    expect(source.reads).toBe(0);
  });

  it('refuses a file larger than any buffer (1 TiB) the same way: nothing is allocated for it', async () => {
    const source = sourceOf(2 ** 40);
    await expect(readWhole(source)).rejects.toMatchObject({ code: 'XML_TOO_LARGE' });
    expect(source.reads).toBe(0);
  });

  it('reads a document at the limit whole, in one read', async () => {
    const source = sourceOf(1000);
    expect((await readWhole(source)).length).toBe(1000);
    expect(source.reads).toBe(1);
  });
});
