/**
 * Encrypted PDFs (standard security handler), made fresh by qpdf and Ghostscript, signed by esign
 * and judged by pdfsig, qpdf --check (with the file's passwords) and openssl cms -verify: the
 * encryption is kept as it was (qpdf --show-encryption), the same passwords open the output, an
 * earlier signature stays valid, and a password is asked for, refused or never kept as it should.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFile, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  opensslVerifiesCms,
  pdfsig,
  qpdfCheck,
  runTool,
  startInteropSetup,
  closeInteropSetup,
} from '../helpers/pdf-judges.js';
import { runCli } from '../helpers/run-cli.js';
import { type TestSandbox } from '../helpers/sandbox.js';

const has = (tool: string) => spawnSync('which', [tool]).status === 0;
const missing = ['pdfsig', 'qpdf', 'openssl', 'gs', 'certutil'].filter((tool) => !has(tool));
if (missing.length > 0)
  console.warn(`interop encrypted-PDF tests skipped: missing ${missing.join(', ')} (.ci/run installs them)`);

const SAMPLE = join(import.meta.dirname, '../../samples/contract.pdf');
let sandbox: TestSandbox;
let work: { dir: string; remove: () => Promise<void> };
let nssDir: string;

beforeAll(async () => {
  if (missing.length > 0) return;
  ({ sandbox, work, nssDir } = await startInteropSetup('esign-interop-encrypted-'));
});
afterAll(() => closeInteropSetup({ sandbox, work }));

/** qpdf's own account of a file's encryption (method, R, P, permissions), with `password`. */
async function encryptionOf(path: string, password: string): Promise<string> {
  const shown = await runTool('qpdf', ['--show-encryption', `--password=${password}`, path]);
  expect(shown.status, shown.stderr).toBe(0);
  return shown.stdout;
}

async function qpdfEncrypt(output: string, args: string[]): Promise<string> {
  const made = await runTool('qpdf', ['--allow-weak-crypto', '--encrypt', ...args, '--', SAMPLE, output]);
  expect(made.status, made.stderr).toBe(0);
  return output;
}

const METHODS: Array<[string, string[]]> = [
  ['RC4-40 (R2)', ['40']],
  ['RC4-128 (R3)', ['128', '--use-aes=n']],
  ['AES-128 (R4)', ['128', '--use-aes=y']],
  ['AES-128 (R4), metadata in clear', ['128', '--use-aes=y', '--cleartext-metadata']],
  ['AES-256 (R5)', ['256', '--force-R5']],
  ['AES-256 (R6)', ['256']],
];

