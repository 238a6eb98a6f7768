import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { DigestName } from './cms/algorithms.js';
import { EsignError } from './errors.js';
import type { TimestampAuthority } from './ports.js';
import { timestampSignatures } from './sign-workflow.js';

const signature = Uint8Array.of(1, 2, 3);
const stamp = { response: new Uint8Array(0), token: Uint8Array.of(9), genTime: new Date(0), serialNumber: '1' };

/** A TSA that records what it was asked, and accepts only the given hash algorithms (badAlg otherwise). */
function tsaAccepting(...accepted: DigestName[]): TimestampAuthority & { asked: Array<[string, DigestName]> } {
  const asked: Array<[string, DigestName]> = [];
  return {
    asked,
    timestamp: async (imprint, digest = 'sha256') => {
      asked.push([Buffer.from(imprint).toString('hex'), digest]);
      if (!accepted.includes(digest)) throw new EsignError('TSA_REJECTED', 'rejected', { details: { failInfo: ['badAlg'] } });
      return stamp;
    },
  };
}

const hex = (digest: DigestName) => createHash(digest).update(signature).digest('hex');

describe('timestampSignatures', () => {
  it("asks for an imprint of the signature's digest", async () => {
    const tsa = tsaAccepting('sha256', 'sha384');
    const [result] = await timestampSignatures([signature], tsa, 'B-T', {}, { digest: 'sha384' });
    expect(result?.status).toBe('fulfilled');
    expect(tsa.asked).toEqual([[hex('sha384'), 'sha384']]);
  });

  it('asks again with SHA-256 when the TSA refuses that hash algorithm (badAlg), and only then', async () => {
    const tsa = tsaAccepting('sha256');
    const [result] = await timestampSignatures([signature], tsa, 'B-T', {}, { digest: 'sha512' });
    expect(result?.status).toBe('fulfilled');
    expect(tsa.asked).toEqual([
      [hex('sha512'), 'sha512'],
      [hex('sha256'), 'sha256'],
    ]);
    const strict = tsaAccepting();
    const [refused] = await timestampSignatures([signature], strict, 'B-T');
    expect(refused?.status).toBe('rejected');
    expect(strict.asked).toHaveLength(1);
  });
});
