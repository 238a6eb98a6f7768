import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  boolean,
  explicit,
  objectIdentifier,
  octetString,
  sequence,
  smallInteger,
  unsignedInteger,
} from '../../core/cms/der.js';
import { OID } from '../../core/cms/oids.js';
import { issueTestCertificate } from '../../core/cms/test-pki.js';
import { TSA_POLICY, buildTimeStampReq } from '../../core/tsp/request.js';
import { processTimeStampResp } from '../../core/tsp/response.js';
import { FileSerialNumbers } from './serials.js';
import { SandboxTsa } from './tsa.js';

const root = issueTestCertificate({ commonName: 'Sandbox TSA Root', ca: true });
const tsaCertificate = issueTestCertificate({
  commonName: 'Sandbox TSA',
  issuer: root,
  extendedKeyUsage: { purposes: [OID.kpTimeStamping], critical: true },
});
const now = new Date('2025-07-08T09:10:11.250Z');

function makeTsa(): SandboxTsa {
  let serial = 100n;
  return new SandboxTsa({
    certificate: tsaCertificate.der,
    privateKey: tsaCertificate.privateKey,
    clock: { now: () => now },
    serials: { next: () => ++serial },
  });
}

const imprint = new Uint8Array(createHash('sha256').update('document').digest());
const nonce = new Uint8Array(randomBytes(12));

/** A hand-made TimeStampReq, to send what esign's builder never would. */
function rawRequest(options: {
  version?: number;
  hashOid?: string;
  hash?: Uint8Array;
  policy?: string;
  extensions?: boolean;
  certReq?: boolean;
}): Uint8Array {
  return sequence(
    smallInteger(options.version ?? 1),
    sequence(sequence(objectIdentifier(options.hashOid ?? OID.sha256)), octetString(options.hash ?? imprint)),
    ...(options.policy ? [objectIdentifier(options.policy)] : []),
    unsignedInteger(nonce),
    ...(options.certReq ? [boolean(true)] : []),
    ...(options.extensions
      ? [explicit(0, sequence(sequence(objectIdentifier('1.2.3.4'), octetString(Uint8Array.of(5)))))]
      : []),
  );
}

function failInfoOf(response: Uint8Array): unknown {
  try {
    processTimeStampResp(response, { imprint, nonce });
  } catch (error) {
    return (error as { details?: Record<string, unknown> }).details?.['failInfo'];
  }
  return 'granted';
}

