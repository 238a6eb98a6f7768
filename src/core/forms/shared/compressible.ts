/**
 * Whether a file put in an ASiC container is deflated or stored, decided from a sample of its
 * content rather than from its name: a random `big.bin` gains nothing from deflate and costs its
 * whole size in CPU, while a `README` or an XML file shrinks several times. The sample (the first
 * `SAMPLE_BYTES`) is stored when it begins with the signature of a format that is compressed
 * already (JPEG, PNG, GIF, WebP, a PDF, gzip, ZIP and the formats built on it, bzip2, xz, zstd, 7z,
 * RAR, MP4/MOV/HEIC), and otherwise deflated quickly: an entry is deflated only when that saves at
 * least `MIN_SAVING` of the sample, as Info-ZIP stores what deflate does not shrink.
 */
import { constants, deflateRawSync } from 'node:zlib';

/** How much of a file decides: 64 KiB, read anyway with its first chunk. */
export const SAMPLE_BYTES = 64 * 1024;
/** The least share of the sample deflate must save for the entry to be deflated. */
export const MIN_SAVING = 0.05;

/** Leading bytes of formats that are compressed already (at `offset`, 0 unless given). */
const COMPRESSED_SIGNATURES: readonly { bytes: readonly number[]; offset?: number }[] = [
  { bytes: [0xff, 0xd8, 0xff] }, // JPEG
  { bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] }, // PNG
  { bytes: [0x47, 0x49, 0x46, 0x38] }, // GIF8
  { bytes: [0x57, 0x45, 0x42, 0x50], offset: 8 }, // RIFF….WEBP
  { bytes: [0x25, 0x50, 0x44, 0x46, 0x2d] }, // %PDF- (its streams are deflated already)
  { bytes: [0x1f, 0x8b] }, // gzip
  { bytes: [0x50, 0x4b, 0x03, 0x04] }, // ZIP (docx, xlsx, odt, jar, apk, epub, an ASiC)
  { bytes: [0x50, 0x4b, 0x05, 0x06] }, // an empty ZIP
  { bytes: [0x42, 0x5a, 0x68] }, // bzip2
  { bytes: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00] }, // xz
  { bytes: [0x28, 0xb5, 0x2f, 0xfd] }, // zstd
  { bytes: [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c] }, // 7z
  { bytes: [0x52, 0x61, 0x72, 0x21, 0x1a, 0x07] }, // RAR
  { bytes: [0x66, 0x74, 0x79, 0x70], offset: 4 }, // ISO BMFF: MP4, MOV, HEIC, AVIF
];

/** The compressed format `sample` begins with, if any. */
export function compressedSignature(sample: Uint8Array): boolean {
  return COMPRESSED_SIGNATURES.some(
    ({ bytes, offset = 0 }) =>
      sample.length >= offset + bytes.length && bytes.every((byte, index) => sample[offset + index] === byte),
  );
}

/** Whether an entry beginning with `sample` (its first `SAMPLE_BYTES`, or all of a smaller file) is worth deflating. */
export function worthDeflating(sample: Uint8Array): boolean {
  const head = sample.subarray(0, SAMPLE_BYTES);
  if (head.length === 0 || compressedSignature(head)) return false;
  // The fastest level: it tells what deflate would save nearly as well as the level the writer uses, at a fraction of the cost.
  const deflated = deflateRawSync(head, { level: constants.Z_BEST_SPEED });
  return deflated.length <= head.length * (1 - MIN_SAVING);
}
