import { READ_CHUNK_BYTES } from '../core/documents.js';

/**
 * Read buffers used again once their bytes are written. A fresh 4 MiB buffer for every chunk of a
 * large file costs a page fault per 4 KiB touched: putting a 300 MB file into a container spent
 * more system time on those (0.4 s here) than on hashing it. A buffer comes back only when the
 * writer hands back the very view it was lent as, once that view is written; a chunk that went
 * elsewhere (into a deflater, or joined with others by a stream) never comes back and is never
 * reused.
 */
export class ChunkPool {
  private readonly free: Buffer[] = [];
  /** Each view lent out, with the whole buffer it is a view of. */
  private readonly lent = new WeakMap<Uint8Array, Buffer>();

  constructor(
    private readonly chunkBytes = READ_CHUNK_BYTES,
    /** Buffers kept for reuse; more than the chunks in flight at once gains nothing. */
    private readonly keep = 8,
  ) {}

  /** Reads the next chunk through `readInto`, into a buffer of the pool. */
  async read(readInto: (target: Uint8Array) => Promise<Uint8Array>): Promise<Uint8Array> {
    const whole = this.free.pop() ?? Buffer.allocUnsafeSlow(this.chunkBytes);
    let chunk: Uint8Array;
    try {
      chunk = await readInto(whole);
    } catch (error) {
      this.free.push(whole);
      throw error;
    }
    if (chunk.buffer === whole.buffer) this.lent.set(chunk, whole);
    else this.free.push(whole);
    return chunk;
  }

  /** Takes back a view once nothing holds it any more (its bytes are written); anything else is ignored. */
  written(view: Uint8Array): void {
    const whole = this.lent.get(view);
    if (!whole) return;
    this.lent.delete(view);
    if (this.free.length < this.keep) this.free.push(whole);
  }
}
