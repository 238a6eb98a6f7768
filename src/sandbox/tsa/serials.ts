import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { withFileLockSync } from '../file-lock.js';
import type { SerialNumberSource } from './tsa.js';

/** Serial numbers a process reserves at a time. */
const BLOCK = 1n << 32n;

/**
 * Token serial numbers from a counter kept in a file of the sandbox data dir. Each process reserves
 * a block of 2^32 numbers under a lock before handing any out, so a restart continues after the
 * last block and processes sharing the data dir never hand out the same number. A fresh counter
 * starts at a random 48-bit value so that two sandboxes' tokens do not share serials either.
 */
export class FileSerialNumbers implements SerialNumberSource {
  private following: bigint;
  private end: bigint;

  constructor(private readonly file: string) {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    [this.following, this.end] = this.reserve();
  }

  next(): bigint {
    if (this.following >= this.end) [this.following, this.end] = this.reserve();
    return this.following++;
  }

  /** Records the end of a new block in the file, and returns the block as [first, end). */
  private reserve(): [bigint, bigint] {
    return withFileLockSync(`${this.file}.lock`, () => {
      let stored: string | undefined;
      try {
        stored = readFileSync(this.file, 'utf8').trim();
      } catch {
        stored = undefined;
      }
      const last = stored && /^\d+$/.test(stored) ? BigInt(stored) : BigInt(`0x${randomBytes(6).toString('hex')}`);
      const first = last + 1n;
      const temp = `${this.file}.${process.pid}.tmp`;
      writeFileSync(temp, `${first + BLOCK - 1n}\n`, { mode: 0o600 });
      renameSync(temp, this.file);
      return [first, first + BLOCK];
    });
  }
}
