/**
 * `esign verify` on signatures other tools made (test/fixtures/foreign, written by
 * scripts/foreign-signature-fixtures.mjs with openssl and mutool): every key kind, BER, no signed
 * attributes, SHA-1 and adbe.pkcs7.sha1. Each is reported with its algorithm and ETSI indication;
 * a weak algorithm is its own status and exit code; a changed byte is TOTAL-FAILED whatever the algorithm.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SignatureReport, VerificationReport } from '../../src/core/verify/types.js';
import { bytesEqual } from '../../src/core/cms/parse.js';
import { decode, objectIdentifier, sequence, smallInteger, tlv } from '../../src/core/cms/der.js';
import type { Block } from '../../src/core/cms/der.js';
import { runCli } from '../helpers/run-cli.js';
import { seededSandboxDir } from '../helpers/sandbox.js';
import { tempDirForFile } from '../helpers/tmp.js';

/**
 * These files' PKIs publish no revocation status (made here or by others' tests): nothing is fetched and
 * unknown status passes (soft-fail), so the verdicts are about what each test checks. Hard mode on such a
 * file: test/integration/revocation.test.ts.
 */
const UNREVOKED = ['--offline', '--revocation', 'soft-fail'];

const FIXTURES = fileURLToPath(new URL('../fixtures/foreign/', import.meta.url));
const ROOT = join(FIXTURES, 'root.pem');

let work: { dir: string; remove: () => Promise<void> };
let env: Record<string, string>;
beforeAll(async () => {
  work = await tempDirForFile('esign-verify-foreign-');
  env = { ESIGN_CONFIG_DIR: join(work.dir, 'config') };
  // The sandbox profile's data dir (inside ESIGN_CONFIG_DIR), where the runs without --trust start one.
  await seededSandboxDir(join(work.dir, 'config', 'sandbox'));
});
afterAll(async () => {
  await work?.remove();
});

type Report = VerificationReport & { valid: boolean };

async function verify(args: string[]): Promise<{ code: number | null; report: Report; stdout: string }> {
  const result = await runCli(['--json', 'verify', ...UNREVOKED, '--trust', ROOT, ...args], { env });
  return { code: result.code, report: result.json<Report>(), stdout: result.stdout };
}

function only(report: Report): SignatureReport {
  expect(report.signatures).toHaveLength(1);
  return report.signatures[0]!;
}

let copies = 0;
/** A copy of `path` with one byte changed at `offset` (from the end when negative). */
async function tampered(path: string, offset: number): Promise<string> {
  const bytes = Buffer.from(await readFile(path));
  const at = offset < 0 ? bytes.length + offset : offset;
  bytes[at] = bytes[at]! ^ 0x01;
  const copy = join(work.dir, `tampered-${++copies}-${path.split('/').pop()!}`);
  await writeFile(copy, bytes);
  return copy;
}

const PDFS: Array<[string, string, string, string]> = [
  // file, signature algorithm, key, digest
  ['p256', 'ecdsa-with-SHA256', 'EC P-256', 'sha256'],
  ['p384', 'ecdsa-with-SHA384', 'EC P-384', 'sha384'],
  ['p521', 'ecdsa-with-SHA512', 'EC P-521', 'sha512'],
  ['rsa-pss', 'RSASSA-PSS (sha256, MGF1 sha256, salt 32)', 'RSA 2048', 'sha256'],
  ['ed25519', 'Ed25519', 'Ed25519', 'sha512'],
  ['ed448', 'Ed448', 'Ed448', 'shake256-512'],
  ['ber', 'rsaEncryption with sha256', 'RSA 2048', 'sha256'],
  ['noattr', 'rsaEncryption with sha256', 'RSA 2048', 'sha256'],
];

