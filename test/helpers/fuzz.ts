/**
 * Seeded mutation fuzzing helpers (fast-check). Every fuzz suite runs `runs(base)` cases:
 * `ESIGN_FUZZ_RUNS=N` multiplies the base count (default 1); `ESIGN_FUZZ_SEED` replays a seed.
 * The contract checked everywhere: a case ends in success or a typed EsignError, within a bound.
 */
import fc from 'fast-check';
import { EsignError } from '../../src/core/errors.js';

const multiplier = Math.max(1, Number(process.env['ESIGN_FUZZ_RUNS'] ?? '1') || 1);
const seed = process.env['ESIGN_FUZZ_SEED'] === undefined ? 0x5eed : Number(process.env['ESIGN_FUZZ_SEED']);

/**
 * fast-check parameters: seeded, `base × ESIGN_FUZZ_RUNS` runs, shrinking kept cheap. A suite that
 * cannot finish its runs in time fails rather than passing on fewer cases; vitest.config.ts gives
 * the unit tests `30 s × ESIGN_FUZZ_RUNS`, a little more than this limit.
 */
export function fuzzParams<T>(base: number): fc.Parameters<T> {
  return {
    numRuns: base * multiplier,
    seed,
    endOnFailure: false,
    interruptAfterTimeLimit: 25_000 * multiplier,
    markInterruptAsFailure: true,
  };
}

/** Per-case bound: a case that takes longer than this is reported as a hang. */
export const CASE_TIME_LIMIT_MS = 2_000;

/** One edit of a byte string, the kinds a damaged file shows. */
export type Mutation =
  | { kind: 'flip'; at: number; bit: number }
  | { kind: 'set'; at: number; value: number }
  | { kind: 'truncate'; at: number }
  | { kind: 'insert'; at: number; bytes: Uint8Array }
  | { kind: 'delete'; at: number; length: number }
  | { kind: 'duplicate'; at: number; length: number; to: number }
  | { kind: 'number'; nth: number; value: string };

const position = fc.noBias(fc.integer({ min: 0, max: 999_999 })).map((n) => n / 1_000_000);

/** Mutations with positions as fractions of the input's length (so one arbitrary serves any input). */
export const mutationArb: fc.Arbitrary<(input: Uint8Array) => Mutation> = fc.oneof(
  fc
    .tuple(position, fc.integer({ min: 0, max: 7 }))
    .map(([p, bit]) => (input: Uint8Array): Mutation => ({ kind: 'flip', at: Math.floor(p * input.length), bit })),
  fc
    .tuple(position, fc.integer({ min: 0, max: 255 }))
    .map(([p, value]) => (input: Uint8Array): Mutation => ({ kind: 'set', at: Math.floor(p * input.length), value })),
  position.map((p) => (input: Uint8Array): Mutation => ({ kind: 'truncate', at: Math.floor(p * input.length) })),
  fc
    .tuple(
      position,
      fc.oneof(
        fc.uint8Array({ minLength: 1, maxLength: 16 }),
        fc.constantFrom(
          ...[
            '0',
            ' ',
            '\n',
            '<<',
            '>>',
            '[',
            ']',
            '(',
            ')',
            'R',
            'obj',
            'endobj',
            'stream',
            'xref',
            'trailer',
            '%%EOF',
            '/',
            '\x00',
            '\x30\x82\xff\xff',
            '\x02\x09',
            '\x06\x03',
          ].map((s) => Uint8Array.from(s, (c) => c.charCodeAt(0))),
        ),
      ),
    )
    .map(([p, bytes]) => (input: Uint8Array): Mutation => ({
      kind: 'insert',
      at: Math.floor(p * (input.length + 1)),
      bytes,
    })),
  fc.tuple(position, fc.integer({ min: 1, max: 64 })).map(([p, length]) => (input: Uint8Array): Mutation => ({
    kind: 'delete',
    at: Math.floor(p * input.length),
    length,
  })),
  fc
    .tuple(position, fc.integer({ min: 1, max: 128 }), position)
    .map(([p, length, q]) => (input: Uint8Array): Mutation => ({
      kind: 'duplicate',
      at: Math.floor(p * input.length),
      length,
      to: Math.floor(q * (input.length + 1)),
    })),
  fc
    .tuple(
      fc.nat(),
      fc.constantFrom(
        '0',
        '-1',
        '1',
        '2',
        '65535',
        '999999999999',
        '4294967296',
        '1e400',
        '-0',
        '3.5',
        '00000000000000000000001',
        '9007199254740993',
      ),
    )
    .map(([nth, value]) => (): Mutation => ({ kind: 'number', nth, value })),
);

