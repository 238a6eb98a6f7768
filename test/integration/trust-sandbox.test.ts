/**
 * `esign trust update` against the sandbox's TEST lists (a LOTL and the national list ZZ), over HTTP
 * and HTTPS, with each trusted-list quirk; and a real profile meeting them.
 */
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { derToPem } from '../../src/sandbox/pki.js';
import type { QuirkName } from '../../src/sandbox/signing/quirks.js';
import { runCli } from '../helpers/run-cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/tmp.js';

let shared: TestSandbox;
beforeAll(async () => {
  shared = await startTestSandbox();
});
afterAll(async () => shared?.close());
afterEach(() => shared.sandbox.quirks.set([]));

interface Outcome {
  territory: string;
  state: string;
  reason?: string;
  code?: string;
}

async function cacheEnv(sandbox = shared) {
  return { ...sandbox.env, ESIGN_CACHE_DIR: join(await tempDir('esign-trust-cache-'), 'cache') };
}

async function update(env: Record<string, string>, ...quirks: QuirkName[]) {
  shared.sandbox.quirks.set(quirks);
  const result = await runCli(['--json', 'trust', 'update'], { env });
  return { ...result, lists: result.json<{ lists: Outcome[] }>().lists };
}

describe('esign trust update on the sandbox profile', () => {
  it('verifies the TEST LOTL and the list ZZ it points to; status and show read them back', async () => {
    const env = await cacheEnv();
    const result = await update(env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.lists.map((l) => [l.territory, l.state])).toEqual([
      ['EU', 'updated'],
      ['ZZ', 'updated'],
    ]);
    // Again: conditional requests, answered 304 Not Modified.
    const again = await update(env);
    expect(again.lists.map((l) => [l.territory, l.state])).toEqual([
      ['EU', 'unchanged'],
      ['ZZ', 'unchanged'],
    ]);
    const status = await runCli(['--json', 'trust', 'status'], { env });
    const zz = status.json<{ lists: Array<Record<string, unknown>> }>().lists.find((l) => l['territory'] === 'ZZ')!;
    expect(zz).toMatchObject({
      state: 'verified',
      test: true,
      services: {
        total: 2,
        byType: { 'http://uri.etsi.org/TrstSvc/Svctype/CA/QC': 1, 'http://uri.etsi.org/TrstSvc/Svctype/TSA/QTST': 1 },
      },
    });
    const show = await runCli(['--json', 'trust', 'show', 'ZZ'], { env });
    const services = show.json<{ services: Array<Record<string, unknown>> }>().services;
    expect(services[0]).toMatchObject({
      type: 'http://uri.etsi.org/TrstSvc/Svctype/CA/QC',
      status: 'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/granted',
      qualifiers: [
        'http://uri.etsi.org/TrstSvc/TrustedList/SvcInfoExt/QCWithQSCD',
        'http://uri.etsi.org/TrstSvc/TrustedList/SvcInfoExt/QCNoQSCD',
      ],
    });
  });

  it('--territories fetches the LOTL and only the lists it names, over the setting trustListTerritories', async () => {
    const several = await startTestSandbox({ trustLists: 3 }); // ZZ, XA and XB
    try {
      const env = { ...(await cacheEnv(several)), ESIGN_TRUST_LIST_TERRITORIES: 'XA' };
      const fetched = async (...args: string[]) => {
        const result = await runCli(['--json', 'trust', 'update', ...args], { env });
        expect(result.code, result.stderr).toBe(0);
        return result.json<{ lists: Outcome[] }>().lists.map((l) => [l.territory, l.state]);
      };
      expect(await fetched()).toEqual([
        ['EU', 'updated'],
        ['XA', 'updated'],
      ]);
      expect(await fetched('--territories', 'zz, XB')).toEqual([
        ['EU', 'unchanged'],
        ['ZZ', 'updated'],
        ['XB', 'updated'],
      ]);
      const bad = await runCli(['trust', 'update', '--territories', 'ZZ,1'], { env });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('--territories: "1" is not a two-letter territory code');
    } finally {
      await several.close();
    }
  });

  it('names a broken list signature and an unreachable list, and keeps the copy verified before', async () => {
    const env = await cacheEnv();
    expect((await update(env)).code).toBe(0);
    const broken = await update(env, 'tl-broken-signature');
    expect(broken.code).toBe(10);
    expect(broken.lists[1]).toMatchObject({
      territory: 'ZZ',
      state: 'failed',
      code: 'TRUST_LIST_SIGNATURE_INVALID',
      reason: 'ZZ: a signed part was changed (digest mismatch)',
    });
    expect(broken.stderr).toContain('error: ZZ: a signed part was changed (digest mismatch)');
    const unreachable = await update(env, 'tl-unreachable');
    expect(unreachable.code).toBe(10);
    expect(unreachable.lists[1]).toMatchObject({ territory: 'ZZ', state: 'failed', code: 'HTTP_UNREACHABLE' });
    const status = await runCli(['--json', 'trust', 'status'], { env });
    const zz = status.json<{ lists: Array<Record<string, unknown>> }>().lists.find((l) => l['territory'] === 'ZZ')!;
    expect(zz['state']).toBe('verified');
    expect((zz['lastFailure'] as { reason: string }).reason).toMatch(/^ZZ: Could not reach/);
  });

  it('shows an expired list, a withdrawn service, and follows a pivot after a LOTL key rotation', async () => {
    const env = await cacheEnv();
    expect((await update(env, 'tl-expired')).code).toBe(0);
    const status = await runCli(['trust', 'status'], { env });
    expect(status.stdout).toMatch(/ZZ \(TEST\).*expired \(past its next update\)/);

    expect((await update(env, 'tl-withdrawn-service')).code).toBe(0);
    const show = await runCli(['--json', 'trust', 'show', 'ZZ'], { env });
    expect(show.json<{ services: Array<{ status: string }> }>().services[0]!.status).toBe(
      'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/withdrawn',
    );

    const pivot = await update(await cacheEnv(), 'lotl-pivot');
    expect(pivot.code, pivot.stderr).toBe(0);
    expect(pivot.lists.map((l) => [l.territory, l.state])).toEqual([
      ['EU', 'updated'],
      ['ZZ', 'updated'],
    ]);
  });

  it('refuses the TEST lists on a profile that is not a sandbox profile, in one line', async () => {
    const env = {
      ...(await cacheEnv()),
      ESIGN_PROFILE: 'env',
      ESIGN_LOTL_URL: shared.sandbox.urls.lotl!,
    };
    // The sandbox profile's TEST lists are kept apart: a real profile's cache has none of them.
    expect((await runCli(['trust', 'update'], { env: { ...env, ESIGN_PROFILE: 'sandbox' } })).code).toBe(0);
    const real = await runCli(['--json', 'trust', 'status'], { env });
    expect(real.json<{ lists: unknown[] }>().lists).toEqual([]);
    const result = await runCli(['trust', 'update'], { env });
    expect(result.code).toBe(9);
    expect(result.stderr.trim()).toBe(
      `error: EU: ${shared.sandbox.urls.lotl} is a sandbox TEST list, refused outside a sandbox profile`,
    );
  });
});

