/**
 * An independent S3 client against esign's storage: the AWS CLI (Debian's awscli, botocore), given
 * only the temporary credentials from `POST /v1/credentials`, lists and downloads what `esign
 * upload` wrote (single-part and multipart), writes an object esign then downloads, uses a
 * presigned URL, and is refused without the session token, on another bucket and once expired.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bucketNameFor } from '../../src/sandbox/storage/credentials.js';
import { runCli } from '../helpers/run-cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDirForFile } from '../helpers/tmp.js';

const AWS = '/usr/bin/aws';

interface Grant {
  bucket: string;
  endpoint: string;
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken: string; expiration: string };
}

let t: TestSandbox;
let work: { dir: string; remove: () => Promise<void> };
let grant: Grant;
const uploaded: Record<string, { key: string; sha256: string; size: number }> = {};

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

function aws(
  args: string[],
  options: { withoutToken?: boolean } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'],
    HOME: work.dir,
    AWS_CONFIG_FILE: join(work.dir, 'aws-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(work.dir, 'no-credentials'),
    AWS_ACCESS_KEY_ID: grant.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: grant.credentials.secretAccessKey,
    ...(options.withoutToken ? {} : { AWS_SESSION_TOKEN: grant.credentials.sessionToken }),
    AWS_EC2_METADATA_DISABLED: 'true',
  };
  return new Promise((resolve) => {
    execFile(
      AWS,
      ['--endpoint-url', grant.endpoint, ...args],
      { env, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

beforeAll(async () => {
  t = await startTestSandbox({ s3: true, autoApprove: true });
  work = await tempDirForFile('esign-awscli-');
  await writeFile(
    join(work.dir, 'aws-config'),
    '[default]\nregion = us-east-1\ns3 =\n    addressing_style = path\n    signature_version = s3v4\n',
  );
  const login = await runCli(['login', '--auto-approve', '--scope', 'com.vendor.storage'], { env: t.env });
  expect(login.code, login.stderr).toBe(0);

  // esign writes a small file (one PUT) and a 20 MB one (multipart: 8 MiB parts).
  for (const [name, size] of [
    ['note.txt', 1234],
    ['large.bin', 20 * 1024 * 1024],
  ] as const) {
    const path = join(work.dir, name);
    await writeFile(path, randomBytes(size));
    const result = await runCli(['upload', path, '--prefix', 'interop', '--json'], { env: t.env });
    expect(result.code, result.stderr).toBe(0);
    uploaded[name] = result.json();
  }
  const tokens = JSON.parse(await readFile(join(t.configDir, 'tokens.json'), 'utf8')) as Record<
    string,
    { accessToken: string }
  >;
  const response = await fetch(`${t.sandbox.urls.storage}/v1/credentials`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tokens['sandbox:identity']?.accessToken}` },
  });
  expect(response.status).toBe(200);
  grant = (await response.json()) as Grant;
});

afterAll(async () => {
  await t?.close();
  await work?.remove();
});

describe('the AWS CLI with the temporary credentials', () => {
  it('lists what esign uploaded (aws s3 ls, aws s3api list-objects-v2)', async () => {
    const listed = await aws(['s3', 'ls', `s3://${grant.bucket}/interop/`]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/\s1234 note\.txt$/m);
    expect(listed.stdout).toMatch(/\s20971520 large\.bin$/m);
    const api = await aws([
      's3api',
      'list-objects-v2',
      '--bucket',
      grant.bucket,
      '--prefix',
      'interop/',
      '--output',
      'json',
    ]);
    expect(api.code, api.stderr).toBe(0);
    const keys = (JSON.parse(api.stdout) as { Contents: Array<{ Key: string; Size: number }> }).Contents.map((item) => [
      item.Key,
      item.Size,
    ]);
    expect(keys).toEqual([
      ['interop/large.bin', 20 * 1024 * 1024],
      ['interop/note.txt', 1234],
    ]);
  });

  it('downloads them byte for byte (the SHA-256 esign printed)', async () => {
    for (const name of ['note.txt', 'large.bin']) {
      const object = uploaded[name]!;
      const target = join(work.dir, `aws-${name}`);
      const result = await aws(['s3', 'cp', '--only-show-errors', `s3://${grant.bucket}/${object.key}`, target]);
      expect(result.code, result.stderr).toBe(0);
      expect(sha256(await readFile(target))).toBe(object.sha256);
    }
  });

  it('writes an object (botocore signing, multipart above 8 MB) that esign downloads', async () => {
    const bytes = randomBytes(9 * 1024 * 1024 + 17);
    const source = join(work.dir, 'from-aws.bin');
    await writeFile(source, bytes);
    const put = await aws(['s3', 'cp', '--only-show-errors', source, `s3://${grant.bucket}/interop/from-aws.bin`]);
    expect(put.code, put.stderr).toBe(0);
    const small = await aws([
      's3api',
      'put-object',
      '--bucket',
      grant.bucket,
      '--key',
      'interop/small-from-aws.txt',
      '--body',
      join(work.dir, 'note.txt'),
    ]);
    expect(small.code, small.stderr).toBe(0);
    const target = join(work.dir, 'esign-from-aws.bin');
    const got = await runCli(['storage', 'get', 'interop/from-aws.bin', target, '--json'], { env: t.env });
    expect(got.code, got.stderr).toBe(0);
    expect(got.json<{ sha256: string }>().sha256).toBe(sha256(bytes));
    expect(Buffer.compare(await readFile(target), bytes)).toBe(0);
    const removed = await aws(['s3', 'rm', '--only-show-errors', `s3://${grant.bucket}/interop/small-from-aws.txt`]);
    expect(removed.code, removed.stderr).toBe(0);
  });

  it('presigns a GET that works until it expires', async () => {
    const presigned = await aws(['s3', 'presign', `s3://${grant.bucket}/interop/note.txt`, '--expires-in', '60']);
    expect(presigned.code, presigned.stderr).toBe(0);
    const url = presigned.stdout.trim();
    expect(url).toContain('X-Amz-Security-Token=');
    const ok = await fetch(url);
    expect(ok.status).toBe(200);
    expect(sha256(new Uint8Array(await ok.arrayBuffer()))).toBe(uploaded['note.txt']!.sha256);
    t.sandbox.clock.advance(61_000);
    try {
      const late = await fetch(url);
      expect(late.status).toBe(403);
      expect(await late.text()).toMatch(/Request has expired/);
    } finally {
      t.sandbox.clock.reset();
    }
  });

  it('is refused without the session token, on another bucket, for bucket-level actions, and once expired', async () => {
    const noToken = await aws(['s3', 'ls', `s3://${grant.bucket}/`], { withoutToken: true });
    expect(noToken.code).not.toBe(0);
    expect(noToken.stderr).toMatch(/InvalidAccessKeyId.*session token/);
    const other = await aws(['s3', 'ls', `s3://${bucketNameFor('esign-cli', 'someone-else')}/`]);
    expect(other.code).not.toBe(0);
    expect(other.stderr).toMatch(/AccessDenied/);
    const buckets = await aws(['s3', 'ls']);
    expect(buckets.code).not.toBe(0);
    expect(buckets.stderr).toMatch(/AccessDenied/);
    const removeBucket = await aws(['s3api', 'delete-bucket', '--bucket', grant.bucket]);
    expect(removeBucket.stderr).toMatch(/AccessDenied/);
    t.sandbox.clock.advance(3601_000);
    try {
      const expired = await aws(['s3', 'ls', `s3://${grant.bucket}/`]);
      expect(expired.code).not.toBe(0);
      expect(expired.stderr).toMatch(/ExpiredToken/);
    } finally {
      t.sandbox.clock.reset();
    }
  });
});