describe('SandboxTsa', () => {
  it('grants a valid request with a token the client accepts, chained to the root', () => {
    const response = makeTsa().respond(buildTimeStampReq({ imprint, nonce }));
    const result = processTimeStampResp(response, { imprint, nonce, trustAnchors: [root.der] });
    expect(result.tstInfo).toMatchObject({
      version: 1,
      policy: TSA_POLICY,
      serialNumber: '65',
      accuracy: { seconds: 1 },
      tsaName: 'CN=Sandbox TSA',
    });
    expect(result.tstInfo.genTime.toISOString()).toBe(now.toISOString());
    expect(result.certificates).toHaveLength(1);
  });

  it('applies the policy when reqPolicy is absent and honours certReq false', () => {
    const response = makeTsa().respond(buildTimeStampReq({ imprint, nonce, policy: null, certReq: false }));
    expect(() => processTimeStampResp(response, { imprint, nonce })).toThrow(
      expect.objectContaining({ code: 'TSA_SIGNATURE_INVALID' }),
    );
    const tsa = makeTsa();
    const withCert = processTimeStampResp(tsa.respond(rawRequest({ certReq: true })), { imprint, nonce });
    expect(withCert.tstInfo.policy).toBe(TSA_POLICY);
  });

  it('hands out a new serial number for every token', () => {
    const tsa = makeTsa();
    const serials = [1, 2, 3].map(
      () =>
        processTimeStampResp(tsa.respond(buildTimeStampReq({ imprint, nonce })), { imprint, nonce }).tstInfo
          .serialNumber,
    );
    expect(new Set(serials).size).toBe(3);
  });

  it.each([
    ['SHA-1', { hashOid: OID.sha1, hash: new Uint8Array(20) }, 'badAlg'],
    ['MD5', { hashOid: OID.md5, hash: new Uint8Array(16) }, 'badAlg'],
    ['an unknown algorithm', { hashOid: '1.2.3.4.5' }, 'badAlg'],
    ['a 31-byte SHA-256 hash', { hash: new Uint8Array(31) }, 'badDataFormat'],
    ['a SHA-384 hash of 32 bytes', { hashOid: OID.sha384, hash: new Uint8Array(32) }, 'badDataFormat'],
    ['version 2', { version: 2 }, 'badDataFormat'],
    ['another policy', { policy: '1.2.3.4' }, 'unacceptedPolicy'],
    ['extensions', { extensions: true }, 'unacceptedExtension'],
  ] as const)('rejects %s with %s', (_label, request, failInfo) => {
    expect(failInfoOf(makeTsa().respond(rawRequest(request)))).toEqual([failInfo]);
  });

  it.each(['sha384', 'sha512'] as const)('grants %s imprints, the digest of signatures made with it', (digest) => {
    const hashed = new Uint8Array(createHash(digest).update('document').digest());
    const request = buildTimeStampReq({ imprint: hashed, digest, nonce });
    const { tstInfo } = processTimeStampResp(makeTsa().respond(request), {
      imprint: hashed,
      hashAlgorithm: OID[digest],
      nonce,
    });
    expect(tstInfo.messageImprint.hashAlgorithm).toBe(OID[digest]);
  });

  it('rejects undecodable bodies with badDataFormat', () => {
    const tsa = makeTsa();
    for (const body of [
      Uint8Array.of(1, 2, 3),
      new TextEncoder().encode('hello'),
      buildTimeStampReq({ imprint, nonce }).subarray(0, 30),
    ]) {
      expect(failInfoOf(tsa.respond(body))).toEqual(['badDataFormat']);
    }
  });

  it('answers injected failures for the next valid requests only', () => {
    const tsa = makeTsa();
    tsa.injectFailure('timeNotAvailable', 2);
    tsa.injectFailure('systemFailure');
    const request = buildTimeStampReq({ imprint, nonce });
    expect(failInfoOf(tsa.respond(rawRequest({ policy: '1.2.3' })))).toEqual(['unacceptedPolicy']);
    expect(failInfoOf(tsa.respond(request))).toEqual(['timeNotAvailable']);
    expect(failInfoOf(tsa.respond(request))).toEqual(['timeNotAvailable']);
    expect(failInfoOf(tsa.respond(request))).toEqual(['systemFailure']);
    expect(failInfoOf(tsa.respond(request))).toBe('granted');
    tsa.injectFailure('systemFailure');
    tsa.clearFailures();
    expect(failInfoOf(tsa.respond(request))).toBe('granted');
  });
});

describe('FileSerialNumbers', () => {
  const dir = mkdtempSync(join(tmpdir(), 'esign-tsa-serial-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('continues after a restart, and never repeats a number between processes sharing the file', () => {
    const file = join(dir, 'tsa', 'serial');
    const first = new FileSerialNumbers(file);
    const a = first.next();
    const b = first.next();
    // A second process on the same data dir while the first still runs, then a restart.
    const beside = new FileSerialNumbers(file);
    const fromBoth = [a, b, first.next(), beside.next(), first.next(), beside.next()];
    const again = new FileSerialNumbers(file);
    const c = again.next();
    expect(b).toBe(a + 1n);
    expect(new Set(fromBoth).size).toBe(fromBoth.length);
    expect(c > fromBoth.reduce((max, value) => (value > max ? value : max))).toBe(true);
    expect(new FileSerialNumbers(join(dir, 'other')).next()).not.toBe(c);
  });
});
