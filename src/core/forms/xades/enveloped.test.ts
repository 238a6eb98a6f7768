import { describe, expect, it } from 'vitest';
import { decodeDocument, signatureOffset } from './enveloped.js';
import { parseSignaturePolicy, FACTURAE_3_1 } from '../shared/xades/policy.js';

const bytes = (text: string, encoding: BufferEncoding = 'utf8') => new Uint8Array(Buffer.from(text, encoding));

describe('where an enveloped signature goes', () => {
  it('before the root end tag, past the comments, instructions and whitespace after it', () => {
    const text = '<?xml version="1.0"?>\n<a:Root xmlns:a="urn:x"><b>1</b></a:Root >\n<!-- </a:Root> -->\n<?pi x?>\n';
    expect(signatureOffset(bytes(text), 'a:Root', 'x.xml')).toBe(text.indexOf('</a:Root >'));
  });

  it('refuses a root written as one empty tag, and a file whose end tag is not the root’s', () => {
    expect(() => signatureOffset(bytes('<Root/>'), 'Root', 'x.xml')).toThrow(/no end tag/);
    expect(() => signatureOffset(bytes('<Root><Other></Other>'), 'Root', 'x.xml')).toThrow(/no end tag/);
  });
});

describe('the document as decoded for signing', () => {
  it('reads the encoding its declaration names, and UTF-8 without one', () => {
    expect(decodeDocument(bytes('<?xml version="1.0" encoding="ISO-8859-1"?><a>\xe9</a>', 'latin1'), 'x')).toContain(
      'é',
    );
    expect(decodeDocument(bytes('<a>é</a>'), 'x')).toBe('<a>é</a>');
  });

  it('refuses what is not XML, UTF-16, and invalid UTF-8, pointing to a container', () => {
    expect(() => decodeDocument(bytes('%PDF-1.7\n'), 'a.pdf')).toThrow(/a\.pdf is not an XML document/);
    expect(() => decodeDocument(bytes('\ufeff<a/>', 'utf16le'), 'u.xml')).toThrow(/UTF-16/);
    expect(() => decodeDocument(Uint8Array.of(0x3c, 0x61, 0x3e, 0xff, 0x3c), 'b.xml')).toThrow(/not valid utf-8/);
    try {
      decodeDocument(bytes('plain text'), 'notes.txt');
    } catch (error) {
      expect((error as { hint?: string }).hint).toMatch(/--format asice/);
    }
  });
});

describe('--signature-policy', () => {
  it('names the FacturaE 3.1 preset', () => {
    expect(parseSignaturePolicy('facturae-3.1')).toBe(FACTURAE_3_1);
    expect(FACTURAE_3_1.hashBase64).toBe('Ohixl6upD6av8N7pEvDABhEL6hM=');
  });

  it('reads OID,URL,ALG:HASH, checking the hash’s length for its algorithm', () => {
    const hash = Buffer.alloc(32, 7).toString('base64');
    expect(parseSignaturePolicy(`2.16.724.1.3.1.1.2.1.9,https://example.org/p.pdf,sha256:${hash}`)).toEqual({
      identifier: 'urn:oid:2.16.724.1.3.1.1.2.1.9',
      hashAlgorithm: 'sha256',
      hashBase64: hash,
      url: 'https://example.org/p.pdf',
    });
    expect(() => parseSignaturePolicy(`1.2.3,https://example.org/p.pdf,sha1:${hash}`)).toThrow(/20 bytes/);
    expect(() => parseSignaturePolicy('facturae')).toThrow(/not a preset/);
    expect(() => parseSignaturePolicy(`x.y,https://e.org/p,sha256:${hash}`)).toThrow(/not an OID/);
  });
});
