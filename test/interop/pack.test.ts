/**
 * The release artifact as a user installs it: `npm pack` of the project, installed globally into a
 * temporary prefix from the tarball (its dependencies from the npm registry, no dev dependencies),
 * then run from there, outside the repository: --version, a sign on the sandbox and a verify.
 */
import { spawnSync } from 'node:child_process';
import { copyFile, readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDirForFile } from '../helpers/tmp.js';

const ROOT = join(import.meta.dirname, '../..');
const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  files: string[];
  engines: { node: string };
};

let work: { dir: string; remove: () => Promise<void> };
let tarball: string;
let installed: string;
let env: Record<string, string>;

function run(command: string, args: string[], options: { cwd?: string; timeoutMs?: number } = {}) {
  const result = spawnSync(command, args, {
    cwd: options.cwd ?? work.dir,
    env,
    encoding: 'utf8',
    timeout: options.timeoutMs ?? 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr, error: result.error };
}

beforeAll(async () => {
  work = await tempDirForFile('esign-pack-');
  // A user's shell: this machine's environment (its proxy and CA settings reach the registry) without
  // npm's run-script variables, the repository's node_modules/.bin or esign settings, and a home
  // of its own (no user npmrc); npm's download cache is shared, so packages come from it when there.
  const inherited = Object.entries(process.env).filter(([key]) => !/^(npm_|ESIGN_|VITEST)/i.test(key));
  env = {
    ...(Object.fromEntries(inherited) as Record<string, string>),
    PATH: [join(work.dir, 'prefix', 'bin'), dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(':'),
    HOME: join(work.dir, 'home'),
    npm_config_cache: join(process.env['HOME'] ?? work.dir, '.npm'),
    npm_config_update_notifier: 'false',
    ESIGN_CONFIG_DIR: join(work.dir, 'config'),
    CI: 'true',
    NO_COLOR: '1',
  };
  // --ignore-scripts: dist/ is what `npm run test:interop` has just built; a rebuild here would
  // rewrite the bundle under the other interop files running beside this one.
  const packed = run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work.dir], { cwd: ROOT });
  expect(packed.code, packed.stderr).toBe(0);
  tarball = join(work.dir, (JSON.parse(packed.stdout) as Array<{ filename: string }>)[0]!.filename);
  const install = run(
    'npm',
    [
      'install',
      '--global',
      '--prefix',
      join(work.dir, 'prefix'),
      '--omit=dev',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      tarball,
    ],
    { timeoutMs: 300_000 },
  );
  expect(install.code, install.stderr).toBe(0);
  expect(install.stderr, 'npm install of the tarball prints no warnings').not.toMatch(/warn/i);
  installed = join(work.dir, 'prefix', 'lib', 'node_modules', 'esign');
}, 360_000);
afterAll(() => work?.remove());

describe('the packed tarball, installed globally', () => {
  it('holds the launcher, the bundle, its source map, the fontkit bundle, the appearance font with its licence and the samples, and nothing from the sources or tests', async () => {
    const listed = run('tar', ['-tzf', tarball]).stdout.split('\n').filter(Boolean).sort();
    expect(listed).toEqual(
      [
        'CHANGELOG.md',
        'README.md',
        'bin/esign.cjs',
        'dist/cli/esign.cjs',
        'dist/cli/esign.cjs.map',
        'dist/cli/fontkit.cjs',
        'dist/cli/launch.cjs',
        'dist/fonts/NotoSans-OFL.txt',
        'dist/fonts/NotoSans-Regular.ttf',
        'package.json',
        'samples/contract.pdf',
        'samples/facturae-invoice.xml',
        'samples/release-notes.txt',
      ].map((path) => `package/${path}`),
    );
    expect(pkg.engines.node).toBe('^20.19.0 || >=22.12.0');
    expect(await readdir(join(installed, 'node_modules'))).not.toContain('vitest');
  });

  it('answers --version with the version and the build', () => {
    const result = run('esign', ['--version']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toMatch(
      new RegExp(
        `^${pkg.version.replace(/\./g, '\\.')} \\(build ([0-9a-f]{10}(-dirty)?, \\d{4}-\\d{2}-\\d{2}|unknown)\\)$`,
      ),
    );
  });

  it('signs the sample contract on the sandbox with a visible signature in Greek and verifies the result', async () => {
    await copyFile(join(installed, 'samples', 'contract.pdf'), join(work.dir, 'contract.pdf'));
    // --visible with a Greek name: the bundled font is found in the installed package (no devDependencies there).
    const signed = run('esign', ['sign', 'contract.pdf', '--auto-approve', '--visible', '--name', 'Ζωή Παπαδοπούλου'], {
      timeoutMs: 120_000,
    });
    expect(signed.code, signed.stderr).toBe(0);
    expect(signed.stderr).toContain('TEST signatures');
    // The embedded sandbox that signed it has stopped; `verify` starts it again on the port its
    // certificates name, so its OCSP responder answers: the quick start's verify passes (exit 0)…
    const verified = run('esign', ['verify', 'contract-signed.pdf']);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(/all signatures valid and trusted/);
    expect(verified.stdout).toMatch(/— good \(fetched-ocsp http:\/\/127\.0\.0\.1:\d+\/pki\/ocsp\)/);
    expect(verified.stderr).toContain('TEST signatures');
    // …and its answers are cached: --offline establishes the status from them.
    const offline = run('esign', ['verify', '--offline', 'contract-signed.pdf']);
    expect(offline.code, offline.stdout + offline.stderr).toBe(0);
    expect(offline.stdout).toMatch(/— good \(fetched-ocsp http:\/\/127\.0\.0\.1:\d+\/pki\/ocsp, cached: fetched /);
  });
});
