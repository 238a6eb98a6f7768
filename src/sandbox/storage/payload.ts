/**
 * Checks a request body on its way through the gateway, streaming: the declared SHA-256, an
 * `x-amz-checksum-*` value (header or trailer), and `aws-chunked` framing with its per-chunk and
 * trailer signatures. Decoded bytes flow on; the last piece is held back until the whole body has
 * been checked, so the store behind never completes an object whose check failed.
 */
import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { crc32 } from 'node:zlib';
import { chunkSignature, sameSignature, sha256Hex, type SignedRequestAuth } from './sigv4.js';

export interface S3Failure {
  status: number;
  code: string;
  message: string;
}

export class S3RequestError extends Error {
  constructor(readonly failure: S3Failure) {
    super(failure.message);
  }
}

const fail = (status: number, code: string, message: string) => new S3RequestError({ status, code, message });

export type PayloadMode =
  | { kind: 'plain'; sha256?: string }
  | {
      kind: 'chunked';
      signed: boolean;
      trailer: boolean;
      decodedLength: number;
      key?: Buffer;
      auth?: SignedRequestAuth;
    };

const CHECKSUM_ALGORITHMS = ['crc32', 'crc32c', 'crc64nvme', 'sha1', 'sha256'] as const;
type ChecksumAlgorithm = (typeof CHECKSUM_ALGORITHMS)[number];
const MAX_SIGNED_CHUNK = 16 * 1024 * 1024;
const MAX_LINE = 8 * 1024;

/** Computes one of S3's additional checksums incrementally (CRC32C and CRC64NVME: not verified). */
class Checksum {
  private crc = 0;
  private hash: Hash | undefined;
  constructor(readonly algorithm: ChecksumAlgorithm) {
    if (algorithm === 'sha1' || algorithm === 'sha256') this.hash = createHash(algorithm);
  }
  get verifiable(): boolean {
    return this.algorithm === 'crc32' || this.hash !== undefined;
  }
  update(data: Buffer): void {
    if (this.algorithm === 'crc32') this.crc = crc32(data, this.crc);
    else this.hash?.update(data);
  }
  digestBase64(): string {
    if (this.hash) return this.hash.digest('base64');
    const bytes = Buffer.alloc(4);
    bytes.writeUInt32BE(this.crc >>> 0);
    return bytes.toString('base64');
  }
}

/** The checksum a request announces: `x-amz-checksum-ALG` header, or the name in `x-amz-trailer`. */
export function announcedChecksum(
  headers: Map<string, string>,
): { algorithm: ChecksumAlgorithm; value?: string; inTrailer: boolean } | undefined {
  const trailer = headers.get('x-amz-trailer')?.trim().toLowerCase();
  for (const algorithm of CHECKSUM_ALGORITHMS) {
    const name = `x-amz-checksum-${algorithm}`;
    if (trailer === name) return { algorithm, inTrailer: true };
    const value = headers.get(name);
    if (value !== undefined) return { algorithm, value: value.trim(), inTrailer: false };
  }
  return undefined;
}

export class PayloadVerifier extends Transform {
  private held: Buffer | undefined;
  private decoded = 0;
  private readonly sha256: Hash | undefined;
  private readonly checksum: Checksum | undefined;
  // aws-chunked parser state
  private state: 'size' | 'data' | 'data-end' | 'trailer' | 'done' = 'size';
  private line = Buffer.alloc(0);
  private remaining = 0;
  private chunkSignatureExpected = '';
  private chunkParts: Buffer[] = [];
  private previousSignature: string;
  private readonly trailers = new Map<string, string>();
  private trailerText = '';

  constructor(
    private readonly mode: PayloadMode,
    private readonly checksumSpec: { algorithm: ChecksumAlgorithm; value?: string; inTrailer: boolean } | undefined,
  ) {
    super();
    this.sha256 = mode.kind === 'plain' && mode.sha256 ? createHash('sha256') : undefined;
    this.checksum = checksumSpec ? new Checksum(checksumSpec.algorithm) : undefined;
    this.previousSignature = mode.kind === 'chunked' && mode.auth ? mode.auth.signature : '';
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    try {
      if (this.mode.kind === 'plain') this.emitData(chunk);
      else this.parse(chunk);
      callback();
    } catch (error) {
      callback(error as Error);
    }
  }

  override _flush(callback: TransformCallback): void {
    try {
      this.finish();
      if (this.held) this.push(this.held);
      this.held = undefined;
      callback();
    } catch (error) {
      callback(error as Error);
    }
  }

  private emitData(data: Buffer): void {
    if (data.length === 0) return;
    this.decoded += data.length;
    this.sha256?.update(data);
    this.checksum?.update(data);
    if (this.held) this.push(this.held);
    this.held = data;
  }

