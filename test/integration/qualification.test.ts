/** `esign verify` with trusted lists in the cache: qualification of signatures and timestamps (ETSI TS 119 615). */
import { access, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VerificationReport } from '../../src/core/verify/types.js';
import { listEntry, sandboxServices, writeLists } from '../helpers/qualified-lists.js';
import { runCli } from '../helpers/run-cli.js';
import { sealEnv, startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDirForFile } from '../helpers/tmp.js';
import { pdfLibBytes } from '../helpers/pdf-fixtures.js';

let sandbox: TestSandbox;
let work: { dir: string; remove: () => Promise<void> };
const signed: Record<string, string> = {};

beforeAll(async () => {
  sandbox = await startTestSandbox({ autoApprove: true });
  work = await tempDirForFile('esign-qualification-');
  const input = join(work.dir, 'input.pdf');
  await writeFile(input, await pdfLibBytes({ pages: 1 }));
  for (const credential of ['alice-rsa2048', 'alice-rsa3072']) {
    const output = join(work.dir, `${credential}.pdf`);
    const result = await runCli(
      ['--auto-approve', '--quiet', 'sign', '--level', 'B-T', '-c', credential, '-o', output, input],
      { env: sandbox.env },
    );
    expect(result.code, result.stderr).toBe(0);
    signed[credential] = output;
  }
});
afterAll(async () => {
  await sandbox?.close();
  await work?.remove();
});

let counter = 0;
/** A cache of its own per case, written before the run. */
async function verifyWith(
  entries: Parameters<typeof writeLists>[1],
  file: string,
  options: { env?: Record<string, string>; json?: boolean } = {},
) {
  const cacheDir = join(work.dir, `cache-${++counter}`);
  const env = { ...(options.env ?? sandbox.env), ESIGN_CACHE_DIR: cacheDir };
  await writeLists(env, entries);
  const result = await runCli([...(options.json === false ? [] : ['--json']), 'verify', file], { env });
  await rm(cacheDir, { recursive: true, force: true });
  return result;
}

