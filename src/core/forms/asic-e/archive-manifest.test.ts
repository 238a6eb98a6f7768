import { describe, expect, it } from 'vitest';
import { buildArchiveManifest, isArchiveManifest, planArchive, TIMESTAMP_TOKEN_MIME_TYPE } from './archive-manifest.js';
import { parseManifest } from './manifest.js';

describe('ASiC archive manifests', () => {
  it('plans the first archive as ASiCArchiveManifest.xml with timestamp001.tst', () => {
    expect(planArchive(['a.txt', 'META-INF/ASiCManifest.xml', 'META-INF/signature001.p7s'])).toEqual({
      timestamp: 'META-INF/timestamp001.tst',
    });
  });

  it('renews by renaming the current archive manifest to the next free number', () => {
    const names = [
      'META-INF/ASiCArchiveManifest001.xml',
      'META-INF/timestamp001.tst',
      'META-INF/ASiCArchiveManifest.xml',
      'META-INF/timestamp002.tst',
    ];
    expect(planArchive(names)).toEqual({
      renamed: { from: 'META-INF/ASiCArchiveManifest.xml', to: 'META-INF/ASiCArchiveManifest002.xml' },
      timestamp: 'META-INF/timestamp003.tst',
    });
  });

  it('writes an ASiCManifest whose SigReference is the timestamp token, which the manifest reader reads back', () => {
    const bytes = buildArchiveManifest('META-INF/timestamp001.tst', [
      { name: 'a b.txt', mimeType: 'text/plain', digest: 'sha256', digestValue: new Uint8Array(32).fill(1) },
      {
        name: 'META-INF/signature001.p7s',
        mimeType: 'application/pkcs7-signature',
        digest: 'sha256',
        digestValue: new Uint8Array(32),
      },
    ]);
    expect(new TextDecoder().decode(bytes)).toContain(`MimeType="${TIMESTAMP_TOKEN_MIME_TYPE}"`);
    const manifest = parseManifest(bytes, 'archive');
    expect(manifest.signature).toBe('META-INF/timestamp001.tst');
    expect(manifest.references.map((reference) => reference.name)).toEqual(['a b.txt', 'META-INF/signature001.p7s']);
    expect(isArchiveManifest('META-INF/ASiCArchiveManifest.xml')).toBe(true);
    expect(isArchiveManifest('META-INF/ASiCArchiveManifest007.xml')).toBe(true);
    expect(isArchiveManifest('META-INF/ASiCManifest.xml')).toBe(false);
  });
});
