import { describe, expect, it } from 'vitest';
import { minimalObjects } from '../../../test/helpers/pdf-fixtures.js';
import type { ByteSource } from '../ports.js';
import { readPdf } from './document.js';
import { prepareSignature } from './placeholder.js';

const GAP = 5 * 2 ** 30;

/**
 * A 5 GiB document that exists only as a header, a gap of spaces and a real tail: its objects and
 * cross-reference data sit beyond 2^32, so every offset is wider than 32 bits.
 */
function virtualLargePdf(style: 'table' | 'stream', gap = GAP): ByteSource & { bytesRead: number } {
  const head = Buffer.from('%PDF-1.7\n', 'latin1');
  const base = head.length + gap;
  let tail = '';
  const offsets: number[] = [];
  minimalObjects().forEach((body, i) => {
    offsets.push(base + tail.length);
    tail += `${i + 1} 0 obj\n${body as string}\nendobj\n`;
  });
  const xrefOffset = base + tail.length;
  if (style === 'table') {
    tail += `xref\n0 4\n0000000000 65535 f\r\n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n\r\n`).join('')}`;
    tail += `trailer\n<< /Size 4 /Root 1 0 R >>\nstartxref\n${xrefOffset}\n%%EOF\n`;
  } else {
    const row = (type: number, offset: number) => [
      type,
      ...Array.from({ length: 5 }, (_, i) => Math.floor(offset / 256 ** (4 - i)) % 256),
    ];
    const rows = Buffer.from([...row(0, 0), ...offsets.flatMap((o) => row(1, o)), ...row(1, xrefOffset)]);
    tail += `4 0 obj\n<< /Type /XRef /Size 5 /W [1 5 0] /Root 1 0 R /Length ${rows.length} >>\nstream\n${rows.toString('latin1')}\nendstream\nendobj\n`;
    tail += `startxref\n${xrefOffset}\n%%EOF\n`;
  }
  const tailBytes = Buffer.from(tail, 'latin1');
  const size = base + tailBytes.length;
  const source = {
    size,
    bytesRead: 0,
    read: async (offset: number, length: number) => {
      const out = new Uint8Array(Math.max(0, Math.min(length, size - offset))).fill(0x20);
      for (let i = 0; i < out.length; i++) {
        const at = offset + i;
        if (at < head.length) out[i] = head[at]!;
        else if (at >= base) out[i] = tailBytes[at - base]!;
      }
      source.bytesRead += out.length;
      return out;
    },
  };
  return source;
}

describe('documents beyond 4 GiB', () => {
  it.each(['table', 'stream'] as const)(
    'reads and signs a 5 GiB file (%s) with exact 64-bit-safe offsets',
    async (style) => {
      const source = virtualLargePdf(style);
      const doc = await readPdf(source);
      expect(doc.xrefStyle).toBe(style);
      const pu = await prepareSignature(doc, { signingTime: new Date(0), contentsSize: 16 });
      const [, a, b, c] = pu.byteRange;
      expect(a).toBeGreaterThan(2 ** 32);
      expect(b + c).toBe(source.size + pu.update.length);
      expect(Buffer.from(pu.update).toString('latin1')).toContain(`/ByteRange [0 ${a} ${b} ${c}]`);
      expect(source.bytesRead).toBeLessThan(20_000);

      const signed: ByteSource = {
        size: source.size + pu.update.length,
        read: async (offset, length) => {
          if (offset >= source.size) return pu.update.subarray(offset - source.size, offset - source.size + length);
          const original = await source.read(offset, length);
          const rest = pu.update.subarray(0, Math.max(0, length - original.length));
          return new Uint8Array(Buffer.concat([original, rest]));
        },
      };
      const after = await readPdf(signed);
      const acroForm = await after.resolveDict((await after.catalog()).dict.get('AcroForm'));
      expect(acroForm?.get('SigFlags')).toBe(3);
    },
  );

  it('writes an xref stream for an update whose offsets a classic table cannot hold (past 10^10 bytes)', async () => {
    // The original's objects end just below 10^10 bytes, so its own table is valid; the update's are not.
    const source = virtualLargePdf('table', 9_999_999_000);
    const doc = await readPdf(source);
    expect(doc.xrefStyle).toBe('table');
    const pu = await prepareSignature(doc, { signingTime: new Date(0), contentsSize: 16 });
    const update = Buffer.from(pu.update).toString('latin1');
    expect(update).toContain('/Type /XRef');
    expect(update).not.toMatch(/^xref$/m);
    const reread = await readPdf(concatenated(source, pu.update));
    expect(reread.startxref).toBeGreaterThan(source.size);
    expect(reread.xrefStyle).toBe('stream');
  });
});

/** The source followed by `tail`, as the signed file would read. */
function concatenated(source: ByteSource, tail: Uint8Array): ByteSource {
  return {
    size: source.size + tail.length,
    read: async (offset: number, length: number) => {
      const end = Math.min(offset + length, source.size + tail.length);
      const out = new Uint8Array(Math.max(0, end - offset));
      if (offset < source.size) out.set(await source.read(offset, Math.min(end, source.size) - offset), 0);
      if (end > source.size)
        out.set(tail.subarray(Math.max(0, offset - source.size), end - source.size), Math.max(0, source.size - offset));
      return out;
    },
  };
}
