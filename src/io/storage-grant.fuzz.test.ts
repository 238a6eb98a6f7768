/**
 * Fuzzing of the storage authorization service's credentials answer: a complete grant (https or
 * loopback endpoint, valid expiration) or a typed EsignError. `ESIGN_FUZZ_RUNS=N` multiplies the runs.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuzzParams, jsonAnswerArb, outcome } from '../../test/helpers/fuzz.js';
import { processStorageCredentialsResponse } from './storage-grant.js';

const valid = {
  bucket: 'esign-u1',
  endpoint: 'https://s3.example.com',
  credentials: { accessKeyId: 'AK', secretAccessKey: 'SK', sessionToken: 'ST', expiration: '2026-01-01T00:00:00Z' },
};

describe('storage credentials answer under mutation', () => {
  it('ends in a complete grant or a typed EsignError', () => {
    fc.assert(
      fc.property(
        jsonAnswerArb([
          valid,
          { ...valid, endpoint: 'http://127.0.0.1:9000' },
          { type: 'about:blank', title: 'Unauthorized', detail: 'insufficient_scope com.vendor.storage' },
        ]),
        fc.constantFrom(null, 'Bearer error="insufficient_scope"', ''),
        (answer, wwwAuthenticate) => {
          const result = outcome('processStorageCredentialsResponse', () =>
            processStorageCredentialsResponse(answer.status, wwwAuthenticate, answer.json),
          );
          if (!result.ok) {
            expect(result.error.code).toMatch(/^(STORAGE_|CONFIG_|HTTP_RATE_LIMITED$)/);
            return;
          }
          const grant = result.value;
          for (const field of ['bucket', 'endpoint', 'accessKeyId', 'secretAccessKey', 'sessionToken'] as const)
            expect(grant[field]).not.toBe('');
          expect(Number.isNaN(grant.expiration.getTime())).toBe(false);
          const url = new URL(grant.endpoint);
          expect(
            url.protocol === 'https:' ||
              (url.protocol === 'http:' && /^(127\.|\[::1\]$|localhost$)/.test(url.hostname)),
          ).toBe(true);
        },
      ),
      fuzzParams(800),
    );
  });

  it('refuses a plain http:// endpoint that is not loopback', () => {
    const result = outcome('processStorageCredentialsResponse', () =>
      processStorageCredentialsResponse(200, null, { ...valid, endpoint: 'http://s3.example.com' }),
    );
    expect(result.ok ? undefined : result.error.code).toBe('CONFIG_INSECURE_URL');
  });
});
