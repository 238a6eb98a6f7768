/**
 * `esign verify` and tools we did not write agree on signatures we did not write either: the PDFs
 * of test/fixtures/foreign (openssl-made CMS of every key kind, BER, no signed attributes,
 * adbe.pkcs7.sha1, mutool's SHA-1) judged by pdfsig; the .p7s files by `openssl cms -verify`
 * (EdDSA, which OpenSSL 3.0's cms cannot verify, by `openssl pkeyutl -verify` and `openssl dgst`);
 * and PDFs signed here and now by `pdfsig -add-signature` (NSS: BER with indefinite lengths), with
 * RSA 2048 and RSA 1024. Verdicts compared: is the signed content intact and the signature value
 * good (esign: integrity and signatureValue; weak counts as intact). A changed byte fails for both.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  decode,
  retag,
  sequenceItems,
  setItems,
  explicitInner,
  isContext,
  encoded,
  Tag,
} from '../../src/core/cms/der.js';
import type { SignatureReport, VerificationReport } from '../../src/core/verify/types.js';
import { nssDbTrusting, pdfsig, runTool } from '../helpers/pdf-judges.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDirForFile } from '../helpers/tmp.js';

const has = (tool: string) => spawnSync('which', [tool]).status === 0;
const missing = ['pdfsig', 'certutil', 'pk12util', 'openssl'].filter((tool) => !has(tool));
if (missing.length > 0) console.warn(`interop foreign-signature tests skipped: missing ${missing.join(', ')}`);

const FIXTURES = fileURLToPath(new URL('../fixtures/foreign/', import.meta.url));
const ROOT = join(FIXTURES, 'root.pem');

let work: { dir: string; remove: () => Promise<void> };
let nssDir: string;
let env: Record<string, string>;
beforeAll(async () => {
  if (missing.length > 0) return;
  work = await tempDirForFile('esign-interop-foreign-');
  nssDir = await nssDbTrusting(work.dir, ROOT);
  env = { ESIGN_CONFIG_DIR: join(work.dir, 'config') };
});
afterAll(async () => {
  await work?.remove();
});

async function esign(args: string[], trust = ROOT): Promise<SignatureReport> {
  // These files' PKIs publish no revocation status: nothing fetched, unknown status passes (soft-fail).
  const result = await runCli(
    ['--json', 'verify', '--offline', '--revocation', 'soft-fail', '--trust', trust, ...args],
    {
      env,
    },
  );
  const report = result.json<VerificationReport>();
  expect(report.signatures, result.stderr).toHaveLength(1);
  return report.signatures[0]!;
}

const intact = (s: SignatureReport): boolean => s.integrity.valid && s.signatureValue.valid;

let copies = 0;
async function tampered(path: string, offset: number): Promise<string> {
  const bytes = Buffer.from(await readFile(path));
  bytes[offset] = bytes[offset]! ^ 0x01;
  const copy = join(work.dir, `tampered-${++copies}-${path.split('/').pop()!}`);
  await writeFile(copy, bytes);
  return copy;
}

const agreement = { files: 0, agreed: 0 };

describe.skipIf(missing.length > 0)('esign verify agrees with pdfsig on PDFs signed by other tools', () => {
  // EdDSA: NSS 3.87 has no Ed25519/Ed448, so pdfsig cannot judge those (its verdict is checked below as a failure).
  const judgedByPdfsig = [
    'p256',
    'p384',
    'p521',
    'rsa-pss',
    'noattr',
    'ber',
    'rsa1024',
    'adbe-pkcs7-sha1',
    'mutool-sha1',
  ];
  for (const name of judgedByPdfsig) {
    it(`${name}.pdf: the same verdict, intact; a changed byte: both find it broken`, async () => {
      const path = join(FIXTURES, 'pdf', `${name}.pdf`);
      const [ours, theirs] = [await esign([path]), (await pdfsig(path, nssDir)).signatures];
      expect(theirs, 'pdfsig').toHaveLength(1);
      expect(intact(ours)).toBe(theirs[0]!.valid);
      expect(theirs[0]!.valid && theirs[0]!.trusted).toBe(true);
      expect(['TOTAL-PASSED', 'INDETERMINATE']).toContain(ours.indication);

      const changed = await tampered(path, (await readFile(path)).indexOf('/Type /Catalog') + 2);
      const [ours2, theirs2] = [await esign([changed]), (await pdfsig(changed, nssDir)).signatures];
      expect(intact(ours2)).toBe(theirs2[0]?.valid ?? false);
      expect(ours2).toMatchObject({ status: 'invalid', indication: 'TOTAL-FAILED' });
      agreement.files += 2;
      agreement.agreed += 2;
    });
  }

  it('Ed25519 and Ed448 PDFs: esign finds them valid; pdfsig (NSS 3.87) cannot check EdDSA', async () => {
    for (const name of ['ed25519', 'ed448']) {
      const path = join(FIXTURES, 'pdf', `${name}.pdf`);
      expect(await esign([path])).toMatchObject({ status: 'valid', indication: 'TOTAL-PASSED' });
      expect((await pdfsig(path, nssDir)).signatures[0]?.valid).toBe(false);
    }
  });
});

describe.skipIf(missing.length > 0)('esign verify agrees with openssl on the .p7s fixtures', () => {
  const content = join(FIXTURES, 'content.txt');
  const opensslVerifies = async (p7s: string, data: string): Promise<boolean> =>
    (
      await runTool('openssl', [
        'cms',
        '-verify',
        '-binary',
        '-inform',
        'DER',
        '-in',
        p7s,
        '-content',
        data,
        '-CAfile',
        ROOT,
        '-purpose',
        'any',
        '-out',
        '/dev/null',
      ])
    ).status === 0;

  for (const name of [
    'rsa2048',
    'rsa1024',
    'p256',
    'p384',
    'p521',
    'rsa-pss',
    'rsa2048-noattr',
    'p256-noattr',
    'rsa2048-sha1',
    'rsa2048-ber',
  ]) {
    it(`${name}.p7s: openssl cms -verify and esign agree, on the content and on a changed copy`, async () => {
      const p7s = join(FIXTURES, 'cms', `${name}.p7s`);
      expect(await opensslVerifies(p7s, content)).toBe(true);
      expect(intact(await esign([content, '--signature', p7s]))).toBe(true);
      const changed = await tampered(content, 3);
      expect(await opensslVerifies(p7s, changed)).toBe(false);
      expect(await esign([changed, '--signature', p7s])).toMatchObject({
        status: 'invalid',
        indication: 'TOTAL-FAILED',
      });
      agreement.files += 2;
      agreement.agreed += 2;
    });
  }

  it('Ed25519 and Ed448 .p7s: openssl pkeyutl verifies the signed attributes and openssl dgst gives their message digest', async () => {
    for (const [name, digestArgs] of [
      ['ed25519', ['-sha512']],
      ['ed448', ['-shake256', '-xoflen', '64']],
    ] as const) {
      const p7s = join(FIXTURES, 'cms', `${name}.p7s`);
      const der = new Uint8Array(await readFile(p7s));
      // SignedData → certificates [0] (the signer's only) and the SignerInfo's signed attributes, re-tagged as a SET.
      const signedData = sequenceItems(explicitInner(sequenceItems(decode(der, 'ci'), 'ci')[1], 0, 'content'), 'sd');
      const certificate = encoded(signedData.find((block) => isContext(block, 0))!.items[0]!);
      const signerInfo = sequenceItems(setItems(signedData.at(-1), 'signerInfos')[0], 'si');
      const attributes = signerInfo.find((block) => isContext(block, 0))!;
      const signature = signerInfo.at(-1)!.content;
      await writeFile(join(work.dir, `${name}.attrs`), retag(encoded(attributes), Tag.set));
      await writeFile(join(work.dir, `${name}.sig`), signature);
      await writeFile(join(work.dir, `${name}.crt`), certificate);
      execFileSync('openssl', [
        'x509',
        '-inform',
        'DER',
        '-in',
        join(work.dir, `${name}.crt`),
        '-pubkey',
        '-noout',
        '-out',
        join(work.dir, `${name}.pub`),
      ]);
      const verified = await runTool('openssl', [
        'pkeyutl',
        '-verify',
        '-rawin',
        '-pubin',
        '-inkey',
        join(work.dir, `${name}.pub`),
        '-in',
        join(work.dir, `${name}.attrs`),
        '-sigfile',
        join(work.dir, `${name}.sig`),
      ]);
      expect(verified.stdout + verified.stderr).toMatch(/Signature Verified Successfully/);
      const digest = (await runTool('openssl', ['dgst', ...digestArgs, '-hex', content])).stdout
        .trim()
        .split(' ')
        .at(-1)!;
      expect(Buffer.from(attributes.content).toString('hex')).toContain(digest);

      expect(await esign([content, '--signature', p7s])).toMatchObject({ status: 'valid', indication: 'TOTAL-PASSED' });
      expect(await esign([await tampered(content, 3), '--signature', p7s])).toMatchObject({
        status: 'invalid',
        indication: 'TOTAL-FAILED',
      });
    }
  });
});

describe.skipIf(missing.length > 0)('PDFs signed by pdfsig -add-signature (NSS, BER with indefinite lengths)', () => {
  /** A CA and a signer made by openssl, the signer's key in an NSS database; returns the CA's PEM path. */
  function nssSigner(dir: string, name: string, bits: number): string {
    const at = (file: string) => join(dir, file);
    const run = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
    run(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      at('ca.key'),
      '-out',
      at('ca.pem'),
      '-days',
      '30',
      '-subj',
      '/CN=esign NSS interop root',
      '-addext',
      'basicConstraints=critical,CA:true',
      '-addext',
      'keyUsage=critical,keyCertSign',
    );
    run(
      'req',
      '-newkey',
      `rsa:${bits}`,
      '-nodes',
      '-keyout',
      at(`${name}.key`),
      '-out',
      at(`${name}.csr`),
      '-subj',
      `/CN=esign NSS interop ${name}`,
    );
    run(
      'x509',
      '-req',
      '-in',
      at(`${name}.csr`),
      '-CA',
      at('ca.pem'),
      '-CAkey',
      at('ca.key'),
      '-set_serial',
      String(bits),
      '-days',
      '30',
      '-out',
      at(`${name}.pem`),
    );
    run(
      'pkcs12',
      '-export',
      '-inkey',
      at(`${name}.key`),
      '-in',
      at(`${name}.pem`),
      '-name',
      name,
      '-passout',
      'pass:',
      '-out',
      at(`${name}.p12`),
    );
    execFileSync('pk12util', ['-i', at(`${name}.p12`), '-d', `sql:${nssDir}`, '-W', '']);
    execFileSync('certutil', ['-A', '-d', `sql:${nssDir}`, '-n', `${name}-root`, '-t', 'CT,C,C', '-i', at('ca.pem')]);
    return at('ca.pem');
  }

  for (const [name, bits, status] of [
    ['nss-rsa2048', 2048, 'valid'],
    ['nss-rsa1024', 1024, 'weak'],
  ] as const) {
    it(`${name}: esign reads NSS's BER (${status}); pdfsig finds it valid; a changed byte breaks it for both`, async () => {
      const root = nssSigner(work.dir, name, bits);
      const signed = join(work.dir, `${name}.pdf`);
      const add = await runTool('pdfsig', [
        '-add-signature',
        '-nssdir',
        `sql:${nssDir}`,
        '-nick',
        name,
        join(FIXTURES, '../../../samples/contract.pdf'),
        signed,
      ]);
      expect(add.status, add.stderr).toBe(0);
      // 30 80: a SEQUENCE of indefinite length
      expect((await readFile(signed)).toString('latin1'), 'NSS wrote BER with an indefinite length').toMatch(
        /\/Contents\s*<3080/i,
      );

      const ours = await esign([signed], root);
      expect(ours).toMatchObject({
        status,
        integrity: { valid: true },
        signatureValue: { valid: true, algorithm: 'rsaEncryption with sha256', key: `RSA ${bits}` },
      });
      expect((await pdfsig(signed, nssDir)).signatures[0]).toMatchObject({ valid: true, trusted: true });

      const changed = await tampered(signed, (await readFile(signed)).indexOf('\n%', 5) + 2);
      expect(await esign([changed], root)).toMatchObject({
        status: 'invalid',
        indication: 'TOTAL-FAILED',
        subIndication: 'HASH_FAILURE',
      });
      expect((await pdfsig(changed, nssDir)).signatures[0]?.valid).toBe(false);
      agreement.files += 2;
      agreement.agreed += 2;
      if (name === 'nss-rsa1024')
        console.info(
          `esign verify / pdfsig / openssl agreement on foreign signatures: ${agreement.agreed} of ${agreement.files} files`,
        );
    });
  }
});
