/**
 * docs/ci/release-approval.yml, run as GitHub Actions would run it: every `run:` step of the
 * prepare and complete jobs in order, in bash, with the workflow's environment (GITHUB_PATH and
 * GITHUB_OUTPUT between steps), against `esign sandbox start` (reached through the env profile, as
 * a real service would be). The build job (npm ci, npm pack, npm run build:sea) is not run: its
 * artifacts are an npm tarball's stand-in and esign's release archive (test/helpers/release-archive.ts:
 * the real one when ESIGN_BIN is the executable), which the jobs install esign from, as the
 * workflow does. The `uses:` steps GitHub provides (checkout, cache, artifacts) are done by small
 * stand-ins that copy files; the `gh release upload` that needs GitHub is skipped. A person's part
 * (sign in, approve) is a fetch of the URL the job summary shows. Every output is judged by
 * `openssl cms -verify`.
 */
import { spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cp, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { SANDBOX_SECRETS } from '../../src/sandbox/deps.js';
import {
  condition,
  runJob,
  type JobRun,
  type Workflow,
  type WorkflowContext,
  type WorkflowStep,
} from '../helpers/github-runner.js';
import { RELEASE_ARCHIVE, writeReleaseArchive } from '../helpers/release-archive.js';
import { spawnSandbox } from '../helpers/sandbox-process.js';
import { tempDirForFile } from '../helpers/tmp.js';

const WORKFLOW = fileURLToPath(new URL('../../docs/ci/release-approval.yml', import.meta.url));

const workflow = parse(await readFile(WORKFLOW, 'utf8')) as Workflow;

let root: { dir: string; remove: () => Promise<void> };
let sandbox: ChildProcessWithoutNullStreams;
let urls: Record<string, string>;
let rootPem: string;
/** The repository a checkout gives: a tiny package, and the trust anchor committed beside it. */
let repo: string;
/** What actions/cache keeps between runs, and actions/upload-artifact between jobs. */
let cacheDir: string;
let artifactDir: string;
/** What the build job uploads: the npm tarball and the executable's archive. */
let buildDir: string;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  root = await tempDirForFile('esign-ci-workflow-');
  const port = await freePort();
  const { child, started } = await spawnSandbox(root.dir, { globalArgs: ['--auto-approve'], port });
  sandbox = child;
  urls = started.urls;
  rootPem = started.rootPem;
  repo = join(root.dir, 'repo');
  await mkdir(join(repo, '.github'), { recursive: true });
  await writeFile(join(repo, 'package.json'), JSON.stringify({ name: 'app', version: '1.2.3', files: ['index.js'] }));
  await writeFile(join(repo, 'index.js'), 'console.log("app 1.2.3");\n');
  await cp(rootPem, join(repo, '.github', 'esign-root.pem'));
  cacheDir = join(root.dir, 'actions-cache');
  artifactDir = join(root.dir, 'actions-artifact');
  buildDir = join(root.dir, 'build-artifacts');
  await Promise.all([mkdir(cacheDir), mkdir(artifactDir), mkdir(buildDir)]);
  await writeFile(join(buildDir, 'esign-0.1.0.tgz'), 'the npm tarball of esign 0.1.0\n');
  await writeReleaseArchive(buildDir);
});

afterAll(async () => {
  sandbox?.kill('SIGTERM');
  await root?.remove();
});

/** Runs one job of the workflow in a fresh workspace; throws with the log when a step fails. */
const runReleaseJob = (name: string, context: WorkflowContext): Promise<JobRun> =>
  runJob(workflow, name, context, root.dir, standIn);

/** What GitHub's own actions do, reduced to the files they move. */
async function standIn(step: WorkflowStep, workspace: string): Promise<void> {
  const action = step.uses!.split('@')[0];
  if (action === 'actions/checkout') await cp(repo, workspace, { recursive: true });
  else if (action === 'actions/setup-node') return;
  else if (action === 'actions/cache/restore') {
    const cached = join(cacheDir, 'esign-signer.enc');
    if ((await readdir(cacheDir)).includes('esign-signer.enc')) await cp(cached, join(workspace, step.with!['path']!));
  } else if (action === 'actions/cache/save')
    await cp(join(workspace, step.with!['path']!), join(cacheDir, 'esign-signer.enc'));
  else if (action === 'actions/upload-artifact') {
    await rm(artifactDir, { recursive: true, force: true });
    for (const path of step
      .with!['path']!.split('\n')
      .map((line) => line.trim())
      .filter(Boolean))
      await cp(join(workspace, path), join(artifactDir, path), { recursive: true });
  } else if (action === 'actions/download-artifact' && step.with!['pattern'] === 'esign-build-*')
    await cp(buildDir, join(workspace, step.with!['path']!), { recursive: true });
  else if (action === 'actions/download-artifact') await cp(artifactDir, workspace, { recursive: true });
  else throw new Error(`no stand-in for ${step.uses}`);
}

/** The signer's browser: open the URL, approve (the sandbox approves at once), copy the address it is sent to. */
async function signerOpens(url: string): Promise<string> {
  const response = await fetch(url, { redirect: 'manual' });
  expect(response.status).toBe(302);
  return response.headers.get('location')!;
}

