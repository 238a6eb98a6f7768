import { describe, expect, it } from 'vitest';
import { isEsignError } from '../../errors.js';
import { checkEntries, unsafeName, worthCompressing, type ContainerEntry } from './asic-container-rules.js';

const entry = (name: string, more: Partial<ContainerEntry> = {}): ContainerEntry => ({
  name,
  compressedSize: 10,
  uncompressedSize: 10,
  compressionMethod: 8,
  encrypted: false,
  ...more,
});

function refusal(entries: ContainerEntry[]): string {
  try {
    checkEntries(entries);
  } catch (error) {
    if (isEsignError(error) && error.code === 'CONTAINER_INVALID') return error.message;
    throw error;
  }
  throw new Error('not refused');
}

describe('container rules', () => {
  it.each([
    ['../etc/passwd', 'a ".." component'],
    ['a/../../b', 'a ".." component'],
    ['/etc/passwd', 'an absolute path'],
    ['C:/Windows/x', 'a drive letter'],
    ['c:x', 'a drive letter'],
    ['dir\\file', 'a backslash'],
    ['', 'an empty name'],
  ])('refuses the name %j: %s', (name, reason) => {
    expect(unsafeName(name)).toBe(reason);
    expect(refusal([entry(name)])).toContain(reason);
  });

  it('accepts relative names, dots inside them included', () => {
    for (const name of ['a.txt', 'dir/sub/file..txt', 'META-INF/signature.p7s', '.hidden'])
      expect(unsafeName(name)).toBeUndefined();
  });

  it('refuses duplicates (also by case), encrypted entries, other methods, bombs by ratio and by total', () => {
    expect(refusal([entry('a.txt'), entry('A.TXT')])).toMatch(/two entries named "A.TXT"/);
    expect(refusal([entry('a.txt', { encrypted: true })])).toMatch(/a\.txt is encrypted/);
    expect(refusal([entry('a.txt', { compressionMethod: 12 })])).toMatch(/compression method 12/);
    expect(refusal([entry('a.txt', { compressedSize: 10_000, uncompressedSize: 10_000_000 })])).toMatch(
      /would expand 1000 times/,
    );
    const big = { compressedSize: 40 * 1024 ** 3, uncompressedSize: 40 * 1024 ** 3 };
    expect(refusal([entry('a', big), entry('b', big)])).toMatch(/more than 64 GiB/);
    // A large entry that compressed well but within reason is read.
    expect(() =>
      checkEntries([entry('a.txt', { compressedSize: 1_000_000, uncompressedSize: 50_000_000 })]),
    ).not.toThrow();
  });

  it('deflates text and stores what is compressed already', () => {
    expect(worthCompressing('fattura.xml')).toBe(true);
    expect(worthCompressing('README')).toBe(true);
    expect(worthCompressing('scan.PDF')).toBe(false);
    expect(worthCompressing('photo.jpg')).toBe(false);
  });
});
