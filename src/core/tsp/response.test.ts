import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { readCertificate } from '../cms/certificate.js';
import { OID } from '../cms/oids.js';
import { generateTestKeyPair, issueTestCertificate, testName } from '../cms/test-pki.js';
import type { TestIdentity } from '../cms/test-pki.js';
import { isEsignError } from '../errors.js';
import type { EsignErrorCode } from '../errors.js';
import { TSA_POLICY } from './request.js';
import { parseTimeStampToken, processTimeStampResp, verifyTsaCertificate } from './response.js';
import { FAILURE_INFO_TEXT, PKIFailureInfo } from './status.js';
import type { FailureInfoName } from './status.js';
import { buildTimeStampResp, buildTimeStampToken } from './token.js';
import { buildTstInfo } from './tst-info.js';
import type { TstInfoInput } from './tst-info.js';

const rsaKeys = generateTestKeyPair();
const root = issueTestCertificate({ commonName: 'TSA Root', ca: true });
const timeStamping = { purposes: [OID.kpTimeStamping], critical: true };
const tsa = issueTestCertificate({
  commonName: 'Test TSA',
  issuer: root,
  extendedKeyUsage: timeStamping,
  keyPair: rsaKeys,
});

const imprint = new Uint8Array(createHash('sha256').update('signature value').digest());
const nonce = Uint8Array.from([0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef]);
const genTime = new Date('2025-05-06T07:08:09.123Z');

interface ResponseOptions {
  tstInfo?: Partial<TstInfoInput>;
  signer?: TestIdentity;
  certificates?: Uint8Array[];
}

function tstInfoInput(overrides: Partial<TstInfoInput> = {}): TstInfoInput {
  return {
    policy: TSA_POLICY,
    hashAlgorithm: OID.sha256,
    hashedMessage: imprint,
    serialNumber: Uint8Array.of(0x0a, 0xbc),
    genTime,
    accuracy: { seconds: 1, millis: 500 },
    nonce,
    tsaName: testName('Test TSA'),
    ...overrides,
  };
}

function token(options: ResponseOptions = {}): Uint8Array {
  const signer = options.signer ?? tsa;
  return buildTimeStampToken({
    tstInfo: buildTstInfo(tstInfoInput(options.tstInfo)),
    signerCertificate: signer.der,
    privateKey: signer.privateKey,
    certificates: options.certificates ?? [signer.der],
  });
}

function granted(options: ResponseOptions = {}): Uint8Array {
  return buildTimeStampResp({ status: 0, token: token(options) });
}

function codeOf(run: () => unknown): {
  code: EsignErrorCode | undefined;
  message: string;
  details: Record<string, unknown> | undefined;
} {
  try {
    run();
  } catch (error) {
    if (isEsignError(error)) return { code: error.code, message: error.message, details: error.details };
    return { code: undefined, message: String(error), details: undefined };
  }
  return { code: undefined, message: 'no error', details: undefined };
}

const expected = { imprint, nonce };

