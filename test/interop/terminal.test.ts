/**
 * esign on a real terminal: `script` (util-linux) gives it a pseudo-terminal, as a person's shell
 * would, so the progress it shows only on a TTY can be seen — and the same commands off a TTY
 * (every other test) show none of it.
 */
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildClassicPdf } from '../helpers/pdf-fixtures.js';
import { esignShellLine, runCli } from '../helpers/run-cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDirForFile } from '../helpers/tmp.js';

const missing = spawnSync('which', ['script']).status !== 0;

let t: TestSandbox;
let work: { dir: string; remove: () => Promise<void> };

beforeAll(async () => {
  if (missing) return;
  t = await startTestSandbox({ s3: true, autoApprove: true });
  work = await tempDirForFile('esign-terminal-');
  const login = await runCli(['--auto-approve', 'login', '--scope', 'com.vendor.storage'], { env: t.env });
  expect(login.code, login.stderr).toBe(0);
});
afterAll(async () => {
  await t?.close();
  await work?.remove();
});

/** Runs esign under `script`, on a pseudo-terminal; resolves with everything the terminal showed. */
function onTerminal(args: string[], columns = 120): Promise<{ status: number; screen: string }> {
  const quoted = esignShellLine(args);
  // A pseudo-terminal made by `script` without a terminal around it is 0 columns wide; give it a size.
  const command = `stty cols ${columns} rows 40; ${quoted}`;
  const env = { ...process.env, ...t.env, NO_COLOR: '1', CI: '', TERM: 'xterm' };
  return new Promise((resolve) => {
    // Async: the sandbox answering esign runs in this process.
    execFile(
      'script',
      ['-qefc', command, '/dev/null'],
      { env, encoding: 'utf8', timeout: 120_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout) => {
        resolve({ status: error ? Number((error as { code?: unknown }).code ?? -1) : 0, screen: stdout });
      },
    );
  });
}

