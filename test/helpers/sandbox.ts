import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { writeRootPem, writeRuntime } from '../../src/cli/context.js';
import { tempDirForFile } from './tmp.js';
import { SANDBOX_SEAL as seal } from '../../src/sandbox/deps.js';

export interface TestSandbox {
  sandbox: Sandbox;
  /** Environment for `runCli` so the CLI's sandbox profile uses this in-process sandbox. */
  env: Record<string, string>;
  dataDir: string;
  configDir: string;
  rootPemPath: string;
  close(): Promise<void>;
}

/**
 * Starts the sandbox in this process on a free port, with its own config and data dirs, and
 * publishes it (runtime.json) so that CLI child processes on the sandbox profile talk to it. Its
 * keys come from the run's template (sandbox-template.global.ts) when there is one.
 */
export async function startTestSandbox(
  options: { autoApprove?: boolean; s3?: boolean; tls?: boolean; hostName?: string; trustLists?: number } = {},
): Promise<TestSandbox> {
  const temp = await tempDirForFile('esign-sandbox-');
  const dataDir = join(temp.dir, 'sandbox');
  const configDir = join(temp.dir, 'config');
  await seededSandboxDir(dataDir);
  const sandbox = await startSandbox({
    dataDir,
    autoApprove: options.autoApprove ?? true,
    s3: options.s3 ?? false,
    tls: options.tls ?? false,
    ...(options.hostName ? { hostName: options.hostName } : {}),
    ...(options.trustLists ? { trustLists: options.trustLists } : {}),
  });
  const rootPemPath = await writeRootPem(dataDir, sandbox.pki.rootPem);
  await writeRuntime(dataDir, {
    pid: process.pid,
    urls: sandbox.urls,
    rootPemPath,
    lotlSignerCertificate: sandbox.lotlSignerCertificate,
  });
  return {
    sandbox,
    dataDir,
    configDir,
    rootPemPath,
    env: { ESIGN_CONFIG_DIR: configDir, ESIGN_SANDBOX_DIR: dataDir },
    async close() {
      await sandbox.close();
      await temp.remove();
    },
  };
}

/**
 * `dir` with the keys of the run's sandbox template (sandbox-template.global.ts) copied in, as if a
 * sandbox had run there before: a sandbox started there (in this process, or embedded in a CLI run)
 * then only issues its certificates. Without a template (a run without that global setup), as is.
 */
export async function seededSandboxDir(dir: string): Promise<string> {
  const template = process.env['ESIGN_TEST_SANDBOX_TEMPLATE'];
  if (template) await cp(template, dir, { recursive: true });
  return dir;
}

export type Dialect = 'v1' | 'v2';

/** The environment of a CI job that seals: the env profile, pointed at the sandbox's services. */
export function sealEnv(
  sandbox: TestSandbox,
  dialect: Dialect,
  extra: Record<string, string | undefined> = {},
): Record<string, string | undefined> {
  const urls = sandbox.sandbox.urls;
  return {
    ESIGN_CONFIG_DIR: sandbox.configDir,
    ESIGN_SANDBOX_DIR: undefined,
    DISPLAY: undefined,
    WAYLAND_DISPLAY: undefined,
    ESIGN_SIGNING_URL: dialect === 'v2' ? urls.signingV2 : urls.signing,
    ESIGN_TSA_URL: urls.tsaEndpoint,
    ESIGN_TSA_USERNAME: 'esign',
    ESIGN_TSA_PASSWORD: 'sandbox-tsa',
    ESIGN_TRUST_ANCHORS: sandbox.rootPemPath,
    ESIGN_SERVICE_AUTH: 'client-credentials',
    ESIGN_CLIENT_ID: seal.clientId,
    ESIGN_CLIENT_SECRET: seal.clientSecret,
    ESIGN_CREDENTIAL: seal.pinOnlyCredentialID,
    ESIGN_CREDENTIAL_PIN: seal.pin,
    ...extra,
  };
}