describe('docs/ci/release-approval.yml against esign sandbox start', () => {
  it('signs the SHA256SUMS manifest and every artifact in one approval, and OpenSSL verifies each', async () => {
    const vars = {
      ESIGN_SIGNING_URL: urls['signing']!,
      ESIGN_TSA_URL: urls['tsaEndpoint']!,
      ESIGN_IDENTITY_URL: urls['identity']!,
      ESIGN_IDENTITY_LEGACY_URL: urls['identityLegacy']!,
      ESIGN_STORAGE_URL: urls['storage']!,
      ESIGN_CLIENT_ID: SANDBOX_SECRETS.clientId,
      ESIGN_CREDENTIAL: 'alice-rsa2048',
      ESIGN_TSA_USERNAME: SANDBOX_SECRETS.tsaUser,
      // Uploads need a storage sign-in where complete runs (a self-hosted runner): the split flow's --upload is tested in test/integration/sign.test.ts.
      ESIGN_UPLOAD: '',
    };
    const secrets: Record<string, string> = {
      ESIGN_CLIENT_SECRET: SANDBOX_SECRETS.clientSecret,
      ESIGN_TSA_PASSWORD: SANDBOX_SECRETS.tsaPassword,
      ESIGN_STATE_KEY: randomBytes(24).toString('base64'),
    };

    // Run 1 on a fresh runner: no sign-in yet, so `prepare` asks for one and `complete` is skipped.
    const first = await runReleaseJob('prepare', { vars, secrets, inputs: { signin_redirect_url: '' } });
    expect(first.outputs['ready'], first.log).toBe('false');
    expect(first.summary).toContain('## Sign in to the signing service');
    expect(condition(workflow.jobs['complete']!.if, { 'needs.prepare.outputs': first.outputs })).toBe(false);
    const signInUrl = /^(http:\S+\/oauth2\/authorize\?\S+)$/m.exec(first.summary)![1]!;
    expect(signInUrl).toContain('scope=service');

    // The signer signs in at the URL the summary shows.
    const signedIn = await signerOpens(signInUrl);
    // Run 2, with the address the browser was sent to as the workflow input.
    const second = await runReleaseJob('prepare', { vars, secrets, inputs: { signin_redirect_url: signedIn } });
    expect(second.outputs['ready'], second.log).toBe('true');
    expect(second.summary).toContain('## Approve the release signatures');
    const approvalUrl = /^(http:\S+\/oauth2\/authorize\?\S+)$/m.exec(second.summary)![1]!;
    expect(approvalUrl).toContain('scope=credential');
    expect(new URL(approvalUrl).searchParams.get('numSignatures')).toBe('3');
    const listed = [...second.summary.matchAll(/^(\S+)\s{2}(dist\/\S+)$/gm)].map((match) => match[2]);
    expect(listed.sort()).toEqual(['dist/SHA256SUMS', 'dist/esign-0.1.0.tgz', `dist/${RELEASE_ARCHIVE}`]);
    // Nothing secret is left in the artifact in the clear: the sign-in travels encrypted.
    expect((await readdir(artifactDir)).sort()).toEqual(['dist', 'esign-signer.enc']);
    const carried = await readFile(join(artifactDir, 'esign-signer.enc'));
    expect(carried.subarray(0, 8).toString('latin1')).toBe('Salted__');

    // The signer approves in the browser, stores the redirect address as the environment secret, approves the job.
    const approved = await signerOpens(approvalUrl);
    const complete = await runReleaseJob('complete', {
      vars,
      secrets: { ...secrets, ESIGN_APPROVAL_REDIRECT_URL: approved },
      inputs: {},
    });
    const dist = join(complete.workspace, 'dist');
    expect((await readdir(dist)).sort()).toEqual([
      'SHA256SUMS',
      'SHA256SUMS.p7s',
      'esign-0.1.0.tgz',
      'esign-0.1.0.tgz.p7s',
      RELEASE_ARCHIVE,
      `${RELEASE_ARCHIVE}.p7s`,
    ]);
    const completed = (await readFile(join(complete.workspace, 'completed.json'), 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(completed.filter((line) => line['output']).map((line) => [line['format'], line['level']])).toEqual([
      ['CAdES', 'B-T'],
      ['CAdES', 'B-T'],
      ['CAdES', 'B-T'],
    ]);
    // The check step ran esign verify and openssl cms -verify on each; judge once more here, independently.
    for (const file of ['SHA256SUMS', 'esign-0.1.0.tgz', RELEASE_ARCHIVE]) {
      const verdict = spawnSync(
        'openssl',
        [
          'cms',
          '-verify',
          '-binary',
          '-inform',
          'DER',
          '-in',
          `${file}.p7s`,
          '-content',
          file,
          '-CAfile',
          rootPem,
          '-purpose',
          'any',
          '-out',
          '/dev/null',
        ],
        { cwd: dist, encoding: 'utf8' },
      );
      expect(verdict.status, verdict.stderr).toBe(0);
      expect(verdict.stderr).toContain('Verification successful');
    }
    expect(complete.log).toMatch(/esign-0\.1\.0\.tgz: OK/);
    // The state file is gone once every approval is complete; no SAD or token was printed.
    expect(await readdir(complete.workspace)).not.toContain('sign-state.json');
  });
});
