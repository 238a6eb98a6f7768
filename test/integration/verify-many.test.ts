/**
 * `esign verify FILES|DIRS|GLOBS...` (issue 49, item 9) and recognising a file by its content, not
 * its name (item 5): signatures made by `esign sign` on the sandbox, copied under other names,
 * changed, and mixed with files that are not signed; each file reported, one JSON object per line,
 * a summary, the exit code of the worst outcome.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, readdir, writeFile, copyFile } from 'node:fs/promises';
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { decode, objectIdentifier, octetString, sequence, smallInteger, tlv } from '../../src/core/cms/der.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildManifest } from '../../src/core/forms/asic-e/manifest.js';
import { pdfLibBytes } from '../helpers/pdf-fixtures.js';
import { runCli } from '../helpers/run-cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDirForFile } from '../helpers/tmp.js';

let sandbox: TestSandbox;
let work: { dir: string; remove: () => Promise<void> };
const at = (...names: string[]) => join(work.dir, ...names);
/** Signed files made once: a PDF, a .p7m, a detached .p7s with its content, an ASiC-S and an ASiC-E. */
const made = { pdf: '', p7m: '', p7s: '', content: '', asics: '', asice: '' };

async function sign(args: string[]): Promise<void> {
  const result = await runCli(['--auto-approve', '--quiet', 'sign', '--level', 'B-T', ...args], { env: sandbox.env });
  expect(result.code, result.stderr).toBe(0);
}

beforeAll(async () => {
  sandbox = await startTestSandbox({ autoApprove: true });
  work = await tempDirForFile('esign-verify-many-');
  await mkdir(at('made'));
  await writeFile(at('made', 'a.pdf'), await pdfLibBytes());
  await writeFile(at('made', 'invoice.xml'), '<invoice>1</invoice>\n');
  await writeFile(at('made', 'notes.txt'), 'release notes\n');
  await writeFile(at('made', 'one.txt'), 'one\n');
  await writeFile(at('made', 'two.txt'), 'two\n');
  await sign([at('made', 'a.pdf')]);
  await sign(['--format', 'p7m', at('made', 'invoice.xml')]);
  await sign([at('made', 'notes.txt')]);
  await sign(['--format', 'asics', at('made', 'one.txt')]);
  await sign(['--format', 'asice', '-o', at('made', 'both.asice'), at('made', 'one.txt'), at('made', 'two.txt')]);
  made.pdf = at('made', 'a-signed.pdf');
  made.p7m = at('made', 'invoice.xml.p7m');
  made.p7s = at('made', 'notes.txt.p7s');
  made.content = at('made', 'notes.txt');
  made.asics = at('made', 'one.txt.asics');
  made.asice = at('made', 'both.asice');
}, 120_000);
afterAll(async () => {
  await sandbox?.close();
  await work?.remove();
});

type Line = Record<string, unknown> & { file?: string };

function lines(stdout: string): Line[] {
  return stdout
    .trim()
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as Line);
}

async function folder(name: string, files: Record<string, string | Uint8Array>): Promise<string> {
  const dir = at(name);
  await mkdir(dir, { recursive: true });
  for (const [file, from] of Object.entries(files))
    if (typeof from === 'string') await copyFile(from, join(dir, file));
    else await writeFile(join(dir, file), from);
  return dir;
}

