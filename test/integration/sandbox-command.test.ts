import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { copyFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { VerificationReport } from '../../src/core/verify/types.js';
import { esignCommand, runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/tmp.js';

describe('esign sandbox start', () => {
  it('serves every service on 127.0.0.1, points the sandbox profile at it, and stops on Ctrl-C', async () => {
    const dir = await tempDir();
    const env = ownDirsEnv(dir);
    const dataDir = join(dir, 'sandbox');
    const { urls, rootPem, child, exited } = await startSandboxProcess(['--data-dir', dataDir], env);
    for (const key of ['signing', 'identity', 'identityLegacy', 'storage', 'tsa', 'pki'])
      expect(urls[key]).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    expect(rootPem).toBe(join(dataDir, 'root.pem'));
    expect(existsSync(rootPem)).toBe(true);
    expect((await fetch(`${urls['base']}/_sandbox/health`)).status).toBe(200);
    expect((await fetch(`${urls['pki']}/root.pem`)).status).toBe(200);

    // Another command on the sandbox profile finds this sandbox rather than starting its own.
    const signingUrl = await runCli(['--json', 'config', 'get', 'signingBaseUrl'], { env });
    expect(signingUrl.json()).toMatchObject({ value: urls['signing'], source: 'default' });
    expect(existsSync(join(dataDir, 'runtime.json'))).toBe(true);

    // It was started without --auto-approve: a command asking for automatic approval is told at once.
    const autoApproved = await runCli(['--auto-approve', 'credentials', 'list'], { env, timeoutMs: 20_000 });
    expect(autoApproved.code).toBe(2);
    expect(autoApproved.stderr).toContain('was started without --auto-approve');

    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(existsSync(join(dataDir, 'runtime.json'))).toBe(false);
    await expect(fetch(`${urls['base']}/_sandbox/health`)).rejects.toThrow();
  });

  it('started with another --data-dir, serves that dir and leaves the default sandbox in place', async () => {
    const dir = await tempDir();
    const env = ownDirsEnv(dir);
    // Signed a minute earlier by the default sandbox (embedded in the command).
    const input = join(dir, 'contract.pdf');
    await copyFile(SAMPLE_PDF, input);
    const signed = await runCli(['--auto-approve', '--quiet', 'sign', '--level', 'B-B', input], { env });
    expect(signed.code, signed.stderr).toBe(0);

    const other = join(dir, 'other');
    const { urls, rootPem, child, exited } = await startSandboxProcess(['--data-dir', other], env);
    expect(rootPem).toBe(join(other, 'root.pem'));
    expect(existsSync(join(other, 'runtime.json'))).toBe(true);
    expect(existsSync(join(dir, 'sandbox', 'runtime.json'))).toBe(false);

    const defaultUrl = await runCli(['--json', 'config', 'get', 'signingBaseUrl'], { env });
    expect((defaultUrl.json() as { value: string }).value).not.toBe(urls['signing']);
    // The embedded sandbox that signed it is gone, and its OCSP responder with it: nothing to ask, so the
    // revocation status passes only under soft-fail (this test is about the anchors, not revocation).
    const verified = await runCli(
      ['--json', 'verify', '--offline', '--revocation', 'soft-fail', join(dir, 'contract-signed.pdf')],
      { env },
    );
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(verified.json()).toMatchObject({ status: 'valid' });
    const [signature] = verified.json<{ signatures: Array<{ warnings: string[] }> }>().signatures;
    expect(signature?.warnings.join('\n')).toMatch(/passed under --revocation soft-fail/);

    // Commands reach the other sandbox when ESIGN_SANDBOX_DIR names its data dir.
    const otherUrl = await runCli(['--json', 'config', 'get', 'signingBaseUrl'], {
      env: { ...env, ESIGN_SANDBOX_DIR: other },
    });
    expect(otherUrl.json()).toMatchObject({ value: urls['signing'], source: 'default' });

    // Announced in the default data dir too (as esign 0.1.0 did): its own root is still trusted.
    await copyFile(join(other, 'runtime.json'), join(dir, 'sandbox', 'runtime.json'));
    const anchors = await runCli(['--json', 'config', 'get', 'trustAnchors'], { env });
    expect(anchors.json()).toMatchObject({ value: [rootPem, join(dir, 'sandbox', 'root.pem')] });
    const stillVerified = await runCli(
      ['--json', 'verify', '--offline', '--revocation', 'soft-fail', join(dir, 'contract-signed.pdf')],
      { env },
    );
    expect(stillVerified.code, stillVerified.stdout + stillVerified.stderr).toBe(0);

    child.kill('SIGINT');
    expect(await exited).toBe(130);
  });

  it('keeps the TEST PKI between starts', async () => {
    const dir = await tempDir();
    const env = { ESIGN_CONFIG_DIR: join(dir, 'config'), ESIGN_SANDBOX_DIR: join(dir, 'sandbox') };
    const first = await runCli(['--json', 'config', 'get', 'trustAnchors'], { env });
    const pem = (first.json() as { value: string[] }).value[0]!;
    const before = await readFile(pem, 'utf8');
    await runCli(['--json', 'config', 'get', 'trustAnchors'], { env });
    expect(await readFile(pem, 'utf8')).toBe(before);
    expect(before).toContain('BEGIN CERTIFICATE');
  });
});

describe('the quick start on the embedded sandbox: sign, the sandbox stops, verify', () => {
  it('verifies out of the box (exit 0): the sandbox starts again on the port its certificates name and answers their status, a TEST signature', async () => {
    const dir = await tempDir();
    const env = ownDirsEnv(dir);
    const input = join(dir, 'contract.pdf');
    await copyFile(SAMPLE_PDF, input);
    const signed = await runCli(['--auto-approve', '--quiet', 'sign', input], { env });
    expect(signed.code, signed.stderr).toBe(0);
    // The embedded sandbox stopped with `sign`: nothing answers until a command starts it again.
    const baseUrl = (
      JSON.parse(await readFile(join(dir, 'sandbox', 'pki', 'index.json'), 'utf8')) as { baseUrl: string }
    ).baseUrl;
    await expect(fetch(`${baseUrl}/root.pem`)).rejects.toThrow();

    const verified = await runCli(['--json', 'verify', join(dir, 'contract-signed.pdf')], { env });
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    const report = verified.json<VerificationReport & { valid: boolean }>();
    expect(report).toMatchObject({ valid: true });
    const [signature] = report.signatures;
    expect(signature).toMatchObject({ status: 'valid', indication: 'TOTAL-PASSED', level: 'B-T' });
    expect(signature!.chain!.revocation[0]).toMatchObject({
      status: 'good',
      source: 'fetched-ocsp',
      url: `${baseUrl}/ocsp`,
    });
    // Labelled as what it is: the sandbox's TEST PKI.
    expect(signature!.chain!.certificates[0]!.subject).toMatch(/TEST — NOT A QUALIFIED SIGNATURE/);
    expect(verified.stderr).toMatch(/sandbox profile — signatures made here are TEST signatures with no legal effect/);
    // The same certificates: the PKI was not issued anew for another port.
    const after = JSON.parse(await readFile(join(dir, 'sandbox', 'pki', 'index.json'), 'utf8')) as { baseUrl: string };
    expect(after.baseUrl).toBe(baseUrl);
  });

  it('when the port its PKI names is taken, the embedded sandbox starts on another (its certificates issued anew)', async () => {
    const dir = await tempDir();
    const env = ownDirsEnv(dir);
    const index = join(dir, 'sandbox', 'pki', 'index.json');
    expect((await runCli(['--json', 'config', 'get', 'trustAnchors'], { env })).code).toBe(0);
    const { baseUrl } = JSON.parse(await readFile(index, 'utf8')) as { baseUrl: string };
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(Number(new URL(baseUrl).port), '127.0.0.1', resolve));
    try {
      const again = await runCli(['--json', 'config', 'get', 'trustAnchors'], { env });
      expect(again.code, again.stderr).toBe(0);
      const moved = (JSON.parse(await readFile(index, 'utf8')) as { baseUrl: string }).baseUrl;
      expect(moved).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/pki$/);
      expect(moved).not.toBe(baseUrl);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });
});

const SAMPLE_PDF = fileURLToPath(new URL('../../samples/contract.pdf', import.meta.url));

/** `esign --json sandbox start --port 0 ARGS` as a child process, once it has printed its URLs. */
async function startSandboxProcess(args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn(...esignCommand(['--json', 'sandbox', 'start', '--port', '0', ...args]), {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  for (let waited = 0; !stdout.includes('\n'); waited += 50) {
    if (waited > 30_000) throw new Error('the sandbox did not print its URLs');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const { urls, rootPem } = JSON.parse(stdout) as { urls: Record<string, string>; rootPem: string };
  return { urls, rootPem, child, exited };
}

/** The environment of a run whose config and sandbox data live in `dir`. */
function ownDirsEnv(dir: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    ESIGN_CONFIG_DIR: join(dir, 'config'),
    ESIGN_SANDBOX_DIR: join(dir, 'sandbox'),
    NO_COLOR: '1',
  };
}