describe('processTimeStampResp', () => {
  it('accepts a granted response and reads the TSTInfo', () => {
    const result = processTimeStampResp(granted(), { ...expected, trustAnchors: [root.der] });
    expect(result.status).toBe(0);
    expect(result.tstInfo).toMatchObject({
      version: 1,
      policy: TSA_POLICY,
      serialNumber: '0abc',
      nonce: '0123456789abcdef',
      accuracy: { seconds: 1, millis: 500 },
      tsaName: 'CN=Test TSA',
      ordering: false,
    });
    expect(result.tstInfo.genTime.toISOString()).toBe(genTime.toISOString());
    expect(Buffer.from(result.signerCertificate!).equals(Buffer.from(tsa.der))).toBe(true);
    expect(
      Buffer.from(parseTimeStampToken(result.token).tstInfo.messageImprint.hashedMessage).equals(Buffer.from(imprint)),
    ).toBe(true);
  });

  it('accepts grantedWithMods, an ECDSA TSA, and a nonce sent with leading zero bytes', () => {
    const withMods = buildTimeStampResp({ status: 1, statusString: 'accuracy changed', token: token() });
    expect(processTimeStampResp(withMods, expected).status).toBe(1);
    const ecTsa = issueTestCertificate({
      commonName: 'EC TSA',
      issuer: root,
      extendedKeyUsage: timeStamping,
      keyType: 'ec',
    });
    expect(
      processTimeStampResp(granted({ signer: ecTsa }), { ...expected, trustAnchors: [root.der] }).tstInfo.serialNumber,
    ).toBe('0abc');
    const shortNonce = Uint8Array.of(0, 0, 1, 2, 3, 4, 5, 6);
    expect(
      processTimeStampResp(granted({ tstInfo: { nonce: Uint8Array.of(1, 2, 3, 4, 5, 6) } }), {
        imprint,
        nonce: shortNonce,
      }).tstInfo.nonce,
    ).toBe('010203040506');
  });

  it.each(Object.keys(PKIFailureInfo) as FailureInfoName[])(
    'names failInfo %s in plain English (TSA_REJECTED)',
    (name) => {
      const result = codeOf(() =>
        processTimeStampResp(buildTimeStampResp({ status: 2, failInfo: [name], statusString: 'no' }), expected),
      );
      expect(result.code).toBe('TSA_REJECTED');
      expect(result.message).toContain(FAILURE_INFO_TEXT[name]);
      expect(result.message).toContain(`(${name})`);
      expect(result.message).toContain('"no"');
      expect(result.details).toMatchObject({ status: 2, failInfo: [name], retryable: name === 'timeNotAvailable' });
    },
  );

  it('names several failure bits and statuses 3..5', () => {
    const both = codeOf(() =>
      processTimeStampResp(buildTimeStampResp({ status: 2, failInfo: ['badAlg', 'badDataFormat'] }), expected),
    );
    expect(both.details?.['failInfo']).toEqual(['badAlg', 'badDataFormat']);
    const said: Array<[number, RegExp]> = [
      [2, /rejection, without a reason/],
      [3, /waiting/],
      [4, /revocationWarning: a revocation of the TSA certificate is imminent/],
      [5, /revocationNotification: the TSA certificate has been revoked/],
      [9, /PKIStatus 9, which RFC 3161 does not define/],
    ];
    for (const [status, message] of said) {
      const error = codeOf(() => processTimeStampResp(buildTimeStampResp({ status }), expected));
      expect(error.code).toBe('TSA_REJECTED');
      expect(error.message).toMatch(message);
    }
  });

  it('reports undecodable responses as TSA_BAD_RESPONSE', () => {
    const good = granted();
    for (const input of [
      new Uint8Array(0),
      new TextEncoder().encode('<html>'),
      good.subarray(0, good.length - 3),
      buildTimeStampResp({ status: 0 }),
    ]) {
      expect(codeOf(() => processTimeStampResp(input, expected)).code).toBe('TSA_BAD_RESPONSE');
    }
    const notTstInfo = buildTimeStampResp({ status: 0, token: Uint8Array.of(0x30, 0x03, 0x02, 0x01, 0x00) });
    expect(codeOf(() => processTimeStampResp(notTstInfo, expected)).code).toBe('TSA_BAD_RESPONSE');
  });

  it('checks the message imprint (value and algorithm)', () => {
    expect(codeOf(() => processTimeStampResp(granted(), { ...expected, imprint: new Uint8Array(32) })).code).toBe(
      'TSA_IMPRINT_MISMATCH',
    );
    expect(codeOf(() => processTimeStampResp(granted({ tstInfo: { hashAlgorithm: OID.sha512 } }), expected)).code).toBe(
      'TSA_IMPRINT_MISMATCH',
    );
  });

  it('checks the nonce: different, missing, or unexpected', () => {
    expect(codeOf(() => processTimeStampResp(granted(), { imprint, nonce: new Uint8Array(8).fill(7) })).code).toBe(
      'TSA_NONCE_MISMATCH',
    );
    expect(codeOf(() => processTimeStampResp(granted({ tstInfo: { nonce: undefined } }), expected)).code).toBe(
      'TSA_NONCE_MISMATCH',
    );
    expect(codeOf(() => processTimeStampResp(granted(), { imprint })).code).toBe('TSA_NONCE_MISMATCH');
  });

  it('checks the policy', () => {
    expect(codeOf(() => processTimeStampResp(granted({ tstInfo: { policy: '1.2.3.4' } }), expected)).code).toBe(
      'TSA_POLICY_MISMATCH',
    );
  });

  it('checks the token signature and the TSTInfo message digest (TSA_SIGNATURE_INVALID)', () => {
    const impostorKeys = generateTestKeyPair();
    const impostor = { ...tsa, privateKey: impostorKeys.privateKey };
    expect(codeOf(() => processTimeStampResp(granted({ signer: impostor }), expected)).code).toBe(
      'TSA_SIGNATURE_INVALID',
    );

    // Change one byte of the serial number inside the signed token: the message digest no longer matches.
    const good = token();
    const serialAt = Buffer.from(good).indexOf(Buffer.from([0x02, 0x02, 0x0a, 0xbc]));
    expect(serialAt).toBeGreaterThan(0);
    const tampered = Uint8Array.from(good);
    tampered[serialAt + 3] = 0xbd;
    const result = codeOf(() => processTimeStampResp(buildTimeStampResp({ status: 0, token: tampered }), expected));
    expect(result.code).toBe('TSA_SIGNATURE_INVALID');
    expect(result.message).toMatch(/message-digest/);

    const noCertificate = codeOf(() => processTimeStampResp(granted({ certificates: [] }), expected));
    expect(noCertificate).toMatchObject({
      code: 'TSA_SIGNATURE_INVALID',
      message: expect.stringMatching(/does not carry the TSA certificate/),
    });
  });

  it('requires a critical extended key usage naming only timeStamping (TSA_CERT_UNTRUSTED)', () => {
    const cases = [
      issueTestCertificate({ commonName: 'No EKU', issuer: root, keyPair: rsaKeys }),
      issueTestCertificate({
        commonName: 'Soft EKU',
        issuer: root,
        keyPair: rsaKeys,
        extendedKeyUsage: { purposes: [OID.kpTimeStamping], critical: false },
      }),
      issueTestCertificate({
        commonName: 'Wide EKU',
        issuer: root,
        keyPair: rsaKeys,
        extendedKeyUsage: { purposes: [OID.kpTimeStamping, '1.3.6.1.5.5.7.3.4'], critical: true },
      }),
    ];
    for (const signer of cases) {
      expect(codeOf(() => processTimeStampResp(granted({ signer }), expected)).code).toBe('TSA_CERT_UNTRUSTED');
    }
  });

  it('checks the chain to the trust anchors at genTime', () => {
    const otherRoot = issueTestCertificate({ commonName: 'Other Root', ca: true });
    expect(codeOf(() => processTimeStampResp(granted(), { ...expected, trustAnchors: [otherRoot.der] })).code).toBe(
      'TSA_CERT_UNTRUSTED',
    );
    const expired = issueTestCertificate({
      commonName: 'Expired TSA',
      issuer: root,
      keyPair: rsaKeys,
      extendedKeyUsage: timeStamping,
      notAfter: new Date('2024-01-01T00:00:00Z'),
    });
    const result = codeOf(() =>
      processTimeStampResp(granted({ signer: expired }), { ...expected, trustAnchors: [root.der] }),
    );
    expect(result).toMatchObject({ code: 'TSA_CERT_UNTRUSTED', message: expect.stringMatching(/not valid at/) });
  });
});

