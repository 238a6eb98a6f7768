/**
 * What a plain seal of one PDF spends beyond its work, checked because the 1 MB single-file target
 * of `npm run bench` is within a few ms: Node modules only other runs need (each costs its compile
 * at every start, about 0.5–1.5 ms apiece on the bench machine) stay unloaded, and the token store
 * is read once (each read is four file operations through libuv's thread pool).
 * Both are seen from inside the run, through a --require preload in NODE_OPTIONS.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, TESTING_EXECUTABLE } from '../helpers/run-cli.js';
import { sealEnv, startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/tmp.js';

const SAMPLE_PDF = fileURLToPath(new URL('../../samples/contract.pdf', import.meta.url));
/** Loaded only by the runs that need them: batches (v8), TOTP waits, commander's executable subcommands, progress lines. */
const NOT_FOR_ONE_FILE = ['v8', 'timers/promises', 'child_process', 'perf_hooks', 'undici'];

let shared: TestSandbox;

beforeAll(async () => {
  shared = await startTestSandbox();
});
afterAll(async () => {
  await shared?.close();
});

/** Seals the sample with a preload that writes, at exit, Node's loaded modules and how often tokens.json was read. */
async function sealWatched(): Promise<{ modules: Set<string>; tokenReads: number }> {
  const dir = await tempDir('esign-overheads-');
  const preload = join(dir, 'watch.cjs');
  const report = join(dir, 'report.json');
  await writeFile(
    preload,
    `const fsp = require('node:fs/promises');
const readFile = fsp.readFile;
let tokenReads = 0;
fsp.readFile = (path, ...rest) => { if (String(path).endsWith('tokens.json')) tokenReads += 1; return readFile(path, ...rest); };
process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(report)}, JSON.stringify({ modules: process.moduleLoadList, tokenReads })));
`,
  );
  const run = await runCli(['sign', '--level', 'B-B', '-o', join(dir, 'out.pdf'), SAMPLE_PDF], {
    env: sealEnv(shared, 'v1', { NODE_OPTIONS: `--require ${preload}` }),
  });
  expect(run.code, run.stderr).toBe(0);
  const { modules, tokenReads } = JSON.parse(await readFile(report, 'utf8')) as {
    modules: string[];
    tokenReads: number;
  };
  return {
    modules: new Set(
      modules.filter((line) => line.startsWith('NativeModule ')).map((line) => line.slice('NativeModule '.length)),
    ),
    tokenReads,
  };
}

describe.skipIf(TESTING_EXECUTABLE)('what a seal of one PDF spends beyond its work', () => {
  it(`loads none of ${NOT_FOR_ONE_FILE.join(', ')}`, async () => {
    const { modules } = await sealWatched();
    // The preload sees what it should: modules every sign needs are there.
    expect([...modules]).toEqual(expect.arrayContaining(['crypto', 'http', 'fs/promises']));
    expect(NOT_FOR_ONE_FILE.filter((name) => modules.has(name))).toEqual([]);
  });

  it('reads the token store once: the service token is held for the run', async () => {
    // A first run obtains the token and writes it (client credentials); the second finds it there.
    await sealWatched();
    expect((await sealWatched()).tokenReads).toBe(1);
  });
});
