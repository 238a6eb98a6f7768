import { describe, expect, it } from 'vitest';
import { isEsignError } from '../errors.js';
import { xmlRules } from './refusal.js';
import { parseSecureXml } from './secure-parse.js';

const rules = xmlRules('in.xml', 1000);
const bytes = (text: string) => new TextEncoder().encode(text);

function refusal(input: string | Uint8Array): { code: string; message: string } {
  try {
    parseSecureXml(input, rules);
  } catch (error) {
    if (isEsignError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('not refused');
}

describe('parseSecureXml', () => {
  it('parses plain XML, namespaces and predefined entities', () => {
    const doc = parseSecureXml(bytes('<?xml version="1.0"?><a xmlns="urn:x">&lt;&#65;&amp;</a>'), rules);
    expect(doc.documentElement?.namespaceURI).toBe('urn:x');
    expect(doc.documentElement?.textContent).toBe('<A&');
  });

  it('reads the 8-bit encoding the declaration names, and UTF-16 by its byte-order mark', () => {
    const latin1 = Buffer.concat([
      Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?><a>'),
      Buffer.from([0xe9]),
      Buffer.from('</a>'),
    ]);
    expect(parseSecureXml(latin1, rules).documentElement?.textContent).toBe('é');
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('<a>ü</a>', 'utf16le')]);
    expect(parseSecureXml(utf16, rules).documentElement?.textContent).toBe('ü');
  });

  it.each([
    ['<!DOCTYPE a [<!ENTITY x "y">]><a>&x;</a>', 'XML_UNSAFE', 'a DOCTYPE'],
    ['<a><!ENTITY x "y"></a>', 'XML_UNSAFE', 'an entity declaration'],
    ['<a><!ELEMENT a ANY></a>', 'XML_UNSAFE', 'a markup declaration'],
    ['<a>&ext;</a>', 'XML_UNSAFE', 'an entity reference &ext;'],
    ['<a><b></a>', 'XML_MALFORMED', 'not well-formed XML'],
    ['<a x="1></a>', 'XML_MALFORMED', 'not well-formed XML'],
    ['', 'XML_MALFORMED', 'not well-formed XML'],
  ])('refuses %j in one line naming what it found', (xml, code, what) => {
    const { code: got, message } = refusal(bytes(xml));
    expect(got).toBe(code);
    expect(message).toContain('in.xml: ');
    expect(message).toContain(what);
    expect(message).not.toContain('\n');
  });

  it('refuses a document over the size limit before decoding it', () => {
    expect(refusal(bytes(`<a>${'x'.repeat(1000)}</a>`))).toMatchObject({ code: 'XML_TOO_LARGE' });
    expect(refusal(`<a>${'x'.repeat(1000)}</a>`)).toMatchObject({ code: 'XML_TOO_LARGE' });
  });

  it('refuses bytes that are not in the declared encoding', () => {
    expect(refusal(new Uint8Array([0x3c, 0x61, 0x3e, 0xff, 0x3c, 0x2f, 0x61, 0x3e]))).toMatchObject({
      code: 'XML_MALFORMED',
      message: 'in.xml: not UTF-8 text',
    });
    expect(refusal(bytes('<?xml version="1.0" encoding="x-nothing"?><a/>')).message).toContain('x-nothing');
  });
});
