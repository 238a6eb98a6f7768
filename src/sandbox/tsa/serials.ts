import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { SerialNumberSource } from './tsa.js';

/**
 * Token serial numbers from a counter kept in a file of the sandbox data dir, written before each
 * number is handed out, so that a restart continues where the last run stopped. A fresh counter
 * starts at a random 48-bit value so that two sandboxes' tokens do not share serials either.
 */
export class FileSerialNumbers implements SerialNumberSource {
  private last: bigint;

  constructor(private readonly file: string) {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    let stored: string | undefined;
    try {
      stored = readFileSync(file, 'utf8').trim();
    } catch {
      stored = undefined;
    }
    this.last = stored && /^\d+$/.test(stored) ? BigInt(stored) : BigInt(`0x${randomBytes(6).toString('hex')}`);
  }

  next(): bigint {
    const value = this.last + 1n;
    const temp = `${this.file}.tmp`;
    writeFileSync(temp, `${value}\n`, { mode: 0o600 });
    renameSync(temp, this.file);
    this.last = value;
    return value;
  }
}
