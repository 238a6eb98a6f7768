/**
 * Mutation fuzzing of the revocation decoders, which read what OCSP responders and CRL endpoints
 * send and what signed files carry: `checkOcspResponse` and `checkCrl` (extending to B-LT) and
 * `parseOcsp`/`parseCrl` (verifying). Seeds are real answers of the sandbox PKI. Each damaged input
 * ends in a value (or `undefined`, for the verifier's "not this kind") or a typed EsignError, never
 * another exception or a hang. `ESIGN_FUZZ_RUNS=N` runs N times as many cases.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fuzzParams, mutatedInput, outcome } from '../../../test/helpers/fuzz.js';
import { buildCrl, buildOcspResponse } from '../../sandbox/pki-routes.js';
import { loadOrCreatePki, type SandboxPki } from '../../sandbox/pki.js';
import { parseCrl, parseOcsp } from '../verify/revocation.js';
import { certificateFacts } from './certificates.js';
import { buildOcspRequest, checkCrl, checkOcspResponse } from './index.js';

const NOW = new Date('2026-03-01T12:00:00Z');
let pki: SandboxPki;
let dir: string;
let ocspSeeds: Uint8Array[];
let crlSeeds: Uint8Array[];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'esign-revocation-fuzz-'));
  pki = await loadOrCreatePki(dir, { baseUrl: 'http://127.0.0.1:9/pki', now: NOW });
  const issuer = certificateFacts(pki.issuingCa.certificate);
  ocspSeeds = pki.credentials
    .slice(0, 3)
    .map((credential) =>
      buildOcspResponse(pki, buildOcspRequest(certificateFacts(credential.signer.certificate), issuer), NOW),
    );
  crlSeeds = [buildCrl(pki, NOW, 'issuing'), buildCrl(pki, NOW, 'root')];
}, 60_000);
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('revocation decoders under mutation', () => {
  it('OCSP responses: checkOcspResponse and parseOcsp end in a value or a typed EsignError', () => {
    const signer = certificateFacts(pki.credentials[0]!.signer.certificate);
    const issuer = certificateFacts(pki.issuingCa.certificate);
    let accepted = 0;
    let cases = 0;
    fc.assert(
      fc.property(mutatedInput(ocspSeeds), (input) => {
        cases++;
        if (outcome('checkOcspResponse', () => checkOcspResponse(input.bytes, signer, issuer, 'http://ocsp.test')).ok)
          accepted++;
        outcome('parseOcsp', () => parseOcsp({ der: input.bytes, store: 'dss' }));
      }),
      fuzzParams(400),
    );
    // Some mutations leave a response that still checks out (a flipped bit in a field nobody reads);
    // most must not: a damaged signature or structure is refused.
    expect(accepted).toBeLessThan(cases / 2);
  });

  it('CRLs: checkCrl and parseCrl end in a value or a typed EsignError', () => {
    const issuers = [certificateFacts(pki.issuingCa.certificate), certificateFacts(pki.root.certificate)];
    fc.assert(
      fc.property(mutatedInput(crlSeeds), (input) => {
        outcome('checkCrl', () => checkCrl(input.bytes, issuers[input.seedIndex]!, 'http://crl.test'));
        outcome('parseCrl', () => parseCrl({ der: input.bytes, store: 'dss' }));
      }),
      fuzzParams(400),
    );
  });

  it('the seeds themselves are accepted (the properties above start from valid answers)', () => {
    const issuer = certificateFacts(pki.issuingCa.certificate);
    expect(
      checkOcspResponse(ocspSeeds[0]!, certificateFacts(pki.credentials[0]!.signer.certificate), issuer).status.kind,
    ).toBe('good');
    expect(checkCrl(crlSeeds[0]!, issuer).revoked.size).toBeGreaterThan(0);
    expect(parseOcsp({ der: ocspSeeds[0]!, store: 'dss' })).toBeDefined();
    expect(parseCrl({ der: crlSeeds[0]!, store: 'dss' })).toBeDefined();
  });
});
