/**
 * Configuration by the environment alone (as gh, cosign and the AWS CLI are configured in CI): with
 * no profile chosen and a service named by an ESIGN_* variable, esign runs on the `env` profile and
 * never falls back to the sandbox and its TEST keys.
 */
import { createServer, type Server } from 'node:net';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_SECRETS } from '../../src/sandbox/deps.js';
import { runCli } from '../helpers/run-cli.js';
import { seededSandboxDir, startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir, tempDirForFile } from '../helpers/tmp.js';

const TEST_WARNING = /sandbox profile — signatures made here are TEST signatures/;
const browser = `node ${fileURLToPath(new URL('../helpers/follow-redirects-browser.js', import.meta.url))}`;

let t: TestSandbox;
/** A sandbox data dir with nothing running in it: a fall-back to the sandbox would start one here. */
let idleSandboxDir: string;
let work: string;
let files: { dir: string; remove: () => Promise<void> };

beforeAll(async () => {
  t = await startTestSandbox({ autoApprove: true });
  files = await tempDirForFile('esign-env-profile-');
  idleSandboxDir = join(files.dir, 'idle-sandbox');
  work = join(files.dir, 'work');
  await Promise.all([mkdir(idleSandboxDir), mkdir(work)]);
});
afterAll(async () => {
  await t.close();
  await files.remove();
});

/** An environment with no profile on disk: a fresh config dir, an idle sandbox dir. */
async function bareEnv(extra: Record<string, string | undefined> = {}): Promise<Record<string, string | undefined>> {
  return { ESIGN_CONFIG_DIR: await tempDir(), ESIGN_SANDBOX_DIR: idleSandboxDir, ESIGN_PROFILE: undefined, ...extra };
}

