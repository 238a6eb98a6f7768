import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import type { SandboxSeal } from '../../src/sandbox/deps.js';
import { esignCommand } from './run-cli.js';

/** What `esign --json sandbox start` prints once it listens. */
export interface StartedSandbox {
  urls: Record<string, string>;
  rootPem: string;
  seal: SandboxSeal;
}

/**
 * `esign [globalArgs] --json sandbox start --data-dir DIR/sandbox` as a child process of the esign
 * under test (config in DIR/sandbox-config), once it has printed its URLs; `port` 0 for any.
 */
export async function spawnSandbox(
  dir: string,
  options: { globalArgs?: string[]; port?: number } = {},
): Promise<{ child: ChildProcessWithoutNullStreams; started: StartedSandbox }> {
  const dataDir = join(dir, 'sandbox');
  const child = spawn(
    ...esignCommand([
      ...(options.globalArgs ?? []),
      '--json',
      'sandbox',
      'start',
      '--port',
      String(options.port ?? 0),
      '--data-dir',
      dataDir,
    ]),
    {
      env: { ...process.env, ESIGN_CONFIG_DIR: join(dir, 'sandbox-config'), ESIGN_SANDBOX_DIR: dataDir, NO_COLOR: '1' },
    },
  );
  const started = await new Promise<StartedSandbox>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((candidate) => candidate.startsWith('{'));
      if (line && out.includes('\n')) resolve(JSON.parse(line) as StartedSandbox);
    });
    child.once('exit', (code) => reject(new Error(`esign sandbox start ended (${code})`)));
  });
  return { child, started };
}
