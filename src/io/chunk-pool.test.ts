import { describe, expect, it } from 'vitest';
import { ChunkPool } from './chunk-pool.js';

const fill = (value: number, length: number) => async (target: Uint8Array) => {
  target.fill(value, 0, length);
  return target.subarray(0, length);
};

describe('ChunkPool', () => {
  it('uses a buffer again only once the view it lent is written', async () => {
    const pool = new ChunkPool(16);
    const first = await pool.read(fill(1, 16));
    const second = await pool.read(fill(2, 10));
    expect(second.buffer).not.toBe(first.buffer); // the first is not written yet
    expect(Array.from(first)).toEqual(new Array(16).fill(1));
    pool.written(first);
    const third = await pool.read(fill(3, 4));
    expect(third.buffer).toBe(first.buffer);
    expect(Array.from(second)).toEqual(new Array(10).fill(2));
  });

  it('ignores views it did not lend, and a view written twice comes back once', async () => {
    const pool = new ChunkPool(16);
    const lent = await pool.read(fill(1, 16));
    pool.written(new Uint8Array(lent)); // a copy: not the view lent
    expect((await pool.read(fill(2, 16))).buffer).not.toBe(lent.buffer);
    pool.written(lent);
    pool.written(lent);
    const a = await pool.read(fill(3, 16));
    const b = await pool.read(fill(4, 16));
    expect(a.buffer).toBe(lent.buffer);
    expect(b.buffer).not.toBe(lent.buffer);
  });

  it('takes its buffer back when a read fails, and lends nothing for a read that returns other bytes', async () => {
    const pool = new ChunkPool(16);
    let target: ArrayBufferLike | undefined;
    await expect(
      pool.read(async (into) => {
        target = into.buffer;
        throw new Error('EIO');
      }),
    ).rejects.toThrow('EIO');
    const elsewhere = new Uint8Array(4);
    expect(await pool.read(async () => elsewhere)).toBe(elsewhere);
    expect((await pool.read(fill(5, 8))).buffer).toBe(target);
  });
});
