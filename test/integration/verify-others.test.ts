/**
 * `esign verify` on what others send (issue 49): files made at run time by tools we did not write
 * (openssl cms and ts, Info-ZIP), the way DSS's, DigiDoc's and Italy's signing software makes them —
 * BER `.p7m`, SHA-1 timestamp tokens, containers whose layout bends the rules — each judged as those
 * projects' own tests judge theirs.
 */
import { execFileSync } from 'node:child_process';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decode } from '../../src/core/cms/der.js';
import { parseSignedData } from '../../src/core/cms/parse.js';
import { addSignatureTimestamp } from '../../src/core/cms/signed-data.js';
import type { SignatureReport, VerificationReport } from '../../src/core/verify/types.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDirForFile } from '../helpers/tmp.js';

type Report = VerificationReport & { valid: boolean; extracted?: string };

let work: { dir: string; remove: () => Promise<void> };
let env: Record<string, string>;
const at = (...names: string[]) => join(work.dir, ...names);
const openssl = (...args: string[]) =>
  execFileSync('openssl', args, { cwd: work.dir, stdio: ['ignore', 'pipe', 'pipe'] });

beforeAll(async () => {
  work = await tempDirForFile('esign-verify-others-');
  env = { ESIGN_CONFIG_DIR: at('config') };
  // A CA, a signer and a TSA of another PKI: esign knows nothing of them but the root given with --trust.
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'root.key',
    '-out',
    'root.pem',
    '-days',
    '3650',
    '-subj',
    '/CN=Other PKI root',
    '-addext',
    'basicConstraints=critical,CA:true',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  await writeFile(at('signer.ext'), 'basicConstraints=CA:false\nkeyUsage=critical,digitalSignature,nonRepudiation\n');
  await writeFile(
    at('tsa.ext'),
    'basicConstraints=CA:false\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=critical,timeStamping\n',
  );
  for (const name of ['signer', 'tsa']) {
    openssl(
      'req',
      '-new',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-subj',
      `/CN=Other PKI ${name}`,
      '-out',
      `${name}.csr`,
    );
    openssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'root.pem',
      '-CAkey',
      'root.key',
      '-CAcreateserial',
      '-days',
      '3650',
      '-extfile',
      `${name}.ext`,
      '-out',
      `${name}.pem`,
    );
  }
});
afterAll(async () => {
  await work?.remove();
});

async function verify(
  args: string[],
): Promise<{ code: number | null; report: Report; stderr: string; stdout: string }> {
  const result = await runCli(['--json', 'verify', '--trust', at('root.pem'), ...args], { env });
  return { code: result.code, report: result.json<Report>(), stderr: result.stderr, stdout: result.stdout };
}

function only(report: Report): SignatureReport {
  expect(report.signatures).toHaveLength(1);
  return report.signatures[0]!;
}

