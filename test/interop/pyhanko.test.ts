/**
 * Long-term validation and certification judged by pyHanko, a validator we did not write that checks
 * what pdfsig does not: PAdES-LT/LTA validation from the DSS alone with revocation freshness
 * (`--ltv-profile`, no `--retroactive-revinfo`, `--force-revinfo`), and each signature's DocMDP
 * level and modification level. pyHanko is neither on npm nor in Debian, so CI cannot run this file:
 * it runs only when ESIGN_PYHANKO names a Python that imports pyhanko (docs/interop.md).
 */
import { spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emptySignatureFieldBytes, pdfLibPdf } from '../helpers/pdf-fixtures.js';
import { runCli } from '../helpers/run-cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDirForFile } from '../helpers/tmp.js';
import { SANDBOX_SEAL } from '../../src/sandbox/deps.js';

const PYTHON = process.env['ESIGN_PYHANKO'];
const SKIPPED = 'skipped: set ESIGN_PYHANKO to a Python that imports pyhanko (not on npm or Debian; docs/interop.md)';
if (!PYTHON) console.warn(`interop pyhanko tests ${SKIPPED}`);

let sandbox: TestSandbox;
let work: { dir: string; remove: () => Promise<void> };
let sealEnv: Record<string, string>;

beforeAll(async () => {
  if (!PYTHON) return;
  sandbox = await startTestSandbox({ autoApprove: true });
  work = await tempDirForFile('esign-interop-pyhanko-');
  sealEnv = { ...sandbox.env, ESIGN_SERVICE_AUTH: 'client-credentials', ESIGN_CREDENTIAL_PIN: SANDBOX_SEAL.pin };
});
afterAll(async () => {
  await sandbox?.close();
  await work?.remove();
});

/** Runs the pyHanko Python; asynchronous, because pyHanko may ask the in-process sandbox's OCSP responder. */
function python(args: string[]): Promise<{ status: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON!, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, out }));
  });
}

/** `pyhanko sign validate` with only the sandbox root trusted; its one-line verdict per signature. */
async function pyhankoValidate(path: string, extra: string[]): Promise<{ status: number | null; out: string }> {
  return python([
    '-m',
    'pyhanko',
    'sign',
    'validate',
    '--trust',
    sandbox.rootPemPath,
    '--trust-replace',
    '--executive-summary',
    ...extra,
    path,
  ]);
}

/** Each signature as pyHanko sees it: its DocMDP level (certification) and the modifications after it. */
const DOCMDP_SCRIPT = `
import json, sys
from asn1crypto import pem, x509
from pyhanko.pdf_utils.reader import PdfFileReader
from pyhanko.sign.validation import validate_pdf_signature
from pyhanko_certvalidator import ValidationContext
root = x509.Certificate.load(pem.unarmor(open(sys.argv[1], 'rb').read())[2])
with open(sys.argv[2], 'rb') as f:
    out = []
    for s in PdfFileReader(f).embedded_signatures:
        st = validate_pdf_signature(s, ValidationContext(trust_roots=[root]))
        out.append({'field': s.field_name, 'docmdp': s.docmdp_level.value if s.docmdp_level else None,
                    'modification': st.modification_level.name, 'docmdpOk': st.docmdp_ok, 'valid': st.bottom_line})
print(json.dumps(out))
`;

interface PyhankoSignature {
  field: string;
  docmdp: number | null;
  modification: string;
  docmdpOk: boolean;
  valid: boolean;
}

async function pyhankoSignatures(path: string): Promise<PyhankoSignature[]> {
  const result = await python(['-c', DOCMDP_SCRIPT, sandbox.rootPemPath, path]);
  expect(result.status, result.out).toBe(0);
  return JSON.parse(result.out.trim().split('\n').at(-1)!) as PyhankoSignature[];
}