/** A port on 127.0.0.1 that refuses connections (bound, then closed). */
async function deadPort(): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('the env profile: services from ESIGN_* variables alone', () => {
  it('signs a release artifact with the services the environment names (no TEST warning, no sandbox started)', async () => {
    const artifact = join(work, 'app.tar.gz');
    await writeFile(artifact, 'release bytes\n');
    const env = await bareEnv({
      ESIGN_SIGNING_URL: t.sandbox.urls.signing,
      ESIGN_TSA_URL: t.sandbox.urls.tsaEndpoint,
      ESIGN_CLIENT_ID: SANDBOX_SECRETS.clientId,
      ESIGN_CLIENT_SECRET: SANDBOX_SECRETS.clientSecret,
      ESIGN_TSA_USERNAME: SANDBOX_SECRETS.tsaUser,
      ESIGN_TSA_PASSWORD: SANDBOX_SECRETS.tsaPassword,
      ESIGN_REDIRECT_URI: 'http://127.0.0.1:0/callback',
      ESIGN_CREDENTIAL: 'alice-rsa2048',
      ESIGN_TRUST_ANCHORS: t.rootPemPath,
    });
    const signHashes = () =>
      t.sandbox.requestLog.filter((id) => id === 'signing POST /csc/v1/signatures/signHash').length;
    const tokens = () => t.sandbox.requestLog.filter((id) => id.startsWith('tsa POST')).length;
    const [signedBefore, stampedBefore] = [signHashes(), tokens()];
    const result = await runCli(['--verbose', '--browser', browser, '--json', 'sign', artifact], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toMatch(TEST_WARNING);
    expect(result.stderr).toMatch(
      /profile env \(chosen by ESIGN_\* service variables\): .*signingBaseUrl from ESIGN_SIGNING_URL/,
    );
    expect(result.stderr).not.toContain('started an embedded sandbox');
    expect(result.json()).toMatchObject({ output: `${artifact}.p7s`, level: 'B-T', credential: 'alice-rsa2048' });
    expect(signHashes() - signedBefore).toBe(1);
    expect(tokens() - stampedBefore).toBe(1);
    expect(await readdir(idleSandboxDir)).toEqual([]);
    const verified = await runCli(
      ['--json', 'verify', artifact, '--signature', `${artifact}.p7s`, '--trust', t.rootPemPath],
      { env },
    );
    expect(verified.code, verified.stderr).toBe(0);
  });

  it('timestamps with the TSA the environment names, and fails (exit 5) when it is unreachable: never the embedded sandbox TSA', async () => {
    const data = join(work, 'data.bin');
    await writeFile(data, 'data\n');
    const tsaEnv = {
      ESIGN_TSA_USERNAME: SANDBOX_SECRETS.tsaUser,
      ESIGN_TSA_PASSWORD: SANDBOX_SECRETS.tsaPassword,
      ESIGN_TRUST_ANCHORS: t.rootPemPath,
    };
    const good = await runCli(['--json', 'timestamp', '--force', data], {
      env: await bareEnv({ ESIGN_TSA_URL: t.sandbox.urls.tsaEndpoint, ...tsaEnv }),
    });
    expect(good.code, good.stderr).toBe(0);
    expect(good.stderr).not.toMatch(TEST_WARNING);
    const port = await deadPort();
    const dead = await runCli(['timestamp', '--force', data], {
      env: await bareEnv({ ESIGN_TSA_URL: `http://127.0.0.1:${port}/tsa/tss03`, ...tsaEnv }),
    });
    expect(dead.code, dead.stderr).toBe(5);
    expect(dead.stderr).not.toMatch(TEST_WARNING);
    expect(dead.stderr).toContain(`127.0.0.1:${port}`);
    expect(await readdir(idleSandboxDir)).toEqual([]);
  });

  it('a command that needs a service the environment does not name fails with exit 3 naming the variable', async () => {
    const env = await bareEnv({ ESIGN_TSA_URL: t.sandbox.urls.tsaEndpoint });
    const credentials = await runCli(['credentials', 'list'], { env });
    expect(credentials.code, credentials.stderr).toBe(3);
    expect(credentials.stderr.trim()).toMatch(
      /^esign: The env profile \(made from ESIGN_\* variables\) has no signingBaseUrl\. Set ESIGN_SIGNING_URL\.$/,
    );
    const login = await runCli(['--browser', browser, 'login'], {
      env: { ...env, ESIGN_CLIENT_SECRET: 'x-secret-value' },
    });
    expect(login.code, login.stderr).toBe(3);
    expect(login.stderr).toContain('Set ESIGN_IDENTITY_URL');
    const upload = await runCli(['upload', join(work, 'data.bin')], { env });
    expect(upload.code, upload.stderr).toBe(3);
  });

  it('`esign config list` names the env profile, why it is active, and the variable behind each value', async () => {
    const env = await bareEnv({ ESIGN_SIGNING_URL: 'https://sign.example/csc', ESIGN_CLIENT_ID: 'ci-client' });
    const human = await runCli(['config', 'list'], { env });
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain('env (active)');
    expect(human.stdout).toMatch(/Active: env, made from ESIGN_\* variables/);
    expect(human.stdout).toMatch(/signingBaseUrl\s+https:\/\/sign\.example\/csc\s+ESIGN_SIGNING_URL/);
    expect(human.stdout).toMatch(/clientId\s+ci-client\s+ESIGN_CLIENT_ID/);
    const json = (await runCli(['--json', 'config', 'list'], { env })).json<{
      profile: string;
      chosenBy: string;
      sources: Record<string, string>;
    }>();
    expect(json).toMatchObject({
      profile: 'env',
      chosenBy: 'environment',
      sources: { signingBaseUrl: 'env', clientId: 'env', redirectUri: 'default' },
    });
  });

  it('with a current profile, the variables override its values (flag > env > profile), as before', async () => {
    const env = await bareEnv();
    expect(
      (await runCli(['config', 'init', 'work', '--set', 'signingBaseUrl=https://sign.example/api'], { env })).code,
    ).toBe(0);
    const got = await runCli(['--json', 'config', 'get', 'signingBaseUrl'], {
      env: { ...env, ESIGN_SIGNING_URL: 'https://other.example/api' },
    });
    expect(got.json()).toMatchObject({ profile: 'work', value: 'https://other.example/api', source: 'env' });
  });

  it('`esign config set` on the env profile says to set the variable instead; `config init env` is refused', async () => {
    const env = await bareEnv({ ESIGN_SIGNING_URL: 'https://sign.example/csc' });
    const set = await runCli(['config', 'set', 'clientId', 'x'], { env });
    expect(set.code).toBe(2);
    expect(set.stderr).toMatch(/env profile .* Set ESIGN_CLIENT_ID instead/);
    expect((await runCli(['config', 'init', 'env'], { env })).code).toBe(2);
  });
});

describe('the sandbox never takes a service URL from the environment silently', () => {
  for (const [how, args, extra] of [
    ['--profile sandbox', ['--profile', 'sandbox'], {}],
    ['ESIGN_PROFILE=sandbox', [], { ESIGN_PROFILE: 'sandbox' }],
  ] as const) {
    it(`${how} with ESIGN_SIGNING_URL set: exit 3 naming the variable, nothing signed or written`, async () => {
      const dir = await tempDir();
      const input = join(dir, 'a.txt');
      await writeFile(input, 'a\n');
      const env = await bareEnv({ ...extra, ESIGN_SIGNING_URL: 'https://sign.example/csc' });
      const result = await runCli([...args, '--auto-approve', 'sign', input], { env });
      expect(result.code, result.stderr).toBe(3);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).toMatch(
        /^esign: ESIGN_SIGNING_URL is set, but the sandbox profile \(chosen by .*\) only talks to its own emulators\. Unset ESIGN_SIGNING_URL/,
      );
      expect(await readdir(dir)).toEqual(['a.txt']);
      expect(await readdir(idleSandboxDir)).toEqual([]);
    });
  }

  it('credentials for a real service with no service URL (a misspelt variable) are refused, not signed on the sandbox', async () => {
    const dir = await tempDir();
    const input = join(dir, 'a.txt');
    await writeFile(input, 'a\n');
    const env = await bareEnv({
      ESIGN_SIGN_URL: 'https://sign.example/csc',
      ESIGN_CLIENT_ID: 'ci-client',
      ESIGN_CLIENT_SECRET: 'env-secret-value',
    });
    const result = await runCli(['--browser', browser, 'sign', input], { env });
    expect(result.code, result.stderr).toBe(3);
    expect(result.stderr).not.toMatch(TEST_WARNING);
    expect(result.stderr.trim()).toMatch(
      /^esign: ESIGN_CLIENT_ID, ESIGN_CLIENT_SECRET are set, but no service URL is: esign would sign on its sandbox \(TEST signatures\)\. Set ESIGN_SIGNING_URL/,
    );
    expect(await readdir(dir)).toEqual(['a.txt']);
    expect(await readdir(idleSandboxDir)).toEqual([]);
    // Asked for by name, the sandbox is what the user gets.
    const chosen = await runCli(['--profile', 'sandbox', '--auto-approve', 'sign', input], {
      env: {
        ...env,
        ESIGN_CLIENT_ID: undefined,
        ESIGN_SANDBOX_DIR: await seededSandboxDir(join(dir, 'sandbox')),
      },
    });
    expect(chosen.code, chosen.stderr).toBe(0);
    expect(chosen.stderr).toMatch(TEST_WARNING);
  });

  it('names every service variable that is set (the TSA too)', async () => {
    const result = await runCli(['--profile', 'sandbox', 'timestamp', join(work, 'data.bin')], {
      env: await bareEnv({
        ESIGN_TSA_URL: 'http://127.0.0.1:18318/tsa/tss03',
        ESIGN_STORAGE_URL: 'https://storage.example',
      }),
    });
    expect(result.code, result.stderr).toBe(3);
    expect(result.stderr).toContain('ESIGN_STORAGE_URL, ESIGN_TSA_URL are set');
  });
});

