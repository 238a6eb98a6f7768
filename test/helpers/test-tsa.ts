/**
 * A timestamp authority for unit tests: a TSA certificate under `issuer` (a test-PKI CA) and the
 * sandbox's TSA code answering RFC 3161 requests in memory, its clock fixed at `now`.
 */
import { OID } from '../../src/core/cms/oids.js';
import type { ContainerVerifyOptions } from '../../src/core/forms/shared/timestamp-report.js';
import { issueTestCertificate, type TestIdentity } from '../../src/core/cms/test-pki.js';
import { buildTimeStampReq } from '../../src/core/tsp/request.js';
import { processTimeStampResp } from '../../src/core/tsp/response.js';
import { SandboxTsa } from '../../src/sandbox/tsa/tsa.js';

export function testTsa(issuer: TestIdentity, commonName: string, now: Date) {
  const certificate = issueTestCertificate({
    commonName,
    issuer,
    extendedKeyUsage: { purposes: [OID.kpTimeStamping], critical: true },
  });
  let serial = 1n;
  const tsa = new SandboxTsa({
    certificate: certificate.der,
    privateKey: certificate.privateKey,
    clock: { now: () => now },
    serials: { next: () => ++serial },
  });
  return {
    certificate,
    /** A timestamp token over `imprint` (a digest the caller computed). */
    token(imprint: Uint8Array): Uint8Array {
      const nonce = Uint8Array.from([0x7f, 1, 2, 3, 4, 5, 6, 7]);
      return processTimeStampResp(tsa.respond(buildTimeStampReq({ imprint, nonce })), { imprint, nonce, policy: null })
        .token;
    },
  };
}

/** A test TSA under a root of its own, and verify options that trust that root (soft-fail revocation: no responder). */
export function trustedTestTsa(name: string): {
  options: ContainerVerifyOptions;
  token: (imprint: Uint8Array) => Uint8Array;
} {
  const root = issueTestCertificate({ commonName: `${name} Root`, ca: true });
  const now = new Date();
  const tsa = testTsa(root, `${name} TSA`, now);
  return { options: { trustAnchors: [root.der], now, revocation: { mode: 'soft-fail' } }, token: tsa.token };
}
