import { describe, expect, it } from 'vitest';
import { EsignError } from '../../../errors.js';
import { parseSecureXml } from '../../../xml/secure-parse.js';
import type { XmlElement } from '../../../xml/types/xml-libs.js';
import { canonicalize } from './read-c14n.js';

const INCLUSIVE = {
  uri: 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315',
  exclusive: false,
  comments: false,
  version11: false,
};
const EXCLUSIVE = {
  uri: 'http://www.w3.org/2001/10/xml-exc-c14n#',
  exclusive: true,
  comments: false,
  version11: false,
};

function element(xml: string, namespace: string, name: string): XmlElement {
  const doc = parseSecureXml(xml, {
    maxBytes: 1 << 20,
    refuse: (_kind: string, reason: string) => new EsignError('XML_UNSAFE', reason),
  } as never);
  return doc.getElementsByTagNameNS(namespace, name)[0] as unknown as XmlElement;
}

describe('canonicalize: an element of a document whose ancestor declares the default namespace', () => {
  const xml = '<Invoice xmlns="urn:a" xmlns:p="urn:p"><Data Id="x"><p:Amount>1</p:Amount></Data></Invoice>';

  it('inclusive c14n declares the inherited default namespace once, with the other namespaces in scope', () => {
    const data = element(xml, 'urn:a', 'Data');
    expect(canonicalize({ node: data, excluded: [], comments: false }, INCLUSIVE)).toBe(
      '<Data xmlns="urn:a" xmlns:p="urn:p" Id="x"><p:Amount>1</p:Amount></Data>',
    );
  });

  it('exclusive c14n declares only what is used, each where it is first used', () => {
    const data = element(xml, 'urn:a', 'Data');
    expect(canonicalize({ node: data, excluded: [], comments: false }, EXCLUSIVE)).toBe(
      '<Data xmlns="urn:a" Id="x"><p:Amount xmlns:p="urn:p">1</p:Amount></Data>',
    );
  });

  it('an element of another prefix under the default namespace gets the default namespace once, from its ancestor', () => {
    const amount = element(xml, 'urn:p', 'Amount');
    expect(canonicalize({ node: amount, excluded: [], comments: false }, INCLUSIVE)).toBe(
      '<p:Amount xmlns="urn:a" xmlns:p="urn:p">1</p:Amount>',
    );
  });
});
