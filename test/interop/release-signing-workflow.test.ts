/**
 * docs/ci/release-signing.yml, esign's own release, run as GitHub Actions would run it: every
 * `run:` step of its jobs in order, in bash, with the workflow's environment, no terminal, no
 * display and no browser, against `esign sandbox start` (reached through the env profile, as a
 * real service would be) with the sandbox organization's PIN-only seal.
 *
 * The build job runs for real when ESIGN_RELEASE_BUILD=1 (.ci/run sets it): `npm ci`, `npm pack`
 * and `npm run build:sea` in a checkout of this working tree, so the seal job installs, checks
 * and runs the executable that job just built. Otherwise its artifacts are stand-ins (an npm
 * tarball's, and test/helpers/release-archive.ts's archive). The `uses:` steps GitHub provides are
 * small stand-ins that copy files; `gh release upload` is skipped. Every signature is judged by
 * `openssl cms -verify`, in the workflow and again here.
 */
import { createHash } from 'node:crypto';
import { spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { appendFile, cp, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  runJob,
  type JobRun,
  type Workflow,
  type WorkflowContext,
  type WorkflowStep,
} from '../helpers/github-runner.js';
import { RELEASE_ARCHIVE, writeReleaseArchive } from '../helpers/release-archive.js';
import { spawnSandbox, type StartedSandbox } from '../helpers/sandbox-process.js';
import { tempDirForFile } from '../helpers/tmp.js';

const REPOSITORY = fileURLToPath(new URL('../../', import.meta.url));
const workflow = parse(await readFile(join(REPOSITORY, 'docs/ci/release-signing.yml'), 'utf8')) as Workflow;
const { version } = JSON.parse(await readFile(join(REPOSITORY, 'package.json'), 'utf8')) as { version: string };
const REAL_BUILD = process.env['ESIGN_RELEASE_BUILD'] === '1';
const TARBALL = `esign-${version}.tgz`;

let root: { dir: string; remove: () => Promise<void> };
let sandbox: ChildProcessWithoutNullStreams;
let started: StartedSandbox;
/** What actions/upload-artifact keeps of the build job, for the seal job's download. */
let buildArtifacts: string;
/** What the seal job checks out: the trust anchor committed beside the project. */
let sealCheckout: string;

beforeAll(async () => {
  root = await tempDirForFile('esign-release-workflow-');
  // Without --auto-approve: a browser step would hang, so the run proves there is none.
  ({ child: sandbox, started } = await spawnSandbox(root.dir));
  buildArtifacts = join(root.dir, 'build-artifacts');
  sealCheckout = join(root.dir, 'seal-checkout');
  await mkdir(buildArtifacts);
  await mkdir(join(sealCheckout, '.github'), { recursive: true });
  await cp(started.rootPem, join(sealCheckout, '.github', 'esign-root.pem'));
});

afterAll(async () => {
  sandbox?.kill('SIGTERM');
  await root?.remove();
});

/** This working tree as actions/checkout gives it: the files git tracks or would, nothing ignored. */
async function checkoutOfThisTree(workspace: string): Promise<void> {
  const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: REPOSITORY,
    encoding: 'buffer',
  });
  expect(listed.status, listed.stderr.toString()).toBe(0);
  const copied = spawnSync(
    'bash',
    ['-c', `tar -C "$1" --null -T - -cf - | tar -C "$2" -xf -`, 'copy', REPOSITORY, workspace],
    { input: listed.stdout },
  );
  expect(copied.status, copied.stderr.toString()).toBe(0);
}

async function standIn(step: WorkflowStep, workspace: string, job: string): Promise<void> {
  const action = step.uses!.split('@')[0];
  if (action === 'actions/checkout')
    await (job === 'build' ? checkoutOfThisTree(workspace) : cp(sealCheckout, workspace, { recursive: true }));
  else if (action === 'actions/setup-node') return;
  else if (action === 'actions/upload-artifact' && job === 'build')
    await cp(join(workspace, step.with!['path']!), buildArtifacts, { recursive: true });
  else if (action === 'actions/download-artifact')
    await cp(buildArtifacts, join(workspace, step.with!['path']!), { recursive: true });
  else if (action === 'actions/upload-artifact') return;
  else throw new Error(`no stand-in for ${step.uses}`);
}

const runReleaseJob = (name: string, context: WorkflowContext): Promise<JobRun> =>
  runJob(
    workflow,
    name,
    context,
    root.dir,
    (step, workspace) => standIn(step, workspace, name),
    name === 'build' ? 900_000 : 120_000,
  );

