import { describe, expect, it } from 'vitest';
import { isEsignError } from '../../errors.js';
import {
  ASIC_E_MIMETYPE,
  ASIC_S_MIMETYPE,
  checkEntries,
  mimetypeLayout,
  unsafeName,
  type ContainerEntry,
} from './asic-container-rules.js';

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
    ['.', 'a "." component'],
    ['./doc.txt', 'a "." component'],
    ['docs/./doc.txt', 'a "." component'],
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

  it('reads a mimetype others laid out loosely, each bend a warning; refuses a missing one or another type', () => {
    const strict = { first: true, compressionMethod: 0, extraFieldLength: 0, content: ASIC_E_MIMETYPE };
    expect(mimetypeLayout(strict, ASIC_E_MIMETYPE)).toEqual([]);
    const loose = mimetypeLayout(
      { first: false, compressionMethod: 8, extraFieldLength: 28, content: `${ASIC_E_MIMETYPE}\r\n` },
      ASIC_E_MIMETYPE,
    );
    expect(loose).toHaveLength(4);
    expect(loose.join('\n')).toMatch(/not the first entry[^]*compressed[^]*extra field[^]*white space \("\\r\\n"\)/);
    const refused = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        return isEsignError(error) && error.code === 'CONTAINER_INVALID' ? error.message : String(error);
      }
      return 'not refused';
    };
    // None at all: read by its layout when META-INF/ holds its evidence (as DSS), else not a signed container.
    expect(refused(() => mimetypeLayout(undefined, ASIC_E_MIMETYPE))).toMatch(/^Not a signed container: a ZIP with no/);
    expect(refused(() => mimetypeLayout(undefined, ASIC_E_MIMETYPE, ['a.txt', 'META-INF/notes.xml']))).toMatch(
      /no signature, timestamp or evidence record under META-INF\//,
    );
    expect(
      mimetypeLayout(undefined, ASIC_E_MIMETYPE, ['a.txt', 'META-INF/ASiCManifest.xml', 'META-INF/timestamp.tst']),
    ).toEqual([
      'the container has no "mimetype" entry (EN 319 162-1 A.1), read as ASiC-E by its META-INF/ASiCManifest.xml (evidence: META-INF/timestamp.tst)',
    ]);
    expect(mimetypeLayout(undefined, ASIC_S_MIMETYPE, ['doc.pdf', 'META-INF/evidencerecord.ers'])[0]).toMatch(
      /read as ASiC-S by its one document \(evidence: META-INF\/evidencerecord\.ers\)/,
    );
    expect(refused(() => mimetypeLayout({ ...strict, content: 'application/zip' }, ASIC_E_MIMETYPE))).toMatch(
      /its "mimetype" is "application\/zip"/,
    );
    expect(refused(() => mimetypeLayout({ ...strict, content: ` ${ASIC_E_MIMETYPE}` }, ASIC_E_MIMETYPE))).toMatch(
      /its "mimetype" is/,
    );
  });
});