describe('esign trust update on a sandbox over HTTPS', () => {
  it('fetches the TEST lists over TLS, trusting the sandbox root as every call does', async () => {
    const tls = await startTestSandbox({ tls: true });
    try {
      expect(tls.sandbox.urls.lotl).toMatch(/^https:/);
      const result = await runCli(['--json', 'trust', 'update'], { env: await cacheEnv(tls) });
      expect(result.code, result.stderr).toBe(0);
      expect(result.json<{ lists: Outcome[] }>().lists.map((l) => l.state)).toEqual(['updated', 'updated']);
    } finally {
      await tls.close();
    }
  });
});

describe('the sandbox profile with nothing cached', () => {
  it('sign, then verify: verify fetches the TEST lists itself and names a QESig, labelled TEST', async () => {
    const env = await cacheEnv();
    const dir = await tempDir('esign-trust-first-');
    const input = join(dir, 'contract.pdf');
    await copyFile(fileURLToPath(new URL('../../samples/contract.pdf', import.meta.url)), input);
    const signed = await runCli(['--auto-approve', '--quiet', 'sign', '--level', 'B-T', input], { env });
    expect(signed.code, signed.stderr).toBe(0);

    const verified = await runCli(['verify', join(dir, 'contract-signed.pdf')], { env });
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(/qualified\s+TEST — qualified electronic signature \(QESig\): ZZ, /);

    // The lists are cached now: the next sign says what it made.
    const again = await runCli(['--auto-approve', 'sign', '-o', join(dir, 'again.pdf'), input], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout + again.stderr).toContain('TEST — qualified electronic signature (QESig)');
  });
});

