/** `esign credentials list|info|use` as a user runs them: the built CLI against the in-process sandbox. */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_SECRETS } from '../../src/sandbox/deps.js';
import { runCli } from '../helpers/run-cli.js';
import { buildClassicPdf } from '../helpers/pdf-fixtures.js';
import { tempDir } from '../helpers/tmp.js';
import { SANDBOX_DIALECTS, onDialect, signingRoute } from '../helpers/dialects.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

let shared: TestSandbox;

beforeAll(async () => {
  shared = await startTestSandbox({ autoApprove: true });
});

afterAll(async () => {
  await shared.close();
});

interface Listed {
  signingService: { cscVersion: string; specs?: string; chosenBy: string };
  credentials: Array<{
    credentialID: string;
    status: string;
    statusReason?: string;
    keyLength: number;
    keyAlgorithm: string;
    curve?: string;
    signatureAlgorithm: string | null;
    isDefault: boolean;
    signer: { subjectCN: string; issuerCN: string };
  }>;
}

describe.each(SANDBOX_DIALECTS)('esign credentials on $name', (dialect) => {
  const sandbox = onDialect(() => shared, dialect);

  it('lists every credential with status, names, validity and key (--json)', async () => {
    const result = await runCli(['--auto-approve', '--json', 'credentials', 'list'], { env: sandbox.env });
    expect(result.code, result.stderr).toBe(0);
    const listed = result.json<Listed>();
    expect(listed.credentials.map((c) => [c.credentialID, c.status, c.statusReason ?? null, c.keyLength])).toEqual([
      ['alice-rsa2048', 'enabled', null, 2048],
      ['alice-rsa3072', 'enabled', null, 3072],
      ['alice-disabled', 'disabled', null, 2048],
      ['alice-expired', 'disabled', 'certificate expired', 2048],
      ['alice-revoked', 'disabled', 'certificate revoked', 2048],
      ['alice-ec-p256', 'enabled', null, 256],
      ['alice-ec-p384', 'enabled', null, 384],
      ['alice-ec-p521', 'enabled', null, 521],
      ['alice-rsa-pss', 'enabled', null, 2048],
    ]);
    // Each credential's key kind, curve and the scheme esign signs with, on both dialects.
    expect(listed.credentials.slice(5).map((c) => [c.keyAlgorithm, c.curve ?? null, c.signatureAlgorithm])).toEqual([
      ['EC', 'P-256', 'ECDSA P-256 with SHA-256'],
      ['EC', 'P-384', 'ECDSA P-384 with SHA-384'],
      ['EC', 'P-521', 'ECDSA P-521 with SHA-512'],
      ['RSA', null, 'RSASSA-PSS with SHA-256 (MGF1 SHA-256, salt 32)'],
    ]);
    expect(listed.credentials[1]?.signatureAlgorithm).toBe('RSA PKCS#1 v1.5 with SHA-256');
    expect(listed.credentials[0]?.signer.subjectCN).toContain('TEST');
    expect(listed.credentials[0]?.signer.issuerCN).toBe('esign Sandbox TEST Issuing CA');
    expect(listed.credentials[0]?.isDefault).toBe(true);
    expect(listed.signingService).toEqual({
      cscVersion: dialect.profile === 'sandbox' ? '1' : '2',
      specs: dialect.profile === 'sandbox' ? '1.0.4.0' : '2.0.0.2',
      chosenBy: 'setting',
    });
  });

  it('prints a table for people, and never a token', async () => {
    const result = await runCli(['--auto-approve', 'credentials', 'list'], { env: sandbox.env });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/id\s+status\s+subject\s+issuer\s+valid until\s+key\s+signs with/);
    expect(result.stdout).toContain('disabled (certificate expired)');
    expect(result.stdout).toContain('RSA 3072');
    expect(result.stdout).toMatch(/alice-ec-p384 .* EC P-384 +ECDSA P-384 with SHA-384/);
    expect(result.stdout + result.stderr).not.toMatch(/access_token|Bearer [A-Za-z0-9_-]{20,}/);
  });

  it('shows a credential with its chain and key usage', async () => {
    const result = await runCli(['--auto-approve', '--json', 'credentials', 'info', 'alice-rsa3072'], {
      env: sandbox.env,
    });
    expect(result.code, result.stderr).toBe(0);
    const info = result.json<{ chain: Array<{ subjectCN: string }>; keyUsage: string[]; status: string }>();
    expect(info.chain.map((c) => c.subjectCN)).toEqual([
      expect.stringContaining('Alice Test'),
      'esign Sandbox TEST Issuing CA',
      'esign Sandbox TEST Root CA',
    ]);
    expect(info.keyUsage).toEqual(['digitalSignature', 'nonRepudiation']);
    const human = await runCli(['--auto-approve', 'credentials', 'info', 'alice-expired'], { env: sandbox.env });
    expect(human.stdout).toContain('disabled (certificate expired)');
    expect(human.stdout).toContain(
      dialect.profile === 'sandbox'
        ? 'service      CSC API v1.0.4 (specs 1.0.4.0), chosen by the cscVersion setting'
        : 'service      CSC API v2 (specs 2.0.0.2), chosen by the cscVersion setting',
    );
  });

  it('sets the default credential, and refuses a disabled or unknown one', async () => {
    const used = await runCli(['--auto-approve', 'credentials', 'use', 'alice-rsa3072'], { env: sandbox.env });
    expect(used.code, used.stderr).toBe(0);
    const got = await runCli(['--json', 'config', 'get', 'credential'], { env: sandbox.env });
    expect(got.json<{ value: string }>().value).toBe('alice-rsa3072');
    const disabled = await runCli(['--auto-approve', '--json', 'credentials', 'use', 'alice-disabled'], {
      env: sandbox.env,
    });
    expect(disabled.code).toBe(11);
    expect(disabled.stdout).toContain('CREDENTIAL_DISABLED');
    const unknown = await runCli(['--auto-approve', '--json', 'credentials', 'use', 'nobody'], { env: sandbox.env });
    expect(unknown.stdout).toContain('CREDENTIAL_NOT_FOUND');
  });

  it('off a terminal, with several enabled credentials and no default, asks for --credential instead of guessing', async () => {
    // A profile of the user's own (no built-in default credential) against the sandbox's services.
    // Its cscVersion is auto: the dialect is found out from the service's info.
    const env = {
      ...sandbox.env,
      ESIGN_PROFILE: 'lab',
      ESIGN_CONFIG_DIR: await tempDir(),
      ESIGN_CLIENT_SECRET: SANDBOX_SECRETS.clientSecret,
    };
    const browser = `node ${fileURLToPath(new URL('../helpers/follow-redirects-browser.js', import.meta.url))}`;
    const signingBaseUrl =
      dialect.profile === 'sandbox' ? sandbox.sandbox.urls.signing : sandbox.sandbox.urls.signingV2;
    const init = await runCli(
      [
        'config',
        'init',
        'lab',
        '--set',
        `signingBaseUrl=${signingBaseUrl}`,
        '--set',
        'clientId=esign-cli',
        '--set',
        'redirectUri=http://127.0.0.1:0/callback',
      ],
      { env },
    );
    expect(init.code, init.stderr).toBe(0);
    const dir = await tempDir();
    await writeFile(join(dir, 'a.pdf'), buildClassicPdf());
    const result = await runCli(['--browser', browser, 'sign', join(dir, 'a.pdf')], { env });
    expect(result.code, result.stderr).toBe(11);
    expect(result.stderr).toMatch(
      /6 enabled credentials and no default.*--credential ID \(one of alice-rsa2048, alice-rsa3072, alice-ec-p256, alice-ec-p384, alice-ec-p521, alice-rsa-pss\)/,
    );
    const chosen = await runCli(
      ['--browser', browser, '--json', 'sign', '--credential', 'alice-rsa3072', join(dir, 'a.pdf')],
      { env },
    );
    expect(chosen.code, chosen.stderr).toBe(0);
    expect(chosen.json()).toMatchObject({ credential: 'alice-rsa3072', level: 'B-B' });
    const listed = await runCli(['--browser', browser, '--json', 'credentials', 'list'], { env });
    expect(listed.json<Listed>().signingService).toEqual(
      dialect.profile === 'sandbox'
        ? { cscVersion: '1', specs: '1.0.4.0', chosenBy: 'info' }
        : { cscVersion: '2', specs: '2.0.0.2', chosenBy: 'info' },
    );
  });

  it('signs in to the signing service once and reuses the cached service token in later commands', async () => {
    const env = { ...sandbox.env, ESIGN_CONFIG_DIR: await tempDir() };
    const serviceSignIns = () =>
      sandbox.sandbox.requestLog.filter((id) => id === signingRoute(dialect, 'GET /oauth2/authorize')).length;
    const before = serviceSignIns();
    for (const args of [
      ['credentials', 'list'],
      ['credentials', 'info', 'alice-rsa3072'],
      ['credentials', 'list'],
    ]) {
      const result = await runCli(['--auto-approve', '--json', ...args], { env });
      expect(result.code, result.stderr).toBe(0);
    }
    expect(serviceSignIns() - before).toBe(1);
  });
});

