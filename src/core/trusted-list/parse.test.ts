import { describe, expect, it } from 'vitest';
import { SignedXml } from 'xml-crypto';
import { isEsignError } from '../errors.js';
import { trustedListXml } from './build.js';
import { readTrustedList } from './parse.js';
import {
  CA_QC,
  GRANTED,
  QSCD_QUALIFICATION,
  WITHDRAWN,
  nationalListDescription,
  signedList,
  testSigner,
} from './test-lists.js';

const operator = testSigner('Scheme operator BE');
const stranger = testSigner('Someone else');
const ca = testSigner('Test qualified CA');
const xml = signedList(nationalListDescription(ca.certificate), operator);
const bytes = (text: string) => new TextEncoder().encode(text);

function refusal(text: string, certificates = [operator.certificate]): string {
  try {
    readTrustedList(bytes(text), certificates, 'BE');
  } catch (error) {
    if (isEsignError(error)) return `${error.code}: ${error.message}`;
    throw error;
  }
  throw new Error('the list was accepted');
}

describe('readTrustedList: a national list', () => {
  it('verifies the signature and reads services, history and qualifications from the signed content', () => {
    const list = readTrustedList(bytes(xml), [stranger.certificate, operator.certificate], 'https://tl.example/be.xml');
    expect(list).toMatchObject({
      territory: 'BE',
      isLotl: false,
      sequenceNumber: 12,
      issueDate: '2026-01-01T00:00:00.000Z',
      nextUpdate: '2026-07-01T00:00:00.000Z',
      operator: 'Test operator',
      source: 'https://tl.example/be.xml',
      test: false,
      signerCertificate: operator.certificate,
      pointers: [],
    });
    expect(list.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(list.services).toEqual([
      {
        provider: 'Test QTSP',
        providerTradeNames: ['VATBE-0123456789'],
        name: 'Test qualified CA',
        type: CA_QC,
        identity: { certificates: [ca.certificate], subjectNames: [], subjectKeyIdentifiers: [] },
        history: [
          {
            status: GRANTED,
            from: '2025-06-01T00:00:00.000Z',
            additionalServiceInformation: ['http://uri.etsi.org/TrstSvc/TrustedList/SvcInfoExt/ForeSignatures'],
            qualifications: [QSCD_QUALIFICATION],
          },
          { status: WITHDRAWN, from: '2024-01-01T00:00:00.000Z', additionalServiceInformation: [], qualifications: [] },
        ],
      },
    ]);
  });

  it('refuses a list signed by a certificate it was not given', () => {
    expect(refusal(xml, [stranger.certificate])).toMatch(/^TRUST_LIST_SIGNER_UNTRUSTED: BE: /);
  });

  it('refuses a byte changed inside the signed part (digest mismatch)', () => {
    expect(refusal(xml.replace('Test QTSP', 'Test QTSQ'))).toMatch(/^TRUST_LIST_SIGNATURE_INVALID: .*digest/);
    expect(refusal(xml.replace('>12<', '>13<'))).toMatch(/^TRUST_LIST_SIGNATURE_INVALID/);
  });

  it('refuses a changed signature value', () => {
    const value = /<ds:SignatureValue>([^<]{10})/.exec(xml)![1]!;
    const changed = value.startsWith('A') ? `B${value.slice(1)}` : `A${value.slice(1)}`;
    expect(refusal(xml.replace(value, changed))).toMatch(/^TRUST_LIST_SIGNER_UNTRUSTED/);
  });

  it('reads a value split by a comment as it was signed, not the text before the comment', () => {
    const split = xml.replace('<tsl:TSLSequenceNumber>12<', '<tsl:TSLSequenceNumber>1<!-- x -->2<');
    expect(split).not.toBe(xml);
    expect(readTrustedList(bytes(split), [operator.certificate], 'BE').sequenceNumber).toBe(12);
  });

  it('refuses DTDs, entities and billion laughs before parsing, in one line', () => {
    const laughs =
      '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]><lolz>&lol2;</lolz>';
    expect(refusal(laughs)).toBe('TRUST_LIST_UNSAFE_XML: BE: a DOCTYPE (DTDs and entities are refused)');
    const xxe = xml.replace('?>', '?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>');
    expect(refusal(xxe)).toMatch(/^TRUST_LIST_UNSAFE_XML/);
    expect(refusal(xml.replace('Test QTSP', '&e;'))).toMatch(/^TRUST_LIST_UNSAFE_XML: BE: an entity reference/);
  });

  it('refuses a list above the size limit and text that is not XML', () => {
    expect(() => readTrustedList(bytes(xml), [operator.certificate], 'BE')).not.toThrow();
    expect(refusal('not xml at all')).toMatch(/^TRUST_LIST_MALFORMED/);
    expect(refusal('<a>')).toMatch(/^TRUST_LIST_MALFORMED/);
  });
});

describe('readTrustedList: signature wrapping', () => {
  const signature = /<ds:Signature[\s\S]*<\/ds:Signature>/.exec(xml)![0];

  it('refuses a second TrustServiceStatusList, inside the signed one or around it', () => {
    const forged = xml.replace('Test QTSP', 'Forged QTSP').replace(/<ds:Signature[\s\S]*<\/ds:Signature>/, '');
    const inObject = xml.replace(
      '</ds:Signature>',
      `<ds:Object>${forged.replace(/^<\?xml[^>]*\?>/, '')}</ds:Object></ds:Signature>`,
    );
    expect(refusal(inObject)).toMatch(/^TRUST_LIST_STRUCTURE_INVALID: BE: more than one TrustServiceStatusList/);
    const around = forged.replace(
      '</tsl:TrustServiceStatusList>',
      `${xml.replace(/^<\?xml[^>]*\?>/, '')}</tsl:TrustServiceStatusList>`,
    );
    expect(refusal(around)).toMatch(/^TRUST_LIST_STRUCTURE_INVALID/);
  });

  it('refuses a moved Signature', () => {
    const moved = xml
      .replace(signature, '')
      .replace('</tsl:SchemeInformation>', `${signature}</tsl:SchemeInformation>`);
    expect(refusal(moved)).toBe(
      'TRUST_LIST_STRUCTURE_INVALID: BE: the Signature is not a child of the list element (possible signature wrapping)',
    );
  });

  it('refuses more than one Signature', () => {
    const twice = xml.replace(signature, signature + signature);
    expect(refusal(twice)).toMatch(/^TRUST_LIST_STRUCTURE_INVALID: BE: 2 Signature elements/);
  });

  it('refuses a signature whose reference covers another Id than the list', () => {
    const unsigned = trustedListXml(nationalListDescription(ca.certificate)).replace(
      '<tsl:SchemeInformation>',
      '<tsl:SchemeInformation Id="scheme">',
    );
    const signer = new SignedXml({
      privateKey: operator.identity.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
      signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
      canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
    });
    signer.addReference({
      xpath: "//*[local-name(.)='SchemeInformation']",
      transforms: ['http://www.w3.org/2001/10/xml-exc-c14n#'],
      digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
    });
    signer.computeSignature(unsigned, { prefix: 'ds', location: { reference: '/*', action: 'append' } });
    expect(refusal(signer.getSignedXml())).toMatch(/^TRUST_LIST_STRUCTURE_INVALID: BE: the signature covers "#scheme"/);
  });

  it('refuses an unsigned list', () => {
    expect(refusal(trustedListXml(nationalListDescription(ca.certificate)))).toMatch(
      /^TRUST_LIST_SIGNATURE_INVALID: BE: the list is not signed/,
    );
  });
});

describe('readTrustedList: a LOTL', () => {
  it('reads pointers with their signing certificates and the pivots', () => {
    const lotlSigner = testSigner('LOTL operator');
    const pivots = ['https://lotl.example/eu-lotl-pivot-2.xml', 'https://lotl.example/eu-lotl-pivot-1.xml'];
    const pointers = [
      {
        territory: 'BE',
        location: 'https://tl.example/be.xml',
        mimeType: 'application/vnd.etsi.tsl+xml',
        signingCertificates: [operator.certificate, stranger.certificate],
      },
    ];
    const lotl = signedList(
      {
        territory: 'EU',
        operator: 'European Commission',
        sequenceNumber: 300,
        issueDate: new Date('2026-01-01T00:00:00Z'),
        nextUpdate: new Date('2026-06-01T00:00:00Z'),
        test: true,
        pivots,
        pointers,
      },
      lotlSigner,
    );
    const list = readTrustedList(bytes(lotl), [lotlSigner.certificate], 'the LOTL');
    expect(list).toMatchObject({
      territory: 'EU',
      isLotl: true,
      test: true,
      sequenceNumber: 300,
      services: [],
      pivots,
      pointers,
    });
  });
});
