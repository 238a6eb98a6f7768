/**
 * Storage (seed 002 part A) end to end over real HTTP: the sandbox's `POST /v1/credentials` with a
 * token from the real `esign login --scope com.vendor.storage`, the S3 gateway in front of s3rver,
 * and the built CLI (`esign upload`, `esign sign --upload`, `esign storage ls|get|rm`) as a user runs
 * it. Round trips for a small and a 200 MB file (peak RSS of the CLI measured), renewal of
 * credentials during a multipart upload, and the refusals the seed implies.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  DeleteBucketCommand,
  GetObjectAclCommand,
  GetObjectCommand,
  ListBucketsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bucketNameFor } from '../../src/sandbox/storage/credentials.js';
import { storageControl } from '../../src/sandbox/storage/routes.js';
import { pdfLibBytes } from '../helpers/pdf-fixtures.js';
import { ESIGN_BIN, runCli, spawnCli, TESTING_EXECUTABLE, type CliResult } from '../helpers/run-cli.js';
import { SANDBOX_SEAL } from '../../src/sandbox/deps.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir, tempDirForFile } from '../helpers/tmp.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';

let t: TestSandbox;
let accessToken: string;
let work: { dir: string; remove: () => Promise<void> };

interface Grant {
  bucket: string;
  endpoint: string;
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken: string; expiration: string };
}

const cli = (args: string[], env: Record<string, string> = {}) =>
  runCli(args, { env: { ...t.env, ...env }, cwd: work.dir, timeoutMs: 240_000 });
const credentialCalls = () => t.sandbox.requestLog.filter((id) => id === 'storage POST /v1/credentials').length;
/** S3 request ids in the sandbox's request log (see src/sandbox/storage/s3.ts). */
const S3_CREATE_MULTIPART = 's3 POST /{bucket}/{key}?uploads';
const s3Part = (part: number) => `s3 PUT /{bucket}/{key}?partNumber=${part}&uploadId`;
const lastLine = (text: string) => text.trim().split('\n').at(-1);
const loggedSince = (start: number, id: string) =>
  t.sandbox.requestLog.slice(start).filter((entry) => entry === id).length;