describe.skipIf(missing)('on a terminal', () => {
  it('esign upload draws a progress bar for a large file', async () => {
    const file = join(work.dir, 'big.bin');
    await writeFile(file, Buffer.alloc(24 * 1024 * 1024, 7));
    const { status, screen } = await onTerminal(['upload', '--prefix', 'tty', file]);
    expect(status, screen.slice(-2000)).toBe(0);
    expect(screen).toMatch(/uploading big\.bin \[█*░*\] \d+% /);
    expect(screen).toContain('→ s3://');
  });

  it('esign sign shows what it is doing, then the result', async () => {
    const pdf = join(work.dir, 'contract.pdf');
    await writeFile(pdf, buildClassicPdf());
    const { status, screen } = await onTerminal(['--auto-approve', 'sign', '--level', 'B-T', pdf]);
    expect(status, screen.slice(-2000)).toBe(0);
    expect(screen).toMatch(/Signing: [01]\/1 files/);
    expect(screen).toContain('✓ ');
  });

  it('a batch shows files done out of total, the rate and an ETA, and every result line whole', async () => {
    const dir = join(work.dir, 'batch');
    await mkdir(dir);
    const pdf = buildClassicPdf();
    for (let index = 0; index < 600; index++)
      await writeFile(join(dir, `doc-${String(index).padStart(3, '0')}.pdf`), pdf);
    const { status, screen } = await onTerminal([
      '--auto-approve',
      'sign',
      '--level',
      'B-T',
      '--output-dir',
      join(dir, 'signed'),
      dir,
    ]);
    expect(status, screen.slice(-2000)).toBe(0);
    expect(screen).toMatch(/Signing: \d{2,3}\/600 files · \d+ files\/s · ETA \d+s/);
    // The progress line is cleared before each result is printed, so no result shares a line with it.
    // What each line shows: what follows its last return to column 1, without control sequences.
    const shown = (line: string) =>
      line
        .slice(line.lastIndexOf('\u001b[1G'))
        .split('\u001b[')
        .map((part, index) => (index === 0 ? part : part.replace(/^[0-9;?]*[A-Za-z]/, '')))
        .join('')
        .replaceAll('\r', '');
    const results = screen
      .split('\n')
      .filter((line) => line.includes('✓ '))
      .map(shown);
    expect(results).toHaveLength(600);
    const strayLine = results.find(
      (line) => !/^✓ \S+doc-\d{3}\.pdf → \S+doc-\d{3}-signed\.pdf \(PAdES B-T, [\d.]+ KiB\)$/.test(line),
    );
    expect(strayLine).toBeUndefined();
  });

  it('on a terminal that reports no width, shows no spinner rather than clearing lines without end', async () => {
    const pdf = join(work.dir, 'narrow.pdf');
    await writeFile(pdf, buildClassicPdf());
    const { status, screen } = await onTerminal(['--auto-approve', 'sign', '--level', 'B-B', pdf], 0);
    expect(status, screen.slice(-2000)).toBe(0);
    expect(screen.length).toBeLessThan(2000);
    expect(screen).toContain('✓ ');
  });

  it('sign --upload shows one thing at a time: no two spinners at once', async () => {
    const pdf = join(work.dir, 'up.pdf');
    await writeFile(pdf, buildClassicPdf());
    const { status, screen } = await onTerminal([
      '--auto-approve',
      'sign',
      '--level',
      'B-T',
      '--upload',
      '--force',
      '--overwrite',
      pdf,
    ]);
    expect(status, screen.slice(-2000)).toBe(0);
    expect(screen).not.toContain('Multiple concurrent spinners');
    expect(screen).toContain('→ s3://');
  });

  // The way out a headless machine's message names for a person at a terminal with no display:
  // print each URL, and take the address the browser was sent to, pasted back.
  it('esign --no-browser sign, with no display: prints each URL and finishes with the pasted redirect address', async () => {
    const dir = join(work.dir, 'paste');
    await mkdir(dir);
    const pdf = join(dir, 'pasted.pdf');
    await writeFile(pdf, buildClassicPdf());
    const quoted = esignShellLine(['--no-browser', 'sign', '--level', 'B-B', pdf]);
    const env = {
      ...process.env,
      ...t.env,
      ESIGN_CONFIG_DIR: join(dir, 'config'),
      NO_COLOR: '1',
      CI: '',
      TERM: 'xterm',
      DISPLAY: '',
      WAYLAND_DISPLAY: '',
    };
    const child = spawn('script', ['-qefc', `stty cols 400 rows 40; ${quoted}`, '/dev/null'], {
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let screen = '';
    const answered = new Set<string>();
    child.stdout.on('data', async (chunk: Buffer) => {
      screen += chunk.toString();
      for (const [url] of screen.matchAll(/http:\/\/127\.0\.0\.1:\d+\/signing\/oauth2\/authorize\?\S+/g)) {
        if (answered.has(url)) continue;
        answered.add(url);
        // The person's browser: approve, and copy the address it is sent to (nothing needs to open it).
        const sentTo = (await fetch(url, { redirect: 'manual' })).headers.get('location')!;
        child.stdin.write(`${sentTo}\n`);
      }
    });
    const status = await closed(child);
    expect(status, screen.slice(-2000)).toBe(0);
    expect(screen).toContain('Then paste the address your browser was sent to');
    expect(answered.size).toBeGreaterThanOrEqual(1);
    expect((await readdir(dir)).sort()).toEqual(['config', 'pasted-signed.pdf', 'pasted.pdf']);
  });

  // An encrypted PDF that needs a password, signed at a terminal with no password given: esign asks
  // (masked), says when a password does not open it, asks again, and signs.
  it('asks for the password of an encrypted PDF on the terminal, masked, and asks again after a wrong one', async () => {
    const dir = join(work.dir, 'password');
    await mkdir(dir);
    const pdf = join(dir, 'locked.pdf');
    await writeFile(join(dir, 'plain.pdf'), buildClassicPdf());
    expect(
      spawnSync('qpdf', ['--encrypt', 'tty-pass-42', 'owner', '256', '--', join(dir, 'plain.pdf'), pdf]).status,
    ).toBe(0);
    const quoted = esignShellLine(['--auto-approve', 'sign', '--level', 'B-B', pdf]);
    const env = { ...process.env, ...t.env, NO_COLOR: '1', CI: '', TERM: 'xterm' };
    const child = spawn('script', ['-qefc', `stty cols 200 rows 40; ${quoted}`, '/dev/null'], {
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let screen = '';
    const answers = ['not-it\r', 'tty-pass-42\r'];
    let prompts = 0;
    child.stdout.on('data', (chunk: Buffer) => {
      screen += chunk.toString();
      const seen = screen.split('Password for').length - 1;
      while (prompts < seen && answers.length > 0) {
        prompts++;
        child.stdin.write(answers.shift()!);
      }
    });
    const status = await closed(child);
    expect(status, screen.slice(-2000)).toBe(0);
    expect(screen).toContain(`Password for ${pdf}`);
    expect(screen).toContain('(the last one did not open it)');
    expect(screen).not.toContain('tty-pass-42');
    expect(screen).not.toContain('not-it');
    expect((await readdir(dir)).sort()).toEqual(['locked-signed.pdf', 'locked.pdf', 'plain.pdf']);
  });
});

/** The exit status of a child, killed after a minute if it has not ended by then. */
function closed(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}