  private finish(): void {
    const mode = this.mode;
    if (mode.kind === 'plain') {
      if (this.sha256 && mode.sha256 && this.sha256.digest('hex') !== mode.sha256.toLowerCase()) {
        throw fail(
          400,
          'XAmzContentSHA256Mismatch',
          "The provided 'x-amz-content-sha256' header does not match what was computed.",
        );
      }
    } else {
      if (this.state !== 'done')
        throw fail(400, 'IncompleteBody', 'The request body ended inside the aws-chunked encoding.');
      if (this.decoded !== mode.decodedLength)
        throw fail(400, 'IncompleteBody', 'The decoded body length does not match x-amz-decoded-content-length.');
    }
    const spec = this.checksumSpec;
    if (spec && this.checksum) {
      const claimed = spec.inTrailer ? this.trailers.get(`x-amz-checksum-${spec.algorithm}`) : spec.value;
      if (claimed === undefined)
        throw fail(
          400,
          'InvalidRequest',
          `The trailer x-amz-checksum-${spec.algorithm} announced in x-amz-trailer was not sent.`,
        );
      if (this.checksum.verifiable && claimed !== this.checksum.digestBase64()) {
        throw fail(
          400,
          'BadDigest',
          `The ${spec.algorithm.toUpperCase()} you specified did not match the calculated checksum.`,
        );
      }
    }
  }

  private parse(input: Buffer): void {
    const mode = this.mode as Extract<PayloadMode, { kind: 'chunked' }>;
    let offset = 0;
    while (offset < input.length) {
      switch (this.state) {
        case 'size':
        case 'trailer':
        case 'data-end': {
          const newline = input.indexOf(0x0a, offset);
          const end = newline < 0 ? input.length : newline + 1;
          this.line = Buffer.concat([this.line, input.subarray(offset, end)]);
          offset = end;
          if (this.line.length > MAX_LINE) throw fail(400, 'InvalidRequest', 'An aws-chunked line is too long.');
          if (newline < 0) break;
          const text = this.line.toString('latin1').replace(/\r?\n$/, '');
          this.line = Buffer.alloc(0);
          this.onLine(text, mode);
          break;
        }
        case 'data': {
          const take = Math.min(this.remaining, input.length - offset);
          const piece = input.subarray(offset, offset + take);
          offset += take;
          this.remaining -= take;
          if (mode.signed) this.chunkParts.push(Buffer.from(piece));
          else this.emitData(Buffer.from(piece));
          if (this.remaining === 0) {
            if (mode.signed) this.verifyChunk(Buffer.concat(this.chunkParts), mode);
            this.state = 'data-end';
          }
          break;
        }
        case 'done':
          if (input.subarray(offset).some((byte) => byte !== 0x0d && byte !== 0x0a))
            throw fail(400, 'InvalidRequest', 'Data after the end of the aws-chunked body.');
          offset = input.length;
          break;
      }
    }
  }

  private onLine(text: string, mode: Extract<PayloadMode, { kind: 'chunked' }>): void {
    if (this.state === 'data-end') {
      if (text !== '') throw fail(400, 'InvalidRequest', 'An aws-chunked chunk is not followed by CRLF.');
      this.state = 'size';
      return;
    }
    if (this.state === 'trailer') {
      if (text === '') {
        this.endTrailer(mode);
        return;
      }
      const colon = text.indexOf(':');
      if (colon <= 0) throw fail(400, 'InvalidRequest', 'A malformed aws-chunked trailer line.');
      const name = text.slice(0, colon).trim().toLowerCase();
      const value = text.slice(colon + 1).trim();
      this.trailers.set(name, value);
      if (name !== 'x-amz-trailer-signature') this.trailerText += `${name}:${value}\n`;
      return;
    }
    const match = /^([0-9a-fA-F]+)(?:;chunk-signature=([0-9a-f]{64}))?$/.exec(text.trim());
    if (!match?.[1]) throw fail(400, 'InvalidRequest', 'A malformed aws-chunked chunk header.');
    if (mode.signed && !match[2])
      throw fail(403, 'SignatureDoesNotMatch', 'An aws-chunked chunk carries no chunk-signature.');
    const size = parseInt(match[1], 16);
    if (mode.signed && size > MAX_SIGNED_CHUNK)
      throw fail(400, 'InvalidRequest', 'An aws-chunked chunk is larger than the gateway accepts (16 MiB).');
    this.chunkSignatureExpected = match[2] ?? '';
    if (size === 0) {
      if (mode.signed) this.verifyChunk(Buffer.alloc(0), mode);
      this.state = 'trailer';
      return;
    }
    this.remaining = size;
    this.chunkParts = [];
    this.state = 'data';
  }

  private verifyChunk(data: Buffer, mode: Extract<PayloadMode, { kind: 'chunked' }>): void {
    if (!mode.key || !mode.auth) throw fail(500, 'InternalError', 'missing signing key');
    const expected = chunkSignature(mode.key, mode.auth, this.previousSignature, sha256Hex(data));
    if (!sameSignature(expected, this.chunkSignatureExpected)) {
      throw fail(
        403,
        'SignatureDoesNotMatch',
        'The chunk signature we calculated does not match the signature you provided.',
      );
    }
    this.previousSignature = expected;
    this.emitData(data);
  }

  private endTrailer(mode: Extract<PayloadMode, { kind: 'chunked' }>): void {
    if (mode.signed && mode.trailer) {
      if (!mode.key || !mode.auth) throw fail(500, 'InternalError', 'missing signing key');
      const expected = chunkSignature(mode.key, mode.auth, this.previousSignature, sha256Hex(this.trailerText), true);
      if (!sameSignature(expected, this.trailers.get('x-amz-trailer-signature') ?? '')) {
        throw fail(
          403,
          'SignatureDoesNotMatch',
          'The trailer signature we calculated does not match the signature you provided.',
        );
      }
    }
    this.state = 'done';
  }
}
