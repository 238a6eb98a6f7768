/**
 * Timestamping over real HTTP against the in-process sandbox: the TSA's HTTP and body rules, the
 * client's checks, retries and URL fallback, serial numbers across restarts, and `esign timestamp`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  explicit,
  objectIdentifier,
  octetString,
  sequence,
  smallInteger,
  unsignedInteger,
} from '../../src/core/cms/der.js';
import { OID } from '../../src/core/cms/oids.js';
import { isEsignError } from '../../src/core/errors.js';
import { buildTimeStampReq } from '../../src/core/tsp/request.js';
import { parseTimeStampToken, readTimeStampResp } from '../../src/core/tsp/response.js';
import { HttpClient } from '../../src/io/http.js';
import { TsaClient } from '../../src/io/tsa-client.js';
import type { TsaClientOptions } from '../../src/io/tsa-client.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../helpers/run-cli.js';
import { startTestSandbox } from '../helpers/sandbox.js';
import type { TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/tmp.js';

let env: TestSandbox;
let endpoint = '';
let basic = '';

beforeAll(async () => {
  env = await startTestSandbox();
  endpoint = env.sandbox.urls.tsaEndpoint;
  basic = `Basic ${Buffer.from(`${env.sandbox.secrets.tsaUser}:${env.sandbox.secrets.tsaPassword}`).toString('base64')}`;
});
afterAll(() => env?.close());

const sha256 = (data: string | Uint8Array): Uint8Array => new Uint8Array(createHash('sha256').update(data).digest());

function client(overrides: Partial<TsaClientOptions> = {}): { client: TsaClient; sleeps: number[] } {
  const sleeps: number[] = [];
  const tsa = new TsaClient({
    urls: [endpoint],
    username: env.sandbox.secrets.tsaUser,
    password: env.sandbox.secrets.tsaPassword,
    http: new HttpClient({ timeoutMs: 5000 }),
    trustAnchors: async () => [env.sandbox.pki.root.certificate],
    sleep: async (ms) => void sleeps.push(ms),
    ...overrides,
  });
  return { client: tsa, sleeps };
}

async function post(body: Uint8Array | string, headers: Record<string, string>): Promise<Response> {
  return fetch(endpoint, { method: 'POST', headers, body });
}

async function injectTsaFailure(failInfo: string, times = 1): Promise<void> {
  const response = await fetch(`${env.sandbox.urls.tsa}/_faults`, {
    method: 'POST',
    body: JSON.stringify({ failInfo, times }),
  });
  expect(response.status).toBe(200);
}

async function expectCode(promise: Promise<unknown>, code: string): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    expect(isEsignError(error) ? error.code : String(error)).toBe(code);
    return error as Error;
  }
  throw new Error(`expected ${code}, but it succeeded`);
}

describe('sandbox TSA over HTTP', () => {
  const query = (): Uint8Array => buildTimeStampReq({ imprint: sha256('x'), nonce: randomBytes(8) });

  it('answers 401 without or with wrong Basic credentials', async () => {
    expect((await post(query(), { 'content-type': 'application/timestamp-query' })).status).toBe(401);
    const wrong = `Basic ${Buffer.from('esign:nope').toString('base64')}`;
    const response = await post(query(), { 'content-type': 'application/timestamp-query', authorization: wrong });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Basic/);
  });

  it('answers 400 for another Content-Type or an empty body', async () => {
    expect((await post(query(), { 'content-type': 'application/octet-stream', authorization: basic })).status).toBe(
      400,
    );
    expect(
      (await post(new Uint8Array(0), { 'content-type': 'application/timestamp-query', authorization: basic })).status,
    ).toBe(400);
  });

  it('answers 200 application/timestamp-reply with a granted TimeStampResp', async () => {
    const response = await post(query(), { 'content-type': 'application/timestamp-query', authorization: basic });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/timestamp-reply');
    const reply = readTimeStampResp(new Uint8Array(await response.arrayBuffer()));
    expect(reply.status).toBe(0);
    expect(parseTimeStampToken(reply.tokenDer!).tstInfo.tsaName).toMatch(/Time-Stamping Authority/);
  });

  const imprint = sha256('y');
  const nonce = unsignedInteger(randomBytes(8));
  const imprintOf = (oid: string, hash: Uint8Array): Uint8Array =>
    sequence(sequence(objectIdentifier(oid)), octetString(hash));
  it.each([
    ['SHA-1', sequence(smallInteger(1), imprintOf(OID.sha1, new Uint8Array(20)), nonce), 'badAlg'],
    ['MD5', sequence(smallInteger(1), imprintOf(OID.md5, new Uint8Array(16)), nonce), 'badAlg'],
    [
      'an unknown hash algorithm',
      sequence(smallInteger(1), imprintOf('1.3.6.1.4.1.99999.1', imprint), nonce),
      'badAlg',
    ],
    [
      'a short SHA-256 hash',
      sequence(smallInteger(1), imprintOf(OID.sha256, imprint.subarray(0, 20)), nonce),
      'badDataFormat',
    ],
    ['version 2', sequence(smallInteger(2), imprintOf(OID.sha256, imprint), nonce), 'badDataFormat'],
    [
      'another policy',
      sequence(smallInteger(1), imprintOf(OID.sha256, imprint), objectIdentifier('1.2.3.4'), nonce),
      'unacceptedPolicy',
    ],
    [
      'extensions',
      sequence(smallInteger(1), imprintOf(OID.sha256, imprint), nonce, explicit(0, sequence())),
      'unacceptedExtension',
    ],
    ['a body that is not DER', new TextEncoder().encode('not a request'), 'badDataFormat'],
  ])('rejects %s with failInfo %s', async (_label, body, failInfo) => {
    const response = await post(body, { 'content-type': 'application/timestamp-query', authorization: basic });
    expect(response.status).toBe(200);
    const reply = readTimeStampResp(new Uint8Array(await response.arrayBuffer()));
    expect(reply).toMatchObject({ status: 2, failInfo: [failInfo], tokenDer: undefined });
  });
});

describe('TsaClient', () => {
  it('gets a token it has checked, chained to the sandbox root', async () => {
    const imprint = sha256('document');
    const stamp = await client().client.timestamp(imprint);
    expect(stamp.chainChecked).toBe(true);
    expect(Buffer.from(stamp.tstInfo.messageImprint.hashedMessage).equals(Buffer.from(imprint))).toBe(true);
    expect(stamp.tstInfo.policy).toBe('0.4.0.2023.1.1');
    expect(readTimeStampResp(stamp.response).status).toBe(0);
  });

  it('reports wrong credentials as TSA_UNAUTHORIZED without retrying', async () => {
    const { client: tsa, sleeps } = client({ password: 'wrong' });
    await expectCode(tsa.timestamp(sha256('a')), 'TSA_UNAUTHORIZED');
    expect(sleeps).toEqual([]);
  });

  it('refuses a token from a TSA that does not chain to the trust anchors', async () => {
    const { client: tsa } = client({ trustAnchors: async () => [env.sandbox.pki.issuingCa.certificate] });
    await expectCode(tsa.timestamp(sha256('a')), 'TSA_CERT_UNTRUSTED');
  });

  it('retries timeNotAvailable with backoff and succeeds on the third try', async () => {
    await injectTsaFailure('timeNotAvailable', 2);
    const { client: tsa, sleeps } = client();
    await tsa.timestamp(sha256('retry'));
    expect(sleeps).toHaveLength(2);
    expect(sleeps[1]).toBeGreaterThan(sleeps[0]!);
  });

  it('gives up after three tries with a clear message', async () => {
    await injectTsaFailure('timeNotAvailable', 3);
    const { client: tsa } = client();
    const error = await expectCode(tsa.timestamp(sha256('give up')), 'TSA_REJECTED');
    expect(error.message).toMatch(
      /trusted time source temporarily unavailable.*\(timeNotAvailable\).*gave up after 3 tries/,
    );
  });

  it('retries HTTP 502 from the host, and reports HTTP 500 at once (DESIGN §4: 429/502/503 only)', async () => {
    env.sandbox.faults.inject({ route: 'tsa POST /tss03', fault: { kind: 'status', status: 502 }, times: 1 });
    const { client: tsa, sleeps } = client();
    await tsa.timestamp(sha256('502'));
    expect(sleeps).toHaveLength(1);

    env.sandbox.faults.inject({ route: 'tsa POST /tss03', fault: { kind: 'status', status: 500 }, times: 1 });
    const { client: once, sleeps: none } = client();
    const error = await expectCode(once.timestamp(sha256('500')), 'TSA_HTTP_ERROR');
    expect(error.message).toMatch(/internal error \(HTTP 500\)/);
    expect(none).toEqual([]);
  });

  it('moves to the next URL after connection failures and after systemFailure', async () => {
    const dead = 'http://127.0.0.1:9/tsa/tss03';
    const { client: tsa, sleeps } = client({ urls: [dead, endpoint] });
    expect((await tsa.timestamp(sha256('fallback'))).url).toBe(endpoint);
    expect(sleeps).toHaveLength(2);

    await injectTsaFailure('systemFailure');
    const { client: twice, sleeps: noSleeps } = client({ urls: [endpoint, endpoint] });
    await twice.timestamp(sha256('system failure'));
    expect(noSleeps).toEqual([]);
  });

  it('reports systemFailure of the only URL as TSA_REJECTED in plain words', async () => {
    await injectTsaFailure('systemFailure');
    const error = await expectCode(client().client.timestamp(sha256('x')), 'TSA_REJECTED');
    expect(error.message).toMatch(/unexpected internal error at the timestamp authority \(systemFailure\)/);
  });
});

describe('serial numbers', () => {
  it('stay unique across sandbox restarts', async () => {
    const dataDir = await tempDir('esign-tsa-restart-');
    const serials: bigint[] = [];
    for (let run = 0; run < 2; run++) {
      const sandbox = await startSandbox({ dataDir, s3: false });
      try {
        const tsa = new TsaClient({
          urls: [sandbox.urls.tsaEndpoint],
          username: sandbox.secrets.tsaUser,
          password: sandbox.secrets.tsaPassword,
          http: new HttpClient(),
        });
        for (let i = 0; i < 2; i++)
          serials.push(BigInt(`0x${(await tsa.timestamp(sha256(`r${run}${i}`))).serialNumber}`));
      } finally {
        await sandbox.close();
      }
    }
    expect(new Set(serials).size).toBe(4);
    expect(serials[2]! > serials[1]!).toBe(true);
  });
});

describe('esign timestamp', () => {
  it('writes FILE.tsr and verifies it; --json for both', async () => {
    const dir = await tempDir();
    const file = join(dir, 'report.csv');
    await writeFile(file, 'a,b\n1,2\n');
    const stamped = await runCli(['--json', 'timestamp', file], { env: env.env });
    expect(stamped.code, stamped.stderr).toBe(0);
    const result = stamped.json<{
      output: string;
      sha256: string;
      genTime: string;
      serialNumber: string;
      chainChecked: boolean;
    }>();
    expect(result.output).toBe(`${file}.tsr`);
    expect(result.sha256).toBe(Buffer.from(sha256('a,b\n1,2\n')).toString('hex'));
    expect(result.chainChecked).toBe(true);
    expect(readTimeStampResp(new Uint8Array(await readFile(`${file}.tsr`))).status).toBe(0);

    const verified = await runCli(['--json', 'timestamp', '--verify', file], { env: env.env });
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.json()).toMatchObject({
      valid: true,
      serialNumber: result.serialNumber,
      genTime: result.genTime,
      chain: 'trusted',
    });

    const again = await runCli(['timestamp', file], { env: env.env });
    expect(again.code).toBe(8);
    expect(again.stderr).toMatch(/already exists/);
  });

  it('fails --verify with exit 9 when the file changed', async () => {
    const dir = await tempDir();
    const file = join(dir, 'data.bin');
    await writeFile(file, randomBytes(1000));
    expect((await runCli(['timestamp', file], { env: env.env })).code).toBe(0);
    await writeFile(file, randomBytes(1000));
    const verified = await runCli(['--json', 'timestamp', '--verify', file], { env: env.env });
    expect(verified.code).toBe(9);
    expect(verified.stderr).toMatch(/does not match its message imprint/);
  });

  it('stamps and checks a given digest', async () => {
    const dir = await tempDir();
    const hex = Buffer.from(sha256('by digest')).toString('hex');
    const output = join(dir, 'digest.tsr');
    const stamped = await runCli(['timestamp', '--digest', hex, '-o', output], { env: env.env });
    expect(stamped.code, stamped.stderr).toBe(0);
    expect(stamped.stdout).toMatch(/digest\.tsr/);
    const verified = await runCli(['timestamp', '--verify', '--digest', hex, output, '--ca', env.rootPemPath], {
      env: env.env,
    });
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(/valid timestamp/);
    const bad = await runCli(['timestamp', '--digest', 'abc'], { env: env.env });
    expect(bad.code).toBe(2);
  });

  it('names a missing input (exit 7)', async () => {
    const result = await runCli(['timestamp', '/nonexistent/file.txt'], { env: env.env });
    expect(result.code).toBe(7);
    expect(result.stderr).toMatch(/does not exist/);
  });
});
