import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { OID } from '../cms/oids.js';
import { TSA_POLICY, buildTimeStampReq, parseTimeStampReq } from './request.js';

const imprint = new Uint8Array(createHash('sha256').update('data').digest());
const nonce = Uint8Array.from([0x9a, 1, 2, 3, 4, 5, 6, 7]);
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

describe('buildTimeStampReq', () => {
  it('round-trips: version 1, SHA-256 imprint, policy, nonce, certReq', () => {
    const request = parseTimeStampReq(buildTimeStampReq({ imprint, nonce }));
    expect(request).toMatchObject({
      version: 1n,
      hashAlgorithm: OID.sha256,
      hashAlgorithmHasParameters: false,
      reqPolicy: TSA_POLICY,
      nonceHex: hex(nonce),
      certReq: true,
      extensions: undefined,
    });
    expect(hex(request.hashedMessage)).toBe(hex(imprint));
    // a nonce with the top bit set is sent as a positive INTEGER
    expect(hex(request.nonce!)).toBe('00' + hex(nonce));
  });

  it('leaves out certReq when false (DER DEFAULT) and reqPolicy when null', () => {
    const der = buildTimeStampReq({ imprint, nonce, certReq: false, policy: null });
    const request = parseTimeStampReq(der);
    expect(request.certReq).toBe(false);
    expect(request.reqPolicy).toBeUndefined();
    expect(hex(der)).not.toContain('0101ff');
  });

  it('refuses an imprint of another length than its digest gives, and a nonce under 64 bits', () => {
    expect(() => buildTimeStampReq({ imprint: new Uint8Array(20), nonce })).toThrow(
      /SHA-256 message imprint is not 20 bytes/,
    );
    expect(() => buildTimeStampReq({ imprint: new Uint8Array(32), digest: 'sha384', nonce })).toThrow(
      /SHA-384 message imprint is not 32 bytes/,
    );
    expect(() => buildTimeStampReq({ imprint, nonce: new Uint8Array(7) })).toThrow(/64 random bits/);
  });
});

describe('parseTimeStampReq', () => {
  it('reports undecodable input as CMS_BAD_STRUCTURE', () => {
    for (const input of [
      new Uint8Array(0),
      Uint8Array.of(0x30, 0x00),
      Uint8Array.of(0x04, 0x01, 0x00),
      buildTimeStampReq({ imprint, nonce }).subarray(0, 20),
    ]) {
      expect(() => parseTimeStampReq(input)).toThrow(expect.objectContaining({ code: 'CMS_BAD_STRUCTURE' }));
    }
  });

  it('sees extensions', () => {
    const der = buildTimeStampReq({ imprint, nonce });
    // append [0] { SEQUENCE {} } inside the outer SEQUENCE
    const withExtensions = Uint8Array.from([0x30, der[1]! + 4, ...der.subarray(2), 0xa0, 0x02, 0x30, 0x00]);
    expect(parseTimeStampReq(withExtensions).extensions).toBeDefined();
  });
});