/** The build job's upload, as stand-ins: the npm tarball's and the release archive with its checksum file. */
async function standInBuild(): Promise<void> {
  await writeFile(join(buildArtifacts, TARBALL), `the npm tarball of esign ${version}\n`);
  await writeReleaseArchive(buildArtifacts);
  const archive = await readFile(join(buildArtifacts, RELEASE_ARCHIVE));
  await writeFile(
    join(buildArtifacts, `${RELEASE_ARCHIVE}.sha256`),
    `${createHash('sha256').update(archive).digest('hex')}  ${RELEASE_ARCHIVE}\n`,
  );
}

function sealContext(): WorkflowContext {
  const { seal, urls } = started;
  return {
    vars: {
      ESIGN_SIGNING_URL: urls['signing']!,
      ESIGN_TSA_URL: urls['tsaEndpoint']!,
      ESIGN_TSA_USERNAME: 'esign',
      ESIGN_CLIENT_ID: seal.clientId,
      ESIGN_CREDENTIAL: seal.pinOnlyCredentialID,
    },
    secrets: {
      ESIGN_CLIENT_SECRET: seal.clientSecret,
      ESIGN_CREDENTIAL_PIN: seal.pin,
      ESIGN_TSA_PASSWORD: 'sandbox-tsa',
      ESIGN_TOTP_SECRET: '',
    },
  };
}

describe('docs/ci/release-signing.yml against esign sandbox start', () => {
  it(
    `builds the release${REAL_BUILD ? ' (for real)' : ' (stand-in artifacts)'}, then seals SHA256SUMS and every artifact unattended with the executable it built, and OpenSSL verifies each`,
    async () => {
      if (REAL_BUILD) {
        const build = await runReleaseJob('build', {});
        expect(build.log).toMatch(/esign-linux-x64\.tar\.xz/);
      } else await standInBuild();
      expect((await readdir(buildArtifacts)).sort()).toEqual(
        [TARBALL, RELEASE_ARCHIVE, `${RELEASE_ARCHIVE}.sha256`].sort(),
      );

      const sealed = await runReleaseJob('seal', sealContext());
      expect(sealed.log).toContain(`${RELEASE_ARCHIVE}: OK`);
      const dist = join(sealed.workspace, 'dist');
      expect((await readdir(dist)).sort()).toEqual(
        ['SHA256SUMS', 'SHA256SUMS.p7s', TARBALL, `${TARBALL}.p7s`, RELEASE_ARCHIVE, `${RELEASE_ARCHIVE}.p7s`].sort(),
      );
      const lines = (await readFile(join(sealed.workspace, 'sealed.jsonl'), 'utf8'))
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines.map((line) => [line['format'], line['level'], line['credential']])).toEqual(
        Array(3).fill(['CAdES', 'B-T', started.seal.pinOnlyCredentialID]),
      );
      for (const file of ['SHA256SUMS', TARBALL, RELEASE_ARCHIVE]) {
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
            started.rootPem,
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
      expect(sealed.summary).toContain('sealed 3 files');
      if (REAL_BUILD) {
        // The executable that sealed is the one just built from this tree.
        const unpacked = join(root.dir, 'unpacked');
        await mkdir(unpacked);
        expect(spawnSync('tar', ['-xJf', join(dist, RELEASE_ARCHIVE), '-C', unpacked]).status).toBe(0);
        const reported = spawnSync(join(unpacked, 'esign-linux-x64', 'esign'), ['--version'], { encoding: 'utf8' });
        expect(reported.stdout).toMatch(new RegExp(`^${version.replace(/\./g, '\\.')} `));
      }
    },
    REAL_BUILD ? 1_200_000 : 180_000,
  );

  it('stops at the checksum, before anything is unpacked or signed, when the archive was corrupted on the way', async () => {
    if ((await readdir(buildArtifacts)).length === 0) await standInBuild();
    const corrupted = join(root.dir, 'corrupted-artifacts');
    await rm(corrupted, { recursive: true, force: true });
    await cp(buildArtifacts, corrupted, { recursive: true });
    const original = buildArtifacts;
    await appendFile(join(corrupted, RELEASE_ARCHIVE), Buffer.from([0]));
    buildArtifacts = corrupted;
    try {
      const failure = await runReleaseJob('seal', sealContext()).then(
        () => undefined,
        (error: Error) => error.message,
      );
      expect(failure).toMatch(/step "Install esign[^"]*" of job seal failed/);
      expect(failure).toContain(`${RELEASE_ARCHIVE}: FAILED`);
      expect(failure).not.toContain('Seal the manifest');
    } finally {
      buildArtifacts = original;
    }
  }, 60_000);
});