describe('verifyTsaCertificate', () => {
  const intermediate = issueTestCertificate({ commonName: 'TSA Issuing CA', issuer: root, ca: true });
  const leaf = issueTestCertificate({
    commonName: 'Deep TSA',
    issuer: intermediate,
    extendedKeyUsage: timeStamping,
    keyPair: rsaKeys,
  });

  it('builds a path through intermediates carried in the token', () => {
    expect(() => verifyTsaCertificate([leaf.der, intermediate.der], [root.der], genTime)).not.toThrow();
    expect(codeOf(() => verifyTsaCertificate([leaf.der], [root.der], genTime)).code).toBe('TSA_CERT_UNTRUSTED');
  });

  it('accepts the TSA certificate itself as an anchor, and refuses an empty list', () => {
    expect(() => verifyTsaCertificate([leaf.der], [leaf.der], genTime)).not.toThrow();
    expect(codeOf(() => verifyTsaCertificate([], [root.der], genTime)).code).toBe('TSA_CERT_UNTRUSTED');
  });

  it('does not let a non-CA certificate act as an intermediate', () => {
    const notCa = issueTestCertificate({
      commonName: 'TSA Issuing CA',
      issuer: root,
      keyPair: { privateKey: intermediate.privateKey, publicKey: intermediate.publicKey },
    });
    expect(readCertificate(notCa.der).subject).toEqual(readCertificate(intermediate.der).subject);
    expect(codeOf(() => verifyTsaCertificate([leaf.der, notCa.der], [root.der], genTime)).code).toBe(
      'TSA_CERT_UNTRUSTED',
    );
  });
});
