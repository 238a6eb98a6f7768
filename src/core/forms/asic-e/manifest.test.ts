import { describe, expect, it } from 'vitest';
import { isEsignError } from '../../errors.js';
import { buildManifest, mimeTypeOf, parseManifest } from './manifest.js';

const digestValue = new Uint8Array(32).map((_, index) => index);

function refusal(xml: string): string {
  try {
    parseManifest(new TextEncoder().encode(xml), 'M.xml');
  } catch (error) {
    if (isEsignError(error) && error.code === 'CONTAINER_INVALID') return error.message;
    throw error;
  }
  throw new Error('not refused');
}

const reference = (uri: string) =>
  `<DataObjectReference URI="${uri}" MimeType="text/plain"><ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/><ds:DigestValue>AAEC</ds:DigestValue></DataObjectReference>`;
const manifest = (body: string) =>
  `<?xml version="1.0"?>\n<ASiCManifest xmlns="http://uri.etsi.org/02918/v1.2.1#" xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><SigReference URI="META-INF/s.p7s"/>${body}</ASiCManifest>`;

describe('ASiCManifest', () => {
  it('reads back what it writes: names with spaces, ampersands and non-ASCII, digests and MIME types', () => {
    const references = [
      { name: 'a b&c.txt', mimeType: mimeTypeOf('a b&c.txt'), digest: 'sha256' as const, digestValue },
      { name: 'dir/ζωή.pdf', mimeType: mimeTypeOf('dir/ζωή.pdf'), digest: 'sha512' as const, digestValue },
    ];
    const parsed = parseManifest(buildManifest({ signature: 'META-INF/signature001.p7s', references }), 'M.xml');
    expect(parsed).toEqual({ signature: 'META-INF/signature001.p7s', references });
    expect(references.map((entry) => entry.mimeType)).toEqual(['text/plain', 'application/pdf']);
  });

  it('reads another writer’s prefixes and a ./ before names', () => {
    const other = manifest(reference('./x.txt')).replaceAll('ds:', 'ns2:').replace('xmlns:ds', 'xmlns:ns2');
    expect(parseManifest(new TextEncoder().encode(other), 'M.xml').references[0]!.name).toBe('x.txt');
  });

  it.each([
    [
      'a DTD',
      `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e "boom">]>${manifest(reference('a'))}`,
      /a DTD, comment or CDATA/,
    ],
    ['an entity', manifest(reference('&e;')), /the entity &e;/],
    ['a bare ampersand', manifest(reference('a&b')), /a bare "&"/],
    ['no signature', manifest('').replace('<SigReference URI="META-INF/s.p7s"/>', ''), /must name one signature/],
    ['no files', manifest(''), /names no files/],
    ['an unknown digest', manifest(reference('a').replace('xmlenc#sha256', 'xmldsig#sha1')), /does not check/],
    ['an unclosed element', manifest(reference('a')).replace('</ASiCManifest>', ''), /is not closed/],
    ['deep nesting', manifest('<a>'.repeat(20) + '</a>'.repeat(20)), /nesting too deep/],
    ['trailing content', manifest(reference('a')) + '<x/>', /content after the root element/],
  ])('refuses %s in one line', (_, xml, reason) => {
    expect(refusal(xml)).toMatch(reason);
  });
});
