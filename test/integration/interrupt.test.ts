/**
 * Interruption (issue 9, item 3): SIGINT and SIGTERM at each phase of a run — hashing, waiting for
 * approval, signing, timestamping, writing, uploading — exit 130 / 143 and leave no temp file and
 * no partial output (an output that exists is a complete one, renamed into place before the signal).
 */
import { createHash } from 'node:crypto';
import { copyFile, mkdir, open, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { storageControl } from '../../src/sandbox/storage/routes.js';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.js';
import { runCli, spawnCli, type SpawnedCli } from '../helpers/run-cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/tmp.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';

const SIGNALS = [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const;
const BIG_PDF_BYTES = 300 * 1024 * 1024;

let t: TestSandbox;
let proxy: FaultProxy;
let realS3Url: string;
let onePage: Buffer;

beforeAll(async () => {
  t = await startTestSandbox({ autoApprove: true, s3: true });
  realS3Url = storageControl(t.sandbox).s3.url;
  proxy = await startFaultProxy(realS3Url);
  storageControl(t.sandbox).s3.url = proxy.url;
  const document = await PDFDocument.create();
  const font = await document.embedFont(StandardFonts.Helvetica);
  document.addPage([595, 842]).drawText('interrupt me', { x: 72, y: 760, size: 14, font });
  onePage = Buffer.from(await document.save({ useObjectStreams: false }));
});
afterEach(() => {
  t.sandbox.faults.clear();
  proxy.faults.length = 0;
});
afterAll(async () => {
  if (proxy) {
    storageControl(t.sandbox).s3.url = realS3Url;
    await proxy.close();
  }
  await t?.close();
});

/** A valid 300 MB PDF written sparse (one page, one huge unused stream object): fast to create. */
async function writeBigPdf(path: string): Promise<void> {
  const parts: string[] = [];
  const offsets: number[] = [];
  let position = 0;
  const add = (text: string) => {
    parts.push(text);
    position += Buffer.byteLength(text, 'latin1');
  };
  add('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n');
  offsets[1] = position;
  add('1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n');
  offsets[2] = position;
  add('2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n');
  offsets[3] = position;
  add('3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] >>\nendobj\n');
  offsets[4] = position;
  add(`4 0 obj\n<< /Length ${BIG_PDF_BYTES} >>\nstream\n`);
  const handle = await open(path, 'w');
  try {
    await handle.write(Buffer.from(parts.join(''), 'latin1'), 0, undefined, 0);
    position += BIG_PDF_BYTES;
    const tail: string[] = [];
    const tailStart = position;
    let tailPosition = position;
    const addTail = (text: string) => {
      tail.push(text);
      tailPosition += Buffer.byteLength(text, 'latin1');
    };
    addTail('\nendstream\nendobj\n');
    const xref = tailPosition;
    addTail('xref\n0 5\n0000000000 65535 f \n');
    for (let index = 1; index <= 4; index++) addTail(`${String(offsets[index]).padStart(10, '0')} 00000 n \n`);
    addTail(`trailer\n<< /Size 5 /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`);
    await handle.write(Buffer.from(tail.join(''), 'latin1'), 0, undefined, tailStart);
  } finally {
    await handle.close();
  }
}

const sha256 = async (path: string) =>
  createHash('sha256')
    .update(await readFile(path))
    .digest('hex');

async function until(
  condition: () => boolean | Promise<boolean>,
  what: string,
  run: SpawnedCli,
  timeoutMs = 60_000,
): Promise<void> {
  const started = Date.now();
  while (!(await condition())) {
    if (run.child.exitCode !== null) throw new Error(`the CLI ended before ${what}: ${run.stderr()}`);
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}; stderr: ${run.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const loggedSince = (start: number, route: string) => () => t.sandbox.requestLog.slice(start).includes(route);

/** After the signal: the exit code, the message, no temp file, and every output present complete. */
async function expectCleanInterrupt(
  run: SpawnedCli,
  signal: NodeJS.Signals,
  exitCode: number,
  dir: string,
  inputs: Record<string, string>,
): Promise<void> {
  run.child.kill(signal);
  const result = await run.result;
  expect(result.code, result.stderr).toBe(exitCode);
  expect(result.stderr).toContain(`interrupted (${signal})`);
  const names = await readdir(dir);
  expect(names.filter((name) => name.endsWith('.tmp') || name.startsWith('.'))).toEqual([]);
  for (const [name, hash] of Object.entries(inputs))
    expect(await sha256(join(dir, name)), `${name} changed`).toBe(hash);
  for (const name of names.filter((candidate) => candidate.endsWith('-signed.pdf'))) {
    const bytes = await readFile(join(dir, name));
    expect(bytes.subarray(-6).toString('latin1'), `${name} is partial`).toMatch(/%%EOF\s*$/);
    expect(bytes.toString('latin1')).toContain('/ByteRange');
  }
}

async function onePageDir(count: number): Promise<{ dir: string; inputs: Record<string, string> }> {
  const dir = await tempDir('esign-interrupt-');
  const inputs: Record<string, string> = {};
  const hash = createHash('sha256').update(onePage).digest('hex');
  await writeFile(join(dir, 'doc-0000.pdf'), onePage);
  inputs['doc-0000.pdf'] = hash;
  for (let index = 1; index < count; index++) {
    const name = `doc-${String(index).padStart(4, '0')}.pdf`;
    await copyFile(join(dir, 'doc-0000.pdf'), join(dir, name));
    inputs[name] = hash;
  }
  return { dir, inputs };
}

const env = () => ({ ...t.env });

describe.each(SIGNALS)('%s at each phase', (signal, exitCode) => {
  it('hashing a 300 MB PDF', async () => {
    const dir = await tempDir('esign-interrupt-');
    const input = join(dir, 'big.pdf');
    await writeBigPdf(input);
    const before = await sha256(input);
    const run = spawnCli(['--auto-approve', 'sign', '--level', 'B-B', input], { env: env() });
    await until(async () => (await readdir(dir)).some((name) => name.endsWith('.tmp')), 'the temp output appears', run);
    await expectCleanInterrupt(run, signal, exitCode, dir, { 'big.pdf': before });
    expect(await readdir(dir)).toEqual(['big.pdf']);
  });

  it('waiting for approval (a browser that never approves)', async () => {
    const { dir, inputs } = await onePageDir(1);
    const run = spawnCli(
      ['--browser', 'node -e setTimeout(()=>{},20000)', 'sign', '--level', 'B-B', join(dir, 'doc-0000.pdf')],
      { env: env() },
    );
    await run.waitForStderr(/Opening your browser|open this address|browser/i);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await expectCleanInterrupt(run, signal, exitCode, dir, inputs);
    expect(await readdir(dir)).toEqual(['doc-0000.pdf']);
  });

  it('signing (signHash delayed)', async () => {
    const { dir, inputs } = await onePageDir(3);
    t.sandbox.faults.inject({
      route: 'signing POST /csc/v1/signatures/signHash',
      fault: { kind: 'delay', ms: 10_000 },
    });
    const start = t.sandbox.requestLog.length;
    const run = spawnCli(['--auto-approve', 'sign', '--level', 'B-B', dir], { env: env() });
    await until(loggedSince(start, 'signing POST /csc/v1/signatures/signHash'), 'signHash is called', run);
    await expectCleanInterrupt(run, signal, exitCode, dir, inputs);
    expect((await readdir(dir)).filter((name) => name.includes('signed'))).toEqual([]);
  });

  it('timestamping (TSA delayed)', async () => {
    const { dir, inputs } = await onePageDir(3);
    t.sandbox.faults.inject({ route: 'tsa POST /tss03', fault: { kind: 'delay', ms: 10_000 } });
    const start = t.sandbox.requestLog.length;
    const run = spawnCli(['--auto-approve', 'sign', '--level', 'B-T', dir], { env: env() });
    await until(loggedSince(start, 'tsa POST /tss03'), 'the TSA is called', run);
    await expectCleanInterrupt(run, signal, exitCode, dir, inputs);
    expect((await readdir(dir)).filter((name) => name.includes('signed'))).toEqual([]);
  });

  it('writing outputs (a batch of 300 mid-write)', async () => {
    const { dir, inputs } = await onePageDir(300);
    const run = spawnCli(['--auto-approve', 'sign', '--level', 'B-B', dir], { env: env() });
    await until(
      async () => (await readdir(dir)).some((name) => name.endsWith('-signed.pdf')),
      'the first output is written',
      run,
    );
    await expectCleanInterrupt(run, signal, exitCode, dir, inputs);
    const outputs = (await readdir(dir)).filter((name) => name.endsWith('-signed.pdf')).length;
    expect(outputs).toBeGreaterThan(0);
    expect(outputs).toBeLessThan(300);
  });

  it('uploading (S3 PUT delayed)', async () => {
    const dir = await tempDir('esign-interrupt-');
    const configDir = join(dir, 'config');
    await mkdir(configDir);
    const upEnv = { ...t.env, ESIGN_CONFIG_DIR: configDir };
    const login = await runCli(['--auto-approve', 'login', '--scope', 'com.vendor.storage'], { env: upEnv });
    expect(login.code, login.stderr).toBe(0);
    const files = join(dir, 'files');
    await mkdir(files);
    await writeFile(join(files, 'report.pdf'), onePage);
    const inputs = { 'report.pdf': await sha256(join(files, 'report.pdf')) };
    proxy.faults.push({ kind: 'delay', ms: 20_000 });
    const puts = proxy.puts;
    const prefix = `interrupt-${signal}`;
    const run = spawnCli(['upload', '--prefix', prefix, join(files, 'report.pdf')], { env: upEnv });
    await until(() => proxy.puts > puts, 'the S3 PUT is sent', run);
    await expectCleanInterrupt(run, signal, exitCode, files, inputs);
    proxy.faults.length = 0;
    const listed = await runCli(['--json', 'storage', 'ls', prefix], { env: upEnv });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.json<{ objects: unknown[] }>().objects).toEqual([]);
  });
});
