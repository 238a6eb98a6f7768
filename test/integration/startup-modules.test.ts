/**
 * What a plain seal of one PDF loads of Node's own modules. Each costs its compile at every start
 * (about 0.5–1.5 ms apiece on the bench machine), and the 1 MB single-file target of
 * `npm run bench` is within a few of them: the ones only other runs need stay unloaded.
 * The list is read from process.moduleLoadList at exit, through a --require preload in NODE_OPTIONS.
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

describe.skipIf(TESTING_EXECUTABLE)('Node modules a seal of one PDF loads', () => {
  it(`loads none of ${NOT_FOR_ONE_FILE.join(', ')}`, async () => {
    const dir = await tempDir('esign-startup-');
    const preload = join(dir, 'modules.cjs');
    const listed = join(dir, 'modules.txt');
    await writeFile(preload, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(listed)}, process.moduleLoadList.join('\\n')));\n`);
    const run = await runCli(['sign', '--level', 'B-B', '-o', join(dir, 'out.pdf'), SAMPLE_PDF], { env: sealEnv(shared, 'v1', { NODE_OPTIONS: `--require ${preload}` }) });
    expect(run.code, run.stderr).toBe(0);
    const loaded = new Set((await readFile(listed, 'utf8')).split('\n').filter((line) => line.startsWith('NativeModule ')).map((line) => line.slice('NativeModule '.length)));
    // The preload sees what it should: modules every sign needs are there.
    expect([...loaded]).toEqual(expect.arrayContaining(['crypto', 'http', 'fs/promises']));
    expect(NOT_FOR_ONE_FILE.filter((name) => loaded.has(name))).toEqual([]);
  });
});
