/**
 * Load (issue 9, item 5): one `esign sign` run over 1,000 one-page PDFs completes against the
 * sandbox in 20 authorizations (50 hashes each), every output a complete incremental update.
 * `npm run bench` measures the same batch with peak RSS.
 */
import { copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/tmp.js';

const DOCUMENTS = 1_000;

let t: TestSandbox;
beforeAll(async () => {
  t = await startTestSandbox({ autoApprove: true });
});
afterAll(async () => t?.close());

describe('load', () => {
  it('signs 1,000 one-page PDFs in one run with 20 authorizations', async () => {
    const dir = await tempDir('esign-load-');
    const inputs = join(dir, 'in');
    const outputs = join(dir, 'out');
    const document = await PDFDocument.create();
    const font = await document.embedFont(StandardFonts.Helvetica);
    document.addPage([595, 842]).drawText('load', { x: 72, y: 760, size: 14, font });
    const original = Buffer.from(await document.save({ useObjectStreams: false }));
    await mkdir(inputs, { recursive: true });
    await mkdir(outputs);
    await writeFile(join(inputs, 'doc-0000.pdf'), original);
    for (let index = 1; index < DOCUMENTS; index++)
      await copyFile(join(inputs, 'doc-0000.pdf'), join(inputs, `doc-${String(index).padStart(4, '0')}.pdf`));

    const start = t.sandbox.requestLog.length;
    const started = performance.now();
    const result = await runCli(
      ['--auto-approve', '--json', 'sign', '--level', 'B-B', '--output-dir', outputs, inputs],
      { env: t.env, timeoutMs: 300_000 },
    );
    const seconds = (performance.now() - started) / 1000;
    expect(result.code, result.stderr).toBe(0);
    console.log(
      `load: ${DOCUMENTS} one-page PDFs in ${seconds.toFixed(1)} s = ${(DOCUMENTS / seconds).toFixed(1)} documents/s (one CLI run, B-B, incl. start-up)`,
    );

    const calls = t.sandbox.requestLog.slice(start);
    expect(calls.filter((id) => id === 'signing POST /csc/v1/signatures/signHash')).toHaveLength(DOCUMENTS / 50);
    expect(result.jsonLines()).toHaveLength(DOCUMENTS);

    const names = (await readdir(outputs)).sort();
    expect(names).toHaveLength(DOCUMENTS);
    expect(names.every((name) => /^doc-\d{4}-signed\.pdf$/.test(name))).toBe(true);
    for (const name of names) {
      const signed = await readFile(join(outputs, name));
      expect(signed.subarray(0, original.length).equals(original), name).toBe(true);
      const tail = signed.subarray(original.length).toString('latin1');
      expect(tail, name).toMatch(/\/ByteRange\s*\[\s*0 \d+ \d+ \d+\s*\]/);
      expect(tail, name).toMatch(/%%EOF\s*$/);
    }
    expect((await readdir(inputs)).filter((name) => !name.endsWith('.pdf') || name.startsWith('.'))).toEqual([]);
  });
});
