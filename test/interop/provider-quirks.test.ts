/**
 * Every sandbox quirk (issue 29), judged by tools esign did not write: with each switched on, in
 * both CSC dialects, `credentials list` and `info`, then `sign` of two PDFs and a .p7s in a batch
 * needing two authorizations. pdfsig (NSS trusting only the sandbox root) and openssl cms -verify
 * (given only the root) judge each PDF; openssl cms -verify each .p7s.
 */
import { spawnSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_API_KEY, SANDBOX_SEAL as seal } from '../../src/sandbox/deps.js';
import {
  LEADING_ZERO_PIN,
  QUIRK_NAMES,
  PKI_QUIRKS,
  TRUST_LIST_QUIRKS,
  oddCredentialID,
  type QuirkName,
} from '../../src/sandbox/signing/quirks.js';
import {
  closeInteropSetup,
  opensslVerifiesCms,
  pdfsig,
  runTool,
  startInteropSetup,
  type InteropSetup,
} from '../helpers/pdf-judges.js';
import { runCli } from '../helpers/run-cli.js';
import { sealEnv, type Dialect } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/tmp.js';

const missing = ['pdfsig', 'openssl', 'certutil'].filter((tool) => spawnSync('which', [tool]).status !== 0);
if (missing.length > 0)
  console.warn(`interop provider-quirks tests skipped: missing ${missing.join(', ')} (.ci/run installs them)`);

let setup: InteropSetup;
beforeAll(async () => {
  if (missing.length === 0) setup = await startInteropSetup('esign-interop-quirks-');
});
afterAll(async () => closeInteropSetup(setup ?? {}));
afterEach(() => setup?.sandbox.sandbox.quirks.set([]));

/** Refused by design, each with its own test in test/integration/provider-quirks.test.ts. */
const REFUSED: QuirkName[] = ['unknown-auth-mode'];

/** What a CI job sets for a service that behaves so (beyond the seal's usual environment), given the service's URL. */
const SETTINGS: Partial<Record<QuirkName, (signingUrl: string) => Record<string, string | undefined>>> = {
  external: () => ({ ESIGN_SERVICE_AUTH: 'external', ESIGN_CLIENT_SECRET: undefined }),
  'leading-zero-pin': () => ({ ESIGN_CREDENTIAL_PIN: LEADING_ZERO_PIN }),
  'odd-credential-ids': () => ({ ESIGN_CREDENTIAL: oddCredentialID(seal.pinOnlyCredentialID) }),
  'oauth-elsewhere': (signingUrl) => ({ ESIGN_OAUTH_URL: `${signingUrl}/login` }),
  'json-token-request': () => ({ ESIGN_TOKEN_REQUEST: 'json' }),
  'client-auth-body': () => ({ ESIGN_CLIENT_AUTH: 'body' }),
  'password-grant': () => ({
    ESIGN_SERVICE_AUTH: 'password',
    ESIGN_SIGNING_USERNAME: seal.username,
    ESIGN_SIGNING_PASSWORD: seal.password,
  }),
  'v0-paths': () => ({ ESIGN_CSC_VERSION: '0' }),
  'client-data-filter': () => ({ ESIGN_CSC_CLIENT_DATA: 'EVCS' }),
  'api-key': () => ({ ESIGN_API_KEY_HEADER: 'x-api-key', ESIGN_API_KEY: SANDBOX_API_KEY }),
};
/** Behaviours of the v1.0.4 dialect only. */
const V1_ONLY: QuirkName[] = ['v0-paths'];

/** Quirks whose refusals of a used service token make the batch ask credentials/authorize again. */
const RETRIES_AUTHORIZE: QuirkName[] = ['revokes-tokens'];

const CASES = (['v1', 'v2'] as Dialect[]).flatMap((dialect) =>
  QUIRK_NAMES.filter(
    (quirk) =>
      !REFUSED.includes(quirk) &&
      !TRUST_LIST_QUIRKS.includes(quirk) &&
      !PKI_QUIRKS.includes(quirk) &&
      (dialect === 'v1' || !V1_ONLY.includes(quirk)),
  ).map((quirk) => [quirk, dialect] as const),
);

describe.skipIf(missing.length > 0)(
  'every sandbox quirk: credentials list and info, and a batch of two authorizations judged by pdfsig and openssl',
  () => {
    it.each(CASES)('%s (CSC %s)', async (quirk, dialect) => {
      const { sandbox } = setup;
      sandbox.sandbox.quirks.set([quirk]);
      const signingUrl = dialect === 'v2' ? sandbox.sandbox.urls.signingV2 : sandbox.sandbox.urls.signing;
      const env = sealEnv(sandbox, dialect, {
        ESIGN_CSC_MAX_SIGNATURES: '2',
        ESIGN_CONFIG_DIR: await tempDir(),
        ...SETTINGS[quirk]?.(signingUrl),
      });
      const credential = env['ESIGN_CREDENTIAL']!;
      const listed = await runCli(['credentials', 'list', '--json'], { env });
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout).toContain(JSON.stringify(credential));
      const info = await runCli(['credentials', 'info', credential, '--json'], { env });
      expect(info.code, info.stderr).toBe(0);

      const dir = await tempDir();
      const files = [join(dir, 'a.pdf'), join(dir, 'notes.txt'), join(dir, 'b.pdf')];
      const sample = await readFile(new URL('../../samples/contract.pdf', import.meta.url));
      await Promise.all([
        writeFile(files[0]!, sample),
        writeFile(files[1]!, 'release notes\n'),
        writeFile(files[2]!, sample),
      ]);
      const before = sandbox.sandbox.requestLog.length;
      const run = await runCli(['sign', '--json', ...files], { env });
      expect(run.code, run.stderr).toBe(0);
      const authorizations = sandbox.sandbox.requestLog
        .slice(before)
        .filter((route) => route.endsWith('/credentials/authorize')).length;
      if (RETRIES_AUTHORIZE.includes(quirk)) expect(authorizations).toBeGreaterThanOrEqual(2);
      else expect(authorizations).toBe(2);

      const outputs = run.jsonLines<{ input: string; output: string }>();
      expect(outputs).toHaveLength(3);
      for (const { input, output } of outputs) {
        if (output.endsWith('.pdf')) {
          const judged = await pdfsig(output, setup.nssDir);
          expect(judged.signatures, judged.raw).toHaveLength(1);
          expect(judged.signatures[0], judged.raw).toMatchObject({ valid: true, trusted: true, totalDocument: true });
          await opensslVerifiesCms(output, sandbox.rootPemPath);
        } else {
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
            sandbox.rootPemPath,
            '-purpose',
            'any',
            '-out',
            '/dev/null',
          ]);
          expect(verify.status, verify.stderr).toBe(0);
        }
      }
    });
  },
);