describe('a credential whose info the service fails to give', () => {
  it('is left out of the list with why, on stderr and in --json; the others are listed, exit 0', async () => {
    const env = { ...shared.env, ESIGN_PROFILE: 'sandbox' };
    // One credentials/info answer is not JSON (as certomancer-csc-dummy's 500s for its DSA and EdDSA keys).
    shared.sandbox.faults.inject({
      route: 'signing POST /csc/v1/credentials/info',
      fault: { kind: 'malformed', body: '<html>oops</html>', contentType: 'text/html' },
      times: 1,
    });
    const result = await runCli(['--auto-approve', '--json', 'credentials', 'list'], { env });
    expect(result.code, result.stderr).toBe(0);
    const listed = result.json<
      Listed & { unreadable: Array<{ credentialID: string; error: { code: string; message: string } }> }
    >();
    expect(listed.unreadable).toHaveLength(1);
    const [left] = listed.unreadable;
    expect(listed.credentials.map((c) => c.credentialID)).not.toContain(left!.credentialID);
    expect(listed.credentials.length).toBeGreaterThan(5);
    expect(left!.error.code).toMatch(/^CSC_/);
    expect(result.stderr).toContain(
      `credential ${left!.credentialID} is left out: the signing service did not give its info`,
    );
  });

  it('when none can be read, the list fails with the first error (exit 6), as before', async () => {
    shared.sandbox.faults.inject({
      route: 'signing POST /csc/v1/credentials/info',
      fault: { kind: 'malformed', body: 'nope' },
      times: 100,
    });
    try {
      const result = await runCli(['--auto-approve', 'credentials', 'list'], {
        env: { ...shared.env, ESIGN_PROFILE: 'sandbox' },
      });
      expect(result.code).toBe(6);
      // The sandbox's TEST banner, then the one line of the error.
      expect(
        result.stderr
          .trim()
          .split('\n')
          .filter((line) => !line.includes('TEST signatures')),
      ).toHaveLength(1);
      expect(result.stderr).not.toContain('left out');
    } finally {
      shared.sandbox.faults.clear();
    }
  });
});