/** Mutations that keep every offset valid (byte flips and overwrites), so damage reaches the object parser. */
export const inPlaceMutationArb: fc.Arbitrary<(input: Uint8Array) => Mutation> = fc.oneof(
  fc
    .tuple(position, fc.integer({ min: 0, max: 7 }))
    .map(([p, bit]) => (input: Uint8Array): Mutation => ({ kind: 'flip', at: Math.floor(p * input.length), bit })),
  fc
    .tuple(
      position,
      fc.constantFrom(
        0x00,
        0x20,
        0x0a,
        0x25,
        0x28,
        0x29,
        0x2f,
        0x3c,
        0x3e,
        0x5b,
        0x5d,
        0x30,
        0x39,
        0x2d,
        0x52,
        0xff,
        0x80,
      ),
    )
    .map(([p, value]) => (input: Uint8Array): Mutation => ({ kind: 'set', at: Math.floor(p * input.length), value })),
);

/** Applies one mutation; `number` replaces the nth run of ASCII digits (modulo their count). */
export function applyMutation(input: Uint8Array, m: Mutation): Uint8Array {
  const len = input.length;
  switch (m.kind) {
    case 'flip': {
      if (len === 0) return input;
      const out = input.slice();
      out[m.at] = (out[m.at] ?? 0) ^ (1 << m.bit);
      return out;
    }
    case 'set': {
      if (len === 0) return input;
      const out = input.slice();
      out[m.at] = m.value;
      return out;
    }
    case 'truncate':
      return input.slice(0, m.at);
    case 'insert':
      return concatBytes(input.subarray(0, m.at), m.bytes, input.subarray(m.at));
    case 'delete':
      return concatBytes(input.subarray(0, m.at), input.subarray(m.at + m.length));
    case 'duplicate':
      return concatBytes(input.subarray(0, m.to), input.subarray(m.at, m.at + m.length), input.subarray(m.to));
    case 'number': {
      const runs: Array<[number, number]> = [];
      for (let i = 0; i < len;) {
        if (isDigit(input[i])) {
          const start = i;
          while (i < len && isDigit(input[i])) i++;
          runs.push([start, i]);
        } else i++;
      }
      const run = runs[m.nth % Math.max(1, runs.length)];
      if (!run) return input;
      return concatBytes(
        input.subarray(0, run[0]),
        Uint8Array.from(m.value, (c) => c.charCodeAt(0)),
        input.subarray(run[1]),
      );
    }
  }
}

function isDigit(byte: number | undefined): boolean {
  return byte !== undefined && byte >= 0x30 && byte <= 0x39;
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(parts));
}

/** 1–`maxMutations` mutations of one of `seeds`, with a description of what was done (for failure reports). */
export function mutatedInput(
  seeds: readonly Uint8Array[],
  mutations: fc.Arbitrary<(input: Uint8Array) => Mutation> = mutationArb,
  maxMutations = 3,
): fc.Arbitrary<{ seedIndex: number; mutations: Mutation[]; bytes: Uint8Array }> {
  return fc
    .tuple(fc.nat({ max: seeds.length - 1 }), fc.array(mutations, { minLength: 1, maxLength: maxMutations }))
    .map(([seedIndex, makers]) => {
      let bytes = seeds[seedIndex] as Uint8Array;
      const mutations: Mutation[] = [];
      for (const make of makers) {
        const m = make(bytes);
        mutations.push(m);
        bytes = applyMutation(bytes, m);
      }
      return { seedIndex, mutations, bytes };
    });
}

/** Throws (failing the property) unless `error` is an EsignError other than INTERNAL (which means a bug, exit 1). */
export function assertTyped(error: unknown, what: string): asserts error is EsignError {
  if (error instanceof EsignError && error.code !== 'INTERNAL') return;
  const detail = error instanceof Error ? `${error.name}: ${error.message}\n${error.stack ?? ''}` : String(error);
  throw new Error(`${what} escaped as a non-EsignError: ${detail}`);
}

/** Runs one case: success or a typed EsignError, within CASE_TIME_LIMIT_MS. Returns the value or the error. */
export function outcome<T>(what: string, run: () => T): { ok: true; value: T } | { ok: false; error: EsignError } {
  const started = performance.now();
  let result: { ok: true; value: T } | { ok: false; error: EsignError };
  try {
    result = { ok: true, value: run() };
  } catch (error) {
    assertTyped(error, what);
    result = { ok: false, error };
  }
  const took = performance.now() - started;
  if (took > CASE_TIME_LIMIT_MS) throw new Error(`${what} took ${Math.round(took)} ms (a hang)`);
  return result;
}

