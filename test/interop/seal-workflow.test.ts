/**
 * docs/ci/seal-signing.yml, run as GitHub Actions would run it: every `run:` step in order, in
 * bash, with the workflow's environment and no terminal, display or browser, against
 * `esign sandbox start` (reached through the env profile, as a real service would be), with the
 * sandbox organization's seal secrets from `sandbox start --json`. The install step is skipped
 * (esign is put on PATH instead) and the `uses:` steps are stand-ins that copy files. Every
 * output is judged by `openssl cms -verify`, by the workflow itself and again here.
 */
import { spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { chmod, cp, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { SandboxSeal } from '../../src/sandbox/deps.js';
import { esignShellLine } from '../helpers/run-cli.js';
import { spawnSandbox, type StartedSandbox } from '../helpers/sandbox-process.js';
import { tempDirForFile } from '../helpers/tmp.js';

const WORKFLOW = fileURLToPath(new URL('../../docs/ci/seal-signing.yml', import.meta.url));
interface Step {
  name?: string;
  uses?: string;
  run?: string;
}
const workflow = parse(await readFile(WORKFLOW, 'utf8')) as {
  env: Record<string, string>;
  jobs: Record<string, { steps: Step[] }>;
};

let root: { dir: string; remove: () => Promise<void> };
let sandbox: ChildProcessWithoutNullStreams;
let started: StartedSandbox;

beforeAll(async () => {
  root = await tempDirForFile('esign-seal-workflow-');
  // Without --auto-approve: a browser step would hang, so the run proves there is none.
  ({ child: sandbox, started } = await spawnSandbox(root.dir));
});

afterAll(async () => {
  sandbox?.kill('SIGTERM');
  await root?.remove();
});

describe('docs/ci/seal-signing.yml against esign sandbox start', () => {
  it.each([
    [
      'the PIN-only bulk seal',
      (seal: SandboxSeal) => ({ ESIGN_CREDENTIAL: seal.pinOnlyCredentialID, ESIGN_TOTP_SECRET: '' }),
    ],
    [
      'the PIN + TOTP seal',
      (seal: SandboxSeal) => ({ ESIGN_CREDENTIAL: seal.credentialID, ESIGN_TOTP_SECRET: seal.totpSecret }),
    ],
  ])(
    'seals the manifest and every artifact with %s, unattended, and OpenSSL verifies each',
    async (_, credential) => {
      const { seal, urls, rootPem } = started;
      const workspace = join(root.dir, `run-${Math.random().toString(16).slice(2)}`);
      const bin = join(root.dir, 'bin');
      await mkdir(join(workspace, '.github'), { recursive: true });
      await mkdir(bin, { recursive: true });
      await writeFile(join(bin, 'esign'), `#!/bin/sh\nexec ${esignShellLine([])} "$@"\n`);
      await chmod(join(bin, 'esign'), 0o755);
      const context: Record<string, Record<string, string>> = {
        vars: {
          ESIGN_SIGNING_URL: urls['signing']!,
          ESIGN_TSA_URL: urls['tsaEndpoint']!,
          ESIGN_TSA_USERNAME: 'esign',
          ESIGN_CLIENT_ID: seal.clientId,
          ESIGN_CREDENTIAL: '',
        },
        secrets: {
          ESIGN_CLIENT_SECRET: seal.clientSecret,
          ESIGN_CREDENTIAL_PIN: seal.pin,
          ESIGN_TSA_PASSWORD: 'sandbox-tsa',
          ESIGN_TOTP_SECRET: '',
        },
        github: { workspace },
      };
      const env: Record<string, string> = {};
      for (const [key, value] of Object.entries(workflow.env))
        env[key] = String(value).replace(
          /\$\{\{\s*(\w+)\.(\w+)\s*\}\}/g,
          (_, scope: string, name: string) => context[scope]?.[name] ?? '',
        );
      Object.assign(env, credential(seal));
      const summary = join(root.dir, `summary-${Math.random().toString(16).slice(2)}`);
      await writeFile(summary, '');
      for (const step of workflow.jobs['seal']!.steps) {
        if (step.uses?.startsWith('actions/checkout')) {
          await writeFile(
            join(workspace, 'package.json'),
            JSON.stringify({ name: 'app', version: '1.2.3', files: ['index.js'] }),
          );
          await writeFile(join(workspace, 'index.js'), 'console.log("app");\n');
          await cp(rootPem, join(workspace, '.github', 'esign-root.pem'));
        }
        if (!step.run || step.name === 'Install esign') continue;
        const result = spawnSync('bash', ['-eo', 'pipefail', '-c', step.run], {
          cwd: workspace,
          encoding: 'utf8',
          timeout: 120_000,
          // What a runner has: no terminal (no stdin), no display; CI set.
          env: {
            PATH: `${bin}:${process.env['PATH']}`,
            HOME: workspace,
            CI: 'true',
            NO_COLOR: '1',
            GITHUB_STEP_SUMMARY: summary,
            ESIGN_CONFIG_DIR: join(workspace, '.esign'),
            ...env,
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        expect(result.status, `${step.name}: ${result.stdout}${result.stderr}`).toBe(0);
      }
      const artifacts = (await readdir(join(workspace, 'dist'), { withFileTypes: true }))
        .filter((entry) => entry.isFile())
        .map((entry) => entry.name);
      expect(artifacts).toEqual(expect.arrayContaining(['SHA256SUMS', 'app-1.2.3.tgz']));
      for (const artifact of artifacts) {
        const verified = spawnSync(
          'openssl',
          [
            'cms',
            '-verify',
            '-binary',
            '-inform',
            'DER',
            '-in',
            join(workspace, 'dist', 'signatures', `${artifact}.p7s`),
            '-content',
            join(workspace, 'dist', artifact),
            '-CAfile',
            rootPem,
            '-purpose',
            'any',
            '-out',
            '/dev/null',
          ],
          { encoding: 'utf8' },
        );
        expect(verified.status, verified.stderr).toBe(0);
        expect(verified.stderr).toContain('Verification successful');
      }
      const sealed = (await readFile(join(workspace, 'sealed.jsonl'), 'utf8'))
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { credential: string; level: string });
      expect(sealed.every((line) => line.credential === env['ESIGN_CREDENTIAL'] && /B-T/.test(line.level))).toBe(true);
      expect(await readFile(summary, 'utf8')).toContain(`sealed ${artifacts.length} files`);
    },
    120_000,
  );
});
