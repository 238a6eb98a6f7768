import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { readCertificate } from './certificate.js';
import { decode, encoded, explicitInner, integerHex, octets, oid, sequenceItems, setItems } from './der.js';
import { OID } from './oids.js';
import { buildSignedAttributes } from './signed-attributes.js';
import { issueTestCertificate } from './test-pki.js';

const signer = issueTestCertificate({ commonName: 'Signer', serialNumber: 0x1234 });
const digest = createHash('sha256').update('hello').digest();
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

function attributesOf(der: Uint8Array): Map<string, Uint8Array[]> {
  const map = new Map<string, Uint8Array[]>();
  for (const attribute of setItems(decode(der, 'attrs'), 'attrs')) {
    const [type, values] = sequenceItems(attribute, 'attr');
    map.set(oid(type, 'type'), setItems(values, 'values').map(encoded));
  }
  return map;
}

describe('buildSignedAttributes', () => {
  it('PAdES: content-type, message-digest and signing-certificate-v2, without signing-time', () => {
    const { der, toBeSignedHash } = buildSignedAttributes({ contentDigest: digest, signerCertificate: signer.der });
    expect(der[0]).toBe(0x31);
    expect(hex(toBeSignedHash)).toBe(createHash('sha256').update(der).digest('hex'));
    const attributes = attributesOf(der);
    expect([...attributes.keys()].sort()).toEqual(
      [OID.contentType, OID.messageDigest, OID.signingCertificateV2].sort(),
    );
    expect(oid(decode(attributes.get(OID.contentType)![0]!, 'ct'), 'ct')).toBe(OID.data);
    expect(hex(octets(decode(attributes.get(OID.messageDigest)![0]!, 'md'), 'md'))).toBe(digest.toString('hex'));
  });

  it('CAdES: adds signing-time as UTCTime', () => {
    const { der } = buildSignedAttributes({
      contentDigest: digest,
      signerCertificate: signer.der,
      signingTime: new Date('2025-06-01T12:00:00Z'),
    });
    const value = attributesOf(der).get(OID.signingTime)![0]!;
    expect(hex(value)).toBe('170d' + Buffer.from('250601120000Z').toString('hex'));
  });

  it('puts the attributes in DER SET order', () => {
    const { der } = buildSignedAttributes({
      contentDigest: digest,
      signerCertificate: signer.der,
      signingTime: new Date(),
    });
    const items = setItems(decode(der, 'attrs'), 'attrs').map((item) => hex(encoded(item)));
    expect(items).toEqual([...items].sort());
  });

  it('signing-certificate-v2 holds the SHA-256 of the certificate (default algorithm omitted) and its issuer and serial', () => {
    const { der } = buildSignedAttributes({ contentDigest: digest, signerCertificate: signer.der });
    const value = attributesOf(der).get(OID.signingCertificateV2)![0]!;
    const [certs] = sequenceItems(decode(value, 'scv2'), 'scv2');
    const [essCertId] = sequenceItems(certs, 'certs');
    const [certHash, issuerSerial, extra] = sequenceItems(essCertId, 'ESSCertIDv2');
    expect(extra).toBeUndefined();
    expect(hex(octets(certHash, 'hash'))).toBe(createHash('sha256').update(signer.der).digest('hex'));
    const [generalNames, serial] = sequenceItems(issuerSerial, 'issuerSerial');
    const [directoryName] = sequenceItems(generalNames, 'GeneralNames');
    expect(hex(encoded(explicitInner(directoryName, 4, 'dn')))).toBe(hex(readCertificate(signer.der).issuer));
    expect(integerHex(serial, 'serial')).toBe('4000001234');
  });

  it('refuses a digest that is not SHA-256 sized', () => {
    expect(() => buildSignedAttributes({ contentDigest: new Uint8Array(20), signerCertificate: signer.der })).toThrow(
      /32 bytes/,
    );
  });
});
