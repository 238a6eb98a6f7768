/**
 * action.yml, run as a GitHub runner runs a composite action: the inputs as INPUT_* variables (and
 * `${{ inputs.* }}`), each step in `bash --noprofile --norc -eo pipefail`, GITHUB_OUTPUT and
 * GITHUB_PATH between the steps, against `esign sandbox start` through the env profile. The
 * "release" it installs from is a directory reached by a file:// URL: the executable's archive
 * (dist/sea/esign-linux-x64.tar.xz when ESIGN_BIN is that executable, else an archive of a
 * script that runs the esign under test) and its SHA256SUMS. OpenSSL judges the signatures.
 */
import { spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { runnerFiles, runStep, stepOutputs as readStepOutputs } from '../helpers/github-runner.js';
import { RELEASE_ARCHIVE, writeReleaseArchive } from '../helpers/release-archive.js';
import { spawnSandbox, type StartedSandbox } from '../helpers/sandbox-process.js';
import { tempDirForFile } from '../helpers/tmp.js';

const ACTION = fileURLToPath(new URL('../../action.yml', import.meta.url));
const ARCHIVE = RELEASE_ARCHIVE;

interface Action {
  inputs: Record<string, { default?: string; required?: boolean }>;
  outputs: Record<string, { value: string }>;
  runs: {
    using: string;
    steps: { name: string; id?: string; shell: string; run: string; env?: Record<string, string> }[];
  };
}
const action = parse(await readFile(ACTION, 'utf8')) as Action;

let root: { dir: string; remove: () => Promise<void> };
let sandbox: ChildProcessWithoutNullStreams;
let started: StartedSandbox;
let release: string;

beforeAll(async () => {
  root = await tempDirForFile('esign-action-');
  ({ child: sandbox, started } = await spawnSandbox(root.dir));
  release = join(root.dir, 'release');
  await mkdir(release);
  await writeReleaseArchive(release);
  await writeSums(release);
});

afterAll(async () => {
  sandbox?.kill('SIGTERM');
  await root?.remove();
});

async function writeSums(dir: string): Promise<void> {
  const digest = createHash('sha256')
    .update(await readFile(join(dir, ARCHIVE)))
    .digest('hex');
  await writeFile(join(dir, 'SHA256SUMS'), `${digest}  ${ARCHIVE}\n`);
}

interface ActionRun {
  /** The exit code of the step that failed, or 0. */
  code: number;
  failedStep?: string;
  outputs: Record<string, string>;
  log: string;
  workspace: string;
  runnerTemp: string;
}

/** Runs action.yml's steps as a runner would, with `inputs` (as the workflow's `with:`) and the step's `env:`. */
async function runAction(
  inputs: Record<string, string>,
  env: Record<string, string>,
  options: { downloadFrom?: string } = {},
): Promise<ActionRun> {
  const run = join(root.dir, `run-${Math.random().toString(16).slice(2)}`);
  const workspace = join(run, 'workspace');
  await mkdir(workspace, { recursive: true });
  await writeFile(join(workspace, 'app.tgz'), 'the release tarball\n');
  await writeFile(join(workspace, 'SHA256SUMS'), 'abc  app.tgz\n');
  // What the runner passes to an action: INPUT_<NAME> (upper case, hyphens kept), defaults filled in.
  const given = { 'download-url': pathToFileURL(options.downloadFrom ?? release).href, ...inputs };
  const inputEnv: Record<string, string> = {};
  const inputContext: Record<string, string> = {};
  for (const [name, spec] of Object.entries(action.inputs)) {
    const value = given[name as keyof typeof given] ?? spec.default ?? '';
    inputEnv[`INPUT_${name.toUpperCase()}`] = value;
    inputContext[name] = value;
  }
  const expand = (text: string, steps: Record<string, Record<string, string>>) =>
    text.replace(
      /\$\{\{\s*(inputs|steps)\.([\w-]+)(?:\.outputs\.([\w-]+))?\s*\}\}/g,
      (_, scope: string, name: string, output?: string) =>
        scope === 'inputs' ? (inputContext[name] ?? '') : (steps[name]?.[output!] ?? ''),
    );
  const files = await runnerFiles(run);
  const stepOutputs: Record<string, Record<string, string>> = {};
  let log = '';
  for (const step of action.runs.steps) {
    expect(step.shell).toBe('bash');
    const stepEnv: Record<string, string> = {};
    for (const [key, value] of Object.entries(step.env ?? {})) stepEnv[key] = expand(String(value), stepOutputs);
    const result = await runStep(step.run, files, workspace, {
      ESIGN_CONFIG_DIR: join(run, 'esign-config'),
      ...inputEnv,
      ...env,
      ...stepEnv,
    });
    log += `--- ${step.name}\n${result.stdout}${result.stderr}`;
    if (result.status !== 0)
      return { code: result.status ?? -1, failedStep: step.name, outputs: {}, log, workspace, runnerTemp: files.temp };
    if (step.id) stepOutputs[step.id] = await readStepOutputs(files);
  }
  const outputs = Object.fromEntries(
    Object.entries(action.outputs).map(([name, { value }]) => [name, expand(value, stepOutputs)]),
  );
  return { code: 0, outputs, log, workspace, runnerTemp: files.temp };
}

/** The env a workflow gives the action for the sandbox organization's PIN-only seal. */
function sealEnv(): Record<string, string> {
  const { seal, urls } = started;
  return {
    ESIGN_SIGNING_URL: urls['signing']!,
    ESIGN_TSA_URL: urls['tsaEndpoint']!,
    ESIGN_TSA_USERNAME: 'esign',
    ESIGN_TSA_PASSWORD: 'sandbox-tsa',
    ESIGN_SERVICE_AUTH: 'client-credentials',
    ESIGN_CLIENT_ID: seal.clientId,
    ESIGN_CLIENT_SECRET: seal.clientSecret,
    ESIGN_CREDENTIAL_PIN: seal.pin,
  };
}

/** `openssl cms -verify` of a DER CMS against the sandbox's root, with `extra` (-content, -out); fails the test otherwise. */
function opensslVerifies(cms: string, extra: string[]): void {
  const verdict = spawnSync(
    'openssl',
    [
      'cms',
      '-verify',
      '-binary',
      '-inform',
      'DER',
      '-in',
      cms,
      '-CAfile',
      started.rootPem,
      '-purpose',
      'any',
      ...extra,
    ],
    { encoding: 'utf8' },
  );
  expect(verdict.status, verdict.stderr).toBe(0);
  expect(verdict.stderr).toContain('Verification successful');
}

describe('action.yml, run as a runner runs a composite action, against esign sandbox start', () => {
  it('installs the checked executable and seals the files at B-T; OpenSSL verifies each signature', async () => {
    const run = await runAction(
      {
        files: 'app.tgz\n  SHA256SUMS  \n',
        level: 'B-T',
        'output-dir': 'dist/signatures',
        credential: started.seal.pinOnlyCredentialID,
      },
      sealEnv(),
    );
    expect(run.code, run.log).toBe(0);
    expect(run.log).toMatch(new RegExp(`${ARCHIVE}: OK`));
    expect(run.outputs).toEqual({ 'output-dir': 'dist/signatures', count: '2', verified: '', report: '' });
    const signatures = join(run.workspace, 'dist', 'signatures');
    expect((await readdir(signatures)).sort()).toEqual(['SHA256SUMS.p7s', 'app.tgz.p7s']);
    const report = (await readFile(join(run.runnerTemp, 'esign-sign.jsonl'), 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(report.filter((line) => line['output']).map((line) => [line['format'], line['level']])).toEqual([
      ['CAdES', 'B-T'],
      ['CAdES', 'B-T'],
    ]);
    for (const file of ['app.tgz', 'SHA256SUMS'])
      opensslVerifies(join(signatures, `${file}.p7s`), ['-content', join(run.workspace, file), '-out', '/dev/null']);
    // The secrets went in by the environment only, and no step printed one.
    for (const secret of [started.seal.clientSecret, started.seal.pin]) expect(run.log).not.toContain(secret);
  });

  it('passes the format input to esign sign --format: a .p7m per file, or one ASiC-E named by container', async () => {
    const p7m = await runAction(
      { files: 'app.tgz\nSHA256SUMS', level: 'B-B', format: 'p7m', credential: started.seal.pinOnlyCredentialID },
      sealEnv(),
    );
    expect(p7m.code, p7m.log).toBe(0);
    expect(p7m.outputs).toMatchObject({ 'output-dir': 'signatures', count: '2' });
    const signatures = join(p7m.workspace, 'signatures');
    expect((await readdir(signatures)).sort()).toEqual(['SHA256SUMS.p7m', 'app.tgz.p7m']);
    for (const file of ['app.tgz', 'SHA256SUMS']) {
      const content = join(p7m.workspace, `${file}.out`);
      opensslVerifies(join(signatures, `${file}.p7m`), ['-out', content]);
      expect((await readFile(content)).equals(await readFile(join(p7m.workspace, file)))).toBe(true);
    }

    const asice = await runAction(
      {
        files: 'app.tgz\nSHA256SUMS',
        level: 'B-B',
        format: 'asice',
        'asic-signature': 'cades',
        container: 'release.asice',
        credential: started.seal.pinOnlyCredentialID,
      },
      sealEnv(),
    );
    expect(asice.code, asice.log).toBe(0);
    expect(asice.outputs).toMatchObject({ 'output-dir': 'signatures', count: '1' });
    const bundle = join(asice.workspace, 'signatures', 'release.asice');
    expect(spawnSync('zipinfo', ['-1', bundle], { encoding: 'utf8' }).stdout.trim().split('\n')).toEqual([
      'mimetype',
      'app.tgz',
      'SHA256SUMS',
      'META-INF/ASiCManifest.xml',
      'META-INF/signature001.p7s',
    ]);
    const entry = async (name: string) => {
      const path = join(asice.workspace, name.replace('/', '-'));
      await writeFile(path, spawnSync('unzip', ['-p', bundle, name]).stdout);
      return path;
    };
    const manifest = await entry('META-INF/ASiCManifest.xml');
    opensslVerifies(await entry('META-INF/signature001.p7s'), ['-content', manifest, '-out', '/dev/null']);
  });

  it('verifies a folder of signed artifacts (verify, trust): each checked, no secret needed; a changed artifact fails the step (exit 9)', async () => {
    const signed = await runAction(
      { files: 'app.tgz\nSHA256SUMS', level: 'B-T', 'output-dir': '.', credential: started.seal.pinOnlyCredentialID },
      sealEnv(),
    );
    expect(signed.code, signed.log).toBe(0);
    const artifacts = signed.workspace;
    const verified = await runAction({ verify: `${artifacts}\n`, trust: started.rootPem }, {});
    expect(verified.code, verified.log).toBe(0);
    expect(verified.outputs).toMatchObject({ verified: '2', count: '' });
    const report = (await readFile(verified.outputs['report']!, 'utf8')).trim().split('\n');
    expect(JSON.parse(report.at(-1)!)).toMatchObject({ summary: { files: 2, outcomes: { valid: 2 }, exitCode: 0 } });
    await writeFile(join(artifacts, 'app.tgz'), 'a changed release tarball\n');
    const changed = await runAction({ verify: artifacts, trust: started.rootPem }, {});
    expect([changed.code, changed.failedStep]).toEqual([9, 'Verify']);
    expect(changed.log).toMatch(/::error::esign action: not every file checks out \(exit 9\)/);
    const untrusting = await runAction({ verify: artifacts }, {});
    expect([untrusting.code, untrusting.failedStep]).toEqual([2, 'Verify']);
  });

  it('stops at a corrupted download before anything is unpacked or run', async () => {
    const corrupted = join(root.dir, 'corrupted');
    await mkdir(corrupted);
    const bytes = await readFile(join(release, ARCHIVE));
    await writeFile(join(corrupted, 'SHA256SUMS'), await readFile(join(release, 'SHA256SUMS')));
    bytes.writeUInt8(bytes.readUInt8(bytes.length >> 1) ^ 0xff, bytes.length >> 1);
    await writeFile(join(corrupted, ARCHIVE), bytes);
    const run = await runAction({ files: 'app.tgz' }, sealEnv(), { downloadFrom: corrupted });
    expect(run.failedStep).toBe('Install esign');
    expect(run.code).not.toBe(0);
    expect(run.log).toMatch(new RegExp(`${ARCHIVE}: FAILED`));
    expect((await readdir(join(run.runnerTemp, 'esign-0.1.0'))).sort()).toEqual(['SHA256SUMS', ARCHIVE]);
    expect(existsSync(join(run.workspace, 'signatures'))).toBe(false);
  });

  it('checks a pinned sha256 input instead of the release SHA256SUMS', async () => {
    const run = await runAction({ files: 'app.tgz', sha256: '0'.repeat(64) }, sealEnv());
    expect(run.failedStep).toBe('Install esign');
    expect(run.log).toMatch(new RegExp(`${ARCHIVE}: FAILED`));
  });

  it('without the secrets it needs: exit 3 naming every missing variable, before the download', async () => {
    const { ESIGN_CLIENT_SECRET: _secret, ESIGN_SIGNING_URL: _url, ...rest } = sealEnv();
    const run = await runAction({ files: 'app.tgz' }, rest);
    expect(run.failedStep).toBe('Check the configuration');
    expect(run.code).toBe(3);
    expect(run.log).toContain(
      "esign action: set ESIGN_SIGNING_URL, ESIGN_CLIENT_SECRET in the step's env (docs/ci.md)",
    );
    expect(await readdir(run.runnerTemp)).toEqual([]);

    const browser = await runAction(
      { files: 'app.tgz', level: 'B-B' },
      { ESIGN_SIGNING_URL: started.urls['signing']! },
    );
    expect(browser.code).toBe(3);
    expect(browser.log).toContain('ESIGN_SERVICE_AUTH (client-credentials or basic: a runner has no browser)');
  });

  it("without the seal's PIN: esign's own exit 4 naming ESIGN_CREDENTIAL_PIN, and no signature", async () => {
    const { ESIGN_CREDENTIAL_PIN: _pin, ...rest } = sealEnv();
    const run = await runAction({ files: 'app.tgz', credential: started.seal.pinOnlyCredentialID }, rest);
    expect(run.failedStep).toBe('Sign');
    expect(run.code).toBe(4);
    expect(run.log).toContain('ESIGN_CREDENTIAL_PIN');
    expect(existsSync(join(run.workspace, 'signatures', 'app.tgz.p7s'))).toBe(false);
  });
});