describe('esign verify with cached trusted lists', () => {
  it('names a signature made with a QSCD credential a QESig, with its service, and its timestamp qualified', async () => {
    const result = await verifyWith([listEntry(sandboxServices(sandbox.sandbox.pki))], signed['alice-rsa2048']!);
    expect(result.code, result.stderr).toBe(0);
    const report = result.json<VerificationReport>();
    expect(report.signatures[0]).toMatchObject({
      status: 'valid',
      qualification: {
        name: 'QESig',
        qualifiedAtIssuance: true,
        qualifiedAtSigning: true,
        type: 'esig',
        qscd: 'yes',
        test: false,
        services: [{ provider: 'esign Sandbox QTSP', territory: 'BE', sequenceNumber: 7 }],
      },
      timestamp: { qualified: { name: 'QTSA', qualified: true, services: [{ name: 'esign Sandbox TEST TSA' }] } },
    });
  });

  it('says it in one human line, TEST-labelled when the list is a sandbox TEST list', async () => {
    const result = await verifyWith(
      [listEntry(sandboxServices(sandbox.sandbox.pki), { test: true })],
      signed['alice-rsa2048']!,
      { json: false },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(
      'qualified   TEST — qualified electronic signature (QESig): BE, esign Sandbox QTSP, key on a QSCD',
    );
    expect(result.stdout).toContain('TEST — qualified electronic time stamp (BE, esign Sandbox QTSP)');
  });

  it('a credential off a QSCD (QCP-n, QCNoQSCD) makes an AdESig-QC', async () => {
    const result = await verifyWith([listEntry(sandboxServices(sandbox.sandbox.pki))], signed['alice-rsa3072']!);
    expect(result.json<VerificationReport>().signatures[0]?.qualification).toMatchObject({
      name: 'AdESig-QC',
      qscd: 'no',
    });
  });

  it('a list past its next update is still used, with a warning (DSS default policy); trustListPolicy strict does not use it', async () => {
    const expired = [listEntry(sandboxServices(sandbox.sandbox.pki), { nextUpdate: '2020-01-01T00:00:00Z' })];
    const result = await verifyWith(expired, signed['alice-rsa2048']!);
    const signature = result.json<VerificationReport>().signatures[0];
    expect(signature?.qualification).toMatchObject({
      name: 'QESig',
      warnings: [expect.stringMatching(/^trusted list BE expired: its next update was due 2020-01-01/)],
    });
    expect(signature?.timestamp?.qualified).toMatchObject({ name: 'QTSA', warnings: [expect.any(String)] });
    const human = await verifyWith(expired, signed['alice-rsa2048']!, { json: false });
    expect(human.stdout).toMatch(/QESig\).*warning: trusted list BE expired/);
    const strict = await verifyWith(expired, signed['alice-rsa2048']!, {
      env: { ...sandbox.env, ESIGN_TRUST_LIST_POLICY: 'strict' },
    });
    const strictSignature = strict.json<VerificationReport>().signatures[0];
    expect(strictSignature?.qualification).toMatchObject({ name: 'N/A' });
    expect(strictSignature?.qualification?.reason).toMatch(/trusted list BE expired.*trustListPolicy strict/);
  });

  it('a service withdrawn before the signature: qualified at issuance only, an AdESig', async () => {
    const services = sandboxServices(sandbox.sandbox.pki);
    const ca = services[0]!;
    ca.history.unshift({
      ...ca.history[0]!,
      status: 'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/withdrawn',
      from: new Date(Date.now() - 60_000).toISOString(),
    });
    ca.history[1] = { ...ca.history[1]!, from: '2016-07-01T00:00:00Z' };
    const result = await verifyWith([listEntry(services)], signed['alice-rsa2048']!);
    expect(result.json<VerificationReport>().signatures[0]?.qualification).toMatchObject({
      name: 'AdESig',
      qualifiedAtIssuance: true,
      qualifiedAtSigning: false,
    });
  });

  it('a signature that is not valid is "Not AdES but QC with QSCD" (TS 119 172-4): never a silent QES', async () => {
    const bytes = new Uint8Array(await readFile(signed['alice-rsa2048']!));
    bytes[200] = bytes[200]! ^ 0x01; // inside the first signed range
    const tampered = join(work.dir, 'tampered.pdf');
    await writeFile(tampered, bytes);
    const result = await verifyWith([listEntry(sandboxServices(sandbox.sandbox.pki))], tampered);
    expect(result.code).toBe(9);
    expect(result.json<VerificationReport>().signatures[0]).toMatchObject({
      status: 'invalid',
      indication: 'TOTAL-FAILED',
      qualification: {
        name: 'Not AdES but QC with QSCD',
        reason: 'the signature is not valid (TOTAL-FAILED: HASH_FAILURE)',
      },
    });
  });

  it('N/A when no list reaches the chain, naming the list the LOTL points to that would decide, and the command', async () => {
    const lotl = listEntry([], {
      territory: 'EU',
      isLotl: true,
      pointers: ['BE', 'NL'].map((territory) => ({
        territory,
        location: `https://tl.example/${territory}.xml`,
        mimeType: 'application/vnd.etsi.tsl+xml',
        signingCertificates: [],
      })),
    });
    // BE is cached and names none of the chain's CAs; NL, the issuer's country, is not cached.
    const result = await verifyWith([lotl, listEntry([])], signed['alice-rsa2048']!);
    const signature = result.json<VerificationReport>().signatures[0];
    expect(signature?.qualification).toMatchObject({
      name: 'N/A',
      missingList: { territory: 'NL', command: 'esign trust update --territories NL' },
    });
    const human = await verifyWith([lotl, listEntry([])], signed['alice-rsa2048']!, { json: false });
    expect(human.stdout).toMatch(/qualification not applicable \(N\/A\): .*run `esign trust update --territories NL`/);
  });

  it('an entry whose signature failed (no snapshot) gives no qualification', async () => {
    const result = await verifyWith(
      [{ territory: 'BE', lastFailure: { at: '2026-01-01T00:00:00Z', reason: 'bad signature' } }],
      signed['alice-rsa2048']!,
    );
    expect(result.json<VerificationReport>().signatures[0]?.qualification).toBeUndefined();
  });

  it('qualifies the signatures of a .p7m, an ASiC-E and an ASiC-S, and the timestamp of a timestamped ASiC-S', async () => {
    const document = join(work.dir, 'fattura.xml');
    await writeFile(document, '<fattura>1</fattura>\n');
    const made: string[] = [];
    for (const format of ['p7m', 'asice', 'asics']) {
      const output = join(work.dir, `qualified.${format}`);
      const result = await runCli(
        [
          '--auto-approve',
          '--quiet',
          'sign',
          '--level',
          'B-T',
          '-c',
          'alice-rsa2048',
          '--format',
          format,
          '-o',
          output,
          document,
        ],
        { env: sandbox.env },
      );
      expect(result.code, result.stderr).toBe(0);
      made.push(output);
    }
    for (const file of made) {
      const result = await verifyWith([listEntry(sandboxServices(sandbox.sandbox.pki))], file);
      expect(result.code, `${file}: ${result.stderr}`).toBe(0);
      expect(result.json<VerificationReport>().signatures[0], file).toMatchObject({
        status: 'valid',
        qualification: { name: 'QESig', qscd: 'yes' },
        timestamp: { qualified: { qualified: true } },
      });
    }
    const stamped = join(work.dir, 'stamped.asics');
    const stamp = await runCli(['--quiet', 'timestamp', '--format', 'asics', '-o', stamped, document], {
      env: sandbox.env,
    });
    expect(stamp.code, stamp.stderr).toBe(0);
    const result = await verifyWith([listEntry(sandboxServices(sandbox.sandbox.pki))], stamped);
    expect(result.code, result.stderr).toBe(0);
    expect(result.json<VerificationReport>().signatures[0]).toMatchObject({
      kind: 'docTimeStamp',
      status: 'valid',
      timestamp: { qualified: { qualified: true } },
    });
  });

  it('on a profile without trust anchors the lists make the chain trusted; a TEST list is never used there', async () => {
    const env = { ESIGN_CONFIG_DIR: join(work.dir, 'own-profile') };
    const init = await runCli(['config', 'init', 'work', '--set', 'signingBaseUrl=https://sign.example/api'], { env });
    expect(init.code, init.stderr).toBe(0);
    const real = await verifyWith([listEntry(sandboxServices(sandbox.sandbox.pki))], signed['alice-rsa2048']!, { env });
    expect(real.code, real.stdout).toBe(0);
    expect(real.json<VerificationReport>().signatures[0]).toMatchObject({
      status: 'valid',
      chain: { trusted: true },
      qualification: { name: 'QESig' },
    });
    const test = await verifyWith(
      [listEntry(sandboxServices(sandbox.sandbox.pki), { test: true })],
      signed['alice-rsa2048']!,
      { env },
    );
    expect(test.code).toBe(9);
    expect(test.json<VerificationReport>()).toMatchObject({
      code: 'VERIFY_UNTRUSTED',
      signatures: [{ chain: { trusted: false } }],
    });
    expect(test.json<VerificationReport>().signatures[0]?.qualification).toBeUndefined();
  });
});

