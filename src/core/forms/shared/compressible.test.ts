import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { compressedSignature, SAMPLE_BYTES, worthDeflating } from './compressible.js';

/** A JPEG as cameras write it: SOI, an APP0/JFIF header, then entropy-coded data (random enough). */
function jpeg(size: number): Uint8Array {
  const header = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01]);
  // After the header, a JPEG of a flat image deflates well: only its signature keeps it stored.
  return Buffer.concat([header, Buffer.alloc(size - header.length, 0x55)]);
}

describe('whether an ASiC entry is deflated, from a sample of its content', () => {
  it('stores random data, whatever its name would say (a big.bin)', () => {
    expect(worthDeflating(randomBytes(SAMPLE_BYTES))).toBe(false);
    expect(worthDeflating(randomBytes(300))).toBe(false);
  });

  it('deflates text and XML', () => {
    const text = Buffer.from('quarterly report, line after line\n'.repeat(3000));
    expect(worthDeflating(text)).toBe(true);
    const xml = Buffer.from(`<?xml version="1.0"?><Fattura>${'<Riga>prodotto</Riga>'.repeat(40)}</Fattura>\n`);
    expect(worthDeflating(xml)).toBe(true);
  });

  it('stores a JPEG, a PNG, a PDF and gzip, ZIP, xz and zstd data by their signatures, even where deflate would shrink them', () => {
    const flat = (header: number[]) => Buffer.concat([Buffer.from(header), Buffer.alloc(SAMPLE_BYTES, 0)]);
    expect(worthDeflating(jpeg(SAMPLE_BYTES))).toBe(false);
    expect(worthDeflating(flat([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(false);
    expect(worthDeflating(Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(50_000, 7)]))).toBe(false);
    expect(worthDeflating(gzipSync(Buffer.alloc(1000)))).toBe(false);
    expect(worthDeflating(flat([0x50, 0x4b, 0x03, 0x04]))).toBe(false);
    expect(worthDeflating(flat([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]))).toBe(false);
    expect(worthDeflating(flat([0x28, 0xb5, 0x2f, 0xfd]))).toBe(false);
    // The same zeros without a signature are deflated: the signature decided above, not the content.
    expect(worthDeflating(Buffer.alloc(SAMPLE_BYTES, 0))).toBe(true);
  });

  it('decides from the first 64 KiB only: random data after a text head is deflated, a random head stored', () => {
    const text = Buffer.from('a'.repeat(SAMPLE_BYTES));
    expect(worthDeflating(Buffer.concat([text, randomBytes(SAMPLE_BYTES)]))).toBe(true);
    expect(worthDeflating(Buffer.concat([randomBytes(SAMPLE_BYTES), text]))).toBe(false);
  });

  it('stores an empty file, and recognizes an MP4 by its ftyp box', () => {
    expect(worthDeflating(new Uint8Array(0))).toBe(false);
    expect(compressedSignature(Buffer.from('\x00\x00\x00\x18ftypmp42', 'latin1'))).toBe(true);
    expect(compressedSignature(Buffer.from('plain text'))).toBe(false);
  });
});
