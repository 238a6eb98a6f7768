import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { PayloadVerifier, S3RequestError, type PayloadMode } from './payload.js';
import { chunkSignature, sha256Hex, signingKey, type SignedRequestAuth } from './sigv4.js';

const auth: SignedRequestAuth = {
  form: 'header',
  accessKeyId: 'ASIATEST',
  scope: '20250101/us-east-1/s3/aws4_request',
  date: '20250101',
  region: 'us-east-1',
  service: 's3',
  amzDate: '20250101T000000Z',
  signedHeaders: ['host'],
  signature: 'a'.repeat(64),
  contentSha256: 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
};
const key = signingKey('secret', auth.date, auth.region, auth.service);

/** An aws-chunked body with chunk signatures (and a signed trailer when given). */
function signedChunked(data: Buffer, chunkSize: number, trailer?: string, tamper = false): Buffer {
  const parts: Buffer[] = [];
  let previous = auth.signature;
  for (let offset = 0; ; offset += chunkSize) {
    const chunk = data.subarray(offset, Math.min(offset + chunkSize, data.length));
    const signature = chunkSignature(key, auth, previous, sha256Hex(chunk));
    previous = signature;
    parts.push(
      Buffer.from(`${chunk.length.toString(16)};chunk-signature=${signature}\r\n`),
      tamper && offset === 0 ? Buffer.from(chunk).fill(0x41) : chunk,
      Buffer.from(chunk.length ? '\r\n' : ''),
    );
    if (chunk.length === 0) break;
  }
  if (trailer) {
    const signature = chunkSignature(key, auth, previous, sha256Hex(`${trailer}\n`), true);
    parts.push(Buffer.from(`${trailer}\r\nx-amz-trailer-signature:${signature}\r\n\r\n`));
  } else parts.push(Buffer.from('\r\n'));
  return Buffer.concat(parts);
}

async function run(
  mode: PayloadMode,
  body: Buffer,
  checksum?: ConstructorParameters<typeof PayloadVerifier>[1],
): Promise<Buffer> {
  const out: Buffer[] = [];
  const verifier = new PayloadVerifier(mode, checksum);
  // Feed in odd-sized pieces so that framing is split across writes.
  const pieces: Buffer[] = [];
  for (let offset = 0; offset < body.length; offset += 777) pieces.push(body.subarray(offset, offset + 777));
  await new Promise<void>((resolve, reject) => {
    Readable.from(pieces)
      .pipe(verifier)
      .on('data', (chunk: Buffer) => out.push(chunk))
      .on('end', resolve)
      .on('error', reject);
  });
  return Buffer.concat(out);
}

const crc32Base64 = (data: Buffer) => {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(crc32(data) >>> 0);
  return bytes.toString('base64');
};

describe('PayloadVerifier', () => {
  const data = Buffer.from(Array.from({ length: 10_000 }, (_, index) => index % 251));

  it('decodes STREAMING-AWS4-HMAC-SHA256-PAYLOAD, checking every chunk signature', async () => {
    const mode: PayloadMode = { kind: 'chunked', signed: true, trailer: false, decodedLength: data.length, key, auth };
    expect(Buffer.compare(await run(mode, signedChunked(data, 4096)), data)).toBe(0);
    await expect(run(mode, signedChunked(data, 4096, undefined, true))).rejects.toMatchObject({
      failure: { code: 'SignatureDoesNotMatch' },
    });
  });

  it('checks a signed trailer and its CRC32', async () => {
    const mode: PayloadMode = {
      kind: 'chunked',
      signed: true,
      trailer: true,
      decodedLength: data.length,
      key,
      auth: { ...auth, contentSha256: 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER' },
    };
    const spec = { algorithm: 'crc32' as const, inTrailer: true };
    expect(
      Buffer.compare(
        await run(mode, signedChunked(data, 4096, `x-amz-checksum-crc32:${crc32Base64(data)}`), spec),
        data,
      ),
    ).toBe(0);
    await expect(run(mode, signedChunked(data, 4096, 'x-amz-checksum-crc32:AAAAAA=='), spec)).rejects.toBeInstanceOf(
      S3RequestError,
    );
  });

  it('decodes STREAMING-UNSIGNED-PAYLOAD-TRAILER and refuses a wrong checksum or length', async () => {
    const body = Buffer.concat([
      Buffer.from(`${data.length.toString(16)}\r\n`),
      data,
      Buffer.from(`\r\n0\r\nx-amz-checksum-crc32:${crc32Base64(data)}\r\n\r\n`),
    ]);
    const spec = { algorithm: 'crc32' as const, inTrailer: true };
    const mode: PayloadMode = { kind: 'chunked', signed: false, trailer: true, decodedLength: data.length };
    expect(Buffer.compare(await run(mode, body, spec), data)).toBe(0);
    await expect(run({ ...mode, decodedLength: 5 }, body, spec)).rejects.toMatchObject({
      failure: { code: 'IncompleteBody' },
    });
    const bad = Buffer.from(body.toString('latin1').replace(crc32Base64(data), 'AAAAAA=='), 'latin1');
    await expect(run(mode, bad, spec)).rejects.toMatchObject({ failure: { code: 'BadDigest' } });
  });

  it('holds back the end of a body whose declared SHA-256 does not match', async () => {
    const out: Buffer[] = [];
    const verifier = new PayloadVerifier(
      { kind: 'plain', sha256: createHash('sha256').update('other').digest('hex') },
      undefined,
    );
    verifier.on('data', (chunk: Buffer) => out.push(chunk));
    const failed = new Promise((resolve) => verifier.on('error', resolve));
    verifier.write(data.subarray(0, 5000));
    verifier.end(data.subarray(5000));
    expect(await failed).toMatchObject({ failure: { code: 'XAmzContentSHA256Mismatch' } });
    expect(Buffer.concat(out).length).toBeLessThan(data.length);
  });
});
