/**
 * `esign verify` and pdfsig (poppler, sandbox root trusted in an NSS database) agree on validity for
 * every input of the sign interop test, signed by esign, and on a tampered copy of each.
 */
import { execFile, spawnSync } from 'node:child_process';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  emptySignatureFieldPdf,
  ghostscriptPdf,
  linearizedPdf,
  multiRevisionPdf,
  pdfLibPdf,
  qpdfObjectStreamsPdf,
} from '../helpers/pdf-fixtures.js';
import { startInteropSetup, closeInteropSetup } from '../helpers/pdf-judges.js';
import { runCli } from '../helpers/run-cli.js';
import { type TestSandbox } from '../helpers/sandbox.js';

const has = (tool: string) => spawnSync('which', [tool]).status === 0;
const missing = ['pdfsig', 'qpdf', 'gs', 'certutil'].filter((tool) => !has(tool));
if (missing.length > 0) console.warn(`interop verify tests skipped: missing ${missing.join(', ')}`);

let sandbox: TestSandbox;
let work: { dir: string; remove: () => Promise<void> };
let nssDir: string;

beforeAll(async () => {
  if (missing.length > 0) return;
  ({ sandbox, work, nssDir } = await startInteropSetup('esign-interop-verify-'));
});
afterAll(() => closeInteropSetup({ sandbox, work }));

/** Async on purpose: pdfsig asks the in-process sandbox's OCSP responder. */
function run(tool: string, args: string[]): Promise<string> {
  return new Promise((resolve) =>
    execFile(tool, args, { encoding: 'utf8', timeout: 60_000 }, (_error, stdout, stderr) => resolve(stdout + stderr)),
  );
}

async function pdfsigValidity(path: string): Promise<boolean[]> {
  const raw = await run('pdfsig', ['-nssdir', `sql:${nssDir}`, path]);
  return raw
    .split(/^Signature #\d+:$/m)
    .slice(1)
    .map(
      (block) =>
        /Signature Validation: Signature is Valid\./.test(block) &&
        /Certificate Validation: Certificate is Trusted\./.test(block),
    );
}

async function esignValidity(path: string): Promise<{ code: number | null; valid: boolean[] }> {
  const result = await runCli(['--json', 'verify', path], { env: sandbox.env });
  const report = result.json<{ signatures: Array<{ status: string }> }>();
  return { code: result.code, valid: report.signatures.map((s) => s.status === 'valid') };
}

async function sign(input: string, extra: string[] = []): Promise<string> {
  const output = input.replace(/\.pdf$/, '-signed.pdf');
  const result = await runCli(['--auto-approve', '--quiet', 'sign', '--force', '-o', output, ...extra, input], {
    env: sandbox.env,
  });
  expect(result.code, result.stderr).toBe(0);
  return output;
}

const agreement = { files: 0, agreed: 0 };

describe.skipIf(missing.length > 0)('esign verify agrees with pdfsig', () => {
  const producers: Array<[string, (dir: string) => Promise<string>, string[]]> = [
    ['ghostscript', ghostscriptPdf, []],
    ['qpdf --object-streams=generate', qpdfObjectStreamsPdf, []],
    ['qpdf --linearize', (dir) => linearizedPdf(dir), []],
    ['qpdf --linearize with object streams', (dir) => linearizedPdf(dir, { objectStreams: true }), []],
    ['pdf-lib (classic xref)', (dir) => pdfLibPdf(dir, { objectStreams: false }), ['--level', 'B-T']],
    ['pdf-lib (xref stream)', (dir) => pdfLibPdf(dir, { objectStreams: true }), []],
    ['a multi-revision file', multiRevisionPdf, []],
    ['an empty signature field', emptySignatureFieldPdf, ['--field', 'Approval']],
    [
      'the sample contract',
      async (dir) => {
        const path = join(dir, 'contract.pdf');
        await copyFile(join(import.meta.dirname, '../../samples/contract.pdf'), path);
        return path;
      },
      ['--visible'],
    ],
  ];

  for (const [producer, make, extra] of producers) {
    it(`${producer}: signed valid by both; one tampered byte invalid by both`, async () => {
      const dir = join(work.dir, producer.replace(/\W+/g, '-'));
      await mkdir(dir, { recursive: true });
      const signed = await sign(await make(dir), extra);
      const [ours, theirs] = [await esignValidity(signed), await pdfsigValidity(signed)];
      expect(ours.valid).toEqual(theirs);
      expect(ours.valid).toEqual([true]);
      expect(ours.code).toBe(0);

      const bytes = await readFile(signed);
      const tampered = join(dir, 'tampered.pdf');
      const copy = Buffer.from(bytes);
      // The byte after the '%' of the binary comment line: inside the signed range, harmless to the structure.
      const at = copy.indexOf('\n%', 5) + 2;
      copy[at] = copy[at] === 0xaa ? 0xab : 0xaa;
      await writeFile(tampered, copy);
      const [ours2, theirs2] = [await esignValidity(tampered), await pdfsigValidity(tampered)];
      expect(ours2.valid).toEqual(theirs2);
      expect(ours2.code).toBe(9);
      agreement.files += 2;
      agreement.agreed += 2;
    });
  }

  it('a file signed twice: both signatures valid for both tools', async () => {
    const dir = join(work.dir, 'twice');
    await mkdir(dir, { recursive: true });
    const twice = await sign(await sign(await pdfLibPdf(dir)), ['--visible']);
    const [ours, theirs] = [await esignValidity(twice), await pdfsigValidity(twice)];
    expect(ours.valid).toEqual(theirs);
    expect(ours.valid).toEqual([true, true]);
    agreement.files += 1;
    agreement.agreed += 1;
    console.info(`esign verify / pdfsig agreement: ${agreement.agreed} of ${agreement.files} files`);
  });
});
