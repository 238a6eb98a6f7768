import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { esignCommand, runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/tmp.js';

describe('esign sandbox start', () => {
  it('serves every service on 127.0.0.1, points the sandbox profile at it, and stops on Ctrl-C', async () => {
    const dir = await tempDir();
    const env = {
      ...process.env,
      ESIGN_CONFIG_DIR: join(dir, 'config'),
      ESIGN_SANDBOX_DIR: join(dir, 'sandbox'),
      NO_COLOR: '1',
    };
    const dataDir = join(dir, 'elsewhere');
    const child = spawn(...esignCommand(['--json', 'sandbox', 'start', '--port', '0', '--data-dir', dataDir]), {
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
    for (const key of ['signing', 'identity', 'identityLegacy', 'storage', 'tsa', 'pki'])
      expect(urls[key]).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    expect(rootPem).toBe(join(dataDir, 'root.pem'));
    expect(existsSync(rootPem)).toBe(true);
    expect((await fetch(`${urls['base']}/_sandbox/health`)).status).toBe(200);
    expect((await fetch(`${urls['pki']}/root.pem`)).status).toBe(200);

    // Another command on the sandbox profile finds this sandbox rather than starting its own.
    const signingUrl = await runCli(['--json', 'config', 'get', 'signingBaseUrl'], { env });
    expect(signingUrl.json()).toMatchObject({ value: urls['signing'], source: 'default' });
    expect(existsSync(join(dir, 'sandbox', 'runtime.json'))).toBe(true);
    expect(existsSync(join(dataDir, 'runtime.json'))).toBe(true);

    // It was started without --auto-approve: a command asking for automatic approval is told at once.
    const autoApproved = await runCli(['--auto-approve', 'credentials', 'list'], { env, timeoutMs: 20_000 });
    expect(autoApproved.code).toBe(2);
    expect(autoApproved.stderr).toContain('was started without --auto-approve');

    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(existsSync(join(dir, 'sandbox', 'runtime.json'))).toBe(false);
    expect(existsSync(join(dataDir, 'runtime.json'))).toBe(false);
    await expect(fetch(`${urls['base']}/_sandbox/health`)).rejects.toThrow();
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
