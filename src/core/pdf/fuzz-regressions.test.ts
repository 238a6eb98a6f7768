/**
 * Minimized cases found by `pdf.fuzz.test.ts`: each once escaped as a raw exception, an INTERNAL
 * error or a broken output, and must now be a typed PDF_XREF_BROKEN refusal.
 */
import { describe, expect, it } from 'vitest';
import { buildClassicPdf, refusal } from '../../../test/helpers/pdf-fixtures.js';

const latin1 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('latin1');
const bytes = (text: string): Uint8Array => Uint8Array.from(text, (ch) => ch.charCodeAt(0));

describe('PDF reader: fuzz regressions', () => {
  it('damage right after "startxref" (a "<" that is no hex string) is PDF_XREF_BROKEN, not a lexer exception', async () => {
    const pdf = latin1(buildClassicPdf()).replace(/startxref\n\d+/, 'startxref\n<zz');
    expect(await refusal(bytes(pdf))).toBe('PDF_XREF_BROKEN');
  });

  it('a negative generation in an xref table entry is PDF_XREF_BROKEN (the writer would copy it into a table nobody can read)', async () => {
    const pdf = latin1(buildClassicPdf()).replace(/(\d{10}) 00000 n(\r\n)(?![\s\S]*\d{10} 00000 n)/, '$1 -1 n$2');
    expect(pdf).toContain(' -1 n');
    expect(await refusal(bytes(pdf))).toBe('PDF_XREF_BROKEN');
  });

  it('a trailer /Size beyond 2^53 is PDF_XREF_BROKEN, not an INTERNAL "ByteRange did not settle"', async () => {
    const pdf = latin1(buildClassicPdf()).replace(/\/Size \d+/, '/Size 9007199254740993');
    expect(await refusal(bytes(pdf))).toBe('PDF_XREF_BROKEN');
  });
});