async function postCredentials(
  token?: string,
): Promise<{ status: number; contentType: string; body: Record<string, unknown> }> {
  const response = await fetch(`${t.sandbox.urls.storage}/v1/credentials`, {
    method: 'POST',
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  return {
    status: response.status,
    contentType: response.headers.get('content-type') ?? '',
    body: (await response.json()) as Record<string, unknown>,
  };
}

async function grant(): Promise<Grant> {
  const answer = await postCredentials(accessToken);
  expect(answer.status).toBe(200);
  return answer.body as unknown as Grant;
}

function s3For(g: Grant, credentials: Partial<S3ClientConfig['credentials']> = {}): S3Client {
  return new S3Client({
    endpoint: g.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    maxAttempts: 1,
    credentials: {
      accessKeyId: g.credentials.accessKeyId,
      secretAccessKey: g.credentials.secretAccessKey,
      sessionToken: g.credentials.sessionToken,
      ...credentials,
    },
  });
}

async function s3ErrorOf(promise: Promise<unknown>): Promise<{ name: string; message: string; status?: number }> {
  try {
    await promise;
  } catch (error) {
    return {
      name: (error as Error).name,
      message: (error as Error).message,
      status: (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode,
    };
  }
  throw new Error('expected the S3 call to fail');
}

async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 4 * 1024 * 1024 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Writes `size` bytes of a repeated random 1 MiB block, returns its SHA-256. */
async function writeBigFile(path: string, size: number): Promise<string> {
  const block = randomBytes(1024 * 1024);
  const hash = createHash('sha256');
  const handle = await open(path, 'w');
  try {
    for (let written = 0; written < size;) {
      const piece = block.subarray(0, Math.min(block.length, size - written));
      await handle.write(piece);
      hash.update(piece);
      written += piece.length;
    }
  } finally {
    await handle.close();
  }
  return hash.digest('hex');
}

const MAX_RSS_PRELOAD = new URL('../helpers/max-rss.js', import.meta.url).href;
let measuredRuns = 0;

/**
 * The built CLI with its peak RSS recorded: its result and that peak in MiB. The npm package runs
 * with a preload that writes it; the single executable (which runs no preload) under GNU time.
 */
function runCliMeasured(args: string[]): Promise<CliResult & { peakRssMiB: number }> {
  const rssFile = join(work.dir, `max-rss-${++measuredRuns}.txt`);
  const env: Record<string, string | undefined> = {
    ...process.env,
    NO_COLOR: '1',
    CI: 'true',
    ...t.env,
    ESIGN_TEST_MAX_RSS_FILE: rssFile,
  };
  const [command, commandArgs] = TESTING_EXECUTABLE
    ? ['/usr/bin/time', ['-f', '%M', '-o', rssFile, ESIGN_BIN, ...args]]
    : [process.execPath, ['--import', MAX_RSS_PRELOAD, ESIGN_BIN, ...args]];
  const child = spawn(command, commandArgs, {
    cwd: work.dir,
    env: env as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      readFile(rssFile, 'utf8').then(
        (kib) =>
          resolve({
            code,
            signal,
            stdout,
            stderr,
            // GNU time puts "Command exited with non-zero status N" before the figure.
            peakRssMiB: Number(kib.trim().split('\n').at(-1)) / 1024,
            json: <T>() => JSON.parse(stdout) as T,
            jsonLines: <T>() =>
              stdout
                .split('\n')
                .filter((line) => line.trim())
                .map((line) => JSON.parse(line) as T),
          }),
        reject,
      );
    });
  });
}

/** SHA-256 of an object, read with the SDK (not through esign). */
async function storedSha256(g: Grant, key: string): Promise<string> {
  const answer = await s3For(g).send(new GetObjectCommand({ Bucket: g.bucket, Key: key }));
  return createHash('sha256')
    .update(await answer.Body!.transformToByteArray())
    .digest('hex');
}

function expectNoSecrets(result: CliResult, ...secrets: string[]): void {
  for (const secret of [accessToken, ...secrets]) {
    expect(result.stdout).not.toContain(secret);
    expect(result.stderr).not.toContain(secret);
  }
}

beforeAll(async () => {
  t = await startTestSandbox({ s3: true, autoApprove: true });
  work = await tempDirForFile('esign-storage-');
  const login = await runCli(['login', '--auto-approve', '--scope', 'com.vendor.storage'], { env: t.env });
  expect(login.code, login.stderr).toBe(0);
  const tokens = JSON.parse(await readFile(join(t.configDir, 'tokens.json'), 'utf8')) as Record<
    string,
    { accessToken: string }
  >;
  accessToken = tokens['sandbox:identity']?.accessToken ?? '';
  expect(accessToken).not.toBe('');
});

afterAll(async () => {
  await t?.close();
  await work?.remove();
});

afterEach(() => {
  const control = storageControl(t.sandbox);
  control.storageUnavailable = false;
  control.issuer.lifetimeSeconds = 3600;
  t.sandbox.clock.reset();
  t.sandbox.faults.clear();
});

describe('sandbox storage authorization: POST /v1/credentials', () => {
  it('creates one bucket per client and user and returns fresh one-hour credentials on each call', async () => {
    const first = await grant();
    const second = await grant();
    expect(first.bucket).toBe(second.bucket);
    expect(first.bucket).toMatch(/^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/);
    expect(first.endpoint).toBe(t.sandbox.urls.s3);
    for (const field of ['accessKeyId', 'secretAccessKey', 'sessionToken'] as const)
      expect(first.credentials[field]).not.toBe(second.credentials[field]);
    const lifetime = Date.parse(second.credentials.expiration) - t.sandbox.clock.now().getTime();
    expect(lifetime).toBeGreaterThan(3590_000);
    expect(lifetime).toBeLessThanOrEqual(3600_000);
    expect(second.credentials.expiration).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    // The bucket exists (listing it works) and is empty for a new pair.
    const listed = await s3For(second).send(new ListObjectsV2Command({ Bucket: second.bucket }));
    expect(listed.$metadata.httpStatusCode).toBe(200);
  });

  it('answers RFC 9457 problems: 401 without or with a bad token, 400 for a missing claim, 502 when a side is down', async () => {
    const shape = {
      type: expect.any(String),
      title: expect.any(String),
      status: expect.any(Number),
      detail: expect.any(String),
      instance: expect.any(String),
    };
    const none = await postCredentials();
    expect(none).toMatchObject({
      status: 401,
      contentType: 'application/problem+json',
      body: { ...shape, status: 401 },
    });
    expect(await postCredentials('not-a-token')).toMatchObject({ status: 401, body: { ...shape, status: 401 } });

    const real = t.sandbox.shared.introspectIdentityToken;
    try {
      t.sandbox.shared.introspectIdentityToken = (token) => {
        const info = real?.(token);
        return info ? { ...info, client_id: undefined } : info;
      };
      const noClient = await postCredentials(accessToken);
      expect(noClient).toMatchObject({ status: 400, body: { ...shape, status: 400 } });
      expect(noClient.body['detail']).toMatch(/client_id/);
      t.sandbox.shared.introspectIdentityToken = (token) =>
        real?.(token) ? { ...real(token)!, active: false } : undefined;
      expect((await postCredentials(accessToken)).status).toBe(401);
      t.sandbox.shared.introspectIdentityToken = undefined;
      const noIdentity = await postCredentials(accessToken);
      expect(noIdentity).toMatchObject({ status: 502, body: { ...shape, status: 502 } });
      expect(noIdentity.body['detail']).toMatch(/identity service unavailable/);
    } finally {
      t.sandbox.shared.introspectIdentityToken = real;
    }
    storageControl(t.sandbox).storageUnavailable = true;
    const down = await postCredentials(accessToken);
    expect(down).toMatchObject({ status: 502, body: { ...shape, status: 502 } });
    expect(down.body['detail']).toMatch(/storage side unavailable/);
  });

  it("answers the seed's 500 and both 502 causes, switched on through the control endpoint, as Problem Details", async () => {
    const arm = async (body: unknown) => {
      const response = await fetch(`${t.sandbox.urls.base}/_sandbox/storage`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return response.status;
    };
    expect(await arm({ fail: 'disk-full' })).toBe(400);
    const instance = expect.stringMatching(new RegExp(`^${t.sandbox.urls.storage}/v1/credentials#[0-9a-f-]{36}$`));
    const cases = [
      [
        'internal-error',
        500,
        'Internal Server Error',
        'An unexpected error occurred while issuing storage credentials.',
      ],
      [
        'identity-unavailable',
        502,
        'Bad Gateway',
        'The identification service is unavailable: identity service unavailable.',
      ],
      ['storage-unavailable', 502, 'Bad Gateway', 'The storage service is unavailable: storage side unavailable.'],
    ] as const;
    for (const [fail, status, title, detail] of cases) {
      expect(await arm({ fail })).toBe(200);
      const answer = await postCredentials(accessToken);
      expect(answer.contentType).toBe('application/problem+json');
      expect(answer.body).toEqual({
        type: `https://esign.invalid/problems/${status}`,
        title,
        status,
        detail,
        instance,
      });
      expect((await postCredentials(accessToken)).status).toBe(200); // one request each (times: 1)
    }
    // What the CLI says (a 502 is retried: three tries, so three switched answers).
    expect(await arm({ fail: 'internal-error' })).toBe(200);
    const internal = await cli(['storage', 'ls']);
    expect(internal.code).toBe(5);
    expect(lastLine(internal.stderr)).toBe(
      'esign: The storage service failed (HTTP 500): An unexpected error occurred while issuing storage credentials. Try again in a moment.',
    );
    for (const [fail, detail] of [
      ['identity-unavailable', 'The identification service is unavailable: identity service unavailable.'],
      ['storage-unavailable', 'The storage service is unavailable: storage side unavailable.'],
    ] as const) {
      expect(await arm({ fail, times: 3 })).toBe(200);
      const result = await cli(['storage', 'ls']);
      expect(result.code).toBe(5);
      expect(lastLine(result.stderr)).toBe(
        `esign: The storage service is unavailable (HTTP 502): ${detail} Try again in a moment.`,
      );
    }
  });

  it('answers an injected status fault as Problem Details too', async () => {
    t.sandbox.faults.inject({ route: 'storage POST /v1/credentials', fault: { kind: 'status', status: 503 } });
    const answer = await postCredentials(accessToken);
    expect(answer).toMatchObject({ status: 503, contentType: 'application/problem+json' });
    expect(answer.body).toEqual({
      type: 'https://esign.invalid/problems/503',
      title: 'Service Unavailable',
      status: 503,
      detail: 'Injected HTTP 503 (sandbox fault).',
      instance: expect.stringMatching(new RegExp(`^${t.sandbox.urls.storage}/v1/credentials#`)),
    });
    t.sandbox.faults.inject({
      route: 'storage POST /v1/credentials',
      fault: { kind: 'status', status: 429, headers: { 'retry-after': '0' } },
      times: 3,
    });
    const limited = await cli(['storage', 'ls', '--json']);
    expect(limited.code).toBe(5);
    expect(limited.json<{ error: { code: string } }>().error.code).toBe('HTTP_RATE_LIMITED');
    expect(lastLine(limited.stderr)).toBe(
      'esign: The storage service is rate limiting credential requests (HTTP 429): Injected HTTP 429 (sandbox fault). Try again in a moment.',
    );
  });

  it('serves a Swagger UI page and an OpenAPI document', async () => {
    const page = await fetch(`${t.sandbox.urls.storage}/swagger-ui/index.html`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('/v1/credentials');
    const doc = (await (await fetch(`${t.sandbox.urls.storage}/v3/api-docs`)).json()) as {
      paths: Record<string, unknown>;
    };
    expect(Object.keys(doc.paths)).toEqual(['/v1/credentials']);
  });
});

describe('sandbox S3 gateway: the temporary credentials, enforced', () => {
  it('refuses another bucket, and actions outside GetObject/PutObject/DeleteObject/ListBucket', async () => {
    const g = await grant();
    const s3 = s3For(g);
    const other = bucketNameFor('esign-cli', 'somebody-else');
    for (const attempt of [
      () => s3.send(new ListObjectsV2Command({ Bucket: other })),
      () => s3.send(new PutObjectCommand({ Bucket: other, Key: 'x.txt', Body: 'x' })),
      () => s3.send(new ListBucketsCommand({})),
      () => s3.send(new DeleteBucketCommand({ Bucket: g.bucket })),
      () => s3.send(new GetObjectAclCommand({ Bucket: g.bucket, Key: 'x.txt' })),
    ]) {
      const error = await s3ErrorOf(attempt());
      expect(error.name).toBe('AccessDenied');
      expect(error.status).toBe(403);
    }
    expect((await s3ErrorOf(s3.send(new ListObjectsV2Command({ Bucket: other })))).message).toMatch(
      new RegExp(`only .* on bucket ${g.bucket}`),
    );
  });

  it('refuses a PutObject that sets an ACL (AccessDenied: it needs s3:PutObjectAcl) and stores nothing', async () => {
    const g = await grant();
    const error = await s3ErrorOf(
      s3For(g).send(new PutObjectCommand({ Bucket: g.bucket, Key: 'public.txt', Body: 'x', ACL: 'public-read' })),
    );
    expect(error).toMatchObject({ name: 'AccessDenied', status: 403 });
    expect(error.message).toMatch(/asked: s3:PutObjectAcl/);
    const listed = await s3For(g).send(new ListObjectsV2Command({ Bucket: g.bucket, Prefix: 'public.txt' }));
    expect(listed.KeyCount ?? 0).toBe(0);
  });

  it('requires the session token, the right secret, and unexpired credentials', async () => {
    const g = await grant();
    const noToken = await s3ErrorOf(
      s3For(g, { sessionToken: undefined }).send(new ListObjectsV2Command({ Bucket: g.bucket })),
    );
    expect(noToken).toMatchObject({ name: 'InvalidAccessKeyId', status: 403 });
    expect(noToken.message).toMatch(/session token/);
    const otherToken = (await grant()).credentials.sessionToken;
    expect(
      await s3ErrorOf(s3For(g, { sessionToken: otherToken }).send(new ListObjectsV2Command({ Bucket: g.bucket }))),
    ).toMatchObject({ name: 'InvalidToken', status: 400 });
    expect(
      await s3ErrorOf(s3For(g, { secretAccessKey: 'wrong' }).send(new ListObjectsV2Command({ Bucket: g.bucket }))),
    ).toMatchObject({ name: 'SignatureDoesNotMatch', status: 403 });
    expect(
      await s3ErrorOf(
        s3For(g, { accessKeyId: 'ASIAUNKNOWNKEY000000' }).send(new ListObjectsV2Command({ Bucket: g.bucket })),
      ),
    ).toMatchObject({ name: 'InvalidAccessKeyId', status: 403 });
    const anonymous = await fetch(`${g.endpoint}/${g.bucket}?list-type=2`);
    expect(anonymous.status).toBe(403);
    expect(await anonymous.text()).toContain('<Code>AccessDenied</Code>');

    t.sandbox.clock.advance(3601_000);
    expect(await s3ErrorOf(s3For(g).send(new ListObjectsV2Command({ Bucket: g.bucket })))).toMatchObject({
      name: 'ExpiredToken',
      status: 400,
    });
  });

  it('refuses an anonymous write and stores nothing', async () => {
    const g = await grant();
    const body = 'hello';
    const response = await fetch(`${g.endpoint}/${g.bucket}/tampered.txt`, { method: 'PUT', body });
    expect(response.status).toBe(403); // unsigned: refused before anything is stored
    const listed = await s3For(g).send(new ListObjectsV2Command({ Bucket: g.bucket, Prefix: 'tampered' }));
    expect(listed.KeyCount ?? 0).toBe(0);
  });
});

describe('esign upload / storage ls|get|rm (built CLI)', () => {
  it('round-trips a small file: upload, list, download, same SHA-256; no silent overwrite; rm', async () => {
    const file = join(work.dir, 'contract-signed.pdf');
    const bytes = randomBytes(50_000);
    await writeFile(file, bytes);
    const digest = createHash('sha256').update(bytes).digest('hex');

    const uploaded = await cli(['upload', file, '--prefix', '/docs/2025/', '--json']);
    expect(uploaded.code, uploaded.stderr).toBe(0);
    const object = uploaded.json<{ bucket: string; key: string; size: number; sha256: string }>();
    expect(object).toMatchObject({ key: 'docs/2025/contract-signed.pdf', size: 50_000, sha256: digest });
    expect(object.bucket).toMatch(/^esign-/);
    expectNoSecrets(uploaded);

    const human = await cli(['upload', file, '--prefix', 'docs/2025']);
    expect(human.code).toBe(8);
    expect(human.stderr).toMatch(/docs\/2025\/contract-signed\.pdf already exists in bucket esign-/);
    expect(human.stderr).toMatch(/--overwrite/);
    const again = await cli(['upload', file, '--prefix', 'docs/2025', '--overwrite']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(new RegExp(`docs/2025/contract-signed\\.pdf \\(48\\.8 KiB, sha256 ${digest}\\)`));

    const listed = await cli(['storage', 'ls', 'docs/', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.json<{ objects: Array<{ key: string; size: number }> }>().objects).toEqual([
      expect.objectContaining({ key: 'docs/2025/contract-signed.pdf', size: 50_000 }),
    ]);
    expect((await cli(['storage', 'ls'])).stdout).toMatch(/docs\/2025\/contract-signed\.pdf\s+48\.8 KiB/);

    const target = join(await tempDir(), 'back.pdf');
    const got = await cli(['storage', 'get', 'docs/2025/contract-signed.pdf', target, '--json']);
    expect(got.code, got.stderr).toBe(0);
    expect(got.json<{ sha256: string; size: number }>()).toMatchObject({ sha256: digest, size: 50_000 });
    expect(Buffer.compare(await readFile(target), bytes)).toBe(0);
    const refused = await cli(['storage', 'get', 'docs/2025/contract-signed.pdf', target]);
    expect(refused.code).toBe(8);

    const removed = await cli(['storage', 'rm', 'docs/2025/contract-signed.pdf']);
    expect(removed.code, removed.stderr).toBe(0);
    expect((await cli(['storage', 'ls', 'docs/', '--json'])).json<{ objects: unknown[] }>().objects).toEqual([]);
    const gone = await cli(['storage', 'rm', 'docs/2025/contract-signed.pdf']);
    expect(gone.code).toBe(7);
    expect(gone.stderr).toMatch(/no object docs\/2025\/contract-signed\.pdf/);
  });

  it('round-trips 200 MB with flat memory, renewing short-lived credentials during the upload', async () => {
    const small = join(work.dir, 'small.bin');
    await writeBigFile(small, 20 * 1024 * 1024);
    const smallRun = await runCliMeasured(['upload', small, '--prefix', 'big', '--json']);
    expect(smallRun.code, smallRun.stderr).toBe(0);

    const big = join(work.dir, 'big.bin');
    const digest = await writeBigFile(big, 200 * 1024 * 1024);
    // Credentials that live 4 s (renewed once 2 s are left), and an upload that surely outlives them:
    // the server holds part 1 for 5 s, so the last parts and the completion are signed after that.
    storageControl(t.sandbox).issuer.lifetimeSeconds = 4;
    t.sandbox.faults.inject({ route: s3Part(1), fault: { kind: 'delay', ms: 5_000 } });
    const before = credentialCalls();
    const logStart = t.sandbox.requestLog.length;
    const started = Date.now();
    const upload = await runCliMeasured(['upload', big, '--prefix', 'big', '--json']);
    const seconds = (Date.now() - started) / 1000;
    expect(upload.code, upload.stderr).toBe(0);
    expect(upload.json<{ sha256: string; size: number }>()).toMatchObject({ sha256: digest, size: 200 * 1024 * 1024 });
    expect(seconds).toBeGreaterThan(5);
    const grants = credentialCalls() - before;
    // Renewed before they ran out, within the one multipart upload (not a restart after ExpiredToken).
    expect(grants).toBeGreaterThan(1);
    expect(loggedSince(logStart, S3_CREATE_MULTIPART)).toBe(1);
    storageControl(t.sandbox).issuer.lifetimeSeconds = 3600;

    const target = join(work.dir, 'big-back.bin');
    const download = await runCliMeasured(['storage', 'get', 'big/big.bin', target, '--json']);
    expect(download.code, download.stderr).toBe(0);
    expect(download.json<{ sha256: string }>().sha256).toBe(digest);
    expect(await sha256File(target)).toBe(digest);

    console.log(
      `peak RSS: upload 20 MB ${smallRun.peakRssMiB.toFixed(0)} MiB, upload 200 MB ${upload.peakRssMiB.toFixed(0)} MiB (${seconds.toFixed(1)} s, ${grants} credential grants), download 200 MB ${download.peakRssMiB.toFixed(0)} MiB`,
    );
    expect(upload.peakRssMiB).toBeLessThan(224);
    expect(download.peakRssMiB).toBeLessThan(200);
    // Flat: ten times the data does not cost ten times the memory.
    expect(upload.peakRssMiB - smallRun.peakRssMiB).toBeLessThan(80);
  });

  it('renews credentials that expire during a multipart upload (ExpiredToken) and uploads again', async () => {
    const file = join(work.dir, 'expires-midway.bin');
    const digest = await writeBigFile(file, 20 * 1024 * 1024); // three parts of at most 8 MiB
    // Ten-minute credentials; part 1 is held for 1.5 s, and meanwhile the server's clock passes their
    // expiration: what is signed with them after that (at least the completion) is refused.
    storageControl(t.sandbox).issuer.lifetimeSeconds = 600;
    t.sandbox.faults.inject({ route: s3Part(1), fault: { kind: 'delay', ms: 1_500 } });
    const before = credentialCalls();
    const logStart = t.sandbox.requestLog.length;
    const run = spawnCli(['upload', file, '--prefix', 'midway', '--json'], { env: t.env, cwd: work.dir });
    while (loggedSince(logStart, s3Part(1)) === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    t.sandbox.clock.advance(601_000);
    const result = await run.result;
    expect(result.code, result.stderr).toBe(0);
    expect(result.json<{ key: string; sha256: string }>()).toMatchObject({
      key: 'midway/expires-midway.bin',
      sha256: digest,
    });
    expect(credentialCalls() - before).toBe(2); // the first grant and its renewal
    expect(loggedSince(logStart, S3_CREATE_MULTIPART)).toBe(2); // the upload ran again with the new grant
    expect(await storedSha256(await grant(), 'midway/expires-midway.bin')).toBe(digest);
  });

  it('gives a clear message and exit code when credentials expire and renewal cannot help', async () => {
    const file = join(work.dir, 'expiring.txt');
    await writeFile(file, 'x');
    storageControl(t.sandbox).issuer.lifetimeSeconds = 0;
    const result = await cli(['upload', file]);
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/temporary storage credentials expired/);
  });

  it('refuses a login without the storage scope, with a hint to log in with it', async () => {
    const configDir = await tempDir();
    const env = { ESIGN_CONFIG_DIR: configDir };
    const login = await cli(['login', '--auto-approve'], env);
    expect(login.code, login.stderr).toBe(0);
    const file = join(work.dir, 'a.txt');
    await writeFile(file, 'a');
    const result = await cli(['upload', file], env);
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(
      /did not accept your login session: The access token was not issued with scope com\.vendor\.storage/,
    );
    expect(result.stderr).toMatch(/esign login --scope openid --scope com\.vendor\.storage/);
    const notLoggedIn = await cli(['storage', 'ls'], { ESIGN_CONFIG_DIR: await tempDir() });
    expect(notLoggedIn.code).toBe(4);
    expect(notLoggedIn.stderr).toMatch(/Not signed in/);
  });

  it('esign sign --upload uploads each output as soon as it is written, and replaces an object only with --overwrite', async () => {
    const dir = await tempDir();
    const sha256Of = async (path: string) =>
      createHash('sha256')
        .update(await readFile(path))
        .digest('hex');
    for (const name of ['upload-a.pdf', 'upload-b.pdf'])
      await writeFile(join(dir, name), await pdfLibBytes({ title: name }));
    const sign = (args: string[]) => cli(['--auto-approve', '--json', 'sign', '--level', 'B-B', '--upload', ...args]);

    const signed = await sign([join(dir, 'upload-a.pdf'), join(dir, 'upload-b.pdf')]);
    expect(signed.code, signed.stderr).toBe(0);
    // Each output is uploaded right after it is written (before the next one is), so a later failure loses no upload.
    expect(signed.jsonLines<{ output?: string; key?: string }>().map((line) => line.output ?? line.key)).toEqual([
      join(dir, 'upload-a-signed.pdf'),
      'upload-a-signed.pdf',
      join(dir, 'upload-b-signed.pdf'),
      'upload-b-signed.pdf',
    ]);
    const listed = await cli(['storage', 'ls', 'upload-', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    const objects = listed.json<{ objects: Array<{ key: string; size: number }> }>().objects;
    expect(objects.map((object) => object.key)).toEqual(['upload-a-signed.pdf', 'upload-b-signed.pdf']);
    const g = await grant();
    for (const object of objects) {
      const local = join(dir, object.key);
      expect(object.size).toBe((await readFile(local)).length);
      expect(await storedSha256(g, object.key)).toBe(await sha256Of(local));
    }

    // --force replaces the local output only; the object is replaced with --overwrite alone.
    const refused = await sign(['--force', join(dir, 'upload-a.pdf')]);
    expect(refused.code).toBe(8);
    expect(refused.stderr).toMatch(
      /upload-a-signed\.pdf was written but not uploaded: upload-a-signed\.pdf already exists in bucket esign-\w+; esign does not replace objects unasked\. Pass --overwrite/,
    );
    const replaced = await sign(['--force', '--overwrite', join(dir, 'upload-a.pdf')]);
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(await storedSha256(g, 'upload-a-signed.pdf')).toBe(await sha256Of(join(dir, 'upload-a-signed.pdf')));
    const misused = await cli(['sign', '--overwrite', join(dir, 'upload-a.pdf')]);
    expect(misused.code).toBe(2);
    expect(misused.stderr).toMatch(/--overwrite .* goes with --upload/);
  });

  it('esign sign --upload with a seal: the organization signs without a browser and each output is uploaded', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'sealed-invoice.pdf'), await pdfLibBytes({ title: 'sealed' }));
    const before = t.sandbox.requestLog.length;
    const signed = await cli(['--json', 'sign', '--level', 'B-B', '--upload', join(dir, 'sealed-invoice.pdf')], {
      ESIGN_SERVICE_AUTH: 'client-credentials',
      ESIGN_CREDENTIAL_PIN: SANDBOX_SEAL.pin,
    });
    expect(signed.code, signed.stderr).toBe(0);
    expect(signed.jsonLines<{ credential?: string; key?: string }>()).toEqual([
      expect.objectContaining({ credential: SANDBOX_SEAL.pinOnlyCredentialID }),
      expect.objectContaining({ key: 'sealed-invoice-signed.pdf' }),
    ]);
    expect(t.sandbox.requestLog.slice(before).filter((id) => /oauth2\/authorize/.test(id))).toEqual([]);
    expect(t.sandbox.requestLog.slice(before).filter((id) => /credentials\/authorize/.test(id))).toHaveLength(1);
  });

  it('esign sign --complete --upload uploads each output of the split flow as it is written; --prepare --upload is refused', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'split-up.pdf'), await pdfLibBytes({ title: 'split-up' }));
    await writeFile(join(dir, 'split-up.txt'), 'manifest\n');
    const state = join(dir, 'state.json');
    const inputs = [join(dir, 'split-up.pdf'), join(dir, 'split-up.txt')];
    const misplaced = await cli(['sign', '--prepare', '--upload', '--state', state, ...inputs]);
    expect(misplaced.code).toBe(2);
    expect(misplaced.stderr).toContain('--upload goes with --complete');
    // This config dir has a cached service sign-in (login above), so --prepare goes straight to the approval.
    await cli(['--auto-approve', 'credentials', 'list']);
    const prepared = await cli(['--json', 'sign', '--prepare', '--level', 'B-B', '--state', state, ...inputs]);
    expect(prepared.code, prepared.stderr).toBe(0);
    const { approvals } = prepared.json<{ approvals: Array<{ authorizationUrl: string }> }>();
    const approved = (await fetch(approvals[0]!.authorizationUrl, { redirect: 'manual' })).headers.get('location')!;
    const completed = await cli([
      '--json',
      'sign',
      '--complete',
      '--upload',
      '--state',
      state,
      '--redirect-url',
      approved,
    ]);
    expect(completed.code, completed.stderr).toBe(0);
    expect(completed.jsonLines<{ output?: string; key?: string }>().map((line) => line.output ?? line.key)).toEqual([
      join(dir, 'split-up-signed.pdf'),
      'split-up-signed.pdf',
      join(dir, 'split-up.txt.p7s'),
      'split-up.txt.p7s',
    ]);
    const g = await grant();
    expect(await storedSha256(g, 'split-up.txt.p7s')).toBe(
      createHash('sha256')
        .update(await readFile(join(dir, 'split-up.txt.p7s')))
        .digest('hex'),
    );
  });

  it('says so when the storage service answers 502', async () => {
    storageControl(t.sandbox).storageUnavailable = true;
    const result = await cli(['storage', 'ls']);
    expect(result.code).toBe(5);
    expect(result.stderr).toMatch(
      /storage service is unavailable \(HTTP 502\): The storage service is unavailable: storage side unavailable/,
    );
    storageControl(t.sandbox).storageUnavailable = false;
    t.sandbox.faults.inject({
      route: 'storage POST /v1/credentials',
      fault: { kind: 'status', status: 502 },
      times: 3,
    });
    const injected = await cli(['storage', 'ls']);
    expect(injected.code).toBe(5);
    expect(injected.stderr).toMatch(/HTTP 502/);
  });
});
