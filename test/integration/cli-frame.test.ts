import { spawn, spawnSync } from 'node:child_process';
import { chmod, copyFile, mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ESIGN_BIN, esignCommand, runCli, TESTING_EXECUTABLE } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/tmp.js';

// `0.1.0 (build 945be1831e, 2026-11-25)`: the commit the bundle was built from (-dirty with
// uncommitted changes) and its date; `unknown` when it was built outside a git checkout.
const VERSION_LINE = /^\d+\.\d+\.\d+ \(build ([0-9a-f]{10}(-dirty)?, \d{4}-\d{2}-\d{2}|unknown)\)$/;

describe('esign CLI frame', () => {
  it('prints help and version from the built package', async () => {
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    for (const command of [
      'sign',
      'verify',
      'timestamp',
      'credentials',
      'login',
      'whoami',
      'logout',
      'upload',
      'sandbox',
      'config',
    ]) {
      expect(help.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
    }
    const version = await runCli(['--version']);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toMatch(VERSION_LINE);
  });

  // `npx esign` and npm's link of an installed package run the bin itself: it must be executable
  // in git (a clone takes the mode from there) and start node through its #! line.
  it('runs as a program of its own, as npx and npm install run it', () => {
    const result = spawnSync(ESIGN_BIN, ['--version'], { encoding: 'utf8' });
    expect(result.error, 'bin/esign.cjs is not executable').toBeUndefined();
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout.trim()).toMatch(VERSION_LINE);
    const tracked = spawnSync('git', ['ls-files', '-s', 'bin/esign.cjs'], {
      cwd: join(import.meta.dirname, '../..'),
      encoding: 'utf8',
    });
    if (tracked.status === 0 && tracked.stdout) expect(tracked.stdout).toMatch(/^100755 /);
  });

  // The npm launcher's own refusals (bin/esign.cjs); the single executable has neither a dist/ nor a Node to check.
  it.skipIf(TESTING_EXECUTABLE)(
    'says in one line how to build when dist/ is missing (a clone where the build did not run)',
    async () => {
      const clone = await tempDir('esign-unbuilt-');
      await mkdir(join(clone, 'bin'));
      await copyFile(ESIGN_BIN, join(clone, 'bin', 'esign.cjs'));
      const result = spawnSync(process.execPath, [join(clone, 'bin', 'esign.cjs'), 'sign', 'a.pdf'], {
        encoding: 'utf8',
      });
      expect(result.status).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr.trim().split('\n')).toEqual([
        `esign: this copy of esign is not built (${join(clone, 'dist', 'cli', 'launch.cjs')} is missing). Run \`npm install\` (or \`npm run build\`) in ${clone}.`,
      ]);
    },
  );

  it.skipIf(TESTING_EXECUTABLE)(
    'refuses in one line a Node that does not load ES modules with require() (before 20.19, 21.x, 22.0–22.11)',
    () => {
      const result = spawnSync(process.execPath, ['--no-experimental-require-module', ESIGN_BIN, 'sign', 'a.pdf'], {
        encoding: 'utf8',
      });
      expect(result.status).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr.trim().split('\n')).toEqual([
        `esign: this Node (${process.version}) does not load ES modules with require(), which esign needs. Use Node 20.19+ or 22.12+ (and not --no-experimental-require-module).`,
      ]);
    },
  );

  // How fast they answer is a target of `npm run bench` (--version and --help within node -e 0 + 30 ms).
  it('answers --version and --help the same on every run (the code cache a run leaves changes nothing), nothing on stderr', () => {
    const bin = join(import.meta.dirname, '../../bin/esign.cjs');
    for (const args of [['--version'], ['--help']]) {
      const runs = [1, 2, 3].map(() => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' }));
      for (const run of runs) {
        expect(run.status, run.stderr).toBe(0);
        expect(run.stderr).toBe('');
        expect(run.stdout).toBe(runs[0]!.stdout);
      }
    }
    expect(spawnSync(process.execPath, [bin, '--version'], { encoding: 'utf8' }).stdout.trim()).toMatch(VERSION_LINE);
  });

  it('ends quietly with 141 when the reader of its output goes away (esign … | head -1)', async () => {
    const child = spawn(...esignCommand(['--help']), { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy(); // the reader is gone before esign writes anything
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(141);
    expect(stderr).toBe('');
  });

  it('rejects unknown options with the usage exit code', async () => {
    const result = await runCli(['--no-such-flag']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("unknown option '--no-such-flag'");
  });

  it('keeps profiles in ESIGN_CONFIG_DIR and resolves flag > env > profile > default', async () => {
    const dir = await tempDir();
    const env = { ESIGN_CONFIG_DIR: dir };
    expect(
      (
        await runCli(
          [
            'config',
            'init',
            'work',
            '--set',
            'signingBaseUrl=https://sign.example/api',
            '--set',
            'credential=profile-cred',
          ],
          { env },
        )
      ).code,
    ).toBe(0);
    const fromProfile = await runCli(['--json', 'config', 'get', 'credential'], { env });
    expect(fromProfile.json()).toMatchObject({ profile: 'work', value: 'profile-cred', source: 'profile' });
    const fromEnv = await runCli(['--json', 'config', 'get', 'credential'], {
      env: { ...env, ESIGN_CREDENTIAL: 'env-cred' },
    });
    expect(fromEnv.json()).toMatchObject({ value: 'env-cred', source: 'env' });
    const fromDefault = await runCli(['--json', 'config', 'get', 'redirectUri'], { env });
    expect(fromDefault.json()).toMatchObject({ value: 'http://127.0.0.1:8765/callback', source: 'default' });
    const path = await runCli(['config', 'path'], { env });
    expect(path.stdout.trim()).toBe(join(dir, 'config.json'));
  });

  it('refuses a plain http:// service URL that is not loopback when it is used', async () => {
    const dir = await tempDir();
    const result = await runCli(['config', 'set', 'signingBaseUrl', 'not-a-url'], {
      env: { ESIGN_CONFIG_DIR: dir, ESIGN_PROFILE: 'x' },
    });
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/^esign: Invalid value for signingBaseUrl/);
  });

  it('never shows secrets, and refuses a secrets file others can read', async () => {
    const dir = await tempDir();
    const secrets = join(dir, 'secrets.env');
    await writeFile(secrets, 'CLIENT_SECRET=super-secret-value\nTSA_PASSWORD=tsa-secret-value\n');
    await chmod(secrets, 0o644);
    const env = { ESIGN_CONFIG_DIR: dir };
    expect((await runCli(['config', 'init', 'p', '--set', `secretsFile=${secrets}`], { env })).code).toBe(0);
    const loose = await runCli(['config', 'list'], { env });
    expect(loose.code).toBe(3);
    expect(loose.stderr).toContain('chmod 600');
    await chmod(secrets, 0o600);
    const listed = await runCli(['config', 'list'], { env: { ...env, ESIGN_CLIENT_SECRET: 'env-secret-value' } });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain('client secret: set');
    for (const secret of ['super-secret-value', 'tsa-secret-value', 'env-secret-value']) {
      expect(listed.stdout + listed.stderr).not.toContain(secret);
    }
    expect((await stat(join(dir, 'config.json'))).isFile()).toBe(true);
  });

  it('every listed command is built: none answers "not implemented" or exit 12', async () => {
    for (const command of [
      'sign',
      'verify',
      'extend',
      'timestamp',
      'credentials',
      'login',
      'whoami',
      'logout',
      'upload',
      'storage',
      'sandbox',
      'config',
    ]) {
      const result = await runCli([command, '--help']);
      expect(result.code, command).toBe(0);
      expect(result.stdout + result.stderr, command).not.toMatch(/not implemented/i);
    }
  });

  it('prints errors as JSON with --json', async () => {
    const dir = await tempDir();
    const result = await runCli(['--json', '--profile', 'missing', 'config', 'get', 'clientId'], {
      env: { ESIGN_CONFIG_DIR: dir },
    });
    expect(result.code).toBe(3);
    expect(result.json()).toMatchObject({ error: { code: 'CONFIG_UNKNOWN_PROFILE', exitCode: 3 } });
  });
});
