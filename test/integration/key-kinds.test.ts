/**
 * Signing with the keys beyond RSA over the real sandbox: the digest chosen with --digest, and the
 * bad input of issue 24 — a signature value of the wrong length or encoding (CSC_SIGNATURE_INVALID,
 * nothing written), a --digest the credential does not accept and a credential that lists only
 * algorithms esign cannot use (both refused before any approval, naming what it does list).
 */
import { copyFile, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OID } from '../../src/core/cms/oids.js';
import { signEcdsaHash } from '../../src/core/cms/ecdsa.js';
import { parseSignedData } from '../../src/core/cms/parse.js';
import { SANDBOX_DIALECTS, signingRoute } from '../helpers/dialects.js';
import { lastCms } from '../helpers/pdf-judges.js';
import { runCli, type CliResult } from '../helpers/run-cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDirForFile } from '../helpers/tmp.js';

let t: TestSandbox;
let work: { dir: string; remove: () => Promise<void> };
let count = 0;

beforeAll(async () => {
  t = await startTestSandbox({ autoApprove: true });
  work = await tempDirForFile('esign-key-kinds-');
});
afterAll(async () => {
  await t?.close();
  await work?.remove();
});

async function contract(): Promise<string> {
  const path = join(work.dir, `contract-${++count}.pdf`);
  await copyFile(join(import.meta.dirname, '../../samples/contract.pdf'), path);
  return path;
}

function errorOf(result: CliResult): { code?: string; message?: string } {
  const line = result.stdout.trim().split('\n').at(-1) ?? '{}';
  return (JSON.parse(line) as { error?: { code?: string; message?: string } }).error ?? {};
}

const approvals = () => t.sandbox.requestLog.filter((id) => id.endsWith('GET /oauth2/authorize')).length;