describe('esign credentials and sign with cached trusted lists', () => {
  let env: Record<string, string>;
  beforeAll(async () => {
    env = { ...sandbox.env, ESIGN_CACHE_DIR: join(work.dir, 'signing-cache') };
    await writeLists(env, [listEntry(sandboxServices(sandbox.sandbox.pki), { test: true })]);
  });

  it('credentials list gives each credential its qualification; info says it in a line', async () => {
    const list = await runCli(['--auto-approve', '--json', 'credentials', 'list'], { env });
    expect(list.code, list.stderr).toBe(0);
    const byId = Object.fromEntries(
      list
        .json<{ credentials: Array<{ credentialID: string; qualification?: { name: string; test: boolean } }> }>()
        .credentials.map((c) => [c.credentialID, c.qualification]),
    );
    expect(byId['alice-rsa2048']).toMatchObject({ name: 'QESig', test: true });
    expect(byId['alice-rsa3072']).toMatchObject({ name: 'AdESig-QC' });
    const human = await runCli(['--auto-approve', 'credentials', 'list'], { env });
    expect(human.stdout).toMatch(/qualification/);
    expect(human.stdout).toMatch(/alice-rsa3072 .*AdESig-QC \(TEST\)/);
    const info = await runCli(['--auto-approve', 'credentials', 'show', 'alice-rsa2048'], { env });
    expect(info.stdout).toContain(
      'qualified    TEST — qualified electronic signature (QESig): BE, esign Sandbox QTSP, key on a QSCD',
    );
  });

  it('sign reports the qualification of what it made, in its summary line and --json', async () => {
    const input = join(work.dir, 'made.pdf');
    await writeFile(input, await pdfLibBytes({ pages: 1 }));
    const json = await runCli(['--auto-approve', '--json', 'sign', '--level', 'B-T', '-c', 'alice-rsa2048', input], {
      env,
    });
    expect(json.code, json.stderr).toBe(0);
    expect(json.json()).toMatchObject({ qualification: { name: 'QESig', qscd: 'yes', test: true } });
    const human = await runCli(
      ['--auto-approve', 'sign', '-f', '-c', 'alice-rsa3072', '-o', join(work.dir, 'made-2.pdf'), input],
      { env },
    );
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/; TEST — advanced electronic signature with a qualified certificate \(AdESig-QC\)/);
  });

  it('sign --complete (the split flow) reports the qualification of what it made, as a one-step sign does', async () => {
    const input = join(work.dir, 'split.pdf');
    await writeFile(input, await pdfLibBytes({ pages: 1 }));
    const complete = async (credential: string, json: boolean) => {
      const state = join(work.dir, `split-${credential}.json`);
      const output = join(work.dir, `split-${credential}.pdf`);
      const prepared = await runCli(
        ['--auto-approve', '--json', 'sign', '--prepare', '--state', state, '-c', credential, '-o', output, input],
        { env },
      );
      expect(prepared.code, prepared.stderr).toBe(0);
      const [approval] = prepared.json<{ approvals: Array<{ authorizationUrl: string }> }>().approvals;
      const location = (await fetch(approval!.authorizationUrl, { redirect: 'manual' })).headers.get('location')!;
      const code = new URL(location).searchParams.get('code')!;
      const completed = await runCli(
        [...(json ? ['--json'] : []), 'sign', '--complete', '--state', state, '--code', code],
        {
          env,
        },
      );
      expect(completed.code, completed.stderr).toBe(0);
      return { ...completed, output };
    };
    const qes = await complete('alice-rsa2048', true);
    expect(qes.json()).toMatchObject({
      output: qes.output,
      format: 'PAdES',
      qualification: { name: 'QESig', qscd: 'yes', test: true },
    });
    const human = await complete('alice-rsa3072', false);
    expect(human.stdout.trim()).toMatch(
      /^✓ \S+split\.pdf → \S+split-alice-rsa3072\.pdf \(PAdES B-T, [^)]+\); TEST — advanced electronic signature with a qualified certificate \(AdESig-QC\)/,
    );
  });

  it('--require qes refuses a credential off a QSCD before any approval (exit 13); ESIGN_REQUIRE too; qualified accepts a QESig', async () => {
    const input = join(work.dir, 'required.pdf');
    await writeFile(input, await pdfLibBytes({ pages: 1 }));
    const state = join(work.dir, 'required-state.json');
    const refused = await runCli(
      ['--json', 'sign', '--require', 'qes', '-c', 'alice-rsa3072', '--prepare', '--state', state, input],
      { env },
    );
    expect(refused.code).toBe(13);
    expect(refused.json()).toMatchObject({
      error: { code: 'QUALIFICATION_NOT_MET', exitCode: 13, details: { qualification: { name: 'AdESig-QC' } } },
    });
    expect(refused.json<{ error: { message: string } }>().error.message).toMatch(
      /^--require qes: alice-rsa3072 would make AdESig-QC, not a qualified electronic signature \(QESig\); nothing was signed\.$/,
    );
    await expect(access(state)).rejects.toThrow();
    const byEnv = await runCli(['--auto-approve', 'sign', '-c', 'alice-rsa2048', input], {
      env: { ...env, ESIGN_REQUIRE: 'qeseal' },
    });
    expect(byEnv.code).toBe(13);
    expect(byEnv.stderr).toContain('would make QESig, not a qualified electronic seal (QESeal)');
    await expect(access(join(work.dir, 'required-signed.pdf'))).rejects.toThrow();
    const accepted = await runCli(['--auto-approve', 'sign', '--require', 'qualified', '-c', 'alice-rsa2048', input], {
      env,
    });
    expect(accepted.code, accepted.stderr).toBe(0);
  });

  it('an ASiC-E: --require refuses a credential off a QSCD before anything is signed; the summary names the qualification', async () => {
    const document = join(work.dir, 'asice-required.xml');
    await writeFile(document, '<doc/>\n');
    const output = join(work.dir, 'required.asice');
    const refused = await runCli(
      [
        '--auto-approve',
        '--json',
        'sign',
        '--format',
        'asice',
        '--asic-signature',
        'cades',
        '--require',
        'qes',
        '-c',
        'alice-rsa3072',
        '-o',
        output,
        document,
      ],
      { env },
    );
    expect(refused.code).toBe(13);
    expect(refused.json()).toMatchObject({ error: { code: 'QUALIFICATION_NOT_MET' } });
    await expect(access(output)).rejects.toThrow();
    const noLists = await runCli(
      [
        '--auto-approve',
        'sign',
        '--format',
        'asice',
        '--asic-signature',
        'cades',
        '--require',
        'qes',
        '-c',
        'alice-rsa2048',
        '-o',
        output,
        document,
      ],
      { env: { ...env, ESIGN_CACHE_DIR: join(work.dir, 'asice-no-cache') } },
    );
    expect(noLists.code).toBe(13);
    expect(noLists.stderr).toContain('no verified trusted list is cached');
    await expect(access(output)).rejects.toThrow();
    const made = await runCli(
      [
        '--auto-approve',
        '--json',
        'sign',
        '--format',
        'asice',
        '--asic-signature',
        'cades',
        '--require',
        'qes',
        '-c',
        'alice-rsa2048',
        '-o',
        output,
        document,
      ],
      { env },
    );
    expect(made.code, made.stderr).toBe(0);
    expect(made.json()).toMatchObject({ packaging: 'asic-e', qualification: { name: 'QESig', test: true } });
    const human = await runCli(
      [
        '--auto-approve',
        'sign',
        '-f',
        '--format',
        'asice',
        '--asic-signature',
        'cades',
        '-c',
        'alice-rsa3072',
        '-o',
        output,
        document,
      ],
      { env },
    );
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout + human.stderr).toMatch(/ASiC-E, CAdES B-\w+, [^)]+\); .*AdESig-QC/);
  });

  it('--require without cached lists refuses at once (exit 13); a bad value is a usage error', async () => {
    const input = join(work.dir, 'no-lists.pdf');
    await writeFile(input, await pdfLibBytes({ pages: 1 }));
    const noLists = await runCli(['--auto-approve', '--json', 'sign', '--require', 'qes', input], {
      env: { ...sandbox.env, ESIGN_CACHE_DIR: join(work.dir, 'empty-cache') },
    });
    expect(noLists.code).toBe(13);
    expect(noLists.json()).toMatchObject({ error: { code: 'QUALIFICATION_UNKNOWN' } });
    const bad = await runCli(['--auto-approve', 'sign', '--require', 'qesig', input], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--require must be qes, qeseal or qualified, not "qesig".');
  });
});

