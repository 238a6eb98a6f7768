/**
 * Behind a real HTTP proxy (Debian's tinyproxy, with Basic auth): the sandbox over HTTPS under a
 * service name that only the proxy resolves (tinyproxy runs in a mount namespace of its own with
 * an /etc/hosts naming it), so a call that went round the proxy would fail. The proxy's log names
 * every tunnel; pdfsig and openssl judge what was signed through it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { lookup } from 'node:dns/promises';
import { writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nssDbTrusting, opensslVerifiesCms, pdfsig, runTool } from '../helpers/pdf-judges.js';
import { pdfLibPdf } from '../helpers/pdf-fixtures.js';
import { runCli } from '../helpers/run-cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDirForFile } from '../helpers/tmp.js';

const NAME = 'sandbox.esign.test';
const USER = 'corp-user';
const PASSWORD = 'proxy-pass-41k';
const has = (tool: string) => spawnSync('which', [tool]).status === 0;
const missing = ['tinyproxy', 'unshare', 'pdfsig', 'openssl', 'certutil'].filter((tool) => !has(tool));
if (missing.length > 0)
  console.warn(`interop proxy tests skipped: missing ${missing.join(', ')} (.ci/run installs them)`);

let sandbox: TestSandbox;
let work: { dir: string; remove: () => Promise<void> };
let tinyproxy: ChildProcess | undefined;
let proxyLog = '';
let proxyUrl = '';
let env: Record<string, string | undefined>;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** tinyproxy in the foreground, in a user and mount namespace whose /etc/hosts alone names the sandbox. */
async function startTinyproxy(dir: string): Promise<void> {
  const port = await freePort();
  const config = join(dir, 'tinyproxy.conf');
  const hosts = join(dir, 'hosts');
  await writeFile(
    config,
    [
      `Port ${port}`,
      'Listen 127.0.0.1',
      'Timeout 60',
      'LogLevel Connect',
      'MaxClients 50',
      `BasicAuth ${USER} ${PASSWORD}`,
      '',
    ].join('\n'),
  );
  await writeFile(hosts, `127.0.0.1 localhost\n127.0.0.1 ${NAME}\n`);
  tinyproxy = spawn(
    'unshare',
    [
      '--user',
      '--map-root-user',
      '--mount',
      'sh',
      '-c',
      `mount --bind "${hosts}" /etc/hosts && exec tinyproxy -d -c "${config}"`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  tinyproxy.stdout?.on('data', (chunk: Buffer) => (proxyLog += chunk.toString()));
  tinyproxy.stderr?.on('data', (chunk: Buffer) => (proxyLog += chunk.toString()));
  for (let i = 0; i < 100 && !/Reloading config file finished|listening/i.test(proxyLog); i++)
    await new Promise((resolve) => setTimeout(resolve, 50));
  expect(tinyproxy.exitCode, proxyLog).toBeNull();
  proxyUrl = `http://127.0.0.1:${port}`;
}

beforeAll(async () => {
  if (missing.length > 0) return;
  work = await tempDirForFile('esign-interop-proxy-');
  sandbox = await startTestSandbox({ tls: true, s3: true, hostName: NAME });
  await startTinyproxy(work.dir);
  const withCredentials = proxyUrl.replace('http://', `http://${USER}:${PASSWORD}@`);
  env = {
    ...sandbox.env,
    HTTPS_PROXY: withCredentials,
    HTTP_PROXY: withCredentials,
    NO_PROXY: 'localhost,127.0.0.1',
    https_proxy: undefined,
    http_proxy: undefined,
    no_proxy: undefined,
    ALL_PROXY: undefined,
    all_proxy: undefined,
  };
});
afterAll(async () => {
  tinyproxy?.kill('SIGTERM');
  await sandbox?.close();
  await work?.remove();
});

/** The host:port targets of tinyproxy's CONNECT lines so far. */
function tunnels(): string[] {
  return [...proxyLog.matchAll(/CONNECT (\S+) HTTP\/1\.1/g)].map((match) => match[1] ?? '');
}

describe.skipIf(missing.length > 0)('through tinyproxy to a name only the proxy resolves', () => {
  it('the name does not resolve here, so no call can go round the proxy', async () => {
    await expect(lookup(NAME)).rejects.toThrow();
  });

  it('signs a PDF and a .p7s at B-T, lists credentials, logs in, uploads and verifies B-LT, each run tunnelled with the proxy credentials', async () => {
    const base = new URL(sandbox.sandbox.urls.base).host;
    const s3 = new URL(sandbox.sandbox.urls.s3 ?? '').host;
    const runs: Array<[string, string[]]> = [];
    const pdf = await pdfLibPdf(work.dir);
    const signedPdf = join(work.dir, 'signed.pdf');
    const text = join(work.dir, 'notes.txt');
    await writeFile(text, 'signed through a proxy\n');
    const ltPdf = join(work.dir, 'signed-lt.pdf');
    runs.push(['sign PDF B-T', ['--auto-approve', 'sign', '--level', 'B-T', '-o', signedPdf, pdf]]);
    runs.push(['sign .p7s B-T', ['--auto-approve', 'sign', '--level', 'B-T', text]]);
    runs.push(['credentials list', ['--auto-approve', 'credentials', 'list']]);
    runs.push(['login', ['--auto-approve', 'login', '--scope', 'com.vendor.storage']]);
    runs.push(['upload', ['upload', text]]);
    runs.push(['sign B-LT', ['--auto-approve', 'sign', '--level', 'B-LT', '-o', ltPdf, pdf]]);
    runs.push(['verify B-LT', ['verify', '--level', 'B-LT', ltPdf]]);
    for (const [name, args] of runs) {
      const before = tunnels().length;
      const result = await runCli(args, { env });
      expect(result.code, `${name}: ${result.stderr}`).toBe(0);
      expect(result.stdout + result.stderr).not.toContain(PASSWORD);
      const opened = tunnels().slice(before);
      // verify reads the DSS only; every other run talks to the sandbox, and only through the proxy.
      if (name !== 'verify B-LT') expect(opened, `${name}: tinyproxy log\n${proxyLog}`).toContain(base);
      if (name === 'upload') expect(opened).toContain(s3);
    }
    expect(proxyLog).not.toMatch(/Could not retrieve address info/);
    const nss = await nssDbTrusting(work.dir, sandbox.rootPemPath);
    for (const path of [signedPdf, ltPdf]) {
      // pdfsig judges the signature; its certificate check would need the name that only the proxy
      // resolves (the sandbox PKI's URLs), so the chain to the root is judged by openssl instead.
      const report = await pdfsig(path, nss, ['-no-ocsp']);
      expect(report.signatures.length, report.raw).toBe(1);
      for (const signature of report.signatures) expect(signature, report.raw).toMatchObject({ valid: true });
      await opensslVerifiesCms(path, sandbox.rootPemPath);
    }
    const cms = await runTool('openssl', [
      'cms',
      '-verify',
      '-binary',
      '-content',
      text,
      '-inform',
      'DER',
      '-in',
      `${text}.p7s`,
      '-CAfile',
      sandbox.rootPemPath,
      '-purpose',
      'any',
      '-out',
      '/dev/null',
    ]);
    expect(cms.status, cms.stderr).toBe(0);
  });

  it('without the proxy credentials tinyproxy answers 407: one line naming the proxy, exit 5', async () => {
    // On the env profile (a timestamp), so that no embedded sandbox stands in for the unreachable one.
    const text = join(work.dir, 'no-credentials.txt');
    await writeFile(text, 'no proxy credentials\n');
    const tsa = {
      ESIGN_TSA_URL: sandbox.sandbox.urls.tsaEndpoint,
      ESIGN_TSA_USERNAME: 'esign',
      ESIGN_TSA_PASSWORD: sandbox.sandbox.secrets.tsaPassword,
      ESIGN_CA_FILE: sandbox.rootPemPath,
      ESIGN_TRUST_ANCHORS: sandbox.rootPemPath,
    };
    const result = await runCli(['timestamp', text], {
      env: { ...env, ...tsa, HTTPS_PROXY: proxyUrl, HTTP_PROXY: proxyUrl },
    });
    expect(result.code, result.stderr).toBe(5);
    expect(result.stderr.trim().split('\n').at(-1)).toMatch(
      new RegExp(`The proxy at ${proxyUrl.replace(/[.:/]/g, '\\$&')} asks for credentials \\(HTTP 407\\)`),
    );
  });
});
