/**
 * Debian's xmlsec1 judges the XML signature of every trusted list esign meets: the real LOTL and
 * national lists of test/fixtures/trusted-lists, a list esign's own signer made (the sandbox's), and
 * tampered copies of each. esign and xmlsec1 must agree on every one. xmlsec1 is given the key esign
 * trusts for the list (never the KeyInfo's certificate: `--enabled-key-data rsa` ignores X509Data).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isEsignError } from '../../src/core/errors.js';
import { LOTL_SIGNING_CERTIFICATES } from '../../src/core/trusted-list/lotl-signers.js';
import type { TrustedListSnapshot } from '../../src/core/trusted-list/model.js';
import { readTrustedList } from '../../src/core/trusted-list/parse.js';
import { nationalListDescription, signedList, testSigner } from '../../src/core/trusted-list/test-lists.js';
import { tempDirForFile } from '../helpers/tmp.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'trusted-lists');
const NATIONAL = ['AT', 'CY', 'EE', 'IE'];
const missing = spawnSync('/bin/sh', ['-c', 'command -v xmlsec1']).status !== 0;

let work: { dir: string; remove: () => Promise<void> };
let lotl: TrustedListSnapshot;
beforeAll(async () => {
  work = await tempDirForFile('esign-xmlsec-');
  lotl = readTrustedList(readFileSync(join(FIXTURES, 'eu-lotl.xml')), LOTL_SIGNING_CERTIFICATES, 'eu-lotl.xml');
});
afterAll(() => work?.remove());

/** xmlsec1's verdict on `xml` with `certificate` (DER base64) as the only key. */
function xmlsecVerifies(name: string, xml: Uint8Array | string, certificate: string): boolean {
  const file = join(work.dir, name);
  const cert = join(work.dir, `${name}.der`);
  writeFileSync(file, xml);
  writeFileSync(cert, Buffer.from(certificate, 'base64'));
  const result = spawnSync(
    'xmlsec1',
    [
      '--verify',
      '--pubkey-cert-der',
      cert,
      '--enabled-key-data',
      'rsa,ec',
      '--id-attr:Id',
      'http://uri.etsi.org/01903/v1.3.2#:SignedProperties',
      '--id-attr:Id',
      'http://uri.etsi.org/02231/v2#:TrustServiceStatusList',
      file,
    ],
    { encoding: 'utf8' },
  );
  return result.status === 0;
}

function esignVerifies(xml: Uint8Array | string, certificates: readonly string[]): boolean {
  try {
    readTrustedList(typeof xml === 'string' ? new TextEncoder().encode(xml) : xml, certificates, 'list');
    return true;
  } catch (error) {
    if (isEsignError(error)) return false;
    throw error;
  }
}

/** Copies with one character changed inside a signed part: the list's content, and the XAdES signed properties. */
function tamperedCopies(xml: string): Array<[what: string, xml: string]> {
  const copies: Array<[string, string]> = [];
  const sequence = /(<(?:\w+:)?TSLSequenceNumber>)(\d+)</.exec(xml)!;
  copies.push(['sequence number', xml.replace(sequence[0], `${sequence[1]}${Number(sequence[2]) + 1}<`)]);
  const operator = /(<(?:\w+:)?SchemeOperatorName>\s*<(?:\w+:)?Name[^>]*>)([^<])/.exec(xml)!;
  copies.push(['operator name', xml.replace(operator[0], `${operator[1]}${operator[2] === 'X' ? 'Y' : 'X'}`)]);
  const signingTime = /(<(?:\w+:)?SigningTime>\d{3})(\d)/.exec(xml);
  if (signingTime) {
    copies.push([
      'XAdES signing time',
      xml.replace(signingTime[0], `${signingTime[1]}${(Number(signingTime[2]) + 1) % 10}`),
    ]);
  }
  return copies;
}

describe.skipIf(missing)('xmlsec1 and esign agree on every trusted list', () => {
  it('the real LOTL: valid with the signer esign found among the shipped certificates, refused with another', () => {
    const xml = readFileSync(join(FIXTURES, 'eu-lotl.xml'));
    expect(LOTL_SIGNING_CERTIFICATES).toContain(lotl.signerCertificate);
    expect(xmlsecVerifies('eu-lotl.xml', xml, lotl.signerCertificate)).toBe(true);
    const other = LOTL_SIGNING_CERTIFICATES.find((cert) => cert !== lotl.signerCertificate)!;
    expect(xmlsecVerifies('eu-lotl-other-key.xml', xml, other)).toBe(false);
    expect(esignVerifies(xml, [other])).toBe(false);
  });

  it.each(NATIONAL)('the real list of %s: valid with the certificate the LOTL gives', (territory) => {
    const xml = readFileSync(join(FIXTURES, `${territory}.xml`));
    const pointer = lotl.pointers.find((p) => p.territory === territory)!;
    const list = readTrustedList(xml, pointer.signingCertificates, territory);
    expect(list.territory).toBe(territory);
    expect(xmlsecVerifies(`${territory}.xml`, xml, list.signerCertificate)).toBe(true);
  });

  it.each(['eu-lotl', ...NATIONAL])('tampered copies of %s: both refuse each', (name) => {
    const xml = readFileSync(join(FIXTURES, `${name}.xml`), 'utf8');
    const certificates =
      name === 'eu-lotl'
        ? LOTL_SIGNING_CERTIFICATES
        : lotl.pointers.find((p) => p.territory === name)!.signingCertificates;
    const signer = readTrustedList(Buffer.from(xml), certificates, name).signerCertificate;
    const copies = tamperedCopies(xml);
    expect(copies.length).toBeGreaterThanOrEqual(2);
    for (const [what, copy] of copies) {
      expect(copy, what).not.toBe(xml);
      expect([what, xmlsecVerifies(`${name}-tampered.xml`, copy, signer)]).toEqual([what, false]);
      expect([what, esignVerifies(copy, certificates)]).toEqual([what, false]);
    }
  });

  it("a list esign's own signer made (as the sandbox publishes): valid, and its tampered copies refused", () => {
    const operator = testSigner('Scheme operator');
    const ca = testSigner('CA');
    const xml = signedList(nationalListDescription(ca.certificate), operator);
    expect(xmlsecVerifies('own.xml', xml, operator.certificate)).toBe(true);
    expect(esignVerifies(xml, [operator.certificate])).toBe(true);
    for (const [what, copy] of tamperedCopies(xml)) {
      expect([what, xmlsecVerifies('own-tampered.xml', copy, operator.certificate)]).toEqual([what, false]);
      expect([what, esignVerifies(copy, [operator.certificate])]).toEqual([what, false]);
    }
  });
});