describe('a seal in CI on a profile without trust anchors', () => {
  it('checks the TSA chain against the cached lists (no warning), and --require qeseal holds for a QSCD seal', async () => {
    const input = join(work.dir, 'sealed.pdf');
    await writeFile(input, await pdfLibBytes({ pages: 1 }));
    const withLists = {
      ...sealEnv(sandbox, 'v1', { ESIGN_TRUST_ANCHORS: undefined }),
      ESIGN_CACHE_DIR: join(work.dir, 'seal-cache'),
    };
    await writeLists(withLists, [listEntry(sandboxServices(sandbox.sandbox.pki))]);
    const sealed = await runCli(['--json', 'sign', '--level', 'B-T', '--require', 'qeseal', input], { env: withLists });
    expect(sealed.code, sealed.stderr).toBe(0);
    expect(sealed.stderr).not.toContain('TSA');
    expect(sealed.json()).toMatchObject({ qualification: { name: 'QESeal', type: 'eseal', test: false } });
    const withoutLists = { ...withLists, ESIGN_CACHE_DIR: join(work.dir, 'seal-no-cache') };
    const offQscd = await runCli(['--json', 'sign', '-f', '--require', 'qeseal', input], {
      env: { ...withLists, ESIGN_CREDENTIAL: 'acme-seal-otp' },
    });
    expect(offQscd.code).toBe(13);
    expect(offQscd.json()).toMatchObject({ error: { code: 'QUALIFICATION_NOT_MET' } });
    const unchecked = await runCli(['sign', '-f', '--level', 'B-T', input], { env: withoutLists });
    expect(unchecked.code, unchecked.stderr).toBe(0);
    expect(unchecked.stderr).toContain("so the TSA's certificate chain is not checked");
  });
});