describe.skipIf(missing.length > 0)('encrypted PDFs signed by esign, judged by pdfsig, qpdf and openssl', () => {
  for (const [method, options] of METHODS) {
    for (const user of ['', 'user']) {
      it(`${method}, ${user ? 'with a user password' : 'opening without a password'}: signed, encryption kept, every judge agrees`, async () => {
        const dir = join(work.dir, `${method}-${user || 'none'}`.replace(/\W+/g, '-'));
        await mkdir(dir, { recursive: true });
        const input = await qpdfEncrypt(join(dir, 'in.pdf'), [user, 'owner', ...options]);
        const before = await readFile(input);
        const output = join(dir, 'out.pdf');
        const env = user ? { ...sandbox.env, ESIGN_PDF_PASSWORD: user } : sandbox.env;
        const signed = await runCli(['--auto-approve', '--quiet', 'sign', '-o', output, input], { env });
        expect(signed.code, signed.stderr).toBe(0);
        expect((await readFile(input)).equals(before)).toBe(true);

        const report = await pdfsig(output, nssDir, user ? ['-upw', user] : []);
        expect(report.signatures, report.raw).toHaveLength(1);
        expect(report.signatures[0], report.raw).toMatchObject({ valid: true, trusted: true, totalDocument: true });
        expect(await qpdfCheck(output, [`--password=${user}`])).toBe(0);
        expect(await qpdfCheck(output, ['--password=owner'])).toBe(0);
        expect(await encryptionOf(output, user)).toBe(await encryptionOf(input, user));
        if (user) expect((await runTool('qpdf', ['--check', '--password=wrong', output])).status).not.toBe(0);
        await opensslVerifiesCms(output, sandbox.rootPemPath);
        const verified = await runCli(['verify', '--trust', sandbox.rootPemPath, output], { env });
        expect(verified.code, verified.stderr).toBe(0);
      });
    }
  }

  it('a Ghostscript-encrypted file (RC4-128, empty user password), signed twice: both signatures stay valid', async () => {
    const dir = join(work.dir, 'ghostscript');
    await mkdir(dir, { recursive: true });
    const input = join(dir, 'gs.pdf');
    execFileSync('gs', [
      '-q',
      '-dNOPAUSE',
      '-dBATCH',
      '-dSAFER',
      '-sDEVICE=pdfwrite',
      '-sOwnerPassword=owner',
      '-dEncryptionR=3',
      '-dKeyLength=128',
      '-dPermissions=-4',
      `-sOutputFile=${input}`,
      SAMPLE,
    ]);
    const once = join(dir, 'once.pdf');
    const twice = join(dir, 'twice.pdf');
    expect((await runCli(['--auto-approve', '--quiet', 'sign', '-o', once, input], { env: sandbox.env })).code).toBe(0);
    const again = await runCli(
      ['--auto-approve', '--quiet', 'sign', '-o', twice, '--visible', '--reason', 'Approved', once],
      { env: sandbox.env },
    );
    expect(again.code, again.stderr).toBe(0);
    const report = await pdfsig(twice, nssDir);
    expect(report.signatures, report.raw).toHaveLength(2);
    expect(
      report.signatures.every((signature) => signature.valid && signature.trusted),
      report.raw,
    ).toBe(true);
    expect(report.signatures[0]!.totalDocument).toBe(false);
    expect(report.signatures[1]!.totalDocument).toBe(true);
    expect(await qpdfCheck(twice)).toBe(0);
    expect(await encryptionOf(twice, '')).toBe(await encryptionOf(input, ''));
    await opensslVerifiesCms(twice, sandbox.rootPemPath);
  });

  it('B-LT on an AES-256 file: the DSS is encrypted with the file, pdfsig and esign verify agree', async () => {
    const dir = join(work.dir, 'b-lt');
    await mkdir(dir, { recursive: true });
    const input = await qpdfEncrypt(join(dir, 'in.pdf'), ['', 'owner', '256']);
    const output = join(dir, 'out.pdf');
    const signed = await runCli(['--auto-approve', '--quiet', 'sign', '--level', 'B-LT', '-o', output, input], {
      env: sandbox.env,
    });
    expect(signed.code, signed.stderr).toBe(0);
    expect((await pdfsig(output, nssDir)).signatures[0]).toMatchObject({ valid: true, trusted: true });
    expect(await qpdfCheck(output)).toBe(0);
    const verified = await runCli(['--json', 'verify', '--level', 'B-LT', '--trust', sandbox.rootPemPath, output], {
      env: sandbox.env,
    });
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
  });

  it('restrictive permissions: refused (exit 7, nothing written) unless the owner password is given, and kept in the output', async () => {
    const dir = join(work.dir, 'permissions');
    await mkdir(dir, { recursive: true });
    const input = await qpdfEncrypt(join(dir, 'locked.pdf'), [
      '',
      'owner',
      '256',
      '--form=n',
      '--modify-other=n',
      '--annotate=n',
    ]);
    const refused = await runCli(['--auto-approve', 'sign', input], { env: sandbox.env });
    expect(refused.code).toBe(7);
    expect(refused.stderr.trim().split('\n').at(-1)).toMatch(
      /locked\.pdf: The PDF's owner permits neither filling in forms nor changing annotations.*owner password/,
    );
    expect(await readdir(dir)).toEqual(['locked.pdf']);
    const output = join(dir, 'signed.pdf');
    const signed = await runCli(['--auto-approve', '--quiet', 'sign', '-o', output, input], {
      env: { ...sandbox.env, ESIGN_PDF_PASSWORD: 'owner' },
    });
    expect(signed.code, signed.stderr).toBe(0);
    expect((await pdfsig(output, nssDir)).signatures[0]).toMatchObject({ valid: true, trusted: true });
    expect(await encryptionOf(output, '')).toBe(await encryptionOf(input, ''));
    expect(await encryptionOf(output, '')).toContain('modify forms: not allowed');
  });

  it('a wrong or missing password: exit 7, one line without the password, nothing written; --password-file and verify --password-file work', async () => {
    const dir = join(work.dir, 'passwords');
    await mkdir(dir, { recursive: true });
    const input = await qpdfEncrypt(join(dir, 'secret.pdf'), ['s3cr3t-user', 's3cr3t-owner', '256']);
    const missingPassword = await runCli(['--auto-approve', 'sign', input], { env: sandbox.env });
    expect(missingPassword.code).toBe(7);
    expect(missingPassword.stderr).toContain(
      'secret.pdf: The PDF needs a password to open. Give it with --password (asks on the terminal), --password-file FILE or ESIGN_PDF_PASSWORD.',
    );
    const wrong = await runCli(['--auto-approve', 'sign', input], {
      env: { ...sandbox.env, ESIGN_PDF_PASSWORD: 'guess-1234' },
    });
    expect(wrong.code).toBe(7);
    expect(wrong.stderr).toContain('opens the PDF neither as its user nor as its owner password');
    expect(wrong.stderr + wrong.stdout).not.toContain('guess-1234');
    expect(wrong.stderr).not.toMatch(/\n\s+at /);
    expect(await readdir(dir)).toEqual(['secret.pdf']);
    const noTerminal = await runCli(['--auto-approve', 'sign', '--password', input], { env: sandbox.env });
    expect(noTerminal.code).toBe(2);
    expect(noTerminal.stderr).toContain('Set ESIGN_PDF_PASSWORD or pass --password-file FILE');

    const passwordFile = join(dir, 'password.txt');
    await writeFile(passwordFile, 's3cr3t-user\n', { mode: 0o600 });
    const output = join(dir, 'secret-signed.pdf');
    const signed = await runCli(
      ['--auto-approve', '--quiet', 'sign', '--password-file', passwordFile, '-o', output, input],
      { env: sandbox.env },
    );
    expect(signed.code, signed.stderr).toBe(0);
    expect((await pdfsig(output, nssDir, ['-upw', 's3cr3t-user'])).signatures[0]).toMatchObject({
      valid: true,
      trusted: true,
    });
    const unverified = await runCli(['verify', '--trust', sandbox.rootPemPath, output], { env: sandbox.env });
    expect(unverified.code).toBe(7);
    const verified = await runCli(['verify', '--trust', sandbox.rootPemPath, '--password-file', passwordFile, output], {
      env: sandbox.env,
    });
    expect(verified.code, verified.stderr).toBe(0);
    // extend reads it with the same password; the DSS and the document timestamp are encrypted with the file.
    const extended = join(dir, 'secret-lta.pdf');
    expect((await runCli(['extend', '-o', extended, output], { env: sandbox.env })).code).toBe(7);
    const lta = await runCli(['--quiet', 'extend', '--password-file', passwordFile, '-o', extended, output], {
      env: sandbox.env,
    });
    expect(lta.code, lta.stderr).toBe(0);
    expect((await pdfsig(extended, nssDir, ['-upw', 's3cr3t-user'])).signatures[0]).toMatchObject({
      valid: true,
      trusted: true,
    });
    expect(await qpdfCheck(extended, ['--password=s3cr3t-user'])).toBe(0);
    const ltaVerified = await runCli(
      ['--json', 'verify', '--level', 'B-LTA', '--trust', sandbox.rootPemPath, extended],
      { env: { ...sandbox.env, ESIGN_PDF_PASSWORD: 's3cr3t-user' } },
    );
    expect(ltaVerified.code, ltaVerified.stdout + ltaVerified.stderr).toBe(0);
  });

  it('the split flow keeps no password: --complete asks for it again (ESIGN_PDF_PASSWORD) and writes a valid signature', async () => {
    const dir = join(work.dir, 'split');
    await mkdir(dir, { recursive: true });
    const input = await qpdfEncrypt(join(dir, 'split.pdf'), ['split-user-pw', 'owner', '128', '--use-aes=y']);
    const state = join(dir, 'state.json');
    const env = { ...sandbox.env, ESIGN_CONFIG_DIR: join(dir, 'config') };
    const prepared = await runCli(['--auto-approve', '--json', 'sign', '--prepare', '--state', state, input], {
      env: { ...env, ESIGN_PDF_PASSWORD: 'split-user-pw' },
    });
    expect(prepared.code, prepared.stderr).toBe(0);
    expect(await readFile(state, 'utf8')).not.toContain('split-user-pw');
    const location = (
      await fetch(prepared.json<{ approvals: Array<{ authorizationUrl: string }> }>().approvals[0]!.authorizationUrl, {
        redirect: 'manual',
      })
    ).headers.get('location')!;
    const withoutPassword = await runCli(['sign', '--complete', '--state', state, '--redirect-url', location], { env });
    expect(withoutPassword.code).toBe(7);
    expect(withoutPassword.stderr).toContain('ESIGN_PDF_PASSWORD');
    const completed = await runCli(['sign', '--complete', '--state', state, '--redirect-url', location], {
      env: { ...env, ESIGN_PDF_PASSWORD: 'split-user-pw' },
    });
    expect(completed.code, completed.stderr).toBe(0);
    const report = await pdfsig(join(dir, 'split-signed.pdf'), nssDir, ['-upw', 'split-user-pw']);
    expect(report.signatures[0], report.raw).toMatchObject({ valid: true, trusted: true, totalDocument: true });
  });

  it('public-key encryption is refused with its own message', async () => {
    const dir = join(work.dir, 'pubsec');
    await mkdir(dir, { recursive: true });
    const input = join(dir, 'pubsec.pdf');
    await copyFile(SAMPLE, input);
    // qpdf cannot write /Adobe.PubSec; a hand-edited trailer that names it is what a reader meets first.
    const text = (await readFile(input)).toString('latin1');
    await writeFile(
      input,
      Buffer.from(
        text.replace(
          /trailer\s*<</,
          (found) => `${found} /Encrypt << /Filter /Adobe.PubSec /SubFilter /adbe.pkcs7.s5 /V 4 >>`,
        ),
        'latin1',
      ),
    );
    const refused = await runCli(['--auto-approve', 'sign', input], { env: sandbox.env });
    expect(refused.code, refused.stderr).toBe(7);
    expect(refused.stderr).toContain('encrypted for certificate holders (public-key security handler)');
  });
});
