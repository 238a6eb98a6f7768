/**
 * Mutation fuzzing of the container reader: damaged copies of ASiC containers esign writes (one
 * stored, one deflated, one with many entries) and of one laid out as others do (mimetype last,
 * deflated, with trailing white space) end, through the ZIP reader, the lenient mimetype check and
 * a read of every entry, in a container or a typed EsignError within a bound, never another
 * exception or a hang. What it does read holds only safe, unique names. The same for the ASiCManifest
 * reader on damaged manifests.
 * `ESIGN_FUZZ_RUNS=N` runs N times as many cases.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { fuzzParams, mutatedInput, mutationArb, outcomeAsync } from '../../test/helpers/fuzz.js';
import { ASIC_S_MIMETYPE, unsafeName } from '../core/forms/shared/asic-container-rules.js';
import { buildManifest, parseManifest } from '../core/forms/asic-e/manifest.js';
import { bytesSource } from '../core/pdf/byte-source.js';
import type { OutputFile } from '../core/sign-workflow.js';
import { mimetypeWarnings } from './forms/shared/asic-container.js';
import { openContainer, writeZip, type EntryToWrite } from './zip-container.js';

/** An OutputFile over memory: what writeZip appends, kept in order. */
function memoryOutput(): { output: OutputFile; bytes: () => Uint8Array } {
  const chunks: Uint8Array[] = [];
  const output: OutputFile = {
    copyFrom: async () => undefined,
    write: async (bytes) => void chunks.push(...(bytes instanceof Uint8Array ? [bytes] : bytes)),
    suspend: async () => undefined,
    commit: async () => undefined,
    abort: async () => undefined,
  };
  return { output, bytes: () => Buffer.concat(chunks) };
}

async function container(entries: EntryToWrite[]): Promise<Uint8Array> {
  const { output, bytes } = memoryOutput();
  await writeZip(output, ASIC_S_MIMETYPE, entries, new Date('2026-01-02T03:04:05Z'), () => undefined);
  return bytes();
}

/** Everything verify does with a container before its signatures: the layout, the entries, every byte. */
async function readAll(bytes: Uint8Array): Promise<string[]> {
  const opened = await openContainer(bytesSource(bytes));
  try {
    await mimetypeWarnings(opened, ASIC_S_MIMETYPE);
    for (const entry of opened.entries) for await (const chunk of opened.read(entry.name)) void chunk;
    return opened.entries.map((entry) => entry.name);
  } finally {
    opened.close();
  }
}

let seeds: Uint8Array[] = [];
beforeAll(async () => {
  const text = Buffer.from('a document, repeated\n'.repeat(200));
  seeds = [
    await container([
      { name: 'doc.txt', bytes: text, compress: false },
      { name: 'META-INF/signature.p7s', bytes: Buffer.alloc(300, 0x30), compress: false },
    ]),
    await container([
      { name: 'doc.txt', bytes: text, compress: true },
      { name: 'META-INF/signature.p7s', bytes: Buffer.alloc(300, 0x30), compress: true },
    ]),
    await container(
      Array.from({ length: 12 }, (_, index) => ({
        name: `dir/${index}.xml`,
        bytes: Buffer.from(`<a>${index}</a>`),
        compress: index % 2 === 0,
      })),
    ),
    await looseContainer(text),
  ];
});

/** A container as others lay it out: the document first, then `mimetype`, deflated and ending in CR LF. */
async function looseContainer(text: Buffer): Promise<Uint8Array> {
  const yazl = await import('yazl');
  const zip = new yazl.ZipFile();
  zip.addBuffer(text, 'doc.txt', { compress: true });
  zip.addBuffer(Buffer.from(`${ASIC_S_MIMETYPE}\r\n`), 'mimetype', { compress: true });
  zip.addBuffer(Buffer.alloc(300, 0x30), 'META-INF/signature.p7s', { compress: false });
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

describe('container reader under mutation', () => {
  it('reads the containers esign writes', async () => {
    expect(await readAll(seeds[0]!)).toEqual(['mimetype', 'doc.txt', 'META-INF/signature.p7s']);
    expect(await readAll(seeds[2]!)).toHaveLength(13);
    expect(await readAll(seeds[3]!)).toEqual(['doc.txt', 'mimetype', 'META-INF/signature.p7s']);
  });

  it('ends in a container of safe, unique names or a typed EsignError, within a bound', async () => {
    await fc.assert(
      fc.asyncProperty(mutatedInput(seeds, mutationArb, 4), async ({ bytes }) => {
        const result = await outcomeAsync('container reader', () => readAll(bytes));
        if (!result.ok) return;
        for (const name of result.value) expect(unsafeName(name)).toBeUndefined();
        expect(new Set(result.value.map((name) => name.toLowerCase())).size).toBe(result.value.length);
      }),
      fuzzParams(300),
    );
  });

  it('reads a damaged ASiCManifest into references or a typed EsignError', async () => {
    const manifest = buildManifest({
      signature: 'META-INF/signature001.p7s',
      references: ['a.txt', 'dir/b c.xml', 'ζ.pdf'].map((name) => ({
        name,
        mimeType: 'text/plain',
        digest: 'sha256' as const,
        digestValue: new Uint8Array(32).fill(7),
      })),
    });
    await fc.assert(
      fc.asyncProperty(mutatedInput([manifest], mutationArb, 4), async ({ bytes }) => {
        const result = await outcomeAsync('manifest reader', async () => parseManifest(bytes, 'M.xml'));
        if (result.ok) expect(result.value.references.length).toBeGreaterThan(0);
      }),
      fuzzParams(300),
    );
  });
});
