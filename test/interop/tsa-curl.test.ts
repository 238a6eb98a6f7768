/**
 * The sandbox TSA spoken to only by tools we did not write: `openssl ts -query` makes the request,
 * curl sends it, `openssl ts -verify` and `-reply -text` judge the answer.
 */
import { execFile, spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDirForFile } from '../helpers/tmp.js';

const missing = ['openssl', 'curl'].filter((tool) => spawnSync('which', [tool]).status !== 0);

/** Async on purpose: the sandbox answering these tools runs in this process. */
function run(tool: string, args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(tool, args, { encoding: 'utf8', timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ status: error ? Number((error as { code?: unknown }).code ?? -1) : 0, stdout, stderr });
    });
  });
}

let sandbox: TestSandbox;
let work: { dir: string; remove: () => Promise<void> };
beforeAll(async () => {
  if (missing.length > 0) return;
  sandbox = await startTestSandbox({ autoApprove: true });
  work = await tempDirForFile('esign-tsa-curl-');
});
afterAll(async () => {
  await sandbox?.close();
  await work?.remove();
});

describe.skipIf(missing.length > 0)('sandbox TSA with openssl ts and curl', () => {
  it('answers an openssl ts -query sent by curl with a reply openssl ts -verify accepts', async () => {
    const data = join(work.dir, 'data.txt');
    const query = join(work.dir, 'request.tsq');
    const reply = join(work.dir, 'reply.tsr');
    await writeFile(data, 'timestamp me\n');
    expect((await run('openssl', ['ts', '-query', '-data', data, '-sha256', '-cert', '-out', query])).status).toBe(0);
    const running = sandbox.sandbox;
    const secrets = running.secrets;
    const sent = await run('curl', [
      '-sS',
      '--fail',
      '-u',
      `${secrets.tsaUser}:${secrets.tsaPassword}`,
      '-H',
      'Content-Type: application/timestamp-query',
      '--data-binary',
      `@${query}`,
      '-o',
      reply,
      running.urls.tsaEndpoint,
    ]);
    expect(sent.status, sent.stderr).toBe(0);
    const verified = await run('openssl', [
      'ts',
      '-verify',
      '-data',
      data,
      '-in',
      reply,
      '-CAfile',
      sandbox.rootPemPath,
    ]);
    expect(verified.stdout + verified.stderr).toContain('Verification: OK');
    const text = await run('openssl', ['ts', '-reply', '-in', reply, '-text']);
    expect(text.stdout).toContain('Status: Granted.');
    expect(text.stdout).toContain('Policy OID: 0.4.0.2023.1.1');
    expect(text.stdout).toMatch(/Nonce: 0x[0-9A-F]+/);
  });

  it('answers 401 without credentials and 400 with the wrong content type, as curl sees them', async () => {
    const query = join(work.dir, 'request2.tsq');
    const data = join(work.dir, 'data2.txt');
    await writeFile(data, 'x');
    await run('openssl', ['ts', '-query', '-data', data, '-sha256', '-out', query]);
    const url = sandbox.sandbox.urls.tsaEndpoint;
    const { tsaUser, tsaPassword } = sandbox.sandbox.secrets;
    const anonymous = await run('curl', [
      '-s',
      '-o',
      '/dev/null',
      '-w',
      '%{http_code}',
      '-H',
      'Content-Type: application/timestamp-query',
      '--data-binary',
      `@${query}`,
      url,
    ]);
    expect(anonymous.stdout).toBe('401');
    const wrongType = await run('curl', [
      '-s',
      '-o',
      '/dev/null',
      '-w',
      '%{http_code}',
      '-u',
      `${tsaUser}:${tsaPassword}`,
      '-H',
      'Content-Type: application/octet-stream',
      '--data-binary',
      `@${query}`,
      url,
    ]);
    expect(wrongType.stdout).toBe('400');
  });

  it('rejects what the interface forbids with the failInfo bit openssl ts -reply -text names', async () => {
    const data = join(work.dir, 'data3.txt');
    await writeFile(data, 'reject me\n');
    const { tsaUser, tsaPassword } = sandbox.sandbox.secrets;
    const url = sandbox.sandbox.urls.tsaEndpoint;
    const replyText = async (name: string, queryArgs: string[]): Promise<string> => {
      const query = join(work.dir, `${name}.tsq`);
      const reply = join(work.dir, `${name}.tsr`);
      expect((await run('openssl', ['ts', '-query', '-data', data, ...queryArgs, '-out', query])).status).toBe(0);
      const sent = await run('curl', [
        '-sS',
        '--fail',
        '-u',
        `${tsaUser}:${tsaPassword}`,
        '-H',
        'Content-Type: application/timestamp-query',
        '--data-binary',
        `@${query}`,
        '-o',
        reply,
        url,
      ]);
      expect(sent.status, sent.stderr).toBe(0);
      return (await run('openssl', ['ts', '-reply', '-in', reply, '-text'])).stdout;
    };
    const inject = (failInfo: string) =>
      fetch(`${sandbox.sandbox.urls.tsa}/_faults`, { method: 'POST', body: JSON.stringify({ failInfo }) });
    const cases: Array<[string, string[], RegExp, (() => Promise<unknown>)?]> = [
      ['sha1', ['-sha1'], /unrecognized or unsupported algorithm/i],
      ['md5', ['-md5'], /unrecognized or unsupported algorithm/i],
      ['policy', ['-sha256', '-tspolicy', '1.2.3.4'], /requested TSA policy is not supported/i],
      ['time', ['-sha256'], /time source is not available/i, () => inject('timeNotAvailable')],
      ['system', ['-sha256'], /system failure/i, () => inject('systemFailure')],
    ];
    for (const [name, args, failure, before] of cases) {
      await before?.();
      const text = await replyText(name, args);
      expect(text, name).toContain('Status: Rejected.');
      expect(text, name).toMatch(failure);
    }
  });
});
