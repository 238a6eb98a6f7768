/**
 * Real signing services as they are (issue 29), against the sandbox over real HTTP: the
 * specification to the letter by default, and each documented provider behaviour switched on as a
 * sandbox quirk. Every signed output is judged by esign verify against the sandbox root alone.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_SEAL as seal } from '../../src/sandbox/deps.js';
import { LEADING_ZERO_PIN, oddCredentialID as odd, type QuirkName } from '../../src/sandbox/signing/quirks.js';
import { runCli } from '../helpers/run-cli.js';
import { sealEnv as sealEnvOf, startTestSandbox, type Dialect, type TestSandbox } from '../helpers/sandbox.js';
import { batchInputs } from '../helpers/batch-inputs.js';
import { tempDir } from '../helpers/tmp.js';
import { opensslVerifiesCms, runTool } from '../helpers/pdf-judges.js';

let shared: TestSandbox;
beforeAll(async () => {
  shared = await startTestSandbox({ autoApprove: true });
});
afterAll(async () => shared?.close());
afterEach(() => {
  shared.sandbox.quirks.set([]);
  shared.sandbox.faults.clear();
});

const DIALECTS: Dialect[] = ['v1', 'v2'];

function quirks(...names: QuirkName[]): void {
  shared.sandbox.quirks.set(names);
}

/** A CI job's environment on the env profile, pointed at the sandbox's services, sealing with the PIN-only bulk seal. */
function sealEnv(dialect: Dialect, extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return sealEnvOf(shared, dialect, extra);
}

/** A PDF and a text file (signed as a detached CAdES .p7s). */
async function inputs(): Promise<string[]> {
  const dir = await tempDir();
  const pdf = join(dir, 'contract.pdf');
  const txt = join(dir, 'release.txt');
  await writeFile(pdf, await readFile(new URL('../../samples/contract.pdf', import.meta.url)));
  await writeFile(txt, 'release artifact\n');
  return [pdf, txt];
}

function calls(since: number, pattern: RegExp): number {
  return shared.sandbox.requestLog.slice(since).filter((route) => pattern.test(route)).length;
}

/** Signs a PDF and a .p7s with the environment given, and verifies both against the sandbox root alone. */
async function signsAndVerifies(env: Record<string, string | undefined>): Promise<void> {
  const files = await inputs();
  const run = await runCli(['sign', '--json', ...files], { env });
  expect(run.code, run.stderr).toBe(0);
  for (const line of run.jsonLines<{ input: string; output: string }>()) {
    const verified = await runCli(
      [
        'verify',
        '--json',
        '--trust',
        shared.rootPemPath,
        ...(line.output.endsWith('.p7s') ? [line.input, '--signature', line.output] : [line.output]),
      ],
      { env },
    );
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
  }
}

