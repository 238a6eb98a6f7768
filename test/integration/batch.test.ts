/**
 * Large unattended batches (issue 22): windows signed as a pipeline, --skip-existing that verifies
 * before it skips and resumes an interrupted batch, JSON lines that stream, a file that disappears
 * or changes mid-batch reported alone, a full disk (exit 8, nothing half-written), and every check
 * that can refuse an input run before any browser step (issue 23, item 4).
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { appendFile, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, spawnCli } from '../helpers/run-cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/tmp.js';

let t: TestSandbox;
let onePage: Buffer;
beforeAll(async () => {
  t = await startTestSandbox({ autoApprove: true });
  const document = await PDFDocument.create();
  const font = await document.embedFont(StandardFonts.Helvetica);
  document.addPage([595, 842]).drawText('batch', { x: 72, y: 760, size: 14, font });
  onePage = Buffer.from(await document.save({ useObjectStreams: false }));
});
afterAll(async () => t?.close());

const SIGN_HASH = 'signing POST /csc/v1/signatures/signHash';
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const name = (index: number) => `doc-${String(index).padStart(4, '0')}.pdf`;

async function inputsDir(count: number): Promise<{ dir: string; inputs: string; outputs: string }> {
  const dir = await tempDir('esign-batch-');
  const inputs = join(dir, 'in');
  const outputs = join(dir, 'out');
  await mkdir(inputs);
  for (let index = 0; index < count; index++) await writeFile(join(inputs, name(index)), onePage);
  return { dir, inputs, outputs };
}

interface Line {
  input: string;
  output?: string;
  skipped?: boolean;
  credential?: string;
  error?: { code: string; message: string };
}

/** Every output is a complete incremental update of its input (the original bytes, then a signature and %%EOF). */
async function expectCompleteOutputs(outputs: string): Promise<string[]> {
  const names = (await readdir(outputs)).sort();
  for (const output of names) {
    expect(output, 'a temp file or directory was left').toMatch(/^doc-\d{4}-signed\.pdf$/);
    const bytes = await readFile(join(outputs, output));
    expect(bytes.subarray(0, onePage.length).equals(onePage), output).toBe(true);
    expect(bytes.subarray(onePage.length).toString('latin1'), output).toMatch(/\/ByteRange[\s\S]*%%EOF\s*$/);
  }
  return names;
}

const signHashCalls = (since: number) =>
  t.sandbox.requestLog.slice(since).filter((route) => route === SIGN_HASH).length;

