import { mkdtempSync, rmSync, utimesSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { withFileLock, withFileLockSync } from './file-lock.js';

const dir = mkdtempSync(join(tmpdir(), 'esign-lock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A pid no process has: above the kernel's pid_max ceiling (2^22). */
const GONE = 2 ** 22 + 17;

describe('file lock', () => {
  it('breaks at once a lock whose owner is gone (a command interrupted while holding it)', () => {
    const path = join(dir, 'dead.lock');
    writeFileSync(path, String(GONE));
    // Written an hour from now: never old enough to break as stale, so only the owner's absence can free it.
    const future = new Date(Date.now() + 3_600_000);
    utimesSync(path, future, future);
    expect(withFileLockSync(path, () => 'ran')).toBe('ran');
    expect(existsSync(path)).toBe(false);
  });

  it('runs holders one after the other', async () => {
    const path = join(dir, 'busy.lock');
    const order: string[] = [];
    const hold = (name: string) =>
      withFileLock(path, async () => {
        order.push(`${name} in`);
        await new Promise((resolve) => setTimeout(resolve, 50));
        order.push(`${name} out`);
      });
    await Promise.all([hold('a'), hold('b')]);
    expect(order).toEqual(['a in', 'a out', 'b in', 'b out']);
  });
});