/** A PDF with one more revision that adds a text annotation to page 1, written by pyHanko's own incremental writer. */
const ANNOTATE_SCRIPT = `
import sys
from pyhanko.pdf_utils import generic
from pyhanko.pdf_utils.generic import pdf_name
from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
with open(sys.argv[1], 'rb') as f:
    w = IncrementalPdfFileWriter(f)
    page_ref = w.root['/Pages']['/Kids'][0]
    page = page_ref.get_object()
    annot = w.add_object(generic.DictionaryObject({
        pdf_name('/Type'): pdf_name('/Annot'), pdf_name('/Subtype'): pdf_name('/Text'),
        pdf_name('/Rect'): generic.ArrayObject([generic.NumberObject(v) for v in (100, 600, 120, 620)]),
        pdf_name('/Contents'): generic.TextStringObject('a later comment'), pdf_name('/P'): page_ref}))
    annots = page.get('/Annots')
    if annots is None:
        page[pdf_name('/Annots')] = generic.ArrayObject([annot])
    else:
        annots.get_object().append(annot)
        if isinstance(annots, generic.IndirectObject):
            w.mark_update(annots)
    w.update_container(page)
    with open(sys.argv[2], 'wb') as out:
        w.write(out)
`;

/** A PDF with one more revision that takes page 1's text annotations off it, written by pyHanko's own incremental writer. */
const UNANNOTATE_SCRIPT = `
import sys
from pyhanko.pdf_utils import generic
from pyhanko.pdf_utils.generic import pdf_name
from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
with open(sys.argv[1], 'rb') as f:
    w = IncrementalPdfFileWriter(f)
    page = w.root['/Pages']['/Kids'][0].get_object()
    kept = [a for a in page['/Annots'] if a.get_object().get('/Subtype') != '/Text']
    page[pdf_name('/Annots')] = generic.ArrayObject(kept)
    w.update_container(page)
    with open(sys.argv[2], 'wb') as out:
        w.write(out)
`;

