/**
 * Certification signatures judged by tools we did not write. pyHanko is not installable here (no
 * PyPI, not in Debian); of the Debian and npm tools, none validates DocMDP: pdfsig reports the
 * signature valid over the whole document but says nothing of certification, so qpdf reads the
 * structure (/Perms /DocMDP → the signature, its /Reference TransformMethod DocMDP and P) from the
 * outside, and pdfsig checks the certification signature itself and the approval signed after it.
 */
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pdfLibPdf } from '../helpers/pdf-fixtures.js';
import {
  closeInteropSetup,
  pdfsig,
  qpdfCheck,
  runTool,
  startInteropSetup,
  type InteropSetup,
} from '../helpers/pdf-judges.js';
import { runCli } from '../helpers/run-cli.js';

const has = (tool: string) => spawnSync('which', [tool]).status === 0;
const missing = ['qpdf', 'pdfsig', 'certutil'].filter((tool) => !has(tool));

let setup: InteropSetup;
beforeAll(async () => {
  if (missing.length === 0) setup = await startInteropSetup('esign-interop-certify-');
});
afterAll(async () => {
  await closeInteropSetup(setup ?? {});
});

type QpdfObject = { value?: Record<string, unknown> } & Record<string, unknown>;

/** The catalog's /Perms /DocMDP signature and its DocMDP P, as qpdf --json (v2) reads them. */
async function docMdpByQpdf(path: string): Promise<{ p: unknown; transform: unknown; sameAsField: boolean }> {
  const result = await runTool('qpdf', ['--json=2', '--json-key=qpdf', path]);
  expect(result.status, result.stderr).toBe(0);
  const objects = (JSON.parse(result.stdout) as { qpdf: [unknown, Record<string, QpdfObject>] }).qpdf[1];
  const get = (ref: unknown): Record<string, unknown> =>
    (objects[`obj:${String(ref)}`]?.value ?? {}) as Record<string, unknown>;
  const trailer = objects['trailer']?.value as Record<string, unknown>;
  const catalog = get(trailer['/Root']);
  const perms = (typeof catalog['/Perms'] === 'string' ? get(catalog['/Perms']) : catalog['/Perms']) as Record<
    string,
    unknown
  >;
  const sigRef = perms['/DocMDP'];
  const sig = get(sigRef);
  const reference = (sig['/Reference'] as Array<Record<string, unknown>>)[0]!;
  const params = reference['/TransformParams'] as Record<string, unknown>;
  const fields = (
    (typeof catalog['/AcroForm'] === 'string' ? get(catalog['/AcroForm']) : catalog['/AcroForm']) as Record<
      string,
      unknown
    >
  )['/Fields'] as unknown[];
  return {
    p: params['/P'],
    transform: reference['/TransformMethod'],
    sameAsField: fields.some((field) => get(field)['/V'] === sigRef),
  };
}

describe.skipIf(missing.length > 0)('certification signatures judged by qpdf and pdfsig', () => {
  for (const [permissions, level] of [
    ['no-changes', 1],
    ['form-filling', 2],
    ['annotations', 3],
  ] as const) {
    it(`--certify ${permissions}: qpdf finds /Perms /DocMDP → the field's signature with TransformMethod DocMDP, P=${level}; pdfsig: valid, whole document`, async () => {
      const input = await pdfLibPdf(setup.work.dir);
      const output = join(setup.work.dir, `certified-${level}.pdf`);
      const result = await runCli(
        [
          '--auto-approve',
          '--quiet',
          'sign',
          '--force',
          '--level',
          'B-B',
          '--certify',
          permissions,
          '-o',
          output,
          input,
        ],
        { env: setup.sandbox.env },
      );
      expect(result.code, result.stderr).toBe(0);
      expect(await qpdfCheck(output)).toBe(0);
      expect(await docMdpByQpdf(output)).toEqual({ p: level, transform: '/DocMDP', sameAsField: true });
      const judged = await pdfsig(output, setup.nssDir);
      expect(judged.signatures, judged.raw).toEqual([
        expect.objectContaining({ valid: true, trusted: true, totalDocument: true }),
      ]);
      if (level !== 3) return;
      // P=3 allows a new signature field: the approval after it, and the certification, both valid to pdfsig.
      const approved = join(setup.work.dir, 'approved-3.pdf');
      const second = await runCli(
        ['--auto-approve', '--quiet', 'sign', '--force', '--level', 'B-B', '--visible', '-o', approved, output],
        { env: setup.sandbox.env },
      );
      expect(second.code, second.stderr).toBe(0);
      const both = await pdfsig(approved, setup.nssDir);
      expect(
        both.signatures.map((signature) => signature.valid),
        both.raw,
      ).toEqual([true, true]);
      expect((await readFile(approved)).subarray(0, (await readFile(output)).length)).toEqual(await readFile(output));
    });
  }
});
