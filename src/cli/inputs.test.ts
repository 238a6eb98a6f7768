import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/tmp.js';
import { expandInputs, planJobs } from './inputs.js';

describe('expandInputs', () => {
  it("lists a directory's regular files (and links to files) in name order, without hidden files or esign outputs", async () => {
    const dir = await tempDir('esign-inputs-');
    for (const name of ['b.pdf', 'a.txt', '.hidden.pdf', 'a-signed.pdf', 'a.txt.p7s'])
      await writeFile(join(dir, name), 'x');
    await mkdir(join(dir, 'sub'));
    await symlink(join(dir, 'a.txt'), join(dir, 'c-link.txt'));
    await symlink(join(dir, 'sub'), join(dir, 'd-link'));
    expect([...(await expandInputs([dir]))]).toEqual([join(dir, 'a.txt'), join(dir, 'b.pdf'), join(dir, 'c-link.txt')]);
  });

  it('names a file once when several arguments reach it', async () => {
    const dir = await tempDir('esign-inputs-');
    await writeFile(join(dir, 'a.pdf'), 'x');
    expect([...(await expandInputs([dir, join(dir, 'a.pdf'), join(dir, '*.pdf')]))]).toEqual([join(dir, 'a.pdf')]);
  });
});

describe('planJobs', () => {
  it('derives each output from its input and the output directory', () => {
    const [pdf, other] = [...planJobs(['in/a.pdf', 'in/notes.txt'], { outputDir: 'out' })];
    expect([pdf!.input, pdf!.output, pdf!.kind]).toEqual(['in/a.pdf', join('out', 'a-signed.pdf'), 'pdf']);
    expect([other!.output, other!.kind]).toEqual([join('out', 'notes.txt.p7s'), 'cades']);
    expect(planJobs(['a.pdf'], { output: 'signed.pdf' }).at(0).output).toBe('signed.pdf');
  });

  it('refuses two inputs with one output, among many that differ', () => {
    const inputs = Array.from({ length: 5000 }, (_, index) => `one/doc-${index}.pdf`);
    expect(planJobs(inputs, { outputDir: 'out' })).toHaveLength(5000);
    expect(() => planJobs([...inputs, 'two/doc-4321.pdf'], { outputDir: 'out' })).toThrow(
      /Two inputs would be written to out\/doc-4321-signed\.pdf/,
    );
  });

  it('refuses an output that would replace its input', () => {
    expect(() => planJobs(['a.pdf'], { output: './a.pdf' })).toThrow(/would replace its input/);
  });
});
