/**
 * `esign verify` on what others send (issue 49): files made at run time by tools we did not write
 * (openssl cms and ts, Info-ZIP), the way DSS's, DigiDoc's and Italy's signing software makes them —
 * BER `.p7m`, SHA-1 timestamp tokens, containers whose layout bends the rules — each judged as those
 * projects' own tests judge theirs.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, readdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decode } from '../../src/core/cms/der.js';
import { parseSignedData } from '../../src/core/cms/parse.js';
import { addSignatureTimestamp, addUnsignedAttribute } from '../../src/core/cms/signed-data.js';
import { attribute } from '../../src/core/cms/signed-attributes.js';
import { buildManifest } from '../../src/core/forms/asic-e/manifest.js';
import type { SignatureReport, VerificationReport } from '../../src/core/verify/types.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDirForFile } from '../helpers/tmp.js';

/**
 * These files' PKIs publish no revocation status (made here or by others' tests): nothing is fetched and
 * unknown status passes (soft-fail), so the verdicts are about what each test checks. Hard mode on such a
 * file: test/integration/revocation.test.ts.
 */
const UNREVOKED = ['--offline', '--revocation', 'soft-fail'];

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
  selfSignedRoot('root', '/CN=Other PKI root');
  await writeFile(at('signer.ext'), 'basicConstraints=CA:false\nkeyUsage=critical,digitalSignature,nonRepudiation\n');
  await writeFile(
    at('tsa.ext'),
    'basicConstraints=CA:false\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=critical,timeStamping\n',
  );
  issued('signer', '/CN=Other PKI signer', 'signer.ext');
  issued('tsa', '/CN=Other PKI tsa', 'tsa.ext');
});
afterAll(async () => {
  await work?.remove();
});

/** NAME.key and NAME.pem, a certificate the other PKI's root issued with the extensions of `extensions`. */
function issued(name: string, subject: string, extensions: string): void {
  openssl(
    'req',
    '-new',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-subj',
    subject,
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
    extensions,
    '-out',
    `${name}.pem`,
  );
}

