/**
 * The XAdES reader's refusals, each on the smallest document that shows it: they are decided from
 * the structure, before any digest or key, so no signature needs to verify for them.
 */
import { describe, expect, it } from 'vitest';
import { isEsignError } from '../../../errors.js';
import { verifyXadesXml } from './verify.js';

const DS = 'http://www.w3.org/2000/09/xmldsig#';
const XADES = 'http://uri.etsi.org/01903/v1.3.2#';
const EXC = 'http://www.w3.org/2001/10/xml-exc-c14n#';
const ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature';
const SHA256 = 'http://www.w3.org/2001/04/xmlenc#sha256';
const options = { trustAnchors: [], now: new Date('2026-01-01T00:00:00Z') };

function reference(uri: string | undefined, transforms: string[] = [ENVELOPED], type?: string): string {
  const list = transforms.map((t) => (t.startsWith('<') ? t : `<ds:Transform Algorithm="${t}"/>`)).join('');
  return `<ds:Reference${uri === undefined ? '' : ` URI="${uri}"`}${type ? ` Type="${type}"` : ''}><ds:Transforms>${list}</ds:Transforms><ds:DigestMethod Algorithm="${SHA256}"/><ds:DigestValue>AA==</ds:DigestValue></ds:Reference>`;
}

const PROPS_TYPE = 'http://uri.etsi.org/01903#SignedProperties';

function signature(options: { references: string; qualifying?: string; id?: string }): string {
  return `<ds:Signature xmlns:ds="${DS}"${options.id === undefined ? ' Id="S1"' : options.id}><ds:SignedInfo><ds:CanonicalizationMethod Algorithm="${EXC}"/><ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"/>${options.references}</ds:SignedInfo><ds:SignatureValue>AA==</ds:SignatureValue>${options.qualifying ?? ''}</ds:Signature>`;
}

const QUALIFYING = `<ds:Object><xades:QualifyingProperties xmlns:xades="${XADES}" Target="#S1"><xades:SignedProperties Id="SP1"/></xades:QualifyingProperties></ds:Object>`;
const withProperties = (references: string, qualifying = QUALIFYING) =>
  signature({ references: references + reference('#SP1', [EXC], PROPS_TYPE), qualifying });

const doc = (inner: string) => `<doc Id="D1"><a Id="A1">x</a>${inner}</doc>`;

async function refusal(xml: string): Promise<string> {
  try {
    await verifyXadesXml({ name: 'in.xml', bytes: new TextEncoder().encode(xml) }, options);
  } catch (error) {
    if (isEsignError(error, 'XADES_REFUSED')) {
      expect(error.message).not.toContain('\n');
      expect(error.exitCode).toBe(7);
      return error.message;
    }
    throw error;
  }
  throw new Error('not refused');
}

async function report(xml: string) {
  const results = await verifyXadesXml({ name: 'in.xml', bytes: new TextEncoder().encode(xml) }, options);
  expect(results).toHaveLength(1);
  return results[0]!.report;
}

