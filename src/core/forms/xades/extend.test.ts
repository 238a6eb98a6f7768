import { describe, expect, it } from 'vitest';
import { elementSpans } from './extend.js';

describe('elementSpans: where each element of a document is, as byte offsets', () => {
  it('steps over comments, CDATA, instructions and quoted ">" and "<"; opens empty-element tags; follows the DOM order', () => {
    const text =
      '<?xml version="1.0"?>\n<!-- <fake> --><a x="1>2" y=\'<\'><b/><![CDATA[</a><c>]]><c><?pi <d>?><d></d></c>\u00e9</a>\n';
    const spans = elementSpans(text);
    expect(spans).toHaveLength(4);
    const [a, b, c, d] = spans;
    expect(text.slice(a!.openEnd - 1, a!.closeStart + 4)).toMatch(/^><b\/>[\s\S]*<\/a>$/);
    expect(b).toMatchObject({ selfClosing: true });
    expect(text.slice(b!.closeStart, b!.openEnd)).toBe('/>');
    expect(text.slice(c!.openEnd, c!.closeStart)).toBe('<?pi <d>?><d></d>');
    expect(text.slice(d!.openEnd, d!.closeStart)).toBe('');
    expect(text.slice(0, a!.closeStart).endsWith('\u00e9')).toBe(true);
  });

  it('refuses markup it cannot follow rather than guess (an unclosed comment, a stray end tag)', () => {
    expect(() => elementSpans('<a><!-- never closed</a>')).toThrow(/lost track/);
    expect(() => elementSpans('</a>')).toThrow(/lost track/);
  });
});