describe.each(DIALECTS)('a service authorized externally (authType external; CSC %s)', (dialect) => {
  it('ESIGN_SERVICE_AUTH=external: lists and signs with no token request and no Authorization header (the quirk refuses any)', async () => {
    quirks('external');
    // No OAuth client at all, as certomancer-csc-dummy's users have none to give.
    const env = sealEnv(dialect, {
      ESIGN_SERVICE_AUTH: 'external',
      ESIGN_CLIENT_SECRET: undefined,
      ESIGN_CLIENT_ID: undefined,
    });
    const before = shared.sandbox.requestLog.length;
    const listed = await runCli(['credentials', 'list', '--json'], { env });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(seal.pinOnlyCredentialID);
    await signsAndVerifies(env);
    expect(calls(before, /oauth2\//)).toBe(0);
    expect(calls(before, /signatures\/signHash/)).toBeGreaterThan(0);
  });

  it('a sign-in the service does not offer is refused by name after its info, before any token request', async () => {
    quirks('external');
    const before = shared.sandbox.requestLog.length;
    const run = await runCli(['credentials', 'list'], { env: sealEnv(dialect) });
    expect(run.code).toBe(6);
    expect(run.stderr).toContain(
      'offers no oauth2client sign-in (it offers external), which serviceAuth client-credentials needs',
    );
    expect(run.stderr).toContain('ESIGN_SERVICE_AUTH (or serviceAuth) to external');
    expect(run.stderr).not.toMatch(/client secret/i);
    expect(calls(before, /oauth2\//)).toBe(0);
  });
});

describe('CSC v1.0.4 info is read as v2 info is', () => {
  it('a v1 service whose info offers only oauth2code refuses client-credentials by name, before any token request', async () => {
    const info = {
      specs: '1.0.4.0',
      name: 'browser only',
      authType: ['oauth2code'],
      methods: ['credentials/list', 'credentials/info', 'credentials/authorize', 'signatures/signHash'],
    };
    shared.sandbox.faults.inject({
      route: 'signing POST /csc/v1/info',
      fault: { kind: 'malformed', body: JSON.stringify(info) },
      times: 1,
    });
    const before = shared.sandbox.requestLog.length;
    const run = await runCli(['credentials', 'list'], { env: sealEnv('v1', { ESIGN_CONFIG_DIR: await tempDir() }) });
    expect(run.code).toBe(6);
    expect(run.stderr).toContain('offers no oauth2client sign-in (it offers oauth2code)');
    expect(calls(before, /oauth2\/token/)).toBe(0);
  });

  it('a v1 service whose info lacks signatures/signHash is refused naming it', async () => {
    const info = {
      specs: '1.0.4.0',
      name: 'signDoc only',
      authType: ['oauth2client'],
      methods: ['credentials/list', 'credentials/info', 'signatures/signDoc'],
    };
    shared.sandbox.faults.inject({
      route: 'signing POST /csc/v1/info',
      fault: { kind: 'malformed', body: JSON.stringify(info) },
      times: 1,
    });
    const run = await runCli(['credentials', 'list'], { env: sealEnv('v1', { ESIGN_CONFIG_DIR: await tempDir() }) });
    expect(run.code).toBe(6);
    expect(run.stderr).toContain('does not offer signatures/signHash');
  });
});

describe.each(DIALECTS)(
  'a credential whose certificate expired while the service says its key is enabled (CSC %s)',
  (dialect) => {
    it('is refused before any authorization: exit 11 naming the date, nothing signed', async () => {
      quirks('expired-enabled');
      const env = { ...shared.env, ESIGN_PROFILE: dialect === 'v2' ? 'sandbox-v2' : 'sandbox' };
      const [pdf] = await inputs();
      const before = shared.sandbox.requestLog.length;
      const run = await runCli(['--auto-approve', 'sign', '--credential', 'alice-expired', pdf!], { env });
      expect(run.code, run.stderr).toBe(11);
      expect(run.stderr).toMatch(/The certificate of the credential alice-expired expired on \d{4}-\d\d-\d\dT/);
      expect(run.stderr.trim().split('\n').at(-1)).toMatch(
        /^esign: The certificate of the credential alice-expired expired on .*Choose a credential with a current certificate/,
      );
      expect(run.stderr).not.toMatch(/^\s+at /m);
      expect(calls(before, /signatures\/signHash|credentials\/authorize/)).toBe(0);
    });
  },
);

describe.each(DIALECTS)('a chain that comes back short is completed for the CMS (CSC %s)', (dialect) => {
  const env = () => ({ ...shared.env, ESIGN_PROFILE: dialect === 'v2' ? 'sandbox-v2' : 'sandbox' });

  it.each<[QuirkName, RegExp | undefined]>([
    ['chain-without-root', undefined],
    [
      'signer-only',
      /fetched the issuer .*Issuing CA.* from http:\/\/127\.0\.0\.1:\d+\/pki\/issuing\.crt \(AIA caIssuers\)/,
    ],
  ])('%s: the outputs carry the issuing CA, and openssl verifies them given only the root', async (quirk, said) => {
    quirks(quirk);
    const files = await inputs();
    const run = await runCli(['--auto-approve', '--verbose', 'sign', '--json', ...files], { env: env() });
    expect(run.code, run.stderr).toBe(0);
    if (said) expect(run.stderr).toMatch(said);
    const outputs = run.jsonLines<{ input: string; output: string }>();
    const pdfOut = outputs.find((line) => line.input === files[0])?.output;
    const p7s = outputs.find((line) => line.input === files[1])?.output;
    await opensslVerifiesCms(pdfOut!, shared.rootPemPath);
    const verify = await runTool('openssl', [
      'cms',
      '-verify',
      '-binary',
      '-inform',
      'DER',
      '-in',
      p7s!,
      '-content',
      files[1]!,
      '-CAfile',
      shared.rootPemPath,
      '-purpose',
      'any',
      '-out',
      '/dev/null',
    ]);
    expect(verify.status, verify.stderr).toBe(0);
  });

  it('signer-only with its caIssuers unreachable and no intermediate in the trust anchors: one line, exit 11, nothing signed', async () => {
    quirks('signer-only');
    shared.sandbox.faults.inject({ route: 'pki GET /issuing.crt', fault: { kind: 'status', status: 404 }, times: 10 });
    const [pdf] = await inputs();
    const before = shared.sandbox.requestLog.length;
    const run = await runCli(['--auto-approve', 'sign', pdf!], { env: env() });
    expect(run.code, run.stderr).toBe(11);
    expect(run.stderr).toMatch(
      /gave only the certificate of alice-rsa2048, and its issuer \(.*Issuing CA.*\) is neither in the trust anchors nor fetchable/,
    );
    expect(calls(before, /signatures\/signHash/)).toBe(0);
  });
});

/** Judges signed outputs with a tool esign did not write: openssl cms -verify, given only the sandbox root. */
async function opensslJudges(outputs: Array<{ input: string; output: string }>): Promise<void> {
  for (const { input, output } of outputs) {
    if (output.endsWith('.pdf')) {
      await opensslVerifiesCms(output, shared.rootPemPath);
      continue;
    }
    const verify = await runTool('openssl', [
      'cms',
      '-verify',
      '-binary',
      '-inform',
      'DER',
      '-in',
      output,
      '-content',
      input,
      '-CAfile',
      shared.rootPemPath,
      '-purpose',
      'any',
      '-out',
      '/dev/null',
    ]);
    expect(verify.status, verify.stderr).toBe(0);
  }
}

describe.each(DIALECTS)('tolerated without any setting (CSC %s)', (dialect) => {
  it('an error body that is not JSON: one line with the HTTP status and its first bytes, exit 6, no stack', async () => {
    quirks('html-errors');
    const run = await runCli(['credentials', 'info', 'no-such-credential'], { env: sealEnv(dialect) });
    expect(run.code).toBe(6);
    expect(run.stderr).toMatch(
      /rejected credentials\/info with HTTP 400 \(not JSON: "<!DOCTYPE html> <html><head><title>400 Error<\/title>/,
    );
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('an error member in an HTTP 200 answer is an error', async () => {
    quirks('error-with-200');
    const run = await runCli(['credentials', 'info', 'no-such-credential'], { env: sealEnv(dialect) });
    expect(run.code, run.stderr).toBe(11);
    expect(run.stderr).toMatch(/does not know this credential \((unknown_credential|invalid_request): /);
  });

  it('a browser sign-in and approval with info.oauth2 given as the full …/oauth2/authorize URL, token answers without expires_in and with an empty authorization_details', async () => {
    quirks('oauth2-authorize-url', 'no-expires-in', 'empty-authorization-details');
    const env = {
      ...shared.env,
      ESIGN_PROFILE: dialect === 'v2' ? 'sandbox-v2' : 'sandbox',
      ESIGN_CONFIG_DIR: await tempDir(),
    };
    const files = await inputs();
    const run = await runCli(['--auto-approve', 'sign', '--json', ...files], { env });
    expect(run.code, run.stderr).toBe(0);
    await opensslJudges(run.jsonLines<{ input: string; output: string }>());
  });

  it('an unknown authMode (oauth2token) is refused by name', async () => {
    quirks('unknown-auth-mode');
    const run = await runCli(['credentials', 'info', seal.pinOnlyCredentialID], { env: sealEnv(dialect) });
    expect(run.code).toBe(6);
    expect(run.stderr).toContain('has the authorization mode "oauth2token", none of oauth2code, explicit, implicit');
  });
});

describe('a v2 credentials/list without the credentialInfos asked for', () => {
  it('is followed by credentials/info for each id', async () => {
    quirks('list-without-infos');
    const before = shared.sandbox.requestLog.length;
    const run = await runCli(['credentials', 'list', '--json'], { env: sealEnv('v2') });
    expect(run.code, run.stderr).toBe(0);
    const listed = run.json<{ credentials: Array<{ credentialID: string }> }>();
    expect(listed.credentials.length).toBeGreaterThan(1);
    expect(calls(before, /^signing-v2 POST \/csc\/v2\/credentials\/info$/)).toBe(listed.credentials.length);
  });
});

const SIGN_HASH: Record<Dialect, string> = {
  v1: 'signing POST /csc/v1/signatures/signHash',
  v2: 'signing-v2 POST /csc/v2/signatures/signHash',
};

describe.each(DIALECTS)('a SAD about to expire mid-batch is renewed (CSC %s)', (dialect) => {
  const env = () => sealEnv(dialect, { ESIGN_CSC_MAX_SIGNATURES: '2' });

  it(`SADs of 5 s: ${dialect === 'v1' ? 'extended with credentials/extendTransaction before each signHash' : 'v2 lists no extendTransaction, so nothing is extended'}; the batch is signed`, async () => {
    quirks('short-sad');
    const before = shared.sandbox.requestLog.length;
    const run = await runCli(['sign', '--json', ...(await batchInputs())], { env: env() });
    expect(run.code, run.stderr).toBe(0);
    expect(calls(before, /credentials\/authorize$/)).toBe(2);
    expect(calls(before, /credentials\/extendTransaction$/)).toBe(dialect === 'v1' ? 2 : 0);
    expect(calls(before, /signatures\/signHash$/)).toBe(2);
    await opensslJudges(run.jsonLines<{ input: string; output: string }>());
    // A browser approval's SAD (the access token of scope credential) is extended the same way.
    const browserBefore = shared.sandbox.requestLog.length;
    const browser = await runCli(['--auto-approve', 'sign', '--json', ...(await inputs())], {
      env: {
        ...shared.env,
        ESIGN_PROFILE: dialect === 'v2' ? 'sandbox-v2' : 'sandbox',
        ESIGN_CONFIG_DIR: await tempDir(),
      },
    });
    expect(browser.code, browser.stderr).toBe(0);
    expect(calls(browserBefore, /credentials\/extendTransaction$/)).toBe(dialect === 'v1' ? 1 : 0);
    await opensslJudges(browser.jsonLines<{ input: string; output: string }>());
  });

  it('a SAD that lapses before its signHash is answered: one new authorization, then the batch goes on', async () => {
    quirks('short-sad');
    shared.sandbox.faults.inject({ route: SIGN_HASH[dialect], fault: { kind: 'delay', ms: 5500 }, times: 1 });
    const before = shared.sandbox.requestLog.length;
    const run = await runCli(['sign', '--json', ...(await batchInputs())], { env: env() });
    expect(run.code, run.stderr).toBe(0);
    expect(calls(before, /credentials\/authorize$/)).toBe(3);
    expect(calls(before, /signatures\/signHash$/)).toBe(3);
    await opensslJudges(run.jsonLines<{ input: string; output: string }>());
  }, 60_000);

  it.runIf(dialect === 'v2')(
    'a second lapse fails in one line, nothing written',
    async () => {
      quirks('short-sad');
      shared.sandbox.faults.inject({ route: SIGN_HASH[dialect], fault: { kind: 'delay', ms: 5500 }, times: 2 });
      const [pdf] = await batchInputs();
      const run = await runCli(['sign', pdf!], { env: env() });
      expect(run.code).toBe(6);
      expect(run.stderr.trim().split('\n').at(-1)).toMatch(
        /^esign: The signature authorization \(SAD\) expired before signHash \(invalid_request: SAD expired\)/,
      );
      expect(run.stderr).not.toMatch(/^\s+at /m);
    },
    60_000,
  );
});

describe.each(DIALECTS)('a service token rejected mid-batch (CSC %s)', (dialect) => {
  it.each<[string, Record<string, string | undefined>]>([
    ['client credentials', {}],
    [
      'auth/login',
      {
        ESIGN_SERVICE_AUTH: 'basic',
        ESIGN_SIGNING_USERNAME: seal.username,
        ESIGN_SIGNING_PASSWORD: seal.password,
        ESIGN_CLIENT_SECRET: undefined,
      },
    ],
  ])('%s: signed in once more at each 401 invalid_token, and the batch goes on', async (_way, extra) => {
    quirks('revokes-tokens');
    const env = sealEnv(dialect, { ESIGN_CSC_MAX_SIGNATURES: '1', ESIGN_CONFIG_DIR: await tempDir(), ...extra });
    const before = shared.sandbox.requestLog.length;
    const run = await runCli(['sign', '--json', ...(await batchInputs())], { env });
    expect(run.code, run.stderr).toBe(0);
    expect(calls(before, /oauth2\/token$|auth\/login$/)).toBeGreaterThan(1);
    expect(calls(before, /signatures\/signHash$/)).toBeGreaterThanOrEqual(3);
    await opensslJudges(run.jsonLines<{ input: string; output: string }>());
  });

  it('a fresh token rejected too: one line naming the call, no third sign-in', async () => {
    const invalidToken = JSON.stringify({ error: 'invalid_token', error_description: 'The access token was revoked.' });
    shared.sandbox.faults.inject({
      route: SIGN_HASH[dialect],
      fault: { kind: 'status', status: 401, body: invalidToken },
      times: 2,
    });
    const env = sealEnv(dialect, { ESIGN_CONFIG_DIR: await tempDir() });
    const [pdf] = await batchInputs();
    const before = shared.sandbox.requestLog.length;
    const run = await runCli(['sign', pdf!], { env });
    expect(run.code).not.toBe(0);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain(
      'refused signHash to this client even with the service token it had just issued (invalid_token: The access token was revoked.)',
    );
    expect(calls(before, /oauth2\/token$/)).toBe(2);
  });
});

describe.each(DIALECTS)('token_type is never the HTTP authentication scheme (CSC %s)', (dialect) => {
  it('token answers say "bearer" (and "sad"); every call still says Bearer, which the quirk insists on', async () => {
    quirks('lowercase-token-type');
    await signsAndVerifies(sealEnv(dialect, { ESIGN_CONFIG_DIR: await tempDir() }));
    const browser = {
      ...shared.env,
      ESIGN_PROFILE: dialect === 'v2' ? 'sandbox-v2' : 'sandbox',
      ESIGN_CONFIG_DIR: await tempDir(),
    };
    const files = await inputs();
    const run = await runCli(['--auto-approve', 'sign', '--json', ...files], { env: browser });
    expect(run.code, run.stderr).toBe(0);
    await opensslJudges(run.jsonLines<{ input: string; output: string }>());
  });
});

describe.each(DIALECTS)('PINs go out as JSON strings (CSC %s)', (dialect) => {
  it(`an all-digit PIN with a leading zero (${LEADING_ZERO_PIN}) opens the seal; the sandbox refuses a PIN that is not a string`, async () => {
    quirks('leading-zero-pin');
    await signsAndVerifies(
      sealEnv(dialect, { ESIGN_CREDENTIAL_PIN: LEADING_ZERO_PIN, ESIGN_CONFIG_DIR: await tempDir() }),
    );
  });
});

describe('oauth2Issuer resolved in both RFC 8414 forms (CSC v2)', () => {
  it.each<[QuirkName, RegExp]>([
    ['issuer-only', /^\.well-known GET \/oauth-authorization-server\/signing-v2$/],
    ['issuer-metadata-appended', /^signing-v2 GET \/\.well-known\/oauth-authorization-server$/],
  ])(
    '%s: the token endpoint (client credentials) and the authorize endpoint (a browser) come from the metadata',
    async (quirk, metadataRoute) => {
      quirks(quirk);
      const before = shared.sandbox.requestLog.length;
      await signsAndVerifies(sealEnv('v2', { ESIGN_CONFIG_DIR: await tempDir() }));
      const run = await runCli(['--auto-approve', 'sign', '--json', ...(await inputs())], {
        env: { ...shared.env, ESIGN_PROFILE: 'sandbox-v2', ESIGN_CONFIG_DIR: await tempDir() },
      });
      expect(run.code, run.stderr).toBe(0);
      await opensslJudges(run.jsonLines<{ input: string; output: string }>());
      expect(calls(before, metadataRoute)).toBeGreaterThan(0);
      if (quirk === 'issuer-metadata-appended')
        expect(calls(before, /^\.well-known GET \/oauth-authorization-server\/signing-v2$/)).toBeGreaterThan(0);
    },
  );
});

describe.each(DIALECTS)('credential IDs holding "/", "+" and spaces (CSC %s)', (dialect) => {
  it('are listed, looked up and signed with as they are (JSON bodies, the authorize URL of a browser approval)', async () => {
    quirks('odd-credential-ids');
    const env = sealEnv(dialect, {
      ESIGN_CREDENTIAL: odd(seal.pinOnlyCredentialID),
      ESIGN_CONFIG_DIR: await tempDir(),
    });
    const listed = await runCli(['credentials', 'list', '--json'], { env });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(JSON.stringify(odd(seal.pinOnlyCredentialID)));
    const info = await runCli(['credentials', 'info', odd(seal.pinOnlyCredentialID), '--json'], { env });
    expect(info.code, info.stderr).toBe(0);
    await signsAndVerifies(env);
    const browser = {
      ...shared.env,
      ESIGN_PROFILE: dialect === 'v2' ? 'sandbox-v2' : 'sandbox',
      ESIGN_CONFIG_DIR: await tempDir(),
    };
    const run = await runCli(
      ['--auto-approve', 'sign', '--credential', odd('alice-rsa2048'), '--json', ...(await inputs())],
      { env: browser },
    );
    expect(run.code, run.stderr).toBe(0);
    await opensslJudges(run.jsonLines<{ input: string; output: string }>());
  });

  it('are kept from --prepare to --complete in the split flow (the state, the approval URL)', async () => {
    quirks('odd-credential-ids');
    const [pdf] = await inputs();
    const state = join(await tempDir(), 'state.json');
    const env = {
      ...shared.env,
      ESIGN_PROFILE: dialect === 'v2' ? 'sandbox-v2' : 'sandbox',
      ESIGN_CONFIG_DIR: await tempDir(),
    };
    const prepare = (...extra: string[]) =>
      runCli(['--json', 'sign', '--prepare', '--state', state, '--credential', odd('alice-rsa2048'), ...extra, pdf!], {
        env,
      });
    const { signInUrl } = (await prepare()).json<{ signInUrl: string }>();
    const prepared = await prepare(
      '--redirect-url',
      (await fetch(signInUrl, { redirect: 'manual' })).headers.get('location')!,
    );
    expect(prepared.code, prepared.stderr).toBe(0);
    const [approval] = prepared.json<{ approvals: Array<{ authorizationUrl: string }> }>().approvals;
    expect(new URL(approval!.authorizationUrl).searchParams.get('credentialID')).toBe(odd('alice-rsa2048'));
    const code = new URL(
      (await fetch(approval!.authorizationUrl, { redirect: 'manual' })).headers.get('location')!,
    ).searchParams.get('code')!;
    expect(code).toBeTruthy();
    const completed = await runCli(['--json', 'sign', '--complete', '--state', state, '--code', code], { env });
    expect(completed.code, completed.stderr).toBe(0);
    await opensslJudges(completed.jsonLines<{ input: string; output: string }>());
  });
});