describe('esign verify on PDFs signed by other tools', () => {
  for (const [name, algorithm, key, digest] of PDFS) {
    it(`${name}: valid, TOTAL-PASSED, ${algorithm}; one changed signed byte: TOTAL-FAILED`, async () => {
      const path = join(FIXTURES, 'pdf', `${name}.pdf`);
      const { code, report, stdout } = await verify([path]);
      const signature = only(report);
      expect(signature, stdout).toMatchObject({
        status: 'valid',
        code: null,
        indication: 'TOTAL-PASSED',
        integrity: { valid: true, digestAlgorithm: digest },
        signatureValue: { valid: true, algorithm, key },
      });
      expect(signature.subIndication).toBeUndefined();
      expect(code).toBe(0);

      // A byte of the page content stream, near the end of the signed range.
      const changed = await verify([await tampered(path, (await readFile(path)).indexOf('A signed fixture'))]);
      expect(only(changed.report)).toMatchObject({
        status: 'invalid',
        indication: 'TOTAL-FAILED',
        integrity: { valid: false },
      });
      expect(['HASH_FAILURE', 'SIG_CRYPTO_FAILURE']).toContain(only(changed.report).subIndication);
      expect(changed.code).toBe(9);
    });
  }

  const WEAK: Array<[string, RegExp]> = [
    ['mutool-sha1', /SHA-1/],
    ['adbe-pkcs7-sha1', /SHA-1/],
    ['rsa1024', /1024 bits/],
  ];
  for (const [name, why] of WEAK) {
    it(`${name}: intact but weak (INDETERMINATE/CRYPTO_CONSTRAINTS_FAILURE, exit 12); changed: TOTAL-FAILED, exit 9`, async () => {
      const path = join(FIXTURES, 'pdf', `${name}.pdf`);
      const { code, report } = await verify([path]);
      const signature = only(report);
      expect(signature).toMatchObject({
        status: 'weak',
        code: 'VERIFY_WEAK_ALGORITHM',
        indication: 'INDETERMINATE',
        subIndication: 'CRYPTO_CONSTRAINTS_FAILURE',
      });
      expect(signature.integrity.valid && signature.signatureValue.valid).toBe(true);
      expect(signature.problems.join('\n')).toMatch(why);
      expect(report).toMatchObject({ status: 'weak', code: 'VERIFY_WEAK_ALGORITHM', valid: false });
      expect(code).toBe(12);

      const bytes = await readFile(path);
      const changed = await verify([await tampered(path, bytes.indexOf('/Type /Catalog') + 2)]);
      expect(only(changed.report)).toMatchObject({
        status: 'invalid',
        indication: 'TOTAL-FAILED',
        subIndication: 'HASH_FAILURE',
      });
      expect(changed.code).toBe(9);
    });
  }

  it('the text report names the algorithm, the key and the ETSI indication beside esign’s words', async () => {
    const weak = await runCli(['verify', ...UNREVOKED, '--trust', ROOT, join(FIXTURES, 'pdf', 'mutool-sha1.pdf')], {
      env,
    });
    expect(weak.code).toBe(12);
    expect(weak.stdout).toMatch(
      /intact, but the algorithm is NOT ACCEPTABLE \[ETSI INDETERMINATE\/CRYPTO_CONSTRAINTS_FAILURE\]/,
    );
    expect(weak.stdout).toMatch(/signature {3}ok \(rsaEncryption with sha1, RSA 2048\)/);
    expect(weak.stderr).toMatch(/^esign: VERIFY_WEAK_ALGORITHM: /m);
    const good = await runCli(['verify', ...UNREVOKED, '--trust', ROOT, join(FIXTURES, 'pdf', 'p384.pdf')], { env });
    expect(good.stdout).toMatch(/✓ valid \[ETSI TOTAL-PASSED\]/);
    expect(good.stdout).toMatch(/signature {3}ok \(ecdsa-with-SHA384, EC P-384\)/);
  });

  it('without its trust anchor a weak signature is untrusted (INDETERMINATE/NO_CERTIFICATE_CHAIN_FOUND, exit 9)', async () => {
    const result = await runCli(['--json', 'verify', ...UNREVOKED, join(FIXTURES, 'pdf', 'rsa1024.pdf')], { env });
    expect(result.json<Report>().signatures[0]).toMatchObject({
      status: 'untrusted',
      indication: 'INDETERMINATE',
      subIndication: 'NO_CERTIFICATE_CHAIN_FOUND',
    });
    expect(result.code).toBe(9);
  });
});

const CMS: Array<[string, string, 'valid' | 'weak']> = [
  ['rsa2048', 'rsaEncryption with sha256', 'valid'],
  ['p256', 'ecdsa-with-SHA256', 'valid'],
  ['p384', 'ecdsa-with-SHA384', 'valid'],
  ['p521', 'ecdsa-with-SHA512', 'valid'],
  ['rsa-pss', 'RSASSA-PSS (sha256, MGF1 sha256, salt 32)', 'valid'],
  ['ed25519', 'Ed25519', 'valid'],
  ['ed448', 'Ed448', 'valid'],
  ['rsa2048-noattr', 'rsaEncryption with sha256', 'valid'],
  ['p256-noattr', 'ecdsa-with-SHA256', 'valid'],
  ['rsa2048-ber', 'rsaEncryption with sha256', 'valid'],
  ['rsa2048-sha1', 'rsaEncryption with sha1', 'weak'],
  ['rsa1024', 'rsaEncryption with sha256', 'weak'],
];