describe('a BER .p7m (openssl cms -sign -stream: indefinite lengths, the content in 4096-byte segments)', () => {
  let content: Buffer;
  let p7m: string;
  beforeAll(async () => {
    content = Buffer.alloc(3 * 1024 * 1024 + 123);
    for (let index = 0; index < content.length; index++) content[index] = (index * 31 + (index >> 12)) % 256;
    await writeFile(at('fattura.xml'), content);
    p7m = at('fattura.xml.p7m');
    openssl(
      'cms',
      '-sign',
      '-binary',
      '-nodetach',
      '-stream',
      '-in',
      'fattura.xml',
      '-signer',
      'signer.pem',
      '-inkey',
      'signer.key',
      '-outform',
      'DER',
      '-out',
      'fattura.xml.p7m',
      '-nosmimecap',
    );
    const bytes = await readFile(p7m);
    expect(bytes[1], 'openssl wrote an indefinite length').toBe(0x80);
    expect(bytes.includes(Buffer.from([0x24, 0x80, 0x04, 0x82, 0x10, 0x00])), 'and 4096-byte segments').toBe(true);
  });

  it('verifies, and --extract gives the content back byte for byte', async () => {
    const out = at('extracted.xml');
    const { code, report, stderr } = await verify([p7m, '--extract', out]);
    expect(code, stderr).toBe(0);
    expect(report).toMatchObject({ packaging: 'enveloping', valid: true, extracted: out });
    expect(only(report)).toMatchObject({ status: 'valid', indication: 'TOTAL-PASSED' });
    expect((await readFile(out)).equals(content)).toBe(true);
  });

  it('one content byte changed: TOTAL-FAILED, exit 9, nothing extracted', async () => {
    const bytes = await readFile(p7m);
    const changed = at('changed.xml.p7m');
    const where = bytes.indexOf(content.subarray(5000, 5032));
    bytes[where]! ^= 0x01;
    await writeFile(changed, bytes);
    const out = at('not-extracted.xml');
    const { code, report } = await verify([changed, '--extract', out]);
    expect(code).toBe(9);
    expect(only(report)).toMatchObject({ status: 'invalid', indication: 'TOTAL-FAILED' });
    expect((await readdir(work.dir)).includes('not-extracted.xml')).toBe(false);
  });
});

describe('a SHA-1 timestamp token (openssl ts -reply, signer_digest sha1, ESS signing-certificate v1)', () => {
  it('is intact and weak: exit 12, INDETERMINATE/CRYPTO_CONSTRAINTS_FAILURE, never "not validly signed"', async () => {
    await writeFile(at('notes.txt'), 'release notes\n');
    openssl(
      'cms',
      '-sign',
      '-binary',
      '-in',
      'notes.txt',
      '-signer',
      'signer.pem',
      '-inkey',
      'signer.key',
      '-outform',
      'DER',
      '-out',
      'notes.p7s',
      '-nosmimecap',
    );
    const p7s = new Uint8Array(await readFile(at('notes.p7s')));
    await writeFile(at('signature-value.bin'), parseSignedData(p7s).signatureValue);
    await writeFile(at('serial'), '01\n');
    await writeFile(
      at('ts.cnf'),
      [
        '[ tsa ]',
        'default_tsa = tsa1',
        '[ tsa1 ]',
        `serial = ${at('serial')}`,
        `signer_cert = ${at('tsa.pem')}`,
        `certs = ${at('root.pem')}`,
        `signer_key = ${at('tsa.key')}`,
        'signer_digest = sha1',
        'default_policy = 1.2.3.4.1',
        'other_policies = 1.2.3.4.2',
        'digests = sha1, sha256',
        'accuracy = secs:1',
        'ess_cert_id_alg = sha1',
        '',
      ].join('\n'),
    );
    openssl('ts', '-query', '-data', 'signature-value.bin', '-sha256', '-cert', '-out', 'request.tsq');
    openssl('ts', '-reply', '-config', 'ts.cnf', '-queryfile', 'request.tsq', '-token_out', '-out', 'token.der');
    const token = new Uint8Array(await readFile(at('token.der')));
    decode(token, 'token');
    await writeFile(at('notes-sha1-token.p7s'), addSignatureTimestamp(p7s, token));

    const { code, report, stderr } = await verify([at('notes.txt'), '--signature', at('notes-sha1-token.p7s')]);
    expect(code, stderr).toBe(12);
    const signature = only(report);
    expect(signature).toMatchObject({
      status: 'weak',
      code: 'VERIFY_WEAK_ALGORITHM',
      indication: 'INDETERMINATE',
      subIndication: 'CRYPTO_CONSTRAINTS_FAILURE',
      level: 'B-T',
      timestamp: { valid: true },
    });
    expect(signature.problems.join('\n')).toMatch(/signature timestamp: the token is signed over sha1/);
    expect(JSON.stringify(report)).not.toMatch(/not validly signed/);
  });
});