describe('--digest', () => {
  it('signs with the digest asked for when the credential accepts it (PSS over SHA-384), and esign verify agrees', async () => {
    const input = await contract();
    const output = input.replace(/\.pdf$/, '-signed.pdf');
    const signed = await runCli(
      [
        '--auto-approve',
        '--json',
        'sign',
        '--credential',
        'alice-rsa-pss',
        '--digest',
        'sha384',
        '--level',
        'B-T',
        input,
      ],
      { env: t.env },
    );
    expect(signed.code, signed.stderr).toBe(0);
    const parsed = parseSignedData(lastCms(await readFile(output)).cms);
    expect([parsed.signatureAlgorithm, parsed.digestAlgorithm]).toEqual([OID.rsassaPss, OID.sha384]);
    const verified = await runCli(['--json', 'verify', output], { env: t.env });
    expect(verified.code, verified.stdout).toBe(0);
  });

  it('is kept from --prepare to --complete in the split flow (PSS over SHA-512)', async () => {
    const input = await contract();
    const state = join(work.dir, `state-${count}.json`);
    const env = { ...t.env, ESIGN_CONFIG_DIR: join(work.dir, `config-${count}`) };
    const prepare = (...extra: string[]) =>
      runCli(
        [
          '--json',
          'sign',
          '--prepare',
          '--state',
          state,
          '--credential',
          'alice-rsa-pss',
          '--digest',
          'sha512',
          '--level',
          'B-B',
          ...extra,
          input,
        ],
        { env },
      );
    const { signInUrl } = (await prepare()).json<{ signInUrl: string }>();
    const prepared = await prepare(
      '--redirect-url',
      (await fetch(signInUrl, { redirect: 'manual' })).headers.get('location')!,
    );
    expect(prepared.code, prepared.stderr).toBe(0);
    const [approval] = prepared.json<{
      approvals: Array<{ authorizationUrl: string; hashes: Array<{ hash: string }> }>;
    }>().approvals;
    expect(Buffer.from(approval!.hashes[0]!.hash, 'base64')).toHaveLength(64);
    const code = new URL(
      (await fetch(approval!.authorizationUrl, { redirect: 'manual' })).headers.get('location')!,
    ).searchParams.get('code')!;
    const completed = await runCli(['--json', 'sign', '--complete', '--state', state, '--code', code], { env });
    expect(completed.code, completed.stderr).toBe(0);
    const parsed = parseSignedData(lastCms(await readFile(input.replace(/\.pdf$/, '-signed.pdf'))).cms);
    expect([parsed.signatureAlgorithm, parsed.digestAlgorithm]).toEqual([OID.rsassaPss, OID.sha512]);
  });

  it('refuses one the credential does not accept before any approval, naming what it accepts (exit 2)', async () => {
    const input = await contract();
    const before = approvals();
    const result = await runCli(
      ['--auto-approve', '--json', 'sign', '--credential', 'alice-ec-p384', '--digest', 'sha256', input],
      { env: t.env },
    );
    expect([result.code, errorOf(result).code]).toEqual([2, 'USAGE']);
    expect(result.stderr).toMatch(/alice-ec-p384 does not sign SHA-256 hashes; it accepts SHA-384/);
    expect(approvals() - before).toBe(0); // the service token is cached: any authorize would be an approval of hashes
    expect(await readdir(work.dir)).not.toContain(input.replace(/^.*\//, '').replace(/\.pdf$/, '-signed.pdf'));
  });
});

describe('a credential that lists only algorithms esign cannot use', () => {
  it('is refused before any approval, naming what it lists', async () => {
    const info = await runCli(['--auto-approve', '--json', 'credentials', 'info', 'alice-ec-p256'], { env: t.env });
    const certificates = (JSON.parse(info.stdout) as { certificates: string[] }).certificates;
    const listed = ['1.2.840.10045.4.1', '2.16.840.1.101.3.4.3.18']; // ecdsa-with-SHA1, ML-DSA-65
    const body = JSON.stringify({
      key: { status: 'enabled', algo: listed, len: 256 },
      cert: { status: 'valid', certificates },
      authMode: 'oauth2code',
    });
    t.sandbox.faults.inject({
      route: 'signing POST /csc/v1/credentials/info',
      fault: { kind: 'malformed', body, contentType: 'application/json' },
      times: 1,
    });
    const before = approvals();
    const result = await runCli(
      ['--auto-approve', '--json', 'sign', '--credential', 'alice-ec-p256', await contract()],
      { env: t.env },
    );
    expect([result.code, errorOf(result).code]).toEqual([11, 'CREDENTIAL_UNSUPPORTED_KEY']);
    expect(result.stderr).toContain(`EC P-256) signs with ${listed.join(', ')}`);
    expect(approvals() - before).toBe(0);
  });
});

describe.each(SANDBOX_DIALECTS)('a signature value of the wrong length or encoding on $name', (dialect) => {
  const hash = new Uint8Array(48);
  it.each([
    ['raw r||s one byte short', (raw: Uint8Array) => raw.subarray(1)],
    ['raw r||s of P-256 size', (raw: Uint8Array) => raw.subarray(0, 64)],
    [
      'DER with a long-form length (BER)',
      (_raw: Uint8Array, der: Uint8Array) => Uint8Array.from([0x30, 0x81, der[1] as number, ...der.subarray(2)]),
    ],
    ['a valid signature over another hash', (_raw: Uint8Array, der: Uint8Array) => der],
  ])('%s: CSC_SIGNATURE_INVALID, nothing written', async (_label, spoil) => {
    const key = t.sandbox.pki.credentials.find((credential) => credential.credentialID === 'alice-ec-p384')!.signer
      .privateKey;
    const raw = signEcdsaHash(key, hash, 'ieee-p1363');
    const der = signEcdsaHash(key, hash, 'der');
    const body = JSON.stringify({ signatures: [Buffer.from(spoil(raw, der)).toString('base64')] });
    t.sandbox.faults.inject({
      route: signingRoute(dialect, 'POST signatures/signHash'),
      fault: { kind: 'malformed', body, contentType: 'application/json' },
      times: 1,
    });
    const input = await contract();
    const result = await runCli(
      [
        '--auto-approve',
        '--json',
        '--profile',
        dialect.profile,
        'sign',
        '--credential',
        'alice-ec-p384',
        '--level',
        'B-B',
        input,
      ],
      { env: t.env },
    );
    expect([result.code, errorOf(result).code], result.stderr).toEqual([6, 'CSC_SIGNATURE_INVALID']);
    expect(result.stderr).toMatch(/does not verify as ECDSA P-384 with SHA-384/);
    expect((await readdir(work.dir)).filter((name) => name.includes(`contract-${count}-signed`))).toEqual([]);
  });
});