/** A CA of its own: NAME.key and NAME.pem. */
function selfSignedRoot(name: string, subject: string): void {
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.pem`,
    '-days',
    '3650',
    '-subj',
    subject,
    '-addext',
    'basicConstraints=critical,CA:true',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
}

/** `openssl cms -sign` by the other PKI's signer, in DER: detached unless `extra` says otherwise. */
function cmsSign(input: string, output: string, ...extra: string[]): void {
  openssl(
    'cms',
    '-sign',
    '-binary',
    ...extra,
    '-in',
    input,
    '-signer',
    'signer.pem',
    '-inkey',
    'signer.key',
    '-outform',
    'DER',
    '-out',
    output,
    '-nosmimecap',
  );
}

async function verify(
  args: string[],
): Promise<{ code: number | null; report: Report; stderr: string; stdout: string }> {
  const result = await runCli(['--json', 'verify', ...UNREVOKED, '--trust', at('root.pem'), ...args], { env });
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
    cmsSign('fattura.xml', 'fattura.xml.p7m', '-nodetach', '-stream');
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
    cmsSign('notes.txt', 'notes.p7s');
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

  it('esign timestamp --verify of a SHA-1 token (and SHA-1 imprint) over a file: intact but weak, exit 12, never "not validly signed"', async () => {
    // The TSA of the test before (ts.cnf), now over notes.txt with a SHA-1 imprint, as a whole TimeStampResp.
    openssl('ts', '-query', '-data', 'notes.txt', '-sha1', '-cert', '-out', 'notes.tsq');
    openssl('ts', '-reply', '-config', 'ts.cnf', '-queryfile', 'notes.tsq', '-out', 'notes.txt.tsr');
    const args = ['timestamp', '--verify', '--ca', at('root.pem'), at('notes.txt'), at('notes.txt.tsr')];
    const json = await runCli(['--json', ...args], { env });
    expect(json.code, json.stderr).toBe(12);
    expect(json.json()).toMatchObject({
      valid: false,
      code: 'VERIFY_WEAK_ALGORITHM',
      imprint: { algorithm: 'sha1' },
      weak: [expect.stringMatching(/message imprint is a SHA1 digest/), expect.stringMatching(/signed over sha1/)],
    });
    expect(json.stderr).not.toMatch(/not validly signed/);
    const text = await runCli(args, { env });
    expect(text.code).toBe(12);
    expect(text.stdout).toMatch(/intact timestamp of .*notes\.txt, but its algorithm is NOT ACCEPTABLE/);
    expect(text.stderr).toMatch(/^esign: VERIFY_WEAK_ALGORITHM: /m);
  });
});

/** A ZIP made by Info-ZIP's `zip` in `dir` (`-X`: no extra fields unless `extra`), entries in the order named. */
function infoZip(dir: string, archive: string, names: string[], options: string[] = []): void {
  const made = spawnSync('zip', ['-q', ...options, archive, ...names], { cwd: dir });
  if (made.status !== 0) throw new Error(made.stderr.toString());
}

/** The ZIP with the entry `from` renamed `to` (as long) in its local header and its central directory. */
function renamed(zip: Buffer, from: string, to: string): Buffer {
  const out = Buffer.from(zip);
  for (let at = 0; at + 30 <= out.length; at++) {
    const local = out.readUInt32LE(at) === 0x04034b50;
    if (!local && out.readUInt32LE(at) !== 0x02014b50) continue;
    const nameAt = at + (local ? 30 : 46);
    const length = out.readUInt16LE(at + (local ? 26 : 28));
    if (out.toString('latin1', nameAt, nameAt + length) === from) out.write(to, nameAt, 'latin1');
  }
  return out;
}

describe('ASiC containers as DSS and DigiDoc lay them out (Info-ZIP, openssl cms): lenient on layout, each bend a warning', () => {
  const ASIC_S = 'application/vnd.etsi.asic-s+zip';
  const ASIC_E = 'application/vnd.etsi.asic-e+zip';
  let containers = 0;

  /** A directory holding doc.txt, META-INF/signature.p7s (openssl's detached CAdES of it) and `mimetype`. */
  async function asicS(mimetype = ASIC_S): Promise<string> {
    const dir = at(`asics-${++containers}`);
    await mkdir(join(dir, 'META-INF'), { recursive: true });
    await writeFile(join(dir, 'doc.txt'), 'a document DSS signed\n');
    await writeFile(join(dir, 'mimetype'), mimetype);
    cmsSign(join(dir, 'doc.txt'), join(dir, 'META-INF', 'signature.p7s'));
    return dir;
  }

  /**
   * A directory of an ASiC-E: doc.txt, META-INF/extra.xml, META-INF/ASiCManifest.xml naming both
   * (the second a META-INF file, as some DigiDoc containers do) and META-INF/signature001.p7s over it.
   */
  async function asicE(): Promise<string> {
    const dir = at(`asice-${++containers}`);
    await mkdir(join(dir, 'META-INF'), { recursive: true });
    await writeFile(join(dir, 'mimetype'), ASIC_E);
    const files = { 'doc.txt': 'an invoice\n', 'META-INF/extra.xml': '<extra/>\n' };
    for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
    const manifest = buildManifest({
      signature: 'META-INF/signature001.p7s',
      references: Object.entries(files).map(([name, text]) => ({
        name,
        mimeType: name.endsWith('.xml') ? 'text/xml' : 'text/plain',
        digest: 'sha256' as const,
        digestValue: createHash('sha256').update(text).digest(),
      })),
    });
    await writeFile(join(dir, 'META-INF', 'ASiCManifest.xml'), manifest);
    cmsSign(join(dir, 'META-INF', 'ASiCManifest.xml'), join(dir, 'META-INF', 'signature001.p7s'));
    return dir;
  }
  const E_FILES = ['doc.txt', 'META-INF/extra.xml', 'META-INF/ASiCManifest.xml', 'META-INF/signature001.p7s'];

  async function lenient(path: string, bend: RegExp): Promise<Report> {
    const { code, report, stderr } = await verify([path]);
    expect(code, stderr).toBe(0);
    expect(report.valid).toBe(true);
    expect(report.warnings?.join('\n')).toMatch(bend);
    const text = await runCli(['verify', ...UNREVOKED, '--trust', at('root.pem'), path], { env });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`^! .*${bend.source}`, 'm'));
    return report;
  }

  it('mimetype stored last (as 22 of DSS’s containers have it): read, with a warning', async () => {
    const dir = await asicS();
    infoZip(dir, 'c.asics', ['doc.txt', 'META-INF/signature.p7s', 'mimetype'], ['-X', '-0']);
    const report = await lenient(join(dir, 'c.asics'), /not the first entry/);
    expect(report.warnings).toHaveLength(1);
  });

  it('mimetype with an extra field (Info-ZIP without -X, as a DigiDoc timestamp container has it)', async () => {
    const dir = await asicS();
    infoZip(dir, 'c.asics', ['mimetype'], ['-0']);
    infoZip(dir, 'c.asics', ['doc.txt', 'META-INF/signature.p7s'], ['-X']);
    await lenient(join(dir, 'c.asics'), /has an extra field/);
  });

  it('mimetype ending in CR LF, and one compressed', async () => {
    const crlf = await asicS(`${ASIC_S}\r\n`);
    infoZip(crlf, 'c.asics', ['mimetype', 'doc.txt', 'META-INF/signature.p7s'], ['-X', '-0']);
    await lenient(join(crlf, 'c.asics'), /ends in white space/);
    // Padding makes Info-ZIP deflate it (it stores what deflate does not shrink).
    const padded = await asicS(`${ASIC_S}${' '.repeat(200)}\n`);
    infoZip(padded, 'c.asics', ['-X', '-9', 'mimetype', 'doc.txt', 'META-INF/signature.p7s']);
    expect((await readFile(join(padded, 'c.asics'))).readUInt16LE(8), 'Info-ZIP deflated it').toBe(8);
    await lenient(join(padded, 'c.asics'), /is compressed/);
  });

  it('a manifest naming a file of META-INF/: read with a warning, that file covered (changed: VERIFY_FAILED)', async () => {
    const dir = await asicE();
    infoZip(dir, 'c.asice', ['mimetype'], ['-X', '-0']);
    infoZip(dir, 'c.asice', E_FILES, ['-X']);
    const report = await lenient(join(dir, 'c.asice'), /names META-INF\/extra\.xml, a file of META-INF\//);
    expect(report.signatures[0]!.covers).toEqual(['doc.txt', 'META-INF/extra.xml']);
    await writeFile(join(dir, 'META-INF', 'extra.xml'), '<extra changed="1"/>\n');
    infoZip(dir, 'changed.asice', ['mimetype'], ['-X', '-0']);
    infoZip(dir, 'changed.asice', E_FILES, ['-X']);
    const changed = await verify([join(dir, 'changed.asice')]);
    expect(changed.code).toBe(9);
    expect(changed.report).toMatchObject({ code: 'VERIFY_FAILED', signatures: [{ subIndication: 'HASH_FAILURE' }] });
  });

  it('a file added, or one the manifest names taken out: VERIFY_MODIFIED whether or not the signer’s anchor is known', async () => {
    const dir = await asicE();
    await writeFile(join(dir, 'added.txt'), 'slipped in\n');
    infoZip(dir, 'added.asice', ['mimetype'], ['-X', '-0']);
    infoZip(dir, 'added.asice', [...E_FILES, 'added.txt'], ['-X']);
    infoZip(dir, 'missing.asice', ['mimetype'], ['-X', '-0']);
    infoZip(
      dir,
      'missing.asice',
      E_FILES.filter((name) => name !== 'doc.txt'),
      ['-X'],
    );
    // A root that is not the signer's: no anchor known for it (before: VERIFY_UNTRUSTED hid the change).
    selfSignedRoot('other', '/CN=Another root');
    for (const [name, problem] of [
      ['added.asice', undefined],
      ['missing.asice', /ASiCManifest\.xml names doc\.txt, which the container does not hold/],
    ] as const) {
      for (const root of [at('root.pem'), at('other.pem')]) {
        const result = await runCli(['--json', 'verify', ...UNREVOKED, '--trust', root, join(dir, name)], { env });
        expect(result.code, `${name} ${root}`).toBe(9);
        const report = result.json<Report>();
        expect(report, `${name} ${root}`).toMatchObject({ status: 'modified', code: 'VERIFY_MODIFIED' });
        if (problem) expect(report.signatures[0]!.problems.join('\n')).toMatch(problem);
      }
    }
  });

  it('no mimetype at all (as 12 of DSS’s containers): read by its META-INF/ as DSS reads it, with a warning; a plain ZIP is refused in one line', async () => {
    // An ASiC-S: one document and META-INF/signature.p7s, no mimetype, no extension.
    const s = await asicS();
    infoZip(s, 'nomime.zip', ['doc.txt', 'META-INF/signature.p7s'], ['-X']);
    await rename(join(s, 'nomime.zip'), join(s, 'nomime'));
    const sReport = await lenient(join(s, 'nomime'), /has no "mimetype" entry \(EN 319 162-1 A\.1\), read as ASiC-S/);
    expect(sReport).toMatchObject({ packaging: 'asic-s', signatures: [{ covers: ['doc.txt'] }] });
    expect(sReport.warnings![0]).toMatch(/by its one document \(evidence: META-INF\/signature\.p7s\)/);
    // An ASiC-E: its ASiCManifest says so.
    const e = await asicE();
    infoZip(e, 'nomime.sce', E_FILES, ['-X']);
    const eReport = await lenient(join(e, 'nomime.sce'), /read as ASiC-E by its META-INF\/ASiCManifest\.xml/);
    expect(eReport).toMatchObject({ packaging: 'asic-e', signatures: [{ covers: ['doc.txt', 'META-INF/extra.xml'] }] });
    // Still strict: a file added to it is a change (VERIFY_MODIFIED), whatever the anchor.
    await writeFile(join(e, 'added.txt'), 'slipped in\n');
    infoZip(e, 'added-nomime.sce', [...E_FILES, 'added.txt'], ['-X']);
    const added = await runCli(
      ['--json', 'verify', ...UNREVOKED, '--trust', at('root.pem'), join(e, 'added-nomime.sce')],
      {
        env,
      },
    );
    expect([added.code, added.json<Report>().code]).toEqual([9, 'VERIFY_MODIFIED']);
    // A plain ZIP (nothing under META-INF/ signs it): not a signed container, one line, exit 7, nothing written.
    const plain = at('plain-zip');
    await mkdir(plain, { recursive: true });
    await writeFile(join(plain, 'a.txt'), 'a\n');
    await writeFile(join(plain, 'b.txt'), 'b\n');
    infoZip(plain, 'plain.zip', ['a.txt', 'b.txt'], ['-X']);
    const before = await readdir(plain);
    const refused = await runCli(['verify', ...UNREVOKED, '--trust', at('root.pem'), join(plain, 'plain.zip')], {
      env,
    });
    expect(refused.code).toBe(7);
    expect(refused.stderr).toMatch(
      /plain\.zip: Not a signed container: a ZIP with no "mimetype" entry and no signature, timestamp or evidence record under META-INF\//,
    );
    expect(
      refused.stderr
        .trim()
        .split('\n')
        .filter((line) => !/sandbox profile/.test(line)),
    ).toHaveLength(1);
    expect(await readdir(plain)).toEqual(before);
    const json = await runCli(['--json', 'verify', ...UNREVOKED, join(plain, 'plain.zip')], { env });
    expect(json.json<{ error: { code: string } }>().error.code).toBe('CONTAINER_INVALID');
  });

  it('stays strict where it matters: an entry named "." is refused in one line (exit 7), with a mimetype or without; an ASiC-E mimetype makes it an ASiC-E whatever its name', async () => {
    const dir = await asicS();
    await writeFile(join(dir, 'z'), 'x');
    infoZip(dir, 'dot.asics', ['mimetype', 'doc.txt', 'z', 'META-INF/signature.p7s'], ['-X', '-0']);
    await writeFile(join(dir, 'dot.asics'), renamed(await readFile(join(dir, 'dot.asics')), 'z', '.'));
    const dot = await runCli(['verify', ...UNREVOKED, '--trust', at('root.pem'), join(dir, 'dot.asics')], { env });
    expect(dot.code).toBe(7);
    expect(dot.stderr).toMatch(/dot\.asics: Not a container esign reads: the entry name "\." has a "\." component/);
    expect(dot.stderr).not.toMatch(/\n\s+at /);
    infoZip(dir, 'none.asics', ['doc.txt', 'z', 'META-INF/signature.p7s'], ['-X', '-0']);
    await writeFile(join(dir, 'none.asics'), renamed(await readFile(join(dir, 'none.asics')), 'z', '.'));
    const none = await runCli(['verify', ...UNREVOKED, '--trust', at('root.pem'), join(dir, 'none.asics')], { env });
    expect([none.code, none.stderr]).toEqual([7, expect.stringMatching(/the entry name "\." has a "\." component/)]);
    await writeFile(join(dir, 'mimetype'), ASIC_E);
    infoZip(dir, 'other.asics', ['mimetype', 'doc.txt', 'META-INF/signature.p7s'], ['-X', '-0']);
    // Its content, not its name, says what it is: an ASiC-E, whose signatures an ASiCManifest lists (none here).
    const other = await runCli(['verify', ...UNREVOKED, '--trust', at('root.pem'), join(dir, 'other.asics')], { env });
    expect([other.code, other.stderr]).toEqual([
      9,
      expect.stringMatching(/VERIFY_NO_SIGNATURES: .*other\.asics has no signatures/),
    ]);
  });
});

describe('several SignerInfos in one signature file (openssl cms -sign with two -signer)', () => {
  it('are each a signature, in a .p7s and in an ASiC-S (before: the file was not a readable CMS)', async () => {
    const dir = at('two-signers');
    await mkdir(join(dir, 'META-INF'), { recursive: true });
    await writeFile(join(dir, 'doc.txt'), 'signed by two\n');
    await writeFile(join(dir, 'mimetype'), 'application/vnd.etsi.asic-s+zip');
    issued('second', '/CN=Other PKI second signer', 'signer.ext');
    cmsSign(
      join(dir, 'doc.txt'),
      join(dir, 'META-INF', 'signature.p7s'),
      '-signer',
      'second.pem',
      '-inkey',
      'second.key',
    );
    const p7s = await verify([join(dir, 'doc.txt'), '--signature', join(dir, 'META-INF', 'signature.p7s')]);
    expect(p7s.code, p7s.stderr).toBe(0);
    expect(p7s.report.signatures.map((signature) => signature.signer?.subject).sort()).toEqual([
      'CN=Other PKI second signer',
      'CN=Other PKI signer',
    ]);
    infoZip(dir, 'two.asics', ['mimetype', 'doc.txt', 'META-INF/signature.p7s'], ['-X', '-0']);
    const asics = await verify([join(dir, 'two.asics')]);
    expect(asics.code, asics.stderr).toBe(0);
    expect(asics.report.signatures).toMatchObject([
      { index: 1, covers: ['doc.txt'], status: 'valid' },
      { index: 2, covers: ['doc.txt'], status: 'valid' },
    ]);
  });
});

describe('a counter-signature (openssl cms -sign over the signature value, put in as RFC 5652 §11.4 has it)', () => {
  it('is verified and reported under its signature, in --json and in the text', async () => {
    const dir = at('counter');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'contract.txt'), 'countersigned\n');
    if (!(await readdir(work.dir)).includes('second.pem'))
      issued('second', '/CN=Other PKI second signer', 'signer.ext');
    cmsSign(join(dir, 'contract.txt'), join(dir, 'parent.p7s'), '-certfile', 'second.pem');
    const parent = new Uint8Array(await readFile(join(dir, 'parent.p7s')));
    await writeFile(join(dir, 'value.bin'), parseSignedData(parent).signatureValue);
    openssl(
      'cms',
      '-sign',
      '-binary',
      '-in',
      join(dir, 'value.bin'),
      '-signer',
      'second.pem',
      '-inkey',
      'second.key',
      '-outform',
      'DER',
      '-out',
      join(dir, 'counter.p7s'),
      '-nosmimecap',
    );
    const signedData = decode(new Uint8Array(await readFile(join(dir, 'counter.p7s'))), 'counter').items[1]!.items[0]!;
    const signerInfo = signedData.items[signedData.items.length - 1]!.items[0]!.encoded;
    const countersigned = addUnsignedAttribute(parent, attribute('1.2.840.113549.1.9.6', signerInfo), 'signature');
    await writeFile(join(dir, 'countersigned.p7s'), countersigned);

    const { code, report, stderr } = await verify([
      join(dir, 'contract.txt'),
      '--signature',
      join(dir, 'countersigned.p7s'),
    ]);
    expect(code, stderr).toBe(0);
    expect(only(report)).toMatchObject({
      status: 'valid',
      signer: { subject: 'CN=Other PKI signer' },
      counterSignatures: [{ status: 'valid', signer: { subject: 'CN=Other PKI second signer' } }],
    });
    const text = await runCli(
      [
        'verify',
        ...UNREVOKED,
        '--trust',
        at('root.pem'),
        join(dir, 'contract.txt'),
        '--signature',
        join(dir, 'countersigned.p7s'),
      ],
      { env },
    );
    expect(text.stdout).toMatch(/^ {4}#1 Counter-signature: ✓ valid \[ETSI TOTAL-PASSED\]$/m);
  });
});
