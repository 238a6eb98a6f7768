/**
 * Mutation fuzzing of the WOFF 1.0 reader: damaged copies of a WOFF esign reads (Noto Sans, made by
 * test/helpers/font-kinds.ts) end in an sfnt or a typed EsignError within a bound, never another
 * exception or a hang; a table that claims to inflate past the limit is refused before it inflates.
 * `ESIGN_FUZZ_RUNS=N` runs N times as many cases.
 */
import { readFileSync } from 'node:fs';
import { deflateSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { woffOf } from '../../../test/helpers/font-kinds.js';
import { fuzzParams, mutatedInput, mutationArb, outcome } from '../../../test/helpers/fuzz.js';
import { sfntOfWoff } from './woff.js';

const NOTO = readFileSync(
  new URL('../../../node_modules/@expo-google-fonts/noto-sans/400Regular/NotoSans_400Regular.ttf', import.meta.url),
);

describe('WOFF reader under mutation', () => {
  const woff = woffOf(NOTO);

  it('ends in an sfnt or a typed EsignError, within a bound', () => {
    fc.assert(
      fc.property(mutatedInput([woff], mutationArb, 4), ({ bytes }) => {
        const result = outcome('WOFF reader', () => sfntOfWoff(bytes, 'F.woff'));
        if (result.ok) expect(result.value.length).toBeGreaterThan(12);
      }),
      fuzzParams(200),
    );
  });

  it('refuses a bomb: a small table that claims to inflate to 1 GiB', () => {
    const table = deflateSync(Buffer.alloc(1024 * 1024));
    const bomb = new Uint8Array(44 + 20 + table.length);
    const view = new DataView(bomb.buffer);
    view.setUint32(0, 0x774f4646); // 'wOFF'
    view.setUint32(4, 0x00010000);
    view.setUint32(8, bomb.length);
    view.setUint16(12, 1);
    view.setUint32(44, 0x676c7966); // 'glyf'
    view.setUint32(48, 64); // offset
    view.setUint32(52, table.length);
    view.setUint32(56, 1024 * 1024 * 1024);
    bomb.set(table, 64);
    expect(() => sfntOfWoff(bomb, 'bomb.woff')).toThrow(
      /bomb\.woff is not a readable WOFF font \(its tables would inflate past 256 MiB\)/,
    );
    view.setUint32(56, 1024); // claims 1 KiB, inflates to 1 MiB: stopped at 1 KiB
    expect(() => sfntOfWoff(bomb, 'bomb.woff')).toThrow(/bomb\.woff is not a readable WOFF font/);
  });
});
