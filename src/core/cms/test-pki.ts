/**
 * Throwaway certificates for unit tests of CMS and TSP code: a Node-only X.509 v3 builder over the
 * DER writer (the sandbox has the full PKI; core tests must not depend on it). Not used by the product.
 */
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import {
  bitString,
  boolean,
  derNull,
  explicit,
  objectIdentifier,
  octetString,
  sequence,
  setOf,
  smallInteger,
  time,
  unsignedInteger,
  utf8String,
} from './der.js';
import { OID } from './oids.js';

export interface TestIdentity {
  der: Uint8Array;
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** DER of the subject Name. */
  name: Uint8Array;
}

export interface TestCertificateOptions {
  commonName: string;
  /** Self-signed when absent. */
  issuer?: TestIdentity;
  serialNumber?: number;
  notBefore?: Date;
  notAfter?: Date;
  ca?: boolean;
  extendedKeyUsage?: { purposes: string[]; critical: boolean };
  keyType?: 'rsa' | 'ec';
  /** Reuse a key pair (key generation is the slow part of a test). */
  keyPair?: { privateKey: KeyObject; publicKey: KeyObject };
  /** The issuer's hash over the certificate (RSA issuers). Default sha256. */
  signatureHash?: 'sha1' | 'sha256';
}

let nextSerial = 1;

export function testName(commonName: string): Uint8Array {
  return sequence(setOf([sequence(objectIdentifier('2.5.4.3'), utf8String(commonName))]));
}

export function generateTestKeyPair(keyType: 'rsa' | 'ec' = 'rsa'): { privateKey: KeyObject; publicKey: KeyObject } {
  return keyType === 'rsa'
    ? generateKeyPairSync('rsa', { modulusLength: 2048 })
    : generateKeyPairSync('ec', { namedCurve: 'P-256' });
}

export function issueTestCertificate(options: TestCertificateOptions): TestIdentity {
  const keys = options.keyPair ?? generateTestKeyPair(options.keyType);
  const name = testName(options.commonName);
  const signer = options.issuer ?? { privateKey: keys.privateKey, name };
  const spki = new Uint8Array(keys.publicKey.export({ type: 'spki', format: 'der' }));
  const extensions: Uint8Array[] = [
    extension(OID.subjectKeyIdentifier, false, octetString(new Uint8Array(createHash('sha1').update(spki).digest()))),
  ];
  if (options.ca) {
    extensions.push(extension('2.5.29.19', true, sequence(boolean(true))));
    extensions.push(extension('2.5.29.15', true, bitString(Uint8Array.of(0x06), 1)));
  }
  if (options.extendedKeyUsage) {
    const { purposes, critical } = options.extendedKeyUsage;
    extensions.push(extension(OID.extKeyUsage, critical, sequence(...purposes.map(objectIdentifier))));
  }
  const signatureAlgorithm =
    signer.privateKey.asymmetricKeyType === 'ec'
      ? sequence(objectIdentifier(OID.ecdsaWithSHA256))
      : sequence(
          objectIdentifier(options.signatureHash === 'sha1' ? '1.2.840.113549.1.1.5' : OID.sha256WithRSAEncryption),
          derNull,
        );
  const notBefore = options.notBefore ?? new Date('2020-01-01T00:00:00Z');
  const notAfter = options.notAfter ?? new Date('2045-01-01T00:00:00Z');
  const tbs = sequence(
    explicit(0, smallInteger(2)),
    serialNumber(options.serialNumber ?? nextSerial++),
    signatureAlgorithm,
    signer.name,
    sequence(time(notBefore), time(notAfter)),
    name,
    spki,
    explicit(3, sequence(...extensions)),
  );
  const signature = new Uint8Array(
    sign(
      signer.privateKey.asymmetricKeyType === 'ec' ? 'sha256' : (options.signatureHash ?? 'sha256'),
      tbs,
      signer.privateKey,
    ),
  );
  const der = sequence(tbs, signatureAlgorithm, bitString(signature));
  return { der, privateKey: keys.privateKey, publicKey: keys.publicKey, name };
}

// A 0x40 first byte keeps serials positive and of a realistic width.
function serialNumber(value: number): Uint8Array {
  return unsignedInteger(Uint8Array.from([0x40, ...Buffer.from(value.toString(16).padStart(8, '0'), 'hex')]));
}

function extension(type: string, critical: boolean, value: Uint8Array): Uint8Array {
  return sequence(objectIdentifier(type), ...(critical ? [boolean(true)] : []), octetString(value));
}
