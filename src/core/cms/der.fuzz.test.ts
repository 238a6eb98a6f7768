/**
 * Mutation fuzzing of the DER decoders: CMS SignedData (`parseSignedData`, then `verifySignerInfo`),
 * RFC 3161 responses (`processTimeStampResp`, `parseTimeStampToken`) and requests
 * (`parseTimeStampReq`). Each damaged input ends in a value or a typed EsignError, never another
 * exception or a hang. `ESIGN_FUZZ_RUNS=N` runs N times as many cases.
 */
import { createHash, sign } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuzzParams, mutatedInput, outcome } from '../../../test/helpers/fuzz.js';
import { TSA_POLICY, buildTimeStampReq, parseTimeStampReq } from '../tsp/request.js';
import { parseTimeStampToken, processTimeStampResp } from '../tsp/response.js';
import { buildTimeStampResp, buildTimeStampToken } from '../tsp/token.js';
import { buildTstInfo } from '../tsp/tst-info.js';
import { OID } from './oids.js';
import { parseSignedData } from './parse.js';
import { buildSignedAttributes } from './signed-attributes.js';
import { addSignatureTimestamp, buildSignedData, signatureValueOf } from './signed-data.js';
import { issueTestCertificate, testName } from './test-pki.js';
import { verifySignerInfo } from './verify-signer.js';

const root = issueTestCertificate({ commonName: 'Fuzz Root', ca: true });
const signer = issueTestCertificate({ commonName: 'Fuzz Signer', issuer: root });
const tsa = issueTestCertificate({
  commonName: 'Fuzz TSA',
  issuer: root,
  extendedKeyUsage: { purposes: [OID.kpTimeStamping], critical: true },
});
const sha256 = (data: Uint8Array | string): Uint8Array => new Uint8Array(createHash('sha256').update(data).digest());
const contentDigest = sha256('fuzzed content');
const nonce = Uint8Array.from([0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef]);

function timeStampToken(imprint: Uint8Array, certificates: Uint8Array[] = [tsa.der]): Uint8Array {
  const tstInfo = buildTstInfo({
    policy: TSA_POLICY,
    hashAlgorithm: OID.sha256,
    hashedMessage: imprint,
    serialNumber: Uint8Array.of(0x0a, 0xbc),
    genTime: new Date('2025-05-06T07:08:09Z'),
    accuracy: { seconds: 1 },
    nonce,
    tsaName: testName('Fuzz TSA'),
  });
  return buildTimeStampToken({ tstInfo, signerCertificate: tsa.der, privateKey: tsa.privateKey, certificates });
}

function cms(signingTime?: Date, timestamped = false): Uint8Array {
  const attributes = buildSignedAttributes({ contentDigest, signerCertificate: signer.der, signingTime });
  const der = buildSignedData({
    signedAttributesDer: attributes.der,
    signatureValue: new Uint8Array(sign('sha256', attributes.der, signer.privateKey)),
    certificates: [signer.der, root.der],
  });
  return timestamped ? addSignatureTimestamp(der, timeStampToken(sha256(signatureValueOf(der)))) : der;
}

const cmsSeeds = [cms(), cms(new Date('2025-01-02T03:04:05Z')), cms(undefined, true), timeStampToken(contentDigest)];
const imprint = sha256('signature value');
const respSeeds = [
  buildTimeStampResp({ status: 0, token: timeStampToken(imprint) }),
  buildTimeStampResp({ status: 0, token: timeStampToken(imprint, []) }),
  buildTimeStampResp({
    status: 2,
    statusString: 'The request is badly formed.',
    failInfo: ['badDataFormat', 'badAlg'],
  }),
];
const reqSeeds = [
  buildTimeStampReq({ imprint, nonce }),
  buildTimeStampReq({ imprint, nonce, certReq: false, policy: null }),
];

describe('DER decoders under mutation', () => {
  it('CMS SignedData: parseSignedData and verifySignerInfo end in a value or a typed EsignError', () => {
    let parsed = 0;
    fc.assert(
      fc.property(mutatedInput(cmsSeeds), (input) => {
        const result = outcome('parseSignedData', () => parseSignedData(input.bytes));
        if (!result.ok) {
          expect(result.error.code).toBe('CMS_BAD_STRUCTURE');
          return;
        }
        parsed++;
        const check = outcome('verifySignerInfo', () =>
          verifySignerInfo(result.value, { contentDigest, requireSigningCertificate: true }),
        );
        if (check.ok && check.value.valid) {
          // Still valid after a mutation only if the mutation left the signed parts alone.
          expect(result.value.signerCertificate).toBeDefined();
        }
      }),
      fuzzParams(1500),
    );
    expect(parsed).toBeGreaterThan(0);
  });

  it('TimeStampResp: processTimeStampResp ends in a value or a TSA_* EsignError', () => {
    fc.assert(
      fc.property(mutatedInput(respSeeds), fc.boolean(), (input, anchored) => {
        const result = outcome('processTimeStampResp', () =>
          processTimeStampResp(input.bytes, { imprint, nonce, ...(anchored ? { trustAnchors: [root.der] } : {}) }),
        );
        if (!result.ok) expect(result.error.code).toMatch(/^TSA_/);
      }),
      fuzzParams(1200),
    );
  });

  it('TimeStampToken: parseTimeStampToken ends in a value or a typed EsignError', () => {
    fc.assert(
      fc.property(mutatedInput([timeStampToken(imprint), timeStampToken(imprint, [])]), (input) => {
        outcome('parseTimeStampToken', () => parseTimeStampToken(input.bytes));
      }),
      fuzzParams(600),
    );
  });

  it('TimeStampReq: parseTimeStampReq ends in a value or CMS_BAD_STRUCTURE', () => {
    fc.assert(
      fc.property(mutatedInput(reqSeeds), (input) => {
        const result = outcome('parseTimeStampReq', () => parseTimeStampReq(input.bytes));
        if (!result.ok) expect(result.error.code).toBe('CMS_BAD_STRUCTURE');
      }),
      fuzzParams(600),
    );
  });

  it('arbitrary bytes (not DER at all) are refused with a typed error', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        outcome('parseSignedData', () => parseSignedData(bytes));
        outcome('processTimeStampResp', () => processTimeStampResp(bytes, { imprint }));
        outcome('parseTimeStampReq', () => parseTimeStampReq(bytes));
      }),
      fuzzParams(300),
    );
  });
});