describe('bad configuration in the environment: one line, exit 2 or 3, nothing written', () => {
  it('a malformed URL names the variable', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'a.txt'), 'a\n');
    const result = await runCli(['sign', join(dir, 'a.txt')], {
      env: await bareEnv({ ESIGN_SIGNING_URL: 'sign.example/csc' }),
    });
    expect(result.code, result.stderr).toBe(3);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(
      /^esign: Invalid ESIGN_SIGNING_URL: "sign\.example\/csc" is not a URL\. Fix or unset ESIGN_SIGNING_URL/,
    );
    expect(await readdir(dir)).toEqual(['a.txt']);
  });

  it('plain http:// for a remote service in a variable is refused before any request (exit 3)', async () => {
    const result = await runCli(['credentials', 'list'], {
      env: await bareEnv({
        ESIGN_SIGNING_URL: 'http://sign.example/csc',
        ESIGN_CLIENT_ID: 'c',
        ESIGN_CLIENT_SECRET: 'env-secret-value',
      }),
    });
    expect(result.code, result.stderr).toBe(3);
    expect(result.stderr).toMatch(/Refusing plain http:\/\/ .* sign\.example/);
  });

  it('an ESIGN_PROFILE that does not exist names ESIGN_PROFILE', async () => {
    const result = await runCli(['config', 'get', 'clientId'], { env: await bareEnv({ ESIGN_PROFILE: 'nope' }) });
    expect(result.code).toBe(3);
    expect(result.stderr.trim()).toMatch(
      /^esign: There is no profile named "nope" \(from ESIGN_PROFILE\)\. Unset ESIGN_PROFILE or create the profile/,
    );
  });

  it('--profile naming no profile while the environment configures the env profile: names the flag and the way out', async () => {
    const result = await runCli(['--json', '--profile', 'work', 'credentials', 'list'], {
      env: await bareEnv({ ESIGN_SIGNING_URL: 'https://sign.example/csc' }),
    });
    expect(result.code).toBe(3);
    const { error } = result.json<{ error: { code: string; message: string; hint: string } }>();
    expect(error.code).toBe('CONFIG_UNKNOWN_PROFILE');
    expect(error.message).toContain('(from --profile)');
    expect(error.hint).toContain('drop --profile to run on the env profile made from ESIGN_SIGNING_URL');
  });

  it('the config dir is not created by a refused run', async () => {
    const env = await bareEnv({ ESIGN_SIGNING_URL: 'not a url' });
    await runCli(['credentials', 'list'], { env });
    await expect(readFile(join(env['ESIGN_CONFIG_DIR']!, 'config.json'))).rejects.toThrow();
  });
});
