/**
 * `esign verify`'s own fetches (issue 49: OCSP, then the CRL, for a certificate the file carries no
 * revocation data for) go through HTTPS_PROXY and honour NO_PROXY like every other call; with
 * --offline nothing is fetched at all. The sandbox runs over TLS under a name only the proxy
 * resolves, so a fetch that went round the proxy could not reach it.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROXY_VARIABLES, startTestProxy, type TestProxy } from '../helpers/connect-proxy.js';
import { pdfLibPdf } from '../helpers/pdf-fixtures.js';
import { runCli } from '../helpers/run-cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDirForFile } from '../helpers/tmp.js';

const NAME = 'verify-sandbox.esign.test';

let work: { dir: string; remove: () => Promise<void> };
let t: TestSandbox;
let proxy: TestProxy;
/** A B-T PDF and a B-T .p7s: no revocation data in them, so verify fetches it. */
let signedPdf: string;
let signedP7s: string;

const env = (more: Record<string, string> = {}) => ({ ...t.env, ...PROXY_VARIABLES, HTTPS_PROXY: proxy.url, ...more });

beforeAll(async () => {
  work = await tempDirForFile('esign-verify-proxy-');
  t = await startTestSandbox({ tls: true, hostName: NAME, autoApprove: true });
  proxy = await startTestProxy({ names: [NAME] });
  const pdf = await runCli(
    ['--auto-approve', '--json', 'sign', '--level', 'B-T', await pdfLibPdf(work.dir), '-o', join(work.dir, 's.pdf')],
    { env: env() },
  );
  expect(pdf.code, pdf.stderr).toBe(0);
  signedPdf = pdf.json<{ output: string }>().output;
  const text = join(work.dir, 'notes.txt');
  await writeFile(text, 'release notes\n');
  const p7s = await runCli(['--auto-approve', '--json', 'sign', '--level', 'B-T', text], { env: env() });
  expect(p7s.code, p7s.stderr).toBe(0);
  signedP7s = p7s.json<{ output: string }>().output;
}, 120_000);

afterAll(async () => {
  await proxy?.close();
  await t?.close();
  await work?.remove();
});

/** A revocation and trusted-list cache of its own for one verify run: answers cached by another run are not fetched again. */
let caches = 0;
const freshCache = () => join(work.dir, `cache-${++caches}`);

/** The hosts the proxy was asked to tunnel to since the last call. */
function tunnelled(): string[] {
  const targets = proxy.connects.map((connect) => connect.target);
  proxy.connects.length = 0;
  return targets;
}

describe('esign verify fetches revocation data through the proxy', () => {
  /**
   * Verify with the sandbox root as the anchor, so no trusted list is fetched: only revocation data is.
   */
  const verify = (args: string[], more: Record<string, string> = {}) =>
    runCli(['--json', '--verbose', 'verify', '--trust', t.rootPemPath, ...args], {
      env: { ...env(more), ESIGN_CACHE_DIR: freshCache() },
    });
  /** The calls --verbose logs, as `METHOD URL via PROXY`. */
  const calls = (stderr: string) => stderr.split('\n').filter((line) => /^· (GET|POST) /.test(line));

  it('the OCSP (or CRL) fetches for a B-T PDF and a .p7s are tunnelled by HTTPS_PROXY and seen there; the status established', async () => {
    const sandboxHost = new URL(t.sandbox.urls.base).host;
    expect(sandboxHost).toMatch(new RegExp(`^${NAME.replace(/\./g, '\\.')}:\\d+$`));
    for (const args of [[signedPdf], [signedP7s.replace(/\.p7s$/, ''), '--signature', signedP7s]]) {
      tunnelled();
      const result = await verify(args);
      expect(result.code, result.stdout + result.stderr).toBe(0);
      expect(result.json<{ valid: boolean }>().valid).toBe(true);
      // Each a revocation fetch, each through the proxy, and the proxy saw them all (to the sandbox's name).
      const fetches = calls(result.stderr);
      expect(fetches.length, result.stderr).toBeGreaterThan(0);
      // The transport logs each request with its proxy (`via …`); every URL fetched was one of those.
      const url = (line: string) => line.split(' ')[2];
      const proxied = new Set(fetches.filter((line) => line.includes(` via ${proxy.url} `)).map(url));
      for (const line of fetches) {
        expect(line).toMatch(/\/(ocsp|crl)|\.crl/i);
        expect(proxied, fetches.join('\n')).toContain(url(line));
      }
      const targets = tunnelled();
      expect(targets.length).toBeGreaterThan(0);
      expect(new Set(targets)).toEqual(new Set([sandboxHost]));
    }
  });

  it('NO_PROXY naming its parent domain: the fetch goes direct (the proxy sees nothing), the name does not resolve, the status is not established', async () => {
    tunnelled();
    const result = await verify([signedPdf], { NO_PROXY: 'esign.test' });
    expect(tunnelled()).toEqual([]);
    expect(result.code).toBe(9);
    expect(result.json()).toMatchObject({ valid: false, code: 'VERIFY_REVOCATION_UNKNOWN' });
    expect(JSON.stringify(result.json())).toContain(NAME);
  });

  it('--offline: nothing is fetched and the proxy sees nothing; the status stays unknown (soft-fail passes it)', async () => {
    tunnelled();
    const result = await verify(['--offline', signedPdf]);
    expect(calls(result.stderr)).toEqual([]);
    expect(tunnelled()).toEqual([]);
    expect(result.code).toBe(9);
    expect(result.json()).toMatchObject({ valid: false, code: 'VERIFY_REVOCATION_UNKNOWN' });
    const soft = await verify(['--offline', '--revocation', 'soft-fail', signedPdf]);
    expect(calls(soft.stderr)).toEqual([]);
    expect(tunnelled()).toEqual([]);
    expect(soft.code, soft.stdout).toBe(0);
  });

  it('--offline without --trust fetches not even the sandbox profile its TEST trusted lists (the profile only finds its running sandbox)', async () => {
    const result = await runCli(['--json', '--verbose', 'verify', '--offline', signedPdf], {
      env: { ...env(), ESIGN_CACHE_DIR: freshCache() },
    });
    expect(calls(result.stderr), result.stderr).toEqual([]);
    expect(result.code).toBe(9);
  });
});
