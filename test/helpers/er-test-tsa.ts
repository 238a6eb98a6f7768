/**
 * An in-process test TSA for evidence-record unit tests: a root and a timestamping certificate of
 * the test PKI, the verify options that trust the root, and tokens over an imprint (SHA-256).
 */
import { randomBytes } from 'node:crypto';
import { OID } from '../../src/core/cms/oids.js';
import { issueTestCertificate } from '../../src/core/cms/test-pki.js';
import type { ContainerVerifyOptions } from '../../src/core/forms/shared/timestamp-report.js';
import { buildTimeStampToken } from '../../src/core/tsp/token.js';
import { buildTstInfo } from '../../src/core/tsp/tst-info.js';

export function testTsa(name: string): { options: ContainerVerifyOptions; token: (imprint: Uint8Array) => Uint8Array } {
  const root = issueTestCertificate({ commonName: `${name} Root`, ca: true });
  const tsa = issueTestCertificate({
    commonName: `${name} TSA`,
    issuer: root,
    extendedKeyUsage: { purposes: [OID.kpTimeStamping], critical: true },
  });
  const now = new Date();
  const token = (imprint: Uint8Array) =>
    buildTimeStampToken({
      tstInfo: buildTstInfo({
        policy: '0.4.0.2023.1.1',
        hashAlgorithm: OID.sha256,
        hashedMessage: imprint,
        serialNumber: randomBytes(8),
        genTime: now,
      }),
      signerCertificate: tsa.der,
      privateKey: tsa.privateKey,
      certificates: [tsa.der, root.der],
    });
  return { options: { trustAnchors: [root.der], now, revocation: { mode: 'soft-fail' } }, token };
}