describe.skipIf(!PYTHON)(
  `pyHanko judges long-term validation and certification (${PYTHON ? `ESIGN_PYHANKO=${PYTHON}` : SKIPPED})`,
  () => {
    it('a batch at B-LT and at B-LTA with the bulk seal: the last output of each window passes PAdES-LT/LTA validation with revocation freshness', async () => {
      const dir = join(work.dir, 'ltv');
      const inputs = join(dir, 'in');
      await mkdir(inputs, { recursive: true });
      const input = await readFile(await pdfLibPdf(dir));
      for (let index = 0; index < 5; index++) await writeFile(join(inputs, `doc-${index}.pdf`), input);
      // Windows of 2: three windows, so revocation data fetched once per window is judged in each.
      const env = { ...sealEnv, ESIGN_CSC_MAX_SIGNATURES: '2' };
      for (const [level, profile] of [
        ['B-LT', 'pades'],
        ['B-LTA', 'pades-lta'],
      ] as const) {
        const out = join(dir, level);
        const signed = await runCli(['--json', 'sign', '--level', level, '--output-dir', out, inputs], { env });
        expect(signed.code, signed.stderr).toBe(0);
        const outputs = signed.jsonLines<{ output: string }>().map((line) => line.output);
        expect(outputs).toHaveLength(5);
        for (const last of [outputs[1]!, outputs[3]!, outputs[4]!]) {
          const judged = await pyhankoValidate(last, ['--ltv-profile', profile, '--force-revinfo']);
          expect(judged.out, `${level} ${last}`).toMatch(/^Signature1:[0-9a-f]{64}:VALID$/m);
          expect(judged.status, judged.out).toBe(0);
        }
      }
      // The judge can fail: a B-LT output has no document timestamp, which PAdES-LTA needs.
      const notLta = await pyhankoValidate(join(dir, 'B-LT', 'doc-0-signed.pdf'), ['--ltv-profile', 'pades-lta']);
      expect(notLta.out).toMatch(/does not have a timestamp chain/);
      expect(notLta.status).not.toBe(0);
    });

    it('--certify no-changes|form-filling|annotations: pyHanko reads DocMDP P=1, 2, 3 and no modification; a later signature in an existing field is form filling it accepts', async () => {
      const dir = join(work.dir, 'certify');
      await mkdir(dir, { recursive: true });
      const withField = join(dir, 'field.pdf');
      await writeFile(withField, await emptySignatureFieldBytes('Approval'));
      for (const [permissions, level] of [
        ['no-changes', 1],
        ['form-filling', 2],
        ['annotations', 3],
      ] as const) {
        const certified = join(dir, `p${level}.pdf`);
        const signed = await runCli(
          ['--quiet', 'sign', '--level', 'B-T', '--certify', permissions, '-o', certified, withField],
          { env: sealEnv },
        );
        expect(signed.code, signed.stderr).toBe(0);
        expect(await pyhankoSignatures(certified)).toEqual([
          { field: 'Signature1', docmdp: level, modification: 'NONE', docmdpOk: true, valid: true },
        ]);
        if (level === 1) continue;
        const approved = join(dir, `p${level}-approved.pdf`);
        const second = await runCli(
          ['--quiet', 'sign', '--level', 'B-T', '--field', 'Approval', '-o', approved, certified],
          { env: sealEnv },
        );
        expect(second.code, second.stderr).toBe(0);
        expect(await pyhankoSignatures(approved)).toEqual([
          { field: 'Signature1', docmdp: level, modification: 'FORM_FILLING', docmdpOk: true, valid: true },
          { field: 'Approval', docmdp: null, modification: 'NONE', docmdpOk: true, valid: true },
        ]);
      }
    });

    it.each([
      ['no-changes', 1],
      ['form-filling', 2],
    ] as const)(
      'an annotation added after a %s certification: pyHanko and esign verify both call the certification broken',
      async (level, p) => {
        const dir = join(work.dir, `broken-${p}`);
        await mkdir(dir, { recursive: true });
        const certified = join(dir, `p${p}.pdf`);
        const signed = await runCli(
          ['--quiet', 'sign', '--level', 'B-T', '--certify', level, '-o', certified, await pdfLibPdf(dir)],
          { env: sealEnv },
        );
        expect(signed.code, signed.stderr).toBe(0);
        const annotated = join(dir, `p${p}-annotated.pdf`);
        const added = await python(['-c', ANNOTATE_SCRIPT, certified, annotated]);
        expect(added.status, added.out).toBe(0);
        expect(await pyhankoSignatures(annotated)).toEqual([
          { field: 'Signature1', docmdp: p, modification: 'OTHER', docmdpOk: false, valid: false },
        ]);
        const verified = await runCli(['verify', annotated], { env: sandbox.env });
        expect(verified.code).toBe(9);
        expect(verified.stdout).toMatch(new RegExp(`which the certification's DocMDP P=${p} \\(${level}\\) forbids`));
      },
    );

    it('an annotation removed after a form-filling certification: pyHanko and esign verify both call the certification broken', async () => {
      const dir = join(work.dir, 'removed');
      await mkdir(dir, { recursive: true });
      const noted = join(dir, 'noted.pdf');
      const added = await python(['-c', ANNOTATE_SCRIPT, await pdfLibPdf(dir), noted]);
      expect(added.status, added.out).toBe(0);
      const certified = join(dir, 'p2.pdf');
      const signed = await runCli(
        ['--quiet', 'sign', '--level', 'B-T', '--certify', 'form-filling', '-o', certified, noted],
        { env: sealEnv },
      );
      expect(signed.code, signed.stderr).toBe(0);
      const removed = join(dir, 'p2-removed.pdf');
      const taken = await python(['-c', UNANNOTATE_SCRIPT, certified, removed]);
      expect(taken.status, taken.out).toBe(0);
      expect(await pyhankoSignatures(removed)).toEqual([
        { field: 'Signature1', docmdp: 2, modification: 'OTHER', docmdpOk: false, valid: false },
      ]);
      const verified = await runCli(['verify', removed], { env: sandbox.env });
      expect(verified.code).toBe(9);
      expect(verified.stdout).toMatch(
        /removes a Text annotation \(object \d+\), which the certification's DocMDP P=2 \(form-filling\) forbids/,
      );
    });
  },
);
