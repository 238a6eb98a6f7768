import { join } from 'node:path';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { writeRootPem, writeRuntime } from '../../src/cli/context.js';
import { tempDirForFile } from './tmp.js';

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
 * publishes it (runtime.json) so that CLI child processes on the sandbox profile talk to it.
 */
export async function startTestSandbox(options: { autoApprove?: boolean; s3?: boolean; tls?: boolean; hostName?: string } = {}): Promise<TestSandbox> {
  const temp = await tempDirForFile('esign-sandbox-');
  const dataDir = join(temp.dir, 'sandbox');
  const configDir = join(temp.dir, 'config');
  const sandbox = await startSandbox({ dataDir, autoApprove: options.autoApprove ?? true, s3: options.s3 ?? false, tls: options.tls ?? false, ...(options.hostName ? { hostName: options.hostName } : {}) });
  const rootPemPath = await writeRootPem(dataDir, sandbox.pki.rootPem);
  await writeRuntime(dataDir, { pid: process.pid, urls: sandbox.urls, rootPemPath });
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
