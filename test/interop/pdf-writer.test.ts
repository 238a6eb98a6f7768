/**
 * The incremental writer judged by tools we did not write: every input (made by Ghostscript,
 * qpdf, pdf-lib or by hand) gets a placeholder with dummy CMS bytes, and `qpdf --check` must
 * accept the result; `pdfsig` must see the field and report our exact ByteRange.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDssUpdate, bytesSource, prepareSignature, readPdf, spliceContents } from '../../src/core/pdf/index.js';
import type { SignatureOptions } from '../../src/core/pdf/index.js';
import { loadAppearanceAssets } from '../../src/cli/appearance-assets.js';
import {
  emptySignatureFieldPdf,
  ghostscriptPdf,
  linearizedPdf,
  multiRevisionPdf,
  pdfLibPdf,
  qpdfObjectStreamsPdf,
  readBytes,
} from '../helpers/pdf-fixtures.js';

const tools = ['qpdf', 'pdfsig', 'gs'];
const missing = tools.filter((tool) => spawnSync(tool, [tool === 'gs' ? '--version' : '-v']).error !== undefined);
if (missing.length > 0) console.warn(`pdf-writer interop tests skipped: ${missing.join(', ')} not installed`);

function run(tool: string, args: string[]): { status: number | null; out: string } {
  const result = spawnSync(tool, args, { encoding: 'utf8' });
  return { status: result.status, out: `${result.stdout}${result.stderr}` };
}

/** Appends `update` to the file's bytes and writes the result beside it. */
function writeOutput(input: string, original: Uint8Array, update: Uint8Array, suffix: string): string {
  const path = input.replace(/\.pdf$/, `.${suffix}.pdf`);
  writeFileSync(path, Buffer.concat([original, update]));
  return path;
}

async function signFile(input: string, opts: Partial<SignatureOptions> = {}, suffix = 'signed') {
  const original = readBytes(input);
  const assets = await loadAppearanceAssets(opts.visible);
  const pu = await prepareSignature(await readPdf(bytesSource(original)), {
    signingTime: new Date(),
    contentsSize: 8192,
    ...(assets ? { assets } : {}),
    ...opts,
  });
  const path = writeOutput(input, original, spliceContents(pu, new Uint8Array(600).fill(0x5a)), suffix);
  return { path, pu };
}

function expectQpdfCheckPasses(path: string): void {
  const { status, out } = run('qpdf', ['--check', path]);
  expect(out).toContain('No syntax or stream encoding errors found');
  expect(status, out).toBe(0);
}

describe.skipIf(missing.length > 0)('incremental updates pass qpdf --check and pdfsig', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'esign-pdf-writer-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // Each input with the cross-reference style its newest section has (the update must match it).
  const inputs: Record<string, [(dir: string) => Promise<string>, 'table' | 'stream']> = {
    ghostscript: [ghostscriptPdf, 'table'],
    'qpdf object streams': [qpdfObjectStreamsPdf, 'stream'],
    'qpdf linearized': [(d) => linearizedPdf(d), 'table'],
    'qpdf linearized with object streams': [(d) => linearizedPdf(d, { objectStreams: true }), 'stream'],
    'pdf-lib classic': [(d) => pdfLibPdf(d), 'table'],
    'pdf-lib object streams': [(d) => pdfLibPdf(d, { objectStreams: true }), 'stream'],
    'multi-revision': [multiRevisionPdf, 'table'],
  };

  it.each(Object.keys(inputs))('%s: placeholder, dummy CMS, qpdf --check', async (kind) => {
    const [make, style] = inputs[kind]!;
    const input = await make(dir);
    expectQpdfCheckPasses(input);
    expect((await readPdf(bytesSource(readBytes(input)))).xrefStyle).toBe(style);
    const { path, pu } = await signFile(input, {
      visible: { page: -1, rect: [40, 40, 240, 90], lines: ['Signed by esign', basename(input)] },
    });
    expectQpdfCheckPasses(path);
    const sig = run('pdfsig', [path]).out;
    expect(sig).toContain('Signature Field Name: Signature1');
    const [, a, b, c] = pu.byteRange;
    expect(sig).toContain(`Signed Ranges: [0 - ${a}], [${b} - ${b + c}]`);
  });

  it('existing empty signature field: signed in place', async () => {
    const { path } = await signFile(await emptySignatureFieldPdf(dir), { fieldName: 'Approval' });
    expectQpdfCheckPasses(path);
    expect(run('pdfsig', [path]).out).toContain('Signature Field Name: Approval');
  });

  it('signature, second signature, DSS and document timestamp stack up as four valid revisions', async () => {
    const first = await signFile(await qpdfObjectStreamsPdf(dir), {}, 'one');
    const second = await signFile(first.path, { reason: 'Counter-signed' }, 'two');
    const afterSecond = readBytes(second.path);
    const dss = await buildDssUpdate(await readPdf(bytesSource(afterSecond)), {
      certs: [new Uint8Array([0x30, 0x03, 0x02, 0x01, 0x01])],
    });
    const withDss = writeOutput(second.path, afterSecond, dss, 'dss');
    const dts = await signFile(withDss, { kind: 'docTimeStamp' }, 'dts');
    expectQpdfCheckPasses(dts.path);
    const sig = run('pdfsig', [dts.path]).out;
    expect(sig).toContain('Signature #3');
    expect(sig).toContain('Signature Field Name: Timestamp1');
    expect(sig).toContain(`Signed Ranges: [0 - ${first.pu.byteRange[1]}]`);
  });
});
