import { describe, expect, it } from 'vitest';
import { buildAppearance, toWinAnsi } from './appearance.js';

const fontSize = (content: string) => Number(/\/Helv ([\d.]+) Tf/.exec(content)?.[1]);

describe('appearance', () => {
  it('encodes WinAnsi, replacing what it lacks with "?"', () => {
    expect([...toWinAnsi('Aé€–Ω😀')]).toEqual([0x41, 0xe9, 0x80, 0x96, 0x3f, 0x3f]);
  });

  it('scales text to fit the box, never above 12 pt', () => {
    const roomy = Buffer.from(buildAppearance(400, 100, ['short']).data).toString('latin1');
    const narrow = Buffer.from(buildAppearance(60, 100, ['a much longer line of text']).data).toString('latin1');
    const many = Buffer.from(buildAppearance(400, 30, ['1', '2', '3', '4']).data).toString('latin1');
    expect(fontSize(roomy)).toBe(12);
    expect(fontSize(narrow)).toBeLessThan(5);
    expect(fontSize(many) * 1.2 * 4).toBeLessThanOrEqual(30);
  });

  it('escapes PDF string delimiters in the text', () => {
    const content = Buffer.from(buildAppearance(200, 50, ['a (b) \\ c']).data).toString('latin1');
    expect(content).toContain('(a \\(b\\) \\\\ c) Tj');
  });
});
