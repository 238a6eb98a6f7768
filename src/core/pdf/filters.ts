/**
 * Stream decoding for the streams the core must read itself: cross-reference streams and object
 * streams. FlateDecode with optional PNG predictors is all that PDF writers use for those.
 */
import { inflateSync, constants } from 'node:zlib';
import { EsignError } from '../errors.js';
import { PdfDict, isName } from './objects.js';
import type { PdfObject, PdfStream } from './objects.js';

function single(value: PdfObject | undefined): PdfObject | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The decoded data of a stream (FlateDecode or unfiltered, PNG predictors 10–15). `complete`
 * demands the whole zlib stream, checksum included: a cross-reference stream cut short is damage
 * (qpdf --check warns on it), not a writer's habit.
 */
export function decodeStream(stream: PdfStream, options: { complete?: boolean } = {}): Uint8Array {
  const filter = stream.dict.get('Filter');
  if (Array.isArray(filter) && filter.length > 1) throw unsupported('a chain of filters');
  const only = single(filter);
  if (only === undefined || only === null) return stream.data;
  if (!isName(only, 'FlateDecode')) throw unsupported(`the ${isName(only) ? only.value : 'unknown'} filter`);
  // Writers sometimes end a zlib stream without its checksum; a sync flush still yields the data.
  const inflated = new Uint8Array(
    inflateSync(stream.data, options.complete ? {} : { finishFlush: constants.Z_SYNC_FLUSH }),
  );
  const params = single(stream.dict.get('DecodeParms'));
  if (!(params instanceof PdfDict)) return inflated;
  const predictor = params.get('Predictor');
  if (typeof predictor !== 'number' || predictor === 1) return inflated;
  if (predictor < 10) throw unsupported('the TIFF predictor');
  const columns = numberOr(params.get('Columns'), 1);
  const colors = numberOr(params.get('Colors'), 1);
  const bits = numberOr(params.get('BitsPerComponent'), 8);
  return undoPngPredictor(
    inflated,
    Math.ceil((columns * colors * bits) / 8),
    Math.max(1, Math.ceil((colors * bits) / 8)),
  );
}

function numberOr(value: PdfObject | undefined, fallback: number): number {
  return typeof value === 'number' ? value : fallback;
}

function unsupported(what: string): EsignError {
  return new EsignError(
    'PDF_UNSUPPORTED',
    `The PDF uses ${what} in its cross-reference data, which esign cannot read.`,
    {
      hint: 'Rewrite the file first, e.g. `qpdf input.pdf repaired.pdf`, and sign the result.',
    },
  );
}

/** Reverses PNG row filters (each row starts with a filter-type byte). */
export function undoPngPredictor(data: Uint8Array, rowLength: number, bytesPerPixel: number): Uint8Array {
  const rows = Math.floor(data.length / (rowLength + 1));
  const out = new Uint8Array(rows * rowLength);
  for (let r = 0; r < rows; r++) {
    const type = data[r * (rowLength + 1)];
    const src = r * (rowLength + 1) + 1;
    const row = r * rowLength;
    for (let i = 0; i < rowLength; i++) {
      const raw = data[src + i] ?? 0;
      const left = i >= bytesPerPixel ? (out[row + i - bytesPerPixel] ?? 0) : 0;
      const up = r > 0 ? (out[row - rowLength + i] ?? 0) : 0;
      const upLeft = r > 0 && i >= bytesPerPixel ? (out[row - rowLength + i - bytesPerPixel] ?? 0) : 0;
      let predicted = 0;
      if (type === 1) predicted = left;
      else if (type === 2) predicted = up;
      else if (type === 3) predicted = (left + up) >> 1;
      else if (type === 4) predicted = paeth(left, up, upLeft);
      out[row + i] = (raw + predicted) & 0xff;
    }
  }
  return out;
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  if (pa <= pb && pa <= pc) return a;
  return pb <= pc ? b : c;
}