describe('the XAdES reader refuses', () => {
  it.each([
    ['an Id given twice', doc(`<b Id="A1"/>${withProperties(reference(''))}`), 'the Id "A1" is given to two elements'],
    [
      'an external reference',
      doc(withProperties(reference('https://example.com/a.xml', []))),
      'an external reference to "https://example.com/a.xml"',
    ],
    [
      'a file: reference',
      doc(withProperties(reference('file:///etc/passwd', []))),
      'an external reference to "file:///etc/passwd"',
    ],
    ['an absolute path', doc(withProperties(reference('/etc/passwd', []))), 'an external reference'],
    ['a reference outside the container', doc(withProperties(reference('a/../../x', []))), 'outside the signature'],
    [
      'a file beside an enveloped signature',
      doc(withProperties(reference('data.bin', []))),
      "outside the signature's own document",
    ],
    [
      'a reference to no element',
      doc(withProperties(reference('#nothing', [EXC]))),
      'which no element of the document has as its Id',
    ],
    ['a reference without URI', doc(withProperties(reference(undefined, [EXC]))), 'a Reference without a URI'],
    [
      'an XSLT transform',
      doc(withProperties(reference('', ['http://www.w3.org/TR/1999/REC-xslt-19991116']))),
      'an XSLT transform',
    ],
    [
      'another XPath',
      doc(
        withProperties(
          reference('', [
            `<ds:Transform Algorithm="http://www.w3.org/TR/1999/REC-xpath-19991116"><ds:XPath>//a</ds:XPath></ds:Transform>`,
          ]),
        ),
      ),
      'an XPath transform other than',
    ],
    [
      'the enveloped XPath with its prefix bound elsewhere',
      doc(
        withProperties(
          reference('', [
            `<ds:Transform Algorithm="http://www.w3.org/TR/1999/REC-xpath-19991116"><ds:XPath xmlns:x="urn:other">not(ancestor-or-self::x:Signature)</ds:XPath></ds:Transform>`,
          ]),
        ),
      ),
      'an XPath transform other than',
    ],
    [
      'an XPath Filter 2.0 intersect',
      doc(
        withProperties(
          reference('', [
            `<ds:Transform Algorithm="http://www.w3.org/2002/06/xmldsig-filter2"><f:XPath xmlns:f="http://www.w3.org/2002/06/xmldsig-filter2" Filter="intersect">//a</f:XPath></ds:Transform>`,
          ]),
        ),
      ),
      'an XPath Filter 2.0 transform other than subtracting the signature',
    ],
    [
      'an enveloped transform on an element without the signature (moved)',
      doc(withProperties(reference('#A1'))),
      'a moved signature',
    ],
    [
      'a second SignedProperties',
      doc(
        withProperties(
          reference(''),
          QUALIFYING.replace(
            '</xades:QualifyingProperties>',
            '<xades:SignedProperties Id="SP2"/></xades:QualifyingProperties>',
          ),
        ),
      ),
      '2 SignedProperties in one Signature',
    ],
    [
      'QualifyingProperties for another signature',
      doc(withProperties(reference(''), QUALIFYING.replace('#S1', '#S9'))),
      'target "#S9"',
    ],
    [
      'SignedProperties referenced without the Type',
      doc(signature({ references: reference('') + reference('#SP1', [EXC]), qualifying: QUALIFYING })),
      'without the XAdES Type',
    ],
    [
      'the Type on a reference to something else',
      doc(signature({ references: reference('') + reference('#A1', [EXC], PROPS_TYPE), qualifying: QUALIFYING })),
      'to something other than this signature',
    ],
    [
      'SignedProperties nobody references',
      doc(signature({ references: reference(''), qualifying: QUALIFYING })),
      '0 references to the SignedProperties',
    ],
    [
      'a Signature with no SignedInfo',
      doc(`<ds:Signature xmlns:ds="${DS}"><ds:SignatureValue/></ds:Signature>`),
      '0 SignedInfo elements',
    ],
  ])('%s', async (_name, xml, what) => {
    expect(await refusal(xml)).toContain(what);
  });
});

describe('the XAdES reader reads (and then checks the digests)', () => {
  it.each([
    ['the enveloped transform', reference('')],
    ['a reference to the root by Id', reference('#D1')],
    ['"#" as the whole document', reference('#')],
    [
      'not(ancestor-or-self::ds:Signature)',
      reference('', [
        `<ds:Transform Algorithm="http://www.w3.org/TR/1999/REC-xpath-19991116"><ds:XPath>not(ancestor-or-self::ds:Signature)</ds:XPath></ds:Transform>`,
      ]),
    ],
    [
      'XPath Filter 2.0 subtracting here()/ancestor::ds:Signature[1]',
      reference('', [
        `<ds:Transform Algorithm="http://www.w3.org/2002/06/xmldsig-filter2"><f:XPath xmlns:f="http://www.w3.org/2002/06/xmldsig-filter2" Filter="subtract">here()/ancestor::ds:Signature[1]</f:XPath></ds:Transform>`,
      ]),
    ],
  ])('%s: a report (the made-up digest fails: HASH_FAILURE)', async (_name, ref) => {
    const signature = await report(doc(withProperties(ref)));
    expect(signature).toMatchObject({ kind: 'xades', status: 'invalid', subIndication: 'HASH_FAILURE' });
  });

  it('an unknown transform, digest or canonicalization: INDETERMINATE naming it', async () => {
    const unknown = await report(doc(signature({ references: reference('', ['urn:example:transform']) })));
    expect(unknown.indication).toBe('INDETERMINATE');
    expect(unknown.problems.join('\n')).toContain('esign does not implement the transform urn:example:transform');
  });

  it('Canonical XML 1.1 of a subset under xml:lang: INDETERMINATE, not a guess', async () => {
    const xml = `<doc xml:lang="et"><a Id="A1">x</a>${signature({ references: reference('#A1', ['http://www.w3.org/2006/12/xml-c14n11']) })}</doc>`;
    const result = await report(xml);
    expect(result.indication).toBe('INDETERMINATE');
    expect(result.problems.join('\n')).toContain('Canonical XML 1.0 and 1.1 differ there');
  });

  it('a document with no signature: no results', async () => {
    expect(await verifyXadesXml({ name: 'in.xml', bytes: new TextEncoder().encode('<a/>') }, options)).toEqual([]);
  });
});