describe('esign trust add: a list outside the LOTL', () => {
  it('adds the ZZ list under a name of its own with its signer; its verdicts name it and are not EU-qualified', async () => {
    const env = await cacheEnv();
    const dir = await tempDir('esign-trust-add-');
    const operator = JSON.parse(await readFile(join(shared.dataDir, 'trust', 'zz-operator.json'), 'utf8')) as {
      certificate: string;
    };
    const signerPem = join(dir, 'zz-operator.pem');
    await writeFile(signerPem, derToPem(Buffer.from(operator.certificate, 'base64'), 'CERTIFICATE'));
    const url = `${shared.sandbox.urls.base}/trust/ZZ.xml`;

    const wrong = await runCli(['--json', 'trust', 'add', 'acme-tsl', url, '--signer', shared.rootPemPath], { env });
    expect(wrong.code).toBe(9);
    expect(wrong.json<{ lists: Outcome[] }>().lists).toMatchObject([{ territory: 'acme-tsl', state: 'failed' }]);
    const badName = await runCli(['trust', 'add', 'BE', url, '--signer', signerPem], { env });
    expect(badName.code).toBe(2);
    expect(badName.stderr).toContain('Not a list name: "BE".');

    const added = await runCli(['--json', 'trust', 'add', 'acme-tsl', url, '--signer', signerPem], { env });
    expect(added.code, added.stderr).toBe(0);
    expect(added.json<{ lists: Outcome[] }>().lists).toMatchObject([{ territory: 'acme-tsl', state: 'updated' }]);
    const status = await runCli(['trust', 'status'], { env });
    expect(status.stdout).toMatch(/acme-tsl \(TEST\) \(added, not on the LOTL\)/);
    const show = await runCli(['trust', 'show', 'acme-tsl'], { env });
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain('esign sandbox issuing CA (TEST)');

    const input = join(dir, 'contract.pdf');
    await copyFile(fileURLToPath(new URL('../../samples/contract.pdf', import.meta.url)), input);
    const signed = await runCli(['--auto-approve', '--quiet', 'sign', '--level', 'B-T', input], { env });
    expect(signed.code, signed.stderr).toBe(0);
    const verified = await runCli(['--json', 'verify', join(dir, 'contract-signed.pdf')], { env });
    expect(
      verified.json<{ signatures: Array<{ qualification?: unknown }> }>().signatures[0]?.qualification,
    ).toMatchObject({
      name: 'QESig',
      euQualified: false,
      services: [{ list: 'acme-tsl', territory: 'ZZ' }],
    });
    const human = await runCli(['verify', join(dir, 'contract-signed.pdf')], { env });
    expect(human.stdout).toContain(
      'TEST — under the list acme-tsl, not an EU trusted list — qualified electronic signature (QESig)',
    );
    const required = await runCli(['--auto-approve', 'sign', '-f', '--require', 'qes', input], { env });
    expect(required.code).toBe(13);
    expect(required.stderr).toContain('only under the list acme-tsl, which is not an EU trusted list');
  });
});