/** The async form of `outcome`; a case that does not settle within the bound fails as a hang. */
export async function outcomeAsync<T>(
  what: string,
  run: () => Promise<T>,
): Promise<{ ok: true; value: T } | { ok: false; error: EsignError }> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what} did not settle within ${CASE_TIME_LIMIT_MS} ms (a hang)`)),
      CASE_TIME_LIMIT_MS,
    );
  });
  let result: { ok: true; value: T } | { ok: false; error: EsignError };
  try {
    result = { ok: true, value: await Promise.race([run(), hang]) };
  } catch (error) {
    if (error instanceof Error && error.message.includes('(a hang)')) throw error;
    assertTyped(error, what);
    result = { ok: false, error };
  } finally {
    clearTimeout(timer);
  }
  const took = performance.now() - started;
  if (took > CASE_TIME_LIMIT_MS) throw new Error(`${what} took ${Math.round(took)} ms (a hang)`);
  return result;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Every path to a value inside `value` (the root is `[]`). */
function jsonPaths(value: Json, prefix: Array<string | number> = []): Array<Array<string | number>> {
  const out: Array<Array<string | number>> = [prefix];
  if (Array.isArray(value)) value.forEach((item, i) => out.push(...jsonPaths(item, [...prefix, i])));
  else if (value !== null && typeof value === 'object')
    for (const [key, item] of Object.entries(value)) out.push(...jsonPaths(item, [...prefix, key]));
  return out;
}

function editAt(value: Json, path: Array<string | number>, edit: (old: Json) => Json | undefined): Json {
  if (path.length === 0) return edit(value) ?? null;
  const [head, ...rest] = path as [string | number, ...Array<string | number>];
  const copy: Json = Array.isArray(value) ? [...value] : { ...(value as Record<string, Json>) };
  const child = (copy as Record<string | number, Json>)[head] as Json;
  const next = rest.length === 0 ? edit(child) : editAt(child, rest, edit);
  if (next === undefined) {
    if (Array.isArray(copy)) copy.splice(head as number, 1);
    else delete (copy as Record<string, Json>)[head as string];
  } else (copy as Record<string | number, Json>)[head] = next;
  return copy;
}

const oddJson: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom<Json>(
    null,
    true,
    false,
    0,
    -1,
    1.5,
    1e308,
    '',
    ' ',
    'null',
    '-1',
    '1e400',
    'NaN',
    '0x10',
    '2026-13-45T99:99:99Z',
    '@@@',
    'AAA=',
    '====',
    '\u0000',
    [],
    {},
    [null],
    ['x'],
    { error: 'invalid_request' },
  ),
  fc.string({ maxLength: 20 }),
  fc.integer(),
  fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>,
);

/** A body derived from one of `seeds` (valid answers): a field replaced, deleted or added, the text damaged, or the status changed. */
export function jsonAnswerArb(seeds: readonly Json[]): fc.Arbitrary<{ status: number; body: string; json: unknown }> {
  const structural = fc
    .tuple(
      fc.nat({ max: seeds.length - 1 }),
      fc.array(fc.tuple(fc.nat(), fc.constantFrom('replace', 'delete', 'add'), oddJson, fc.string({ maxLength: 8 })), {
        minLength: 1,
        maxLength: 3,
      }),
    )
    .map(([i, edits]) => {
      let value = seeds[i] as Json;
      for (const [n, op, replacement, key] of edits) {
        const paths = jsonPaths(value);
        const path = paths[n % paths.length] as Array<string | number>;
        value = editAt(value, path, (old) => {
          if (op === 'delete') return undefined;
          if (op === 'add' && old !== null && typeof old === 'object' && !Array.isArray(old))
            return { ...old, [key]: replacement };
          return replacement;
        });
      }
      return JSON.stringify(value);
    });
  const textual = fc
    .tuple(fc.nat({ max: seeds.length - 1 }), fc.array(mutationArb, { minLength: 1, maxLength: 2 }))
    .map(([i, makers]) => {
      let bytes: Uint8Array = Buffer.from(JSON.stringify(seeds[i]));
      for (const make of makers) bytes = applyMutation(bytes, make(bytes));
      return Buffer.from(bytes).toString('utf8');
    });
  const status = fc.oneof(
    { weight: 6, arbitrary: fc.constant(200) },
    { weight: 1, arbitrary: fc.constantFrom(201, 204, 302, 400, 401, 403, 404, 409, 429, 500, 502, 503) },
  );
  return fc.tuple(status, fc.oneof(structural, textual)).map(([code, body]) => {
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      json = undefined;
    }
    return { status: code, body, json };
  });
}
