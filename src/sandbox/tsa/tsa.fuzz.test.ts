/**
 * Mutation fuzzing of the sandbox TSA: whatever bytes arrive, `respond` answers a DER TimeStampResp
 * (never throws, never hangs); a granted answer is one our client accepts for that request.
 * `ESIGN_FUZZ_RUNS=N` runs N times as many cases.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuzzParams, mutatedInput, outcome } from '../../../test/helpers/fuzz.js';
import { OID } from '../../core/cms/oids.js';
import { issueTestCertificate } from '../../core/cms/test-pki.js';
import { buildTimeStampReq, parseTimeStampReq } from '../../core/tsp/request.js';
import { processTimeStampResp, readTimeStampResp } from '../../core/tsp/response.js';
import { SandboxTsa } from './tsa.js';

const root = issueTestCertificate({ commonName: 'Fuzz TSA Root', ca: true });
const certificate = issueTestCertificate({
  commonName: 'Fuzz TSA',
  issuer: root,
  extendedKeyUsage: { purposes: [OID.kpTimeStamping], critical: true },
});
let serial = 1n;
const tsa = new SandboxTsa({
  certificate: certificate.der,
  privateKey: certificate.privateKey,
  clock: { now: () => new Date('2025-07-08T09:10:11Z') },
  serials: { next: () => ++serial },
});
const imprint = new Uint8Array(createHash('sha256').update('x').digest());
const nonce = Uint8Array.from([0x7f, 1, 2, 3, 4, 5, 6, 7, 8]);
const seeds = [
  buildTimeStampReq({ imprint, nonce }),
  buildTimeStampReq({ imprint, nonce, certReq: false, policy: null }),
];

describe('sandbox TSA under mutated requests', () => {
  it('answers every request with a TimeStampResp; a granted one verifies for that request', () => {
    let granted = 0;
    fc.assert(
      fc.property(mutatedInput(seeds), (input) => {
        const answer = outcome('SandboxTsa.respond', () => tsa.respond(input.bytes));
        if (!answer.ok) throw new Error(`respond threw ${answer.error.code}`);
        const raw = readTimeStampResp(answer.value);
        if (raw.status !== 0) return;
        granted++;
        const request = parseTimeStampReq(input.bytes);
        if (!request.certReq) return; // no certificate in the token: esign always asks for it
        const processed = processTimeStampResp(answer.value, {
          imprint: request.hashedMessage,
          ...(request.nonce ? { nonce: request.nonce } : {}),
          trustAnchors: [root.der],
        });
        expect(processed.status).toBe(0);
      }),
      fuzzParams(400),
    );
    expect(granted).toBeGreaterThan(0);
  });
});