describe('esign verify, many files in one run', () => {
  it('a directory: one JSON object per file, each as one file gives it, then a summary; exit 0 when all are valid', async () => {
    const dir = await folder('all-good', {
      'a-signed.pdf': made.pdf,
      'invoice.xml.p7m': made.p7m,
      'notes.txt': made.content,
      'notes.txt.p7s': made.p7s,
      'one.txt.asics': made.asics,
      'both.asice': made.asice,
    });
    const result = await runCli(['--json', 'verify', dir], { env: sandbox.env });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const out = lines(result.stdout);
    const summary = out.pop()!;
    const files = out.map((line) => line.file).sort();
    // The detached .p7s is verified with its content beside it: reported under the content's name.
    expect(files).toEqual(
      ['a-signed.pdf', 'both.asice', 'invoice.xml.p7m', 'notes.txt', 'one.txt.asics'].map((n) => join(dir, n)),
    );
    for (const line of out) expect(line, String(line.file)).toMatchObject({ valid: true, code: null });
    expect(summary).toMatchObject({ summary: { files: 5, outcomes: { valid: 5 }, failed: [], exitCode: 0 } });
    // The same object as one file gives.
    const one = await runCli(['--json', 'verify', join(dir, 'invoice.xml.p7m')], { env: sandbox.env });
    const { schemaVersion: _v, ...alone } = one.json() as Line;
    const inRun = out.find((line) => line.file === join(dir, 'invoice.xml.p7m'))!;
    expect(Object.keys(inRun).sort()).toEqual(['schemaVersion', ...Object.keys(alone)].sort());
  });

  it('a changed file, a file that is not signed and an unreadable one: each reported, the rest go on, exit of the worst (VERIFY_FAILED, 9)', async () => {
    const pdf = new Uint8Array(await readFile(made.pdf));
    const tampered = pdf.slice();
    tampered[tampered.indexOf(0x2f, 200)] = 0x2e;
    const dir = await folder('mixed', {
      'good.pdf': made.pdf,
      'tampered.pdf': tampered,
      'plain.pdf': await pdfLibBytes(),
      'garbage.bin': new TextEncoder().encode('not a signed file at all\n'),
    });
    const result = await runCli(['--json', 'verify', dir, made.p7m], { env: sandbox.env });
    expect(result.code, result.stderr).toBe(9);
    const out = lines(result.stdout);
    const summary = out.pop()!;
    const byFile = new Map(out.map((line) => [line.file, line]));
    expect(byFile.get(join(dir, 'good.pdf'))).toMatchObject({ valid: true });
    expect(byFile.get(join(dir, 'tampered.pdf'))).toMatchObject({ code: 'VERIFY_FAILED' });
    expect(byFile.get(join(dir, 'plain.pdf'))).toMatchObject({ code: 'VERIFY_NO_SIGNATURES' });
    expect(byFile.get(join(dir, 'garbage.bin'))).toMatchObject({ error: { code: 'PDF_NOT_PDF', exitCode: 7 } });
    expect(byFile.get(made.p7m)).toMatchObject({ valid: true });
    expect(summary).toMatchObject({
      summary: {
        files: 5,
        outcomes: { VERIFY_FAILED: 1, unreadable: 1, VERIFY_NO_SIGNATURES: 1, valid: 2 },
        exitCode: 9,
      },
    });
    expect((summary['summary'] as { failed: string[] }).failed.sort()).toEqual(
      [join(dir, 'garbage.bin'), join(dir, 'plain.pdf'), join(dir, 'tampered.pdf')].sort(),
    );
    expect(result.stderr).toContain('esign: VERIFY_FAILED: 3 of 5 file(s) not valid.');
  });

  it('an unreadable file ranks above an untrusted one: its exit code (7)', async () => {
    const dir = await folder('unreadable', {
      'good.pdf': made.pdf,
      'garbage.pdf': new TextEncoder().encode('%%EOF\n'),
    });
    // A profile of its own, without trust anchors: the good file is only untrusted.
    const env = { ESIGN_CONFIG_DIR: at('config-untrusted') };
    const init = await runCli(['config', 'init', 'work', '--set', 'signingBaseUrl=https://sign.example/api'], { env });
    expect(init.code, init.stderr).toBe(0);
    const result = await runCli(['--json', 'verify', dir], { env });
    const out = lines(result.stdout);
    const summary = out.pop()!;
    expect(summary).toMatchObject({
      summary: { files: 2, outcomes: { unreadable: 1, VERIFY_UNTRUSTED: 1 }, exitCode: 7 },
    });
    expect(result.code).toBe(7);
  });

  it('a pattern, human text: each report, then the summary line naming the files that failed', async () => {
    const pdf = new Uint8Array(await readFile(made.pdf));
    const tampered = pdf.slice();
    tampered[tampered.indexOf(0x2f, 200)] = 0x2e;
    const dir = await folder('pattern', { 'x1.pdf': made.pdf, 'x2.pdf': tampered, 'y.pdf': made.pdf });
    const result = await runCli(['verify', join(dir, 'x*.pdf')], { env: sandbox.env });
    expect(result.code).toBe(9);
    expect(result.stdout).toContain(`${join(dir, 'x1.pdf')}: 1 signature(s)`);
    expect(result.stdout).toContain(`${join(dir, 'x2.pdf')}: 1 signature(s)`);
    expect(result.stdout).not.toContain('y.pdf');
    expect(result.stdout.trim().split('\n').pop()).toBe(
      `2 file(s): 1 VERIFY_FAILED, 1 valid; not valid: ${join(dir, 'x2.pdf')}`,
    );
  });

  it('--extract DIR with several inputs: one folder per input; --signature with several files is refused', async () => {
    const out = at('extracted');
    const result = await runCli(['--json', 'verify', '--extract', out, made.p7m, made.asice, made.pdf], {
      env: sandbox.env,
    });
    expect(result.code, result.stderr).toBe(0);
    expect((await readdir(out)).sort()).toEqual(['both.asice', 'invoice.xml.p7m']);
    expect(await readFile(join(out, 'invoice.xml.p7m', 'invoice.xml'), 'utf8')).toBe('<invoice>1</invoice>\n');
    expect((await readdir(join(out, 'both.asice'))).sort()).toEqual(['one.txt', 'two.txt']);
    const refused = await runCli(['verify', made.pdf, made.p7m, '--signature', made.p7s], { env: sandbox.env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--signature goes with one file');
  });
});

describe('esign verify recognises a file by its content, not its name', () => {
  it('an enveloping CMS named .p7s, a container without extension, a .bdoc and a .sce, a PDF named .bin: all read', async () => {
    const dir = await folder('renamed', {
      'invoice.p7s': made.p7m,
      container: made.asice,
      'container.bdoc': made.asice,
      'single.sce': made.asics,
      'document.bin': made.pdf,
    });
    for (const name of ['invoice.p7s', 'container', 'container.bdoc', 'single.sce', 'document.bin']) {
      const result = await runCli(['--json', 'verify', join(dir, name)], { env: sandbox.env });
      expect(result.code, `${name}: ${result.stdout}${result.stderr}`).toBe(0);
      expect(result.json(), name).toMatchObject({ valid: true });
    }
  });

  it('a detached .p7s given alone: one line naming the content to pass with --signature (exit 2)', async () => {
    const result = await runCli(['verify', made.p7s], { env: sandbox.env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('is a detached CAdES signature');
    expect(result.stderr).toContain(`esign verify ${made.content} --signature ${made.p7s}`);
  });

  it('XML under any name is read as XML (XAdES): one without a signature is VERIFY_NO_SIGNATURES, not "not a PDF"', async () => {
    const xml = at('received.dat');
    await writeFile(xml, '\uFEFF<?xml version="1.0"?>\n<doc>text</doc>\n');
    const result = await runCli(['--json', 'verify', xml], { env: sandbox.env });
    expect(result.code, result.stderr).toBe(9);
    expect(result.json()).toMatchObject({ kind: 'xades', code: 'VERIFY_NO_SIGNATURES', signatures: [] });
    expect(result.stderr).not.toContain('not a PDF');
  });
});

describe('an ASiC-S to which a second document was added (Info-ZIP zip)', () => {
  it('is VERIFY_MODIFIED (exit 9), the signed document covered and the added one uncovered, trusted or not', async () => {
    const dir = await folder('added', { 'c.asics': made.asics, 'added.txt': new TextEncoder().encode('added\n') });
    execFileSync('zip', ['-q', '-X', 'c.asics', 'added.txt'], { cwd: dir });
    const trusted = await runCli(['--json', 'verify', join(dir, 'c.asics')], { env: sandbox.env });
    expect(trusted.code, trusted.stderr).toBe(9);
    expect(trusted.json()).toMatchObject({
      code: 'VERIFY_MODIFIED',
      uncovered: ['added.txt'],
      signatures: [{ status: 'modified', covers: ['one.txt'], integrity: { valid: true } }],
    });
    const env = { ESIGN_CONFIG_DIR: at('config-added') };
    const init = await runCli(['config', 'init', 'work', '--set', 'signingBaseUrl=https://sign.example/api'], { env });
    expect(init.code, init.stderr).toBe(0);
    const untrusted = await runCli(['--json', 'verify', join(dir, 'c.asics')], { env });
    expect(untrusted.code).toBe(9);
    expect(untrusted.json()).toMatchObject({ code: 'VERIFY_MODIFIED', uncovered: ['added.txt'] });
  });
});

describe('evidence records in an ASiC (RFC 4998, META-INF/evidencerecord.ers), built here over the sandbox TSA', () => {
  const sha256 = (bytes: Uint8Array) => new Uint8Array(createHash('sha256').update(bytes).digest());
  const sorted = (values: Uint8Array[]) => [...values].sort((a, b) => Buffer.compare(a, b));

  /** A timestamp token over `imprint` from the sandbox TSA (esign timestamp --digest), out of its TimeStampResp. */
  async function tokenOver(imprint: Uint8Array): Promise<Uint8Array> {
    const out = at(`ers-${Buffer.from(imprint).toString('hex').slice(0, 8)}.tsr`);
    const result = await runCli(['timestamp', '--digest', Buffer.from(imprint).toString('hex'), '-o', out], {
      env: sandbox.env,
    });
    expect(result.code, result.stderr).toBe(0);
    return decode(new Uint8Array(await readFile(out)), 'TimeStampResp').items[1]!.encoded;
  }

  /** An EvidenceRecord of one ArchiveTimeStamp whose reduced hash tree is `groups`, stamped over `root`. */
  async function evidenceRecord(groups: Uint8Array[][], root: Uint8Array): Promise<Uint8Array> {
    const tree = tlv(0xa2, ...groups.map((group) => sequence(...group.map(octetString))));
    return sequence(
      smallInteger(1),
      sequence(sequence(objectIdentifier('2.16.840.1.101.3.4.2.1'))),
      sequence(sequence(sequence(tree, await tokenOver(root)))),
    );
  }

  async function withRecord(name: string, entry: string, record: Uint8Array): Promise<string> {
    const dir = await folder(name, { 'c.asics': made.asics });
    await mkdir(join(dir, 'META-INF'));
    await writeFile(join(dir, 'META-INF', entry), record);
    execFileSync('zip', ['-q', '-X', 'c.asics', `META-INF/${entry}`], { cwd: dir });
    return join(dir, 'c.asics');
  }

  it('one whose hash tree covers the document and whose archive timestamp checks out: verified, in the text and --json', async () => {
    const document = sha256(new TextEncoder().encode('one\n'));
    const sibling = new Uint8Array(randomBytes(32));
    const root = sha256(Buffer.concat(sorted([document, sibling])));
    const file = await withRecord('ers-good', 'evidencerecord.ers', await evidenceRecord([[document, sibling]], root));
    const result = await runCli(['--json', 'verify', file], { env: sandbox.env });
    expect(result.code, result.stdout).toBe(0);
    expect(result.json()).toMatchObject({
      valid: true,
      evidenceRecords: [
        {
          name: 'META-INF/evidencerecord.ers',
          status: 'valid',
          covers: ['one.txt'],
          archiveTimestamps: 1,
          checked: 1,
          problems: [],
          timestamp: { valid: true },
        },
      ],
    });
    const text = await runCli(['verify', file], { env: sandbox.env });
    expect(text.stdout).toContain('Evidence record META-INF/evidencerecord.ers: ✓ verified');
    expect(text.stdout).toContain('  covers      one.txt');
  });

  it("a tree of one value, the document's hash, stamped as it is (as DSS writes the record of one file): verified", async () => {
    const document = sha256(new TextEncoder().encode('one\n'));
    const file = await withRecord('ers-one', 'evidencerecord.ers', await evidenceRecord([[document]], document));
    const result = await runCli(['--json', 'verify', file], { env: sandbox.env });
    expect(result.code, result.stdout).toBe(0);
    expect(result.json()).toMatchObject({ evidenceRecords: [{ status: 'valid', covers: ['one.txt'] }] });
  });

  it('one whose tree does not reduce to its timestamp: INVALID; an XML one that is no record: INVALID; both said, never ignored', async () => {
    const document = sha256(new TextEncoder().encode('one\n'));
    const sibling = new Uint8Array(randomBytes(32));
    const wrongRoot = sha256(Buffer.concat([document, document]));
    const bad = await withRecord(
      'ers-bad',
      'evidencerecord.ers',
      await evidenceRecord([[document, sibling]], wrongRoot),
    );
    const badRun = await runCli(['--json', 'verify', bad], { env: sandbox.env });
    const report = badRun.json() as { evidenceRecords: { status: string; problems: string[] }[]; warnings: string[] };
    expect(report.evidenceRecords[0]!.status).toBe('invalid');
    expect(report.evidenceRecords[0]!.problems.join(' ')).toMatch(/imprint/);
    expect(report.warnings).toContainEqual(
      expect.stringMatching(/^evidence record META-INF\/evidencerecord\.ers INVALID: /),
    );
    const xml = await withRecord('ers-xml', 'evidencerecord.xml', new TextEncoder().encode('<EvidenceRecord/>'));
    const xmlRun = await runCli(['--json', 'verify', xml], { env: sandbox.env });
    expect(xmlRun.json()).toMatchObject({
      evidenceRecords: [{ name: 'META-INF/evidencerecord.xml', status: 'invalid' }],
    });
    expect(xmlRun.json<{ warnings: string[] }>().warnings).toContainEqual(
      'evidence record META-INF/evidencerecord.xml INVALID: not an XML evidence record esign reads: its root is not an EvidenceRecord in urn:ietf:params:xml:ns:ers',
    );
  });
});

describe('an ASiC-E time assertion (META-INF/timestamp.tst over an ASiCManifest, as DSS writes), built with the sandbox TSA and Info-ZIP', () => {
  it('is checked as a timestamp token over the manifest and the files it names (it was HASH_FAILURE); a changed file fails', async () => {
    const dir = at('time-assertion');
    await mkdir(join(dir, 'META-INF'), { recursive: true });
    await writeFile(join(dir, 'mimetype'), 'application/vnd.etsi.asic-e+zip');
    await writeFile(join(dir, 'doc.txt'), 'an invoice\n');
    const manifest = buildManifest({
      signature: 'META-INF/timestamp.tst',
      signatureMimeType: 'application/vnd.etsi.timestamp-token',
      references: [
        {
          name: 'doc.txt',
          mimeType: 'text/plain',
          digest: 'sha256',
          digestValue: createHash('sha256').update('an invoice\n').digest(),
        },
      ],
    });
    await writeFile(join(dir, 'META-INF', 'ASiCManifest.xml'), manifest);
    const tsr = join(dir, 'manifest.tsr');
    const stamped = await runCli(['timestamp', join(dir, 'META-INF', 'ASiCManifest.xml'), '-o', tsr], {
      env: sandbox.env,
    });
    expect(stamped.code, stamped.stderr).toBe(0);
    await writeFile(
      join(dir, 'META-INF', 'timestamp.tst'),
      decode(new Uint8Array(await readFile(tsr)), 'TimeStampResp').items[1]!.encoded,
    );
    const zip = (name: string) => {
      execFileSync('zip', ['-q', '-X', '-0', name, 'mimetype'], { cwd: dir });
      execFileSync('zip', ['-q', '-X', name, 'doc.txt', 'META-INF/ASiCManifest.xml', 'META-INF/timestamp.tst'], {
        cwd: dir,
      });
    };
    zip('assertion.asice');
    const good = await runCli(['--json', 'verify', join(dir, 'assertion.asice')], { env: sandbox.env });
    expect(good.code, good.stdout).toBe(0);
    expect(good.json()).toMatchObject({
      valid: true,
      signatures: [{ kind: 'docTimeStamp', status: 'valid', covers: ['doc.txt'], integrity: { valid: true } }],
    });
    await writeFile(join(dir, 'doc.txt'), 'an invoice, changed\n');
    zip('changed.asice');
    const changed = await runCli(['--json', 'verify', join(dir, 'changed.asice')], { env: sandbox.env });
    expect(changed.code).toBe(9);
    expect(changed.json()).toMatchObject({ code: 'VERIFY_FAILED', signatures: [{ subIndication: 'HASH_FAILURE' }] });
  });
});
