/**
 * Signed containers judged by tools we did not write: `openssl cms -verify` on an enveloping .p7m
 * (its -out compared byte for byte with the input).
 */
import { spawnSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTool } from '../helpers/pdf-judges.js';
import { runCli } from '../helpers/run-cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDirForFile } from '../helpers/tmp.js';

const has = (tool: string) => spawnSync('which', [tool]).status === 0;
const missing = ['openssl'].filter((tool) => !has(tool));

let sandbox: TestSandbox;
let work: { dir: string; remove: () => Promise<void> };
beforeAll(async () => {
  if (missing.length > 0) return;
  sandbox = await startTestSandbox({ autoApprove: true });
  work = await tempDirForFile('esign-interop-containers-');
});
afterAll(async () => {
  await sandbox?.close();
  await work?.remove();
});

function opensslCmsVerify(args: string[]) {
  return runTool('openssl', [
    'cms',
    '-verify',
    '-binary',
    '-inform',
    'DER',
    ...args,
    '-CAfile',
    sandbox.rootPemPath,
    '-purpose',
    'any',
  ]);
}

describe.skipIf(missing.length > 0)('enveloping CAdES (.p7m) judged by openssl cms -verify', () => {
  it.each(['B-B', 'B-T'])('gives back the content byte for byte at %s, and refuses a changed byte', async (level) => {
    const input = join(work.dir, `fattura-${level}.xml`);
    const content = Buffer.concat([Buffer.from('<?xml version="1.0"?>\n<Fattura>'), Buffer.alloc(300_000, 0x41)]);
    content[content.length - 1] = 0; // binary: -binary must keep every byte
    await writeFile(input, content);
    const signed = await runCli(['--auto-approve', '--quiet', 'sign', '--format', 'p7m', '--level', level, input], {
      env: sandbox.env,
    });
    expect(signed.code, signed.stderr).toBe(0);
    const out = join(work.dir, `out-${level}.xml`);
    const verified = await opensslCmsVerify(['-in', `${input}.p7m`, '-out', out]);
    expect(verified.status, verified.stderr).toBe(0);
    expect((await readFile(out)).equals(content)).toBe(true);

    const p7m = await readFile(`${input}.p7m`);
    const at = p7m.indexOf('<Fattura>') + 1;
    p7m[at] = p7m[at]! ^ 1;
    await writeFile(join(work.dir, `tampered-${level}.p7m`), p7m);
    const tampered = await opensslCmsVerify(['-in', join(work.dir, `tampered-${level}.p7m`), '-out', '/dev/null']);
    expect(tampered.status).not.toBe(0);
  });
});
