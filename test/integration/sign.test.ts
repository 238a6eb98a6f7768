import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, readdir, readFile, stat, writeFile, copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PDFDocument, PDFName, PDFRef, PDFString, StandardFonts } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSignedData } from '../../src/core/cms/parse.js';
import { trimDer } from '../../src/core/pdf/signatures.js';
import { runCli } from '../helpers/run-cli.js';
import { appendRevision, type ObjectBody } from '../helpers/pdf-fixtures.js';
import { SANDBOX_DIALECTS, onDialect, signingRoute } from '../helpers/dialects.js';
import { seededSandboxDir, startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/tmp.js';

let shared: TestSandbox;
beforeAll(async () => {
  shared = await startTestSandbox({ autoApprove: true });
});
afterAll(async () => shared?.close());

async function makePdf(path: string, text = 'Hello', objectStreams = false): Promise<Buffer> {
  const document = await PDFDocument.create();
  const font = await document.embedFont(StandardFonts.Helvetica);
  document.addPage([595, 842]).drawText(text, { x: 72, y: 760, size: 14, font });
  const bytes = Buffer.from(await document.save({ useObjectStreams: objectStreams }));
  await writeFile(path, bytes);
  return bytes;
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

interface SignResult {
  input: string;
  output: string;
  level: string;
  credential: string;
  bytes: number;
  sha256: string;
}

function byteRangeOf(pdf: Buffer): number[] {
  const text = pdf.toString('latin1');
  const matches = [...text.matchAll(/\/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\]/g)];
  const last = matches.at(-1);
  if (!last) throw new Error('no ByteRange');
  return last.slice(1, 5).map(Number);
}

function cmsOf(pdf: Buffer): Uint8Array {
  const [, a = 0, b = 0] = byteRangeOf(pdf);
  // The DER's own length says where it ends: stripping trailing zero bytes would also cut a
  // signature value that ends in 0x00 (1 in 256 signatures; CI failed on one).
  return trimDer(Buffer.from(pdf.subarray(a + 1, b - 1).toString('latin1'), 'hex'));
}

describe.each(SANDBOX_DIALECTS)('esign sign (PAdES and CAdES against the sandbox, $name)', (dialect) => {
  const sandbox = onDialect(() => shared, dialect);

  it('says the signatures are TEST signatures even with --quiet, and prints nothing else', async () => {
    const dir = await tempDir();
    const input = join(dir, 'quiet.pdf');
    await makePdf(input);
    const result = await runCli(['--auto-approve', '--quiet', 'sign', '--level', 'B-B', input], { env: sandbox.env });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringContaining('TEST signatures')]);
    expect(result.stdout).toBe('');
  });

  it('signs a PDF with an incremental update, leaving the input untouched', async () => {
    const dir = await tempDir();
    const input = join(dir, 'contract.pdf');
    const original = await makePdf(input);
    const result = await runCli(['--auto-approve', '--json', 'sign', input], { env: sandbox.env });
    expect(result.stderr).toContain('TEST signatures');
    expect(result.code, result.stderr).toBe(0);
    const [line] = result.jsonLines<SignResult>();
    expect(line).toMatchObject({
      input,
      output: join(dir, 'contract-signed.pdf'),
      level: 'B-T',
      credential: 'alice-rsa2048',
    });
    const signed = await readFile(join(dir, 'contract-signed.pdf'));
    expect(await readFile(input)).toEqual(original);
    expect(signed.subarray(0, original.length)).toEqual(original);
    expect(line!.sha256).toBe(sha256(signed));
    expect(line!.bytes).toBe(signed.length);
    const [start, a, b, c] = byteRangeOf(signed);
    expect(start).toBe(0);
    expect(b! + c!).toBe(signed.length);
    const signedData = parseSignedData(cmsOf(signed));
    expect(signedData.signatureAlgorithm).toBe('1.2.840.113549.1.1.11');
    const digest = createHash('sha256')
      .update(signed.subarray(0, a))
      .update(signed.subarray(b!, b! + c!))
      .digest();
    expect(Buffer.from(signedData.signedAttributes!.messageDigest!)).toEqual(digest);
    expect(signedData.signedAttributes!.signingTime).toBeUndefined();
    expect(signedData.signatureTimeStampToken).toBeDefined();
    expect((await readdir(dir)).sort()).toEqual(['contract-signed.pdf', 'contract.pdf']);
  });

  it('signs a large read-only PDF (kernel copy, early flush): output owner-writable, input untouched', async () => {
    const dir = await tempDir();
    const input = join(dir, 'large.pdf');
    const pdf = await PDFDocument.create();
    pdf.addPage().drawText('large');
    await pdf.attach(randomBytes(9 * 1024 * 1024), 'blob.bin', { mimeType: 'application/octet-stream' });
    const original = Buffer.from(await pdf.save());
    await writeFile(input, original);
    await chmod(input, 0o400);
    const result = await runCli(['--auto-approve', '--json', 'sign', '--level', 'B-B', input], { env: sandbox.env });
    expect(result.code, result.stderr).toBe(0);
    const output = join(dir, 'large-signed.pdf');
    const signed = await readFile(output);
    // Digests, not toEqual: a deep comparison of 9 MB takes vitest minutes.
    expect(sha256(signed.subarray(0, original.length))).toBe(sha256(original));
    expect(result.jsonLines<SignResult>()[0]!.sha256).toBe(sha256(signed));
    expect((await stat(output)).mode & 0o600).toBe(0o600);
    expect((await stat(input)).mode & 0o777).toBe(0o400);
    expect(sha256(await readFile(input))).toBe(sha256(original));
    expect((await readdir(dir)).sort()).toEqual(['large-signed.pdf', 'large.pdf']);
  });

  it('in CI without a terminal or a scripted browser, fails at once naming the split flow; nothing written', async () => {
    const dir = await tempDir();
    const input = join(dir, 'ci.pdf');
    await makePdf(input);
    const result = await runCli(['sign', input], { env: { ...sandbox.env, ESIGN_BROWSER: undefined } });
    expect(result.code, result.stderr).toBe(4);
    expect(result.stderr.trim().split('\n').at(-1)).toMatch(
      /^esign: The .* needs a person at a browser, and nobody can finish it here \(this is a CI run without a terminal\)\..*--auto-approve.*--prepare/,
    );
    expect(await readdir(dir)).toEqual(['ci.pdf']);
  });

  it('with no display, no terminal and no CI variable (a container, ssh host cmd, cron), fails at once listing the ways out; nothing written', async () => {
    const dir = await tempDir();
    const input = join(dir, 'headless.pdf');
    await makePdf(input);
    const env = {
      ...sandbox.env,
      CI: undefined,
      DISPLAY: undefined,
      WAYLAND_DISPLAY: undefined,
      WSL_DISTRO_NAME: undefined,
      ESIGN_BROWSER: undefined,
    };
    const result = await runCli(['sign', input], { env });
    expect(result.code, result.stderr).toBe(4);
    const last = result.stderr.trim().split('\n').at(-1)!;
    expect(last).toMatch(
      /^esign: The approval of the signatures needs a person at a browser, and nobody can finish it here \(no graphical display .* and no terminal\)\./,
    );
    for (const way of ['--auto-approve', '--browser CMD', '--no-browser from a terminal', '--prepare', '--complete'])
      expect(last).toContain(way);
    expect(result.stderr).not.toContain('/oauth2/authorize');
    expect(await readdir(dir)).toEqual(['headless.pdf']);
  });

  it('headless, each way out named by the message works: --auto-approve, --browser CMD, the split flow; --no-browser waits as asked', async () => {
    const dir = await tempDir();
    const headless = {
      ...sandbox.env,
      CI: undefined,
      DISPLAY: undefined,
      WAYLAND_DISPLAY: undefined,
      WSL_DISTRO_NAME: undefined,
      ESIGN_BROWSER: undefined,
    };
    const browser = `node ${fileURLToPath(new URL('../helpers/follow-redirects-browser.js', import.meta.url))}`;
    for (const [name, args] of [
      ['auto', ['--auto-approve', 'sign']],
      ['command', ['--browser', browser, 'sign']],
    ] as const) {
      const input = join(dir, `${name}.pdf`);
      await makePdf(input);
      const result = await runCli([...args, input], { env: headless });
      expect(result.code, `${name}: ${result.stderr}`).toBe(0);
    }
    const split = join(dir, 'split.pdf');
    await makePdf(split);
    const state = join(dir, 'state.json');
    const fresh = { ...headless, ESIGN_CONFIG_DIR: join(dir, 'config') };
    const pending = await runCli(['--json', 'sign', '--prepare', '--state', state, split], { env: fresh });
    expect(pending.code, pending.stderr).toBe(0);
    const signedIn = (await fetch(pending.json<{ signInUrl: string }>().signInUrl, { redirect: 'manual' })).headers.get(
      'location',
    )!;
    const prepared = await runCli(
      ['--json', 'sign', '--prepare', '--state', state, '--redirect-url', signedIn, split],
      { env: fresh },
    );
    expect(prepared.code, prepared.stderr).toBe(0);
    const { approvals } = prepared.json<{ approvals: Array<{ authorizationUrl: string }> }>();
    const approved = (await fetch(approvals[0]!.authorizationUrl, { redirect: 'manual' })).headers.get('location')!;
    const completed = await runCli(['sign', '--complete', '--state', state, '--redirect-url', approved], {
      env: fresh,
    });
    expect(completed.code, completed.stderr).toBe(0);
    // --no-browser is the user's word that they will open the URL: esign prints it and waits.
    const waited = join(dir, 'waited.pdf');
    await makePdf(waited);
    const result = await runCli(['--no-browser', '--timeout', '1', 'sign', waited], { env: headless });
    expect(result.code, result.stderr).toBe(4);
    expect(result.stderr).toMatch(/Open this URL in a browser to continue/);
    expect(result.stderr).toMatch(/Gave up waiting for the .* after 1 s/);
    expect((await readdir(dir)).sort()).toEqual([
      'auto-signed.pdf',
      'auto.pdf',
      'command-signed.pdf',
      'command.pdf',
      'config',
      'split-signed.pdf',
      'split.pdf',
      'waited.pdf',
    ]);
  });

  // The system browser is opened by the `open` package, which in the CommonJS bundle is loaded by
  // require (an ES module's default export one level further down: "open is not a function" once).
  // Its xdg-open on an XFCE desktop runs `exo-open URL`; a fake one first on PATH follows the URL
  // as a browser would, to the sandbox's auto-approval and back to esign's loopback receiver.
  it('with a display, opens the system browser through the open package and completes the step', async () => {
    const dir = await tempDir();
    const input = join(dir, 'desktop.pdf');
    await makePdf(input);
    const bin = join(dir, 'bin');
    await mkdir(bin);
    const opened = join(dir, 'opened.txt');
    const exoOpen = join(bin, 'exo-open');
    await writeFile(
      exoOpen,
      `#!/bin/sh\n[ "$1" = --help ] && exit 0\necho "$1" >> '${opened}'\nexec curl -sfL -o /dev/null "$1"\n`,
      { mode: 0o755 },
    );
    const env = {
      ...sandbox.env,
      CI: '',
      DISPLAY: ':0',
      XDG_CURRENT_DESKTOP: 'XFCE',
      PATH: `${bin}:${process.env['PATH']}`,
      ESIGN_BROWSER: undefined,
    };
    const result = await runCli(['--timeout', '20', 'sign', input], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('Opening your browser for the');
    expect(result.stderr).not.toMatch(/Could not open a browser/);
    expect(await readFile(opened, 'utf8')).toMatch(
      new RegExp(`^http://127\\.0\\.0\\.1:\\d+/${dialect.prefix}/oauth2/authorize\\?`),
    );
    expect((await readdir(dir)).sort()).toEqual(['bin', 'desktop-signed.pdf', 'desktop.pdf', 'opened.txt']);
  });

  // The documents of the first approval stay open from the check before the sign-in to prepare;
  // one saved again while the person was at the browser is signed as it is then, never as it was.
  it('signs a file saved again during the sign-in as it is then: appended to (CAdES), or replaced by rename (PDF)', async () => {
    const dir = await tempDir();
    const text = join(dir, 'notes.txt');
    await writeFile(text, 'first draft\n');
    const pdf = join(dir, 'draft.pdf');
    await makePdf(pdf, 'first draft');
    const saved = join(dir, 'saved.pdf');
    const savedBytes = await makePdf(saved, 'second draft, saved while signing in');
    // The browser of the first step (the service sign-in, before any document is prepared) is
    // where the editor saves: once, then it follows the URL as a browser would.
    const browser = join(dir, 'browser.sh');
    const script = [
      '#!/bin/sh',
      `if [ ! -e '${dir}/saved' ]; then touch '${dir}/saved'; printf 'second draft\\n' >> '${text}'; mv '${saved}' '${pdf}'; fi`,
      'exec curl -sfL -o /dev/null "$1"',
    ];
    await writeFile(browser, script.join('\n') + '\n', { mode: 0o755 });
    const env = { ...sandbox.env, ESIGN_CONFIG_DIR: await tempDir() };
    const result = await runCli(['--browser', browser, '--json', 'sign', '--level', 'B-B', text, pdf], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(await readFile(text, 'utf8')).toBe('first draft\nsecond draft\n');
    const verified = await runCli(['--json', 'verify', text, '--signature', `${text}.p7s`], { env });
    expect(verified.code, verified.stdout).toBe(0);
    const signed = await readFile(join(dir, 'draft-signed.pdf'));
    expect(sha256(signed.subarray(0, savedBytes.length))).toBe(sha256(savedBytes));
    expect((await runCli(['verify', join(dir, 'draft-signed.pdf')], { env })).code).toBe(0);
  });

  it('signs other files as detached CAdES .p7s with signing-time', async () => {
    const dir = await tempDir();
    const input = join(dir, 'notes.txt');
    await writeFile(input, 'release notes\n');
    const result = await runCli(['--auto-approve', '--json', 'sign', '--level', 'B-B', input], { env: sandbox.env });
    expect(result.code, result.stderr).toBe(0);
    const p7s = await readFile(join(dir, 'notes.txt.p7s'));
    const parsed = parseSignedData(p7s);
    expect(parsed.signedAttributes!.signingTime).toBeInstanceOf(Date);
    expect(Buffer.from(parsed.signedAttributes!.messageDigest!)).toEqual(
      createHash('sha256').update('release notes\n').digest(),
    );
    expect(parsed.signatureTimeStampToken).toBeUndefined();
  });

  it('signs a batch of 120 files in three browser steps and three signHash calls', async () => {
    const dir = await tempDir();
    const first = join(dir, 'doc-000.pdf');
    await makePdf(first);
    for (let index = 1; index < 120; index++)
      await copyFile(first, join(dir, `doc-${String(index).padStart(3, '0')}.pdf`));
    const before = sandbox.sandbox.requestLog.length;
    const result = await runCli(['--auto-approve', '--json', 'sign', '--level', 'B-B', dir], { env: sandbox.env });
    expect(result.code, result.stderr).toBe(0);
    expect(result.jsonLines()).toHaveLength(120);
    const calls = sandbox.sandbox.requestLog.slice(before);
    expect(calls.filter((call) => call === signingRoute(dialect, 'POST signatures/signHash'))).toHaveLength(3);
    const credentialSteps = calls.filter((call) => call === signingRoute(dialect, 'GET /oauth2/authorize')).length;
    expect(credentialSteps).toBeGreaterThanOrEqual(3);
    expect(credentialSteps).toBeLessThanOrEqual(4);
  });

  it('cscMaxSignatures (ESIGN_CSC_MAX_SIGNATURES) makes smaller approvals for a service that allows fewer than 50', async () => {
    const dir = await tempDir();
    for (let index = 0; index < 5; index++) await writeFile(join(dir, `part-${index}.txt`), `part ${index}`);
    const before = sandbox.sandbox.requestLog.length;
    const result = await runCli(['--auto-approve', '--json', 'sign', '--level', 'B-B', dir], {
      env: { ...sandbox.env, ESIGN_CSC_MAX_SIGNATURES: '2' },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.jsonLines()).toHaveLength(5);
    const calls = sandbox.sandbox.requestLog.slice(before);
    expect(calls.filter((call) => call === signingRoute(dialect, 'POST signatures/signHash'))).toHaveLength(3);
    expect(result.stderr.match(/approval of \d+ signatures?/g)).toEqual([
      'approval of 2 signatures',
      'approval of 2 signatures',
      'approval of 1 signature',
    ]);
  });

  it('refuses to overwrite an output without --force and leaves no temp file', async () => {
    const dir = await tempDir();
    const input = join(dir, 'a.pdf');
    await makePdf(input);
    await writeFile(join(dir, 'a-signed.pdf'), 'keep me');
    const refused = await runCli(['--auto-approve', 'sign', input], { env: sandbox.env });
    expect(refused.code).toBe(8);
    expect(refused.stderr).toMatch(/already exists.*--force/);
    expect(await readFile(join(dir, 'a-signed.pdf'), 'utf8')).toBe('keep me');
    expect((await readdir(dir)).sort()).toEqual(['a-signed.pdf', 'a.pdf']);
    const forced = await runCli(['--auto-approve', 'sign', '--force', input], { env: sandbox.env });
    expect(forced.code, forced.stderr).toBe(0);
    expect((await readFile(join(dir, 'a-signed.pdf'))).subarray(0, 5).toString()).toBe('%PDF-');
  });

  it('reports each failure with --continue-on-error and exits 10 when only some succeed', async () => {
    const dir = await tempDir();
    await makePdf(join(dir, 'good.pdf'));
    await writeFile(join(dir, 'bad.pdf'), 'this is not a PDF at all');
    const result = await runCli(
      ['--auto-approve', '--json', 'sign', '--continue-on-error', join(dir, 'bad.pdf'), join(dir, 'good.pdf')],
      { env: sandbox.env },
    );
    expect(result.code).toBe(10);
    const lines = result.jsonLines<{ input: string; error?: { code: string } }>();
    expect(lines.find((line) => line.input.endsWith('bad.pdf'))?.error?.code).toBe('PDF_NOT_PDF');
    expect((await readdir(dir)).sort()).toEqual(['bad.pdf', 'good-signed.pdf', 'good.pdf']);
  });

  it('stops at the first bad input without --continue-on-error, writing nothing', async () => {
    const dir = await tempDir();
    await makePdf(join(dir, 'good.pdf'));
    await writeFile(join(dir, 'bad.pdf'), 'not a pdf');
    const result = await runCli(['--auto-approve', 'sign', join(dir, 'good.pdf'), join(dir, 'bad.pdf')], {
      env: sandbox.env,
    });
    expect(result.code).toBe(7);
    expect(result.stderr.trim().split('\n').at(-1)).toMatch(/^esign: .*bad\.pdf/);
    expect((await readdir(dir)).sort()).toEqual(['bad.pdf', 'good.pdf']);
  });

  it('refuses a disabled credential with the credential exit code', async () => {
    const dir = await tempDir();
    await makePdf(join(dir, 'x.pdf'));
    const result = await runCli(['--auto-approve', 'sign', '--credential', 'alice-disabled', join(dir, 'x.pdf')], {
      env: sandbox.env,
    });
    expect(result.code).toBe(11);
    expect(result.stderr).toMatch(/alice-disabled is disabled/);
  });

  it('--continue-on-error keeps going when a timestamp or a whole signHash step fails, and says which files failed', async () => {
    const dir = await tempDir();
    const inputs = join(dir, 'in');
    await mkdir(inputs);
    await makePdf(join(inputs, 'doc-00.pdf'));
    for (let index = 1; index < 60; index++)
      await copyFile(join(inputs, 'doc-00.pdf'), join(inputs, `doc-${String(index).padStart(2, '0')}.pdf`));
    const out = join(dir, 'out');
    // The first step's signHash fails (50 files); then the TSA refuses one token of the second step.
    sandbox.sandbox.faults.inject({
      route: signingRoute(dialect, 'POST signatures/signHash'),
      fault: { kind: 'status', status: 500, body: '{"error":"server_error"}' },
    });
    await fetch(`${sandbox.sandbox.urls.tsa}/_faults`, {
      method: 'POST',
      body: JSON.stringify({ failInfo: 'systemFailure' }),
    });
    const result = await runCli(
      ['--auto-approve', '--json', 'sign', '--level', 'B-T', '--continue-on-error', '--output-dir', out, inputs],
      { env: sandbox.env },
    );
    sandbox.sandbox.faults.clear();
    expect(result.code, result.stdout + result.stderr).toBe(10);
    const lines = result.jsonLines<{ input: string; output?: string; error?: { code: string } }>();
    const failed = lines.filter((line) => line.error);
    expect(lines.filter((line) => line.output)).toHaveLength(9);
    expect(failed).toHaveLength(51);
    expect(failed.filter((line) => line.error!.code === 'TSA_REJECTED')).toHaveLength(1);
    expect(
      failed
        .filter((line) => line.error!.code !== 'TSA_REJECTED')
        .every((line) => /^CSC_|^HTTP_/.test(line.error!.code)),
    ).toBe(true);
    expect((await readdir(out)).filter((name) => name.endsWith('-signed.pdf'))).toHaveLength(9);
    expect((await readdir(out)).filter((name) => !name.endsWith('-signed.pdf'))).toEqual([]);
    expect(result.stderr).toContain('9 of 60 files signed; 51 failed');
  });

  it('a browser step that outlasts --timeout ends in AUTH_TIMEOUT (exit 4), leaving no temp file, even while the page loads', async () => {
    const dir = await tempDir();
    const input = join(dir, 'slow.pdf');
    await makePdf(input);
    sandbox.sandbox.faults.inject({
      route: signingRoute(dialect, 'GET /oauth2/authorize'),
      fault: { kind: 'delay', ms: 3_000 },
      times: 2,
    });
    const result = await runCli(['--auto-approve', '--timeout', '1', 'sign', '--level', 'B-B', input], {
      env: { ...sandbox.env, ESIGN_CONFIG_DIR: join(dir, 'config') },
    });
    sandbox.sandbox.faults.clear();
    expect(result.code, result.stderr).toBe(4);
    expect(result.stderr).toMatch(/Gave up waiting for the sign-in to the signing service after 1 s/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect((await readdir(dir)).filter((name) => name !== 'config')).toEqual(['slow.pdf']);
  });

  it('a --browser command that fails ends the browser step at once (exit 4)', async () => {
    const dir = await tempDir();
    const input = join(dir, 'cmd.pdf');
    await makePdf(input);
    const result = await runCli(['--browser', 'node -e process.exit(3)', 'sign', '--level', 'B-B', input], {
      env: { ...sandbox.env, ESIGN_CONFIG_DIR: join(dir, 'config') },
    });
    expect(result.code, result.stderr).toBe(4);
    expect(result.stderr).toMatch(/The browser command "node" failed \(exit 3\)/);
  });

  it('--continue-on-error still stops when the signer refuses an approval: the next ones would only be refused too', async () => {
    const dir = await tempDir();
    await makePdf(join(dir, 'a.pdf'));
    await copyFile(join(dir, 'a.pdf'), join(dir, 'b.pdf'));
    // The service sign-in is cached by an earlier run; the approval is refused (access_denied).
    expect((await runCli(['--auto-approve', 'credentials', 'list'], { env: sandbox.env })).code).toBe(0);
    const refuse = `${process.execPath} ${fileURLToPath(new URL('../helpers/redirect-error-browser.js', import.meta.url))} access_denied`;
    const result = await runCli(
      ['--browser', refuse, 'sign', '--level', 'B-B', '--continue-on-error', join(dir, 'a.pdf'), join(dir, 'b.pdf')],
      { env: sandbox.env },
    );
    expect(result.code, result.stderr).toBe(4);
    expect(result.stderr).toMatch(/refused or did not complete \(access_denied/);
    expect((await readdir(dir)).sort()).toEqual(['a.pdf', 'b.pdf']);
  });

  it('--visible draws the signer named in the certificate, the date and the reason in an embedded font subset', async () => {
    const dir = await tempDir();
    const input = join(dir, 'visible.pdf');
    const original = await makePdf(input);
    const result = await runCli(
      ['--auto-approve', '--quiet', 'sign', '--level', 'B-B', '--visible', '--reason', 'Approved by QA', input],
      { env: sandbox.env },
    );
    expect(result.code, result.stderr).toBe(0);
    const update = (await readFile(join(dir, 'visible-signed.pdf'))).subarray(original.length).toString('latin1');
    expect(update).toMatch(/\/Subtype \/Widget [^>]*\/Rect \[[\d.]+ [\d.]+ [\d.]+ [\d.]+\][^>]*\/AP << \/N \d+ 0 R >>/);
    expect(update).toMatch(/\/Subtype \/Type0 \/BaseFont \/[A-Z]{6}\+NotoSans-Regular \/Encoding \/Identity-H/);
    expect(update).toMatch(/\/Subtype \/CIDFontType2/);
    expect(update).toMatch(/\/FontFile2 \d+ 0 R/);
    // The words themselves are checked by pdftotext (test/interop/appearance.test.ts): here, that
    // no text is left in WinAnsi literals and no standard-14 font stands in.
    expect(update).not.toMatch(/\/Subtype \/Type1/);
    expect(update).not.toContain('(Digitally signed by');
  });

  it('--visible refuses, before any approval, a character the font lacks (naming it and --font), a file that is not a font, and a box outside the page', async () => {
    const dir = await tempDir();
    const input = join(dir, 'refused.pdf');
    await makePdf(input);
    const sign = (...args: string[]) =>
      runCli(['--auto-approve', 'sign', '--level', 'B-B', '--visible', ...args, input], { env: sandbox.env });
    const cjk = await sign('--reason', 'Genehmigt 合同');
    expect(cjk.code, cjk.stderr).toBe(2);
    expect(cjk.stderr).toMatch(/has no glyph for "合" \(U\+5408\) in the appearance text \(and 1 other character\)/);
    expect(cjk.stderr).toContain('--font FILE');
    const notFont = await sign('--font', input);
    expect(notFont.code).toBe(2);
    expect(notFont.stderr).toMatch(/refused\.pdf is not a TrueType or OpenType font/);
    const outside = await sign('--rect', '500,700,900,800');
    expect(outside.code).toBe(2);
    expect(outside.stderr).toMatch(/is not within page 1, which is \d+(\.\d+)? × \d+(\.\d+)? points/);
    const notImage = await sign('--image', input);
    expect(notImage.code).toBe(2);
    expect(notImage.stderr).toMatch(/is neither a PNG nor a JPEG/);
    for (const result of [cjk, notFont, outside, notImage])
      expect(
        result.stderr
          .trim()
          .split('\n')
          .filter((line) => !/sandbox profile/.test(line)),
      ).toHaveLength(1);
    expect(await readdir(dir)).toEqual(['refused.pdf']);
  });

  it('--certify makes the first signature a certification that verify reports; later signatures keep to its level; a change it forbids fails verify', async () => {
    const dir = await tempDir();
    const input = join(dir, 'contract.pdf');
    await makePdf(input);
    const sign = (file: string, ...args: string[]) =>
      runCli(['--auto-approve', '--json', 'sign', '--level', 'B-B', ...args, file], { env: sandbox.env });
    const verify = async (file: string) =>
      (await runCli(['--json', 'verify', file], { env: sandbox.env })).json<{
        status: string;
        signatures: Array<{ status: string; certification?: unknown; problems: string[] }>;
      }>();

    for (const [permissions, level] of [
      ['no-changes', 1],
      ['form-filling', 2],
      ['annotations', 3],
    ] as const) {
      const output = join(dir, `certified-${level}.pdf`);
      const certified = await sign(input, '--certify', permissions, '-o', output);
      expect(certified.code, certified.stderr).toBe(0);
      const report = await verify(output);
      expect(report.signatures[0]).toMatchObject({ status: 'valid', certification: { level, permits: permissions } });
    }
    // A new signature field is an annotation: refused at P=1 and P=2 before any approval, allowed at P=3.
    for (const level of [1, 2]) {
      const refused = await sign(join(dir, `certified-${level}.pdf`), '-o', join(dir, `approved-${level}.pdf`));
      expect(refused.code, refused.stderr).toBe(7);
      expect(refused.stderr).toMatch(/PDF_CERTIFIED_NO_CHANGES|certified/);
    }
    const approved = await sign(join(dir, 'certified-3.pdf'), '-o', join(dir, 'approved-3.pdf'));
    expect(approved.code, approved.stderr).toBe(0);
    const both = await verify(join(dir, 'approved-3.pdf'));
    expect(both.signatures.map((signature) => signature.status)).toEqual(['valid', 'valid']);

    // Certifying a signed document is refused, naming its signature.
    const again = await sign(
      join(dir, 'approved-3.pdf'),
      '--certify',
      'no-changes',
      '-o',
      join(dir, 'recertified.pdf'),
    );
    expect(again.code).toBe(7);
    expect(again.stderr).toMatch(/already has a signature \(field "Signature1"/);

    // An unsigned change appended after a P=1 certification: verify names it as forbidden.
    const certified = new Uint8Array(await readFile(join(dir, 'certified-1.pdf')));
    const text = Buffer.from(certified).toString('latin1');
    const size = Number([...text.matchAll(/\/Size (\d+)/g)].at(-1)![1]);
    const root = [...text.matchAll(/\/Root (\d+ \d+ R)/g)].at(-1)![1]!;
    const changed = Buffer.from(
      appendRevision(
        certified,
        { [size]: '<< /Title (Changed after certification) >>' },
        size + 1,
        `/Info ${size} 0 R`,
      ),
    )
      .toString('latin1')
      .replace(/\/Root 1 0 R \/Prev/g, `/Root ${root} /Prev`);
    await writeFile(join(dir, 'changed.pdf'), Buffer.from(changed, 'latin1'));
    const report = await verify(join(dir, 'changed.pdf'));
    expect(report.signatures[0]!.status).toBe('invalid');
    expect(report.signatures[0]!.problems.join('\n')).toMatch(
      /revision 3 changes the document \(1 object\(s\)\), which the certification's DocMDP P=1 \(no-changes\) forbids/,
    );
  });

  it('verify after a certification at P=2 and P=3: form filling allowed at both, an added or removed annotation a failure at P=2 only (named), changed page content a failure at both; signing a broken one says so', async () => {
    const dir = await tempDir();
    const input = join(dir, 'form.pdf');
    const form = await PDFDocument.create();
    const page = form.addPage([595, 842]);
    form.getForm().createTextField('Name').addToPage(page, { x: 72, y: 700, width: 200, height: 24 });
    // A note there before the certification, for the update that takes it off the page.
    const noteBefore = form.context.register(
      form.context.obj({
        Type: 'Annot',
        Subtype: 'Text',
        Rect: [400, 400, 420, 420],
        Contents: PDFString.of('Before certification'),
      }),
    );
    page.node.set(PDFName.of('Annots'), form.context.obj([...(page.node.Annots()?.asArray() ?? []), noteBefore]));
    await writeFile(input, await form.save({ useObjectStreams: false }));
    const verify = async (file: string) =>
      (await runCli(['--json', 'verify', file], { env: sandbox.env })).json<{
        signatures: Array<{ status: string; problems: string[] }>;
      }>();

    /** The certified file with one unsigned incremental update, its objects edited with pdf-lib and written by the test helper. */
    const update = async (
      certified: Uint8Array,
      edit: (doc: PDFDocument, next: () => number) => Record<number, ObjectBody>,
    ): Promise<Uint8Array> => {
      const doc = await PDFDocument.load(certified, { updateMetadata: false });
      const text = Buffer.from(certified).toString('latin1');
      let size = Number([...text.matchAll(/\/Size (\d+)/g)].at(-1)![1]);
      const root = [...text.matchAll(/\/Root (\d+ \d+ R)/g)].at(-1)![1]!;
      const objects = edit(doc, () => size++);
      return Buffer.from(
        Buffer.from(appendRevision(certified, objects, size))
          .toString('latin1')
          .replace(/\/Root 1 0 R \/Prev/g, `/Root ${root} /Prev`),
        'latin1',
      );
    };
    const fillIn = (doc: PDFDocument): Record<number, ObjectBody> => {
      const field = doc.getForm().getTextField('Name').acroField;
      field.dict.set(PDFName.of('V'), PDFString.of('Filled in after certification'));
      return { [field.ref.objectNumber]: field.dict.toString() };
    };
    const annotate = (doc: PDFDocument, next: () => number): Record<number, ObjectBody> => {
      const first = doc.getPage(0);
      const note = next();
      const annots = first.node.Annots()?.asArray() ?? [];
      first.node.set(PDFName.of('Annots'), doc.context.obj([...annots, PDFRef.of(note)]));
      return {
        [first.ref.objectNumber]: first.node.toString(),
        [note]: '<< /Type /Annot /Subtype /Text /Rect [300 300 320 320] /Contents (A note) >>',
      };
    };
    const unannotate = (doc: PDFDocument): Record<number, ObjectBody> => {
      const first = doc.getPage(0);
      const kept = (first.node.Annots()?.asArray() ?? []).filter(
        (ref) => !(ref instanceof PDFRef && ref.objectNumber === noteBefore.objectNumber),
      );
      first.node.set(PDFName.of('Annots'), doc.context.obj(kept));
      return { [first.ref.objectNumber]: first.node.toString() };
    };
    const redraw = (doc: PDFDocument, next: () => number): Record<number, ObjectBody> => {
      const first = doc.getPage(0);
      const contents = next();
      first.node.set(PDFName.of('Contents'), PDFRef.of(contents));
      return {
        [first.ref.objectNumber]: first.node.toString(),
        [contents]: { dict: '<< >>', data: 'BT /F1 24 Tf 72 600 Td (Changed) Tj ET' },
      };
    };

    for (const [permissions, level] of [
      ['form-filling', 2],
      ['annotations', 3],
    ] as const) {
      const output = join(dir, `certified-${level}.pdf`);
      const certified = await runCli(
        ['--auto-approve', '--quiet', 'sign', '--level', 'B-B', '--certify', permissions, '-o', output, input],
        { env: sandbox.env },
      );
      expect(certified.code, certified.stderr).toBe(0);
      const bytes = new Uint8Array(await readFile(output));
      const forbids = `which the certification's DocMDP P=${level} \\(${permissions}\\) forbids`;

      await writeFile(join(dir, `filled-${level}.pdf`), await update(bytes, fillIn));
      const filled = (await verify(join(dir, `filled-${level}.pdf`))).signatures[0]!;
      expect(filled.problems, `P=${level}, form filled`).toEqual([]);
      expect(filled.status).toBe('modified');

      await writeFile(join(dir, `annotated-${level}.pdf`), await update(bytes, annotate));
      const annotated = (await verify(join(dir, `annotated-${level}.pdf`))).signatures[0]!;
      if (level === 2) {
        expect(annotated.status).toBe('invalid');
        expect(annotated.problems.join('\n')).toMatch(
          new RegExp(`revision 3 adds a Text annotation \\(object \\d+\\), ${forbids}`),
        );
      } else {
        expect(annotated.problems, 'P=3, an annotation added').toEqual([]);
        expect(annotated.status).toBe('modified');
      }

      await writeFile(join(dir, `unannotated-${level}.pdf`), await update(bytes, unannotate));
      const unannotated = (await verify(join(dir, `unannotated-${level}.pdf`))).signatures[0]!;
      if (level === 2) {
        expect(unannotated.status).toBe('invalid');
        expect(unannotated.problems.join('\n')).toMatch(
          new RegExp(`revision 3 removes a Text annotation \\(object ${noteBefore.objectNumber}\\), ${forbids}`),
        );
      } else {
        expect(unannotated.problems, 'P=3, an annotation removed').toEqual([]);
        expect(unannotated.status).toBe('modified');
      }

      await writeFile(join(dir, `redrawn-${level}.pdf`), await update(bytes, redraw));
      const redrawn = (await verify(join(dir, `redrawn-${level}.pdf`))).signatures[0]!;
      expect(redrawn.status).toBe('invalid');
      expect(redrawn.problems.join('\n')).toMatch(/revision 3, appended after this signature, changes page content/);

      // Signing it is allowed where the level allows (P=3 takes a new field), but said: a new signature does not mend it.
      if (level === 3) {
        const cosign = (file: string) =>
          runCli(['--auto-approve', 'sign', '--level', 'B-B', '-o', join(dir, `cosigned-${file}`), join(dir, file)], {
            env: sandbox.env,
          });
        const onBroken = await cosign(`redrawn-${level}.pdf`);
        expect(onBroken.code, onBroken.stderr).toBe(0);
        expect(onBroken.stderr).toMatch(
          /redrawn-3\.pdf: its certification is already broken \(revision 3, appended after this signature, changes page content[^\n]*\); a new signature does not mend it\./,
        );
        const onIntact = await cosign(`certified-${level}.pdf`);
        expect(onIntact.code, onIntact.stderr).toBe(0);
        expect(onIntact.stderr).not.toMatch(/certification/);
      }
    }
  });

  for (const visible of [[], ['--visible', '--name', 'Ζωή Παπαδοπούλου', '--reason', 'Genehmigt – Zoë Łukasiewicz']]) {
    it(`splits prepare and complete for CI, with the sign-in and the approval done elsewhere${visible.length > 0 ? ' (--visible: the appearance and its font subset drawn in the split flow too)' : ''}`, async () => {
      const dir = await tempDir();
      await makePdf(join(dir, 'ci.pdf'));
      const state = join(dir, 'state.json');
      // A fresh CI machine: no terminal, no browser, no cached sign-in.
      const env = { ...sandbox.env, ESIGN_CONFIG_DIR: join(dir, 'config') };
      const prepare = (...extra: string[]) =>
        runCli(['--json', 'sign', '--prepare', '--state', state, ...extra, join(dir, 'ci.pdf')], { env });
      const pending = await prepare();
      expect(pending.code, pending.stderr).toBe(0);
      const { signInUrl } = pending.json<{ signInUrl: string }>();
      expect((await stat(state)).mode & 0o777).toBe(0o600);
      const signedIn = (await fetch(signInUrl, { redirect: 'manual' })).headers.get('location')!;
      const prepared = await prepare('--redirect-url', signedIn, ...visible);
      expect(prepared.code, prepared.stderr).toBe(0);
      const { approvals } = prepared.json<{
        approvals: Array<{ authorizationUrl: string; hashes: Array<{ hash: string }> }>;
      }>();
      expect(approvals).toHaveLength(1);
      expect(approvals[0]!.hashes).toHaveLength(1);
      const approval = await fetch(approvals[0]!.authorizationUrl, { redirect: 'manual' });
      expect(approval.status).toBe(302);
      const code = new URL(approval.headers.get('location')!).searchParams.get('code')!;
      const completed = await runCli(['--json', 'sign', '--complete', '--state', state, '--code', code], { env });
      expect(completed.code, completed.stderr).toBe(0);
      // Done: the state file (with its PKCE verifiers) goes.
      expect((await readdir(dir)).sort()).toEqual(['ci-signed.pdf', 'ci.pdf', 'config']);
      const verified = await runCli(['--json', 'verify', join(dir, 'ci-signed.pdf')], { env: sandbox.env });
      expect(verified.code, verified.stdout).toBe(0);
      const signed = (await readFile(join(dir, 'ci-signed.pdf'))).toString('latin1');
      if (visible.length > 0) {
        expect(signed).toMatch(/\/FontFile2 \d+ 0 R/);
        expect(signed).toMatch(/\/Subtype \/Type0 [^>]*\/ToUnicode \d+ 0 R|\/ToUnicode \d+ 0 R[^>]*\/Subtype \/Type0/);
        expect(signed).toMatch(/\/AP << \/N \d+ 0 R >>/);
      } else expect(signed).not.toMatch(/\/FontFile2/);
    });
  }

  it('--prepare prints what a person must open even with --quiet, and overwrites an old state file it does not need', async () => {
    const dir = await tempDir();
    await makePdf(join(dir, 'q.pdf'));
    const state = join(dir, 'state.json');
    await writeFile(state, '{"version": 1}');
    const env = { ...sandbox.env, ESIGN_CONFIG_DIR: join(dir, 'config') };
    const pending = await runCli(['--quiet', 'sign', '--prepare', '--state', state, join(dir, 'q.pdf')], { env });
    expect(pending.code, pending.stderr).toBe(0);
    expect(pending.stdout).toMatch(
      new RegExp(`^Sign in at:\\n.*/${dialect.prefix}/oauth2/authorize\\?.*scope=service`, 'm'),
    );
    const signedIn = (
      await fetch(/(http:\S+\/oauth2\/authorize\S+)/.exec(pending.stdout)![1]!, { redirect: 'manual' })
    ).headers.get('location')!;
    const prepared = await runCli(
      ['--quiet', 'sign', '--prepare', '--state', state, '--redirect-url', signedIn, join(dir, 'q.pdf')],
      { env },
    );
    expect(prepared.code, prepared.stderr).toBe(0);
    expect(prepared.stdout).toMatch(/scope=credential/);
    // Once signatures are prepared, a --redirect-url belongs to --complete.
    const misplaced = await runCli(
      ['sign', '--prepare', '--state', state, '--redirect-url', signedIn, join(dir, 'q.pdf')],
      { env },
    );
    expect(misplaced.code).toBe(2);
    expect(misplaced.stderr).toContain('--redirect-url goes with --complete');
  });

  it('--prepare after its sign-in refuses to leave out or change an option the first run gave, naming it; options it adds are its own', async () => {
    const dir = await tempDir();
    await makePdf(join(dir, 'o.pdf'));
    const state = join(dir, 'state.json');
    const env = { ...sandbox.env, ESIGN_CONFIG_DIR: join(dir, 'config') };
    const prepare = (...args: string[]) =>
      runCli(['--json', 'sign', '--prepare', '--state', state, ...args, join(dir, 'o.pdf')], { env });
    const pending = await prepare('--visible', '--reason', 'Approved');
    expect(pending.code, pending.stderr).toBe(0);
    const signedIn = (await fetch(pending.json<{ signInUrl: string }>().signInUrl, { redirect: 'manual' })).headers.get(
      'location',
    )!;
    const dropped = await prepare('--redirect-url', signedIn, '--reason', 'Seen');
    expect(dropped.code).toBe(2);
    expect(dropped.stderr).toMatch(
      /^esign: The sign-in in \S+ was begun by a --prepare run with --reason "Approved", --visible; this run has them otherwise, and would prepare other signatures\. Run the first --prepare command again, as it was, adding --redirect-url/m,
    );
    // Nothing was used up: the same sign-in finishes with the same options, and one more.
    const prepared = await prepare(
      '--redirect-url',
      signedIn,
      '--visible',
      '--reason',
      'Approved',
      '--location',
      'Vienna',
    );
    expect(prepared.code, prepared.stderr).toBe(0);
    expect(prepared.json<{ approvals: unknown[] }>().approvals).toHaveLength(1);
  });

  it('refuses the split flow on a sandbox started inside the command: its URLs would die with it', async () => {
    const dir = await tempDir();
    await makePdf(join(dir, 'e.pdf'));
    const result = await runCli(
      ['--auto-approve', 'sign', '--prepare', '--state', join(dir, 's.json'), join(dir, 'e.pdf')],
      {
        env: { ESIGN_CONFIG_DIR: join(dir, 'config'), ESIGN_SANDBOX_DIR: await seededSandboxDir(join(dir, 'sandbox')) },
      },
    );
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain('needs a running sandbox');
    expect((await readdir(dir)).filter((name) => name.endsWith('.json'))).toEqual([]);
  });

  it('in the split flow, --complete without the sign-in of --prepare says so before spending the code', async () => {
    const dir = await tempDir();
    await makePdf(join(dir, 'ci.pdf'));
    const state = join(dir, 'state.json');
    const prepared = await runCli(
      ['--auto-approve', '--json', 'sign', '--prepare', '--state', state, join(dir, 'ci.pdf')],
      { env: { ...sandbox.env, ESIGN_CONFIG_DIR: join(dir, 'here') } },
    );
    expect(prepared.code, prepared.stderr).toBe(0);
    const location = (
      await fetch(prepared.json<{ approvals: Array<{ authorizationUrl: string }> }>().approvals[0]!.authorizationUrl, {
        redirect: 'manual',
      })
    ).headers.get('location')!;
    const elsewhere = await runCli(['sign', '--complete', '--state', state, '--redirect-url', location], {
      env: { ...sandbox.env, ESIGN_CONFIG_DIR: join(dir, 'elsewhere') },
    });
    expect(elsewhere.code).toBe(4);
    expect(elsewhere.stderr).toContain('is not on this machine or has expired');
    const here = await runCli(['sign', '--complete', '--state', state, '--redirect-url', location], {
      env: { ...sandbox.env, ESIGN_CONFIG_DIR: join(dir, 'here') },
    });
    expect(here.code, here.stderr).toBe(0);
  });

  it('splits more than 50 files into several approvals, each completed when its redirect URL is given', async () => {
    const dir = await tempDir();
    const inputs = join(dir, 'in');
    await mkdir(inputs);
    await makePdf(join(inputs, 'doc-00.pdf'));
    for (let index = 1; index < 55; index++)
      await copyFile(join(inputs, 'doc-00.pdf'), join(inputs, `doc-${String(index).padStart(2, '0')}.pdf`));
    const state = join(dir, 'state.json');
    const prepared = await runCli(
      [
        '--auto-approve',
        '--json',
        'sign',
        '--prepare',
        '--state',
        state,
        '--level',
        'B-B',
        '--output-dir',
        join(dir, 'out'),
        inputs,
      ],
      { env: sandbox.env },
    );
    expect(prepared.code, prepared.stderr).toBe(0);
    const { approvals } = prepared.json<{ approvals: Array<{ authorizationUrl: string; hashes: unknown[] }> }>();
    expect(approvals.map((approval) => approval.hashes.length)).toEqual([50, 5]);
    const redirects = await Promise.all(
      approvals.map(async (approval) =>
        (await fetch(approval.authorizationUrl, { redirect: 'manual' })).headers.get('location')!,
      ),
    );
    // The second approval first: its 5 files are signed, the first approval stays pending.
    const second = await runCli(['--json', 'sign', '--complete', '--state', state, '--redirect-url', redirects[1]!], {
      env: sandbox.env,
    });
    expect(second.code, second.stderr).toBe(0);
    expect(second.jsonLines().filter((line) => (line as { output?: string }).output)).toHaveLength(5);
    expect(second.jsonLines().at(-1)).toMatchObject({ remainingApprovals: 1 });
    const again = await runCli(['sign', '--complete', '--state', state, '--redirect-url', redirects[1]!], {
      env: sandbox.env,
    });
    expect(again.code).toBe(4);
    expect(again.stderr).toContain('state that esign did not send');
    const first = await runCli(['--json', 'sign', '--complete', '--state', state, '--redirect-url', redirects[0]!], {
      env: sandbox.env,
    });
    expect(first.code, first.stderr).toBe(0);
    expect(first.jsonLines()).toHaveLength(50);
    await expect(stat(state)).rejects.toThrow();
    expect((await readdir(join(dir, 'out'))).filter((name) => name.endsWith('-signed.pdf'))).toHaveLength(55);
  });
});
