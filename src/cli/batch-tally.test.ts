import { describe, expect, it } from 'vitest';
import { duration, grouped } from './batch-tally.js';

describe('progress figures', () => {
  it('groups thousands with commas', () => {
    expect([0, 7, 999, 1000, 12345, 100000, 1234567].map(grouped)).toEqual([
      '0',
      '7',
      '999',
      '1,000',
      '12,345',
      '100,000',
      '1,234,567',
    ]);
  });
  it('gives an ETA in seconds, minutes or hours', () => {
    expect([0, 59.4, 95, 4000].map(duration)).toEqual(['0s', '59s', '1m 35s', '1h 06m']);
  });
});
