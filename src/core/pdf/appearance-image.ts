/**
 * An image for a visible signature's appearance: a JPEG, embedded as it is (DCTDecode), or a PNG,
 * decoded by UPNG and embedded as Flate RGB with its transparency as a soft mask. Loaded once per
 * run; each document's update gets its own copy of the objects.
 */
import { deflateSync } from 'node:zlib';
import type * as UpngModule from '@pdf-lib/upng';
import { EsignError } from '../errors.js';

type Upng = typeof UpngModule;
import { PdfStream, dict, name } from './objects.js';
import type { PdfObject, PdfRef } from './objects.js';

/** The largest image file esign embeds (a logo or a scanned signature is far smaller). */
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;
/** The most pixels (width × height) an image may have: 4096 × 4096. */
export const MAX_IMAGE_PIXELS = 4096 * 4096;

export class AppearanceImage {
  constructor(
    readonly width: number,
    readonly height: number,
    private readonly stream: PdfStream,
    private readonly mask: PdfStream | undefined,
  ) {}

  /** Whether the image has transparency (a soft mask, which PDF/A-1 forbids). */
  get transparent(): boolean {
    return this.mask !== undefined;
  }

  /** Reads a PNG or JPEG; anything else, or an image over the bounds, is refused in one line. */
  static async load(bytes: Uint8Array, label: string): Promise<AppearanceImage> {
    if (bytes.length > MAX_IMAGE_BYTES) {
      throw new EsignError(
        'USAGE',
        `The image ${label} is ${bytes.length} bytes; esign embeds images up to ${MAX_IMAGE_BYTES / 1024 / 1024} MiB.`,
        { hint: 'Scale the image down (a few hundred pixels across is plenty for a signature box).' },
      );
    }
    if (bytes[0] === 0xff && bytes[1] === 0xd8) return jpeg(bytes, label);
    if (Buffer.from(bytes.subarray(0, 8)).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
      return png(bytes, label, cjsModule(await import('@pdf-lib/upng'), 'decode'));
    throw new EsignError('USAGE', `The image ${label} is neither a PNG nor a JPEG.`, {
      hint: 'Convert it to PNG (transparency kept) or JPEG.',
    });
  }

  /** Adds the image (and its mask) to an update and returns the image's reference. */
  addTo(add: (value: PdfObject) => PdfRef): PdfRef {
    if (!this.mask) return add(this.stream);
    return add(new PdfStream(this.stream.dict.clone().set('SMask', add(this.mask)), this.stream.data));
  }
}

/**
 * A CommonJS package loaded with import(): the object that has `key`, wherever the loader and the
 * package's own transpiler put it (`module.exports`, `.default`, or `.default.default` for UPNG).
 */
export function cjsModule<T extends object>(loaded: T, key: keyof T): T {
  let candidate: unknown = loaded;
  for (let depth = 0; depth < 3 && candidate && typeof candidate === 'object'; depth++) {
    if (key in candidate) return candidate as T;
    candidate = (candidate as { default?: unknown }).default;
  }
  return loaded;
}

function checkPixels(width: number, height: number, label: string): void {
  if (!(width > 0 && height > 0))
    throw new EsignError('USAGE', `The image ${label} has no pixels.`, {
      hint: 'Give a PNG or JPEG with a width and a height.',
    });
  if (width * height > MAX_IMAGE_PIXELS) {
    throw new EsignError(
      'USAGE',
      `The image ${label} is ${width} × ${height} pixels; esign embeds images up to ${MAX_IMAGE_PIXELS / 1024 / 1024} megapixels (4096 × 4096).`,
      { hint: 'Scale the image down (a few hundred pixels across is plenty for a signature box).' },
    );
  }
}

/** Reads a JPEG's size and colour components from its frame header (SOFn). */
function jpeg(bytes: Uint8Array, label: string): AppearanceImage {
  let at = 2;
  while (at + 9 < bytes.length) {
    if (bytes[at] !== 0xff) break;
    const marker = bytes[at + 1]!;
    const length = (bytes[at + 2]! << 8) | bytes[at + 3]!;
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      const height = (bytes[at + 5]! << 8) | bytes[at + 6]!;
      const width = (bytes[at + 7]! << 8) | bytes[at + 8]!;
      const components = bytes[at + 9]!;
      checkPixels(width, height, label);
      const colorSpace =
        components === 1 ? 'DeviceGray' : components === 3 ? 'DeviceRGB' : components === 4 ? 'DeviceCMYK' : undefined;
      if (!colorSpace) break;
      const stream = new PdfStream(
        dict({
          Type: name('XObject'),
          Subtype: name('Image'),
          Width: width,
          Height: height,
          ColorSpace: name(colorSpace),
          BitsPerComponent: 8,
          Filter: name('DCTDecode'),
          Decode: components === 4 ? [1, 0, 1, 0, 1, 0, 1, 0] : undefined,
        }),
        bytes,
      );
      return new AppearanceImage(width, height, stream, undefined);
    }
    at += 2 + length;
  }
  throw new EsignError('USAGE', `The image ${label} is not a JPEG esign can read (no frame header).`, {
    hint: 'Convert it to PNG or to a baseline JPEG.',
  });
}

function png(bytes: Uint8Array, label: string, upng: Upng): AppearanceImage {
  let width: number;
  let height: number;
  let rgba: Uint8Array;
  try {
    const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    const image = upng.decode(buffer);
    ({ width, height } = image);
    checkPixels(width, height, label);
    rgba = new Uint8Array(upng.toRGBA8(image)[0]!);
  } catch (error) {
    if (error instanceof EsignError) throw error;
    throw new EsignError('USAGE', `The image ${label} is not a PNG esign can read (${(error as Error).message}).`, {
      hint: 'Save it again as PNG or JPEG.',
    });
  }
  const pixels = width * height;
  const rgb = new Uint8Array(pixels * 3);
  const alpha = new Uint8Array(pixels);
  let transparent = false;
  for (let i = 0; i < pixels; i++) {
    rgb[i * 3] = rgba[i * 4]!;
    rgb[i * 3 + 1] = rgba[i * 4 + 1]!;
    rgb[i * 3 + 2] = rgba[i * 4 + 2]!;
    alpha[i] = rgba[i * 4 + 3]!;
    if (alpha[i] !== 255) transparent = true;
  }
  const common = {
    Type: name('XObject'),
    Subtype: name('Image'),
    Width: width,
    Height: height,
    BitsPerComponent: 8,
    Filter: name('FlateDecode'),
  };
  const stream = new PdfStream(dict({ ...common, ColorSpace: name('DeviceRGB') }), deflateSync(rgb));
  const mask = transparent
    ? new PdfStream(dict({ ...common, ColorSpace: name('DeviceGray') }), deflateSync(alpha))
    : undefined;
  return new AppearanceImage(width, height, stream, mask);
}