describe('esign verify FILE --signature FILE.p7s made by openssl cms -sign', () => {
  const content = join(FIXTURES, 'content.txt');
  for (const [name, algorithm, status] of CMS) {
    it(`${name}: ${status}; the content changed: TOTAL-FAILED`, async () => {
      const p7s = join(FIXTURES, 'cms', `${name}.p7s`);
      const { code, report } = await verify([content, '--signature', p7s]);
      expect(only(report)).toMatchObject({
        status,
        indication: status === 'valid' ? 'TOTAL-PASSED' : 'INDETERMINATE',
        signatureValue: { valid: true, algorithm },
      });
      expect(code).toBe(status === 'valid' ? 0 : 12);
      const changed = await verify([await tampered(content, 4), '--signature', p7s]);
      expect(only(changed.report)).toMatchObject({
        status: 'invalid',
        indication: 'TOTAL-FAILED',
        integrity: { valid: false },
      });
      expect(changed.code).toBe(9);
    });
  }

  it('ed448 with id-shake256 without its length parameter (RFC 8419: 512 bits beside Ed448) is intact and valid, not a changed content', async () => {
    const shakeLen = sequence(objectIdentifier('2.16.840.1.101.3.4.2.18'), smallInteger(512));
    const bareShake = sequence(objectIdentifier('2.16.840.1.101.3.4.2.12'));
    // The SignerInfo's digestAlgorithm is not signed: swapping it leaves the signature valid.
    const swap = (block: Block): Uint8Array =>
      bytesEqual(block.encoded, shakeLen)
        ? bareShake
        : block.constructed
          ? tlv(block.encoded[0]!, ...block.items.map(swap))
          : block.encoded;
    const original = new Uint8Array(await readFile(join(FIXTURES, 'cms', 'ed448.p7s')));
    const p7s = join(work.dir, 'ed448-bare-shake256.p7s');
    await writeFile(p7s, swap(decode(original, 'cms')));
    expect(Buffer.from(await readFile(p7s)).includes(Buffer.from(shakeLen))).toBe(false);
    const { code, report } = await verify([content, '--signature', p7s]);
    expect(only(report)).toMatchObject({
      status: 'valid',
      indication: 'TOTAL-PASSED',
      integrity: { valid: true, digestAlgorithm: 'shake256-512' },
    });
    expect(code).toBe(0);
    expect(only((await verify([await tampered(content, 4), '--signature', p7s])).report)).toMatchObject({
      status: 'invalid',
      integrity: { valid: false },
    });
  });

  it('without signed attributes a changed content is HASH_FAILURE for RSA PKCS#1 v1.5 (its signature opens), SIG_CRYPTO_FAILURE for ECDSA', async () => {
    const changed = await tampered(content, 4);
    const rsa = only((await verify([changed, '--signature', join(FIXTURES, 'cms', 'rsa2048-noattr.p7s')])).report);
    expect(rsa).toMatchObject({
      indication: 'TOTAL-FAILED',
      subIndication: 'HASH_FAILURE',
      integrity: { valid: false },
      signatureValue: { valid: true },
    });
    const ec = only((await verify([changed, '--signature', join(FIXTURES, 'cms', 'p256-noattr.p7s')])).report);
    expect(ec).toMatchObject({
      indication: 'TOTAL-FAILED',
      subIndication: 'SIG_CRYPTO_FAILURE',
      integrity: { valid: false },
      signatureValue: { valid: false },
    });
    const forged = only(
      (await verify([content, '--signature', await tampered(join(FIXTURES, 'cms', 'rsa2048-noattr.p7s'), -1)])).report,
    );
    expect(forged).toMatchObject({
      indication: 'TOTAL-FAILED',
      subIndication: 'SIG_CRYPTO_FAILURE',
      signatureValue: { valid: false },
    });
  });

  it('a forged signature value (attributes intact): TOTAL-FAILED/SIG_CRYPTO_FAILURE for ECDSA, PSS and EdDSA', async () => {
    for (const name of ['p256', 'rsa-pss', 'ed25519']) {
      const p7s = join(FIXTURES, 'cms', `${name}.p7s`);
      // The signature value is the SignerInfo's last field: its last byte is the file's last byte.
      const { report } = await verify([content, '--signature', await tampered(p7s, -1)]);
      expect(only(report), name).toMatchObject({
        status: 'invalid',
        indication: 'TOTAL-FAILED',
        subIndication: 'SIG_CRYPTO_FAILURE',
        integrity: { valid: true },
        signatureValue: { valid: false },
      });
    }
  });
});

describe('extend on what other tools wrote', () => {
  it('adds the DSS to a PDF whose CMS is BER with indefinite lengths (as NSS writes it), and the signature still verifies', async () => {
    const output = join(work.dir, 'ber-b-lt.pdf');
    const extended = await runCli(
      ['--json', 'extend', '--level', 'B-LT', '-o', output, join(FIXTURES, 'pdf', 'ber.pdf')],
      { env: { ...env, ESIGN_SANDBOX_DIR: await seededSandboxDir(join(work.dir, 'sandbox')) } },
    );
    expect(extended.code, extended.stderr).toBe(0);
    const { code, report } = await verify([output]);
    expect(code).toBe(0);
    expect(only(report)).toMatchObject({ indication: 'TOTAL-PASSED' });
  });
});