describe('sign, large batches', () => {
  it('--skip-existing skips only outputs that verify as signatures of their input by the same credential, and counts them apart', async () => {
    const { inputs, outputs } = await inputsDir(60);
    const first = await runCli(
      ['--auto-approve', '--json', 'sign', '--level', 'B-B', '--output-dir', outputs, inputs],
      { env: t.env },
    );
    expect(first.code, first.stderr).toBe(0);

    // Three outputs go (an interrupted run), one is damaged, one input changes after it was signed.
    for (const index of [3, 17, 58]) await rm(join(outputs, name(index).replace('.pdf', '-signed.pdf')));
    const damaged = join(outputs, name(20).replace('.pdf', '-signed.pdf'));
    const bytes = await readFile(damaged);
    const contents = bytes.toString('latin1').lastIndexOf('/Contents <') + 40;
    bytes[contents] = bytes[contents] === 0x30 ? 0x31 : 0x30;
    await writeFile(damaged, bytes);
    await appendFile(join(inputs, name(40)), '% saved again\n');

    const before = t.sandbox.requestLog.length;
    const refused = await runCli(
      [
        '--auto-approve',
        '--json',
        'sign',
        '--level',
        'B-B',
        '--skip-existing',
        '--continue-on-error',
        '--output-dir',
        outputs,
        inputs,
      ],
      { env: t.env },
    );
    expect(refused.code, refused.stderr).toBe(10);
    const lines = refused.jsonLines<Line>();
    expect(lines.filter((line) => line.skipped)).toHaveLength(55);
    expect(lines.filter((line) => line.skipped).every((line) => line.credential === 'alice-rsa2048')).toBe(true);
    expect(
      lines
        .filter((line) => line.output && !line.skipped)
        .map((line) => line.input)
        .sort(),
    ).toEqual([3, 17, 58].map((index) => join(inputs, name(index))));
    const failed = lines.filter((line) => line.error);
    expect(failed.map((line) => [line.input, line.error!.code]).sort()).toEqual([
      [join(inputs, name(20)), 'OUTPUT_EXISTS'],
      [join(inputs, name(40)), 'OUTPUT_EXISTS'],
    ]);
    expect(failed.find((line) => line.input.endsWith(name(20)))!.error!.message).toMatch(
      /is not a signature of .* by alice-rsa2048 \(.*\)/,
    );
    expect(failed.find((line) => line.input.endsWith(name(40)))!.error!.message).toMatch(
      /does not begin with the input as it is now/,
    );
    expect(refused.stderr).toContain('3 of 60 files signed, 55 skipped (already signed); 2 failed');
    expect(signHashCalls(before)).toBe(1);
    expect(await readFile(damaged)).toEqual(bytes);

    // With --force as well, the two that do not verify are signed again; the rest are still skipped.
    const forced = await runCli(
      [
        '--auto-approve',
        '--json',
        'sign',
        '--level',
        'B-B',
        '--skip-existing',
        '--force',
        '--output-dir',
        outputs,
        inputs,
      ],
      { env: t.env },
    );
    expect(forced.code, forced.stderr).toBe(0);
    expect(
      forced
        .jsonLines<Line>()
        .filter((line) => !line.skipped)
        .map((line) => line.input)
        .sort(),
    ).toEqual([20, 40].map((index) => join(inputs, name(index))));
    for (const index of [20, 40]) {
      const verified = await runCli(['verify', join(outputs, name(index).replace('.pdf', '-signed.pdf'))], {
        env: t.env,
      });
      expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    }
  });

  it('--skip-existing does not skip an output signed with another credential, nor a detached signature of other content', async () => {
    const { inputs, outputs } = await inputsDir(2);
    await writeFile(join(inputs, 'notes.txt'), 'release notes\n');
    const other = await runCli(
      ['--auto-approve', 'sign', '--level', 'B-B', '--credential', 'alice-rsa3072', '--output-dir', outputs, inputs],
      { env: t.env },
    );
    expect(other.code, other.stderr).toBe(0);
    const again = await runCli(
      [
        '--auto-approve',
        '--json',
        'sign',
        '--level',
        'B-B',
        '--credential',
        'alice-rsa2048',
        '--skip-existing',
        '--continue-on-error',
        '--output-dir',
        outputs,
        inputs,
      ],
      { env: t.env },
    );
    expect(again.code, again.stderr).toBe(8);
    const lines = again.jsonLines<Line>();
    expect(lines).toHaveLength(3);
    expect(
      lines.every(
        (line) => line.error?.code === 'OUTPUT_EXISTS' && /signed with another certificate/.test(line.error.message),
      ),
    ).toBe(true);

    await writeFile(join(inputs, 'notes.txt'), 'other notes\n');
    const same = await runCli(
      [
        '--auto-approve',
        '--json',
        'sign',
        '--level',
        'B-B',
        '--credential',
        'alice-rsa3072',
        '--skip-existing',
        '--continue-on-error',
        '--output-dir',
        outputs,
        inputs,
      ],
      { env: t.env },
    );
    const sameLines = same.jsonLines<Line>();
    expect(
      sameLines
        .filter((line) => line.skipped)
        .map((line) => line.input)
        .sort(),
    ).toEqual([join(inputs, name(0)), join(inputs, name(1))]);
    expect(sameLines.find((line) => line.input.endsWith('notes.txt'))?.error?.message).toMatch(/message-digest/);
  });

  it('Ctrl-C in the middle of a batch leaves no partial output, and --skip-existing then signs only the rest', async () => {
    const { inputs, outputs } = await inputsDir(400);
    const run = spawnCli(['--auto-approve', 'sign', '--level', 'B-B', '--output-dir', outputs, inputs], { env: t.env });
    for (
      let waited = 0;
      !(existsSync(outputs) && (await readdir(outputs)).some((entry) => entry.endsWith('-signed.pdf')));
      waited += 20
    ) {
      if (waited > 60_000 || run.child.exitCode !== null) throw new Error(`no output appeared: ${run.stderr()}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    run.child.kill('SIGINT');
    const interrupted = await run.result;
    expect(interrupted.code, interrupted.stderr).toBe(130);
    const done = await expectCompleteOutputs(outputs);
    expect(done.length).toBeGreaterThan(0);
    expect(done.length).toBeLessThan(400);

    const before = t.sandbox.requestLog.length;
    const resumed = await runCli(
      ['--auto-approve', '--json', 'sign', '--level', 'B-B', '--skip-existing', '--output-dir', outputs, inputs],
      { env: t.env, timeoutMs: 300_000 },
    );
    expect(resumed.code, resumed.stderr).toBe(0);
    const lines = resumed.jsonLines<Line>();
    expect(lines.filter((line) => line.skipped)).toHaveLength(done.length);
    expect(lines.filter((line) => !line.skipped)).toHaveLength(400 - done.length);
    expect(signHashCalls(before)).toBe(Math.ceil((400 - done.length) / 50));
    expect(await expectCompleteOutputs(outputs)).toHaveLength(400);
  });

  it('streams each JSON line as its file finishes, not at the end; off a terminal nothing animates', async () => {
    const { inputs, outputs } = await inputsDir(150);
    t.sandbox.faults.inject({ route: SIGN_HASH, fault: { kind: 'delay', ms: 1_500 }, times: 3 });
    const run = spawnCli(['--auto-approve', '--json', 'sign', '--level', 'B-B', '--output-dir', outputs, inputs], {
      env: t.env,
    });
    let stdout = '';
    run.child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    for (let waited = 0; !stdout.includes('\n'); waited += 10) {
      if (waited > 60_000) throw new Error(`no JSON line: ${run.stderr()}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(run.child.exitCode, 'the first line came only at the end').toBeNull();
    const result = await run.result;
    t.sandbox.faults.clear();
    expect(result.code, result.stderr).toBe(0);
    expect(result.jsonLines()).toHaveLength(150);
    expect(result.stderr).not.toMatch(/Signing:|files\/s|ETA|\r/);
    expect(result.stderr).not.toContain('\u001b[');
  });

  it('a file that disappears or is damaged mid-batch is reported alone, in one line; with --continue-on-error the rest is signed', async () => {
    const { dir, inputs, outputs } = await inputsDir(120);
    // The service sign-in comes after every input was checked: there, one later file goes and one is overwritten.
    const browser = join(dir, 'browser.sh');
    const script = [
      '#!/bin/sh',
      `if [ ! -e '${dir}/done' ]; then touch '${dir}/done'; rm '${join(inputs, name(70))}'; printf 'not a pdf any more' > '${join(inputs, name(110))}'; fi`,
      'exec curl -sfL -o /dev/null "$1"',
    ];
    await writeFile(browser, script.join('\n') + '\n', { mode: 0o755 });
    const env = { ...t.env, ESIGN_CONFIG_DIR: await tempDir() };
    const result = await runCli(
      [
        '--browser',
        browser,
        '--json',
        'sign',
        '--level',
        'B-B',
        '--continue-on-error',
        '--output-dir',
        outputs,
        inputs,
      ],
      { env },
    );
    expect(result.code, result.stderr).toBe(10);
    const failed = result.jsonLines<Line>().filter((line) => line.error);
    expect(failed.map((line) => [line.input, line.error!.code])).toEqual([
      [join(inputs, name(70)), 'INPUT_NOT_FOUND'],
      [join(inputs, name(110)), 'PDF_NOT_PDF'],
    ]);
    expect(result.stdout.split('\n').filter((line) => line.includes(name(70)))).toHaveLength(1);
    expect(result.stderr).toContain('118 of 120 files signed; 2 failed');
    expect(await expectCompleteOutputs(outputs)).toHaveLength(118);
  });

  it('refuses a PDF whose update needs an object that cannot be read before any browser step (issue 23)', async () => {
    const dir = await tempDir('esign-batch-');
    const good = join(dir, 'good.pdf');
    await writeFile(good, onePage);
    // The page object's header is damaged; the cross-reference data still reads.
    const text = onePage.toString('latin1');
    const page = /(\d+) 0 obj\s*<<\s*\/Type \/Page\b/.exec(text)!;
    const damaged = Buffer.from(
      text.slice(0, page.index) + text.slice(page.index).replace(' 0 obj', ' 0 jbo'),
      'latin1',
    );
    await writeFile(join(dir, 'damaged.pdf'), damaged);
    const marker = join(dir, 'browser-opened');
    const browser = join(dir, 'browser.sh');
    await writeFile(browser, `#!/bin/sh\ntouch '${marker}'\nexec curl -sfL -o /dev/null "$1"\n`, { mode: 0o755 });
    const env = { ...t.env, ESIGN_CONFIG_DIR: await tempDir() };
    const result = await runCli(['--browser', browser, 'sign', '--level', 'B-B', good, join(dir, 'damaged.pdf')], {
      env,
    });
    expect(result.code, result.stderr).toBe(7);
    expect(result.stderr.trim().split('\n').at(-1)).toMatch(/^esign: .*damaged\.pdf.*object/);
    expect(existsSync(marker), 'a browser step ran before the damaged file was refused').toBe(false);
    expect(result.stderr).not.toMatch(/browser/i);
    expect((await readdir(dir)).sort()).toEqual(['browser.sh', 'damaged.pdf', 'good.pdf']);
  });
});

describe('sign, a full disk', () => {
  const mountPoint = join('/tmp', `esign-full-${process.pid}`);
  let mounted = false;
  beforeAll(async () => {
    await mkdir(mountPoint, { recursive: true });
    try {
      // A real full disk: a small tmpfs (needs root; CI runs as root).
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=640k', 'tmpfs', mountPoint], { stdio: 'ignore' });
      mounted = true;
    } catch {
      mounted = false;
    }
  });
  afterAll(async () => {
    if (mounted) execFileSync('umount', [mountPoint]);
    await rm(mountPoint, { recursive: true, force: true });
  });

  it('stops with exit 8 when the disk fills up: nothing half-written, the outputs already done intact', async (context) => {
    if (!mounted) context.skip('mounting a small tmpfs needs root');
    const { inputs } = await inputsDir(200);
    const inputHashes = new Map<string, string>();
    for (const input of await readdir(inputs)) inputHashes.set(input, sha256(await readFile(join(inputs, input))));
    // --continue-on-error too: a full disk stops the batch, since every later file would fail alike.
    const result = await runCli(
      ['--auto-approve', 'sign', '--level', 'B-B', '--continue-on-error', '--output-dir', mountPoint, inputs],
      { env: t.env },
    );
    expect(result.code, result.stderr).toBe(8);
    const last = result.stderr.trim().split('\n').at(-1)!;
    expect(last).toMatch(
      /^esign: (\S*doc-\d{4}\.pdf: )?Could not write .*doc-\d{4}-signed\.pdf \(ENOSPC\)\. Free some disk space/,
    );
    expect(result.stderr).not.toMatch(/\n\s+at /);
    const done = await expectCompleteOutputs(mountPoint);
    expect(done.length).toBeGreaterThan(0);
    expect(done.length).toBeLessThan(200);
    for (const output of done.slice(0, 3)) {
      const verified = await runCli(['verify', join(mountPoint, output)], { env: t.env });
      expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    }
    for (const [input, hash] of inputHashes) expect(sha256(await readFile(join(inputs, input))), input).toBe(hash);
  });
});
