/**
 * CAdES B-LT (ETSI EN 319 122-1) for a detached .p7s, an enveloping .p7m and an ASiC-S: the signer's
 * and the TSA's chains with their revocation data (OCSP, CRL) from the sandbox's PKI, fetched after
 * the timestamp, inside the SignedData; verify reports B-LT from that data alone.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decode, isContext, oid } from '../../src/core/cms/der.js';
import { OID_RI_OCSP_RESPONSE } from '../../src/core/cms/long-term.js';
import { OID_ARCHIVE_TIMESTAMP_V3, OID_ATS_HASH_INDEX_V3 } from '../../src/core/cms/archive-timestamp.js';
import { oneSignerEach } from '../../src/core/cms/signed-data.js';
import { parseSignedData } from '../../src/core/cms/parse.js';
import { readEnveloping } from '../../src/core/cms/enveloping.js';
import { runCli } from '../helpers/run-cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/tmp.js';

let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox({ autoApprove: true });
});
afterAll(async () => sandbox?.close());

async function sign(args: string[]) {
  const result = await runCli(['--auto-approve', '--json', 'sign', ...args], { env: sandbox.env });
  expect(result.code, result.stderr).toBe(0);
  return result.jsonLines() as Array<Record<string, unknown>>;
}

async function verify(args: string[]) {
  return runCli(['--json', 'verify', ...args], { env: sandbox.env });
}

/** The `crls` field's choices: CRLs (SEQUENCE) and OCSP responses (`other`, id-ri-ocsp-response). */
function revocationKinds(cms: Uint8Array): { crls: number; ocsps: number } {
  const kinds = { crls: 0, ocsps: 0 };
  for (const choice of parseSignedData(cms).revocationChoices.map((der) => decode(der, 'choice'))) {
    if (isContext(choice, 1) && oid(choice.items![0], 'format') === OID_RI_OCSP_RESPONSE) kinds.ocsps++;
    else kinds.crls++;
  }
  return kinds;
}

function bytesSource(bytes: Uint8Array) {
  return { size: bytes.length, read: async (at: number, length: number) => bytes.subarray(at, at + length) };
}

describe('CAdES B-LT', () => {
  it('a .p7s carries both chains and their OCSP responses and CRLs, and verifies at B-LT from them alone', async () => {
    const dir = await tempDir();
    const input = join(dir, 'notes.txt');
    await writeFile(input, 'pay 100 EUR\n');
    const [line] = await sign(['--level', 'B-LT', input]);
    expect(line).toMatchObject({ output: `${input}.p7s`, format: 'CAdES', level: 'B-LT' });
    expect(line!['validationData']).toMatchObject({ ocsps: 1, crls: 2 });
    const p7s = await readFile(`${input}.p7s`);
    const parsed = parseSignedData(p7s);
    expect(parsed.version).toBe(5);
    expect(revocationKinds(p7s)).toEqual({ crls: 2, ocsps: 1 });
    // The signer's chain, the TSA's certificate and the root: every certificate a validator needs.
    expect(parsed.certificates.length).toBeGreaterThanOrEqual(4);

    const verified = await verify([input, '--signature', `${input}.p7s`, '--level', 'B-LT']);
    expect(verified.code, verified.stderr).toBe(0);
    type Chain = { revocation: Array<{ source: string }> };
    const [signature] = (
      verified.json() as {
        signatures: Array<{ level: string; status: string; chain: Chain; timestamp: { chain: Chain } }>;
      }
    ).signatures;
    expect(signature).toMatchObject({ level: 'B-LT', status: 'valid' });
    // Every certificate's status came from the CMS (or is the anchor's).
    const sources = [...signature!.chain.revocation, ...signature!.timestamp.chain.revocation].map(
      (entry) => entry.source,
    );
    expect(sources.every((source: string) => source.startsWith('cms-') || source === 'trust-anchor')).toBe(true);
    expect(sources).toContain('cms-ocsp');
    expect(sources).toContain('cms-crl');
  });

  it('a B-T .p7s stays B-T, and verify --level B-LT refuses it (exit 12 with VERIFY_LEVEL)', async () => {
    const dir = await tempDir();
    const input = join(dir, 'notes.txt');
    await writeFile(input, 'a\n');
    await sign(['--level', 'B-T', input]);
    const verified = await verify([input, '--signature', `${input}.p7s`, '--level', 'B-LT']);
    expect(verified.code).not.toBe(0);
    expect(verified.json()).toMatchObject({ code: 'VERIFY_LEVEL' });
  });

  it('a .p7m at B-LT gives its content back, takes a parallel B-LT signature, and both stay B-LT', async () => {
    const dir = await tempDir();
    const input = join(dir, 'fattura.xml');
    const content = '<?xml version="1.0"?><Fattura>1</Fattura>\n';
    await writeFile(input, content);
    await sign(['--format', 'p7m', '--level', 'B-LT', input]);
    const first = await readFile(`${input}.p7m`);
    const [firstSigner] = oneSignerEach((await readEnveloping(bytesSource(first))).detached);
    const [added] = await sign(['--format', 'p7m', '--level', 'B-LT', `${input}.p7m`]);
    expect(added).toMatchObject({ output: `${input}.p7m`, level: 'B-LT' });
    const both = await readFile(`${input}.p7m`);
    const signers = oneSignerEach((await readEnveloping(bytesSource(both))).detached);
    expect(signers).toHaveLength(2);
    // The earlier SignerInfo is kept, and its revocation data with it. It is found by what makes it
    // itself, not by its place: DER sorts a SET OF by encoding, so the new one may come first. Its
    // signature value alone is not enough: two signings by one RSA key in one second sign the same
    // attributes and give the same value (PKCS#1 v1.5 is deterministic); their timestamps differ.
    const signerInfoOf = (cms: Uint8Array) => {
      const { signatureValue, signatureTimeStampToken } = parseSignedData(cms);
      return Buffer.concat([signatureValue, signatureTimeStampToken ?? new Uint8Array(0)]).toString('hex');
    };
    const kept = signers.filter((signer) => signerInfoOf(signer) === signerInfoOf(firstSigner!));
    expect(kept).toHaveLength(1);
    expect(revocationKinds(kept[0]!).ocsps).toBeGreaterThanOrEqual(revocationKinds(firstSigner!).ocsps);

    const out = join(dir, 'out.xml');
    const verified = await verify([`${input}.p7m`, '--level', 'B-LT', '--extract', out]);
    expect(verified.code, verified.stderr).toBe(0);
    const report = verified.json() as { signatures: Array<{ level: string; status: string }> };
    expect(report.signatures.map((s) => [s.level, s.status])).toEqual([
      ['B-LT', 'valid'],
      ['B-LT', 'valid'],
    ]);
    expect(await readFile(out, 'utf8')).toBe(content);
  });

  it('a changed content byte in a B-LT .p7m fails verify', async () => {
    const dir = await tempDir();
    const input = join(dir, 'notes.txt');
    await writeFile(input, 'pay 100 EUR\n');
    await sign(['--format', 'p7m', '--level', 'B-LT', input]);
    const p7m = await readFile(`${input}.p7m`);
    p7m[p7m.indexOf('100')] = '9'.charCodeAt(0);
    await writeFile(`${input}.p7m`, p7m);
    const verified = await verify([`${input}.p7m`]);
    expect(verified.code).toBe(9);
    const [signature] = (verified.json() as { signatures: Array<Record<string, unknown>> }).signatures;
    expect(signature).toMatchObject({ status: 'invalid', subIndication: 'HASH_FAILURE' });
    expect(signature!['level']).toBeUndefined();
  });

  it('an ASiC-S at B-LT verifies at B-LT', async () => {
    const dir = await tempDir();
    const input = join(dir, 'data.csv');
    await writeFile(input, 'a,b\n1,2\n');
    const [line] = await sign(['--format', 'asics', '--level', 'B-LT', input]);
    expect(line).toMatchObject({ output: `${input}.asics`, packaging: 'asic-s', level: 'B-LT' });
    const verified = await verify([`${input}.asics`, '--level', 'B-LT']);
    expect(verified.code, verified.stderr).toBe(0);
    expect((verified.json() as { signatures: Array<{ level: string }> }).signatures[0]!.level).toBe('B-LT');
  });

  it('a batch of .p7s at B-LT fetches the revocation data once for the window', async () => {
    const dir = await tempDir();
    const inputs = await Promise.all(
      ['a', 'b', 'c', 'd'].map(async (name) => {
        const path = join(dir, `${name}.txt`);
        await writeFile(path, `${name}\n`);
        return path;
      }),
    );
    const before = sandbox.sandbox.requestLog.length;
    const lines = await sign(['--level', 'B-LT', ...inputs]);
    expect(lines.map((line) => line['level'])).toEqual(['B-LT', 'B-LT', 'B-LT', 'B-LT']);
    const fetches = sandbox.sandbox.requestLog.slice(before).filter((route) => /ocsp|crl/i.test(route));
    // One OCSP request per certificate (the signer's; the TSA's if it has a responder) and one CRL
    // per CA, not one each per file (an OCSP answered before the last timestamp is asked once more).
    expect(fetches.length).toBeLessThanOrEqual(8);
    for (const input of inputs) {
      const verified = await verify([input, '--signature', `${input}.p7s`, '--level', 'B-LT']);
      expect(verified.code, verified.stderr).toBe(0);
    }
  });
});

type Report = {
  code: string | null;
  signatures: Array<{ kind: string; level?: string; status: string; problems: string[]; covers?: string[] }>;
};

/** A directory of two documents to put in a container. */
async function documents(): Promise<{ dir: string; docs: string }> {
  const dir = await tempDir();
  const docs = join(dir, 'docs');
  await mkdir(docs);
  await writeFile(join(docs, 'contract.txt'), 'pay 100 EUR\n');
  await writeFile(join(docs, 'annex.xml'), '<annex/>\n');
  return { dir, docs };
}

/** The container's entry names, in order, as Info-ZIP's unzip lists them. */
function entries(container: string): string[] {
  const listed = spawnSync('unzip', ['-Z1', container]);
  return listed.stdout.toString().trim().split('\n');
}

describe('ASiC-E at B-LT and B-LTA', () => {
  it('B-LT: the signature carries its validation data, and verify reports B-LT', async () => {
    const { dir, docs } = await documents();
    const output = join(dir, 'bundle.asice');
    const [line] = await sign([
      '--format',
      'asice',
      '--asic-signature',
      'cades',
      '--level',
      'B-LT',
      '-o',
      output,
      docs,
    ]);
    expect(line).toMatchObject({ packaging: 'asic-e', level: 'B-LT', validationData: { ocsps: 1, crls: 2 } });
    const verified = await verify([output, '--level', 'B-LT']);
    expect(verified.code, verified.stderr).toBe(0);
    expect((verified.json() as Report).signatures.map((s) => [s.kind, s.level])).toEqual([['cades', 'B-LT']]);
    expect(entries(output)).not.toContain('META-INF/ASiCArchiveManifest.xml');
  });

  it('B-LTA: an archive manifest over every file and its timestamp; a second B-LTA signature renews it', async () => {
    const { dir, docs } = await documents();
    const output = join(dir, 'bundle.asice');
    const [line] = await sign([
      '--format',
      'asice',
      '--asic-signature',
      'cades',
      '--level',
      'B-LTA',
      '-o',
      output,
      docs,
    ]);
    expect(line).toMatchObject({ level: 'B-LTA', archiveTimestamp: expect.any(String) });
    expect(entries(output)).toEqual([
      'mimetype',
      'docs/annex.xml',
      'docs/contract.txt',
      'META-INF/ASiCManifest.xml',
      'META-INF/signature001.p7s',
      'META-INF/ASiCArchiveManifest.xml',
      'META-INF/timestamp001.tst',
    ]);
    let verified = await verify([output, '--level', 'B-LTA']);
    expect(verified.code, verified.stderr).toBe(0);
    let report = verified.json() as Report;
    expect(report.signatures.map((s) => [s.kind, s.level ?? null, s.status])).toEqual([
      ['cades', 'B-LTA', 'valid'],
      ['docTimeStamp', null, 'valid'],
    ]);
    expect(report.signatures[1]!.covers).toEqual([
      'docs/annex.xml',
      'docs/contract.txt',
      'META-INF/ASiCManifest.xml',
      'META-INF/signature001.p7s',
    ]);

    const [added] = await sign(['--level', 'B-LTA', output]);
    expect(added).toMatchObject({ output, level: 'B-LTA' });
    expect(entries(output).slice(5)).toEqual([
      'META-INF/ASiCArchiveManifest001.xml',
      'META-INF/timestamp001.tst',
      'META-INF/ASiCManifest002.xml',
      'META-INF/signature002.p7s',
      'META-INF/ASiCArchiveManifest.xml',
      'META-INF/timestamp002.tst',
    ]);
    verified = await verify([output, '--level', 'B-LTA']);
    expect(verified.code, verified.stderr).toBe(0);
    report = verified.json() as Report;
    expect(report.signatures.map((s) => [s.kind, s.level ?? null, s.status])).toEqual([
      ['cades', 'B-LTA', 'valid'],
      ['cades', 'B-LTA', 'valid'],
      ['docTimeStamp', null, 'valid'],
      ['docTimeStamp', null, 'valid'],
    ]);
    // The newer archive covers the older one and its timestamp.
    expect(report.signatures[3]!.covers).toEqual(
      expect.arrayContaining(['META-INF/ASiCArchiveManifest001.xml', 'META-INF/timestamp001.tst']),
    );
  });

  it('a renewed archive timestamp carries its TSA chain and revocation data: verify finds them in it (EN 319 162-1 A.7 item 2)', async () => {
    const { dir, docs } = await documents();
    const output = join(dir, 'bundle.asice');
    await sign(['--format', 'asice', '--asic-signature', 'cades', '--level', 'B-LTA', '-o', output, docs]);
    const tokenOf = () => spawnSync('unzip', ['-p', output, 'META-INF/timestamp001.tst']).stdout;
    const before = tokenOf();
    const revocationOfFirstArchive = async () => {
      const verified = await verify([output, '--level', 'B-LTA']);
      expect(verified.code, verified.stderr).toBe(0);
      const report = verified.json() as {
        signatures: Array<{ kind: string; chain?: { revocation: Array<{ subject: string; source: string }> } }>;
      };
      const archive = report.signatures.find((signature) => signature.kind === 'docTimeStamp')!;
      return archive.chain!.revocation.find((entry) => /Time-Stamping/.test(entry.subject))!.source;
    };
    // Archived first, the token holds only what the TSA put in it: verify has to fetch its status.
    expect(await revocationOfFirstArchive()).toMatch(/^fetched-(ocsp|crl)$/);

    await sign(['--level', 'B-LTA', output]);
    const after = tokenOf();
    expect(after.length).toBeGreaterThan(before.length);
    // Before it was archived again, its TSA's CRL went into it.
    expect(await revocationOfFirstArchive()).toBe('cms-crl');
  });

  it('a parallel B-LT signature keeps the earlier B-LTA signature and its archive valid', async () => {
    const { dir, docs } = await documents();
    const output = join(dir, 'bundle.asice');
    await sign(['--format', 'asice', '--asic-signature', 'cades', '--level', 'B-LTA', '-o', output, docs]);
    await sign(['--level', 'B-LT', output]);
    const verified = await verify([output]);
    expect(verified.code, verified.stderr).toBe(0);
    expect((verified.json() as Report).signatures.map((s) => [s.kind, s.level ?? null, s.status])).toEqual([
      ['cades', 'B-LTA', 'valid'],
      ['cades', 'B-LT', 'valid'],
      ['docTimeStamp', null, 'valid'],
    ]);
  });

  it('a document changed after archiving fails the signature and the archive timestamp', async () => {
    const { dir, docs } = await documents();
    const output = join(dir, 'bundle.asice');
    await sign(['--format', 'asice', '--asic-signature', 'cades', '--level', 'B-LTA', '-o', output, docs]);
    const work = join(dir, 'tamper');
    await mkdir(join(work, 'docs'), { recursive: true });
    await writeFile(join(work, 'docs', 'contract.txt'), 'pay 900 EUR\n');
    // Info-ZIP replaces that one entry and keeps every other (mimetype first) as it was.
    const zipped = spawnSync('zip', ['-q', '-X', output, 'docs/contract.txt'], { cwd: work });
    expect(zipped.status, zipped.stderr.toString()).toBe(0);
    const verified = await verify([output]);
    expect(verified.code).toBe(9);
    const report = verified.json() as Report;
    expect(report.signatures.map((s) => [s.kind, s.status])).toEqual([
      ['cades', 'invalid'],
      ['docTimeStamp', 'invalid'],
    ]);
    expect(report.signatures[1]!.problems.join('\n')).toContain(
      'docs/contract.txt was changed after META-INF/ASiCArchiveManifest.xml archived it',
    );
  });
});

describe('CAdES B-LTA (archive-time-stamp-v3)', () => {
  it.each([
    ['cades', (input: string) => [input, '--signature', `${input}.p7s`]],
    ['p7m', (input: string) => [`${input}.p7m`]],
    ['asics', (input: string) => [`${input}.asics`]],
  ] as const)('--format %s at B-LTA verifies at B-LTA', async (format, target) => {
    const dir = await tempDir();
    const input = join(dir, 'fattura.xml');
    await writeFile(input, '<Fattura>2</Fattura>\n');
    const [line] = await sign(['--format', format, '--level', 'B-LTA', input]);
    expect(line).toMatchObject({ level: 'B-LTA', archiveTimestamp: expect.any(String) });
    const verified = await verify([...target(input), '--level', 'B-LTA']);
    expect(verified.code, verified.stderr).toBe(0);
    expect((verified.json() as Report).signatures.map((s) => [s.level, s.status])).toEqual([['B-LTA', 'valid']]);
  });

  it('a parallel B-LTA signature on a B-LTA .p7m keeps the first archived and valid', async () => {
    const dir = await tempDir();
    const input = join(dir, 'fattura.xml');
    await writeFile(input, '<Fattura>3</Fattura>\n');
    await sign(['--format', 'p7m', '--level', 'B-LTA', input]);
    await sign(['--format', 'p7m', '--level', 'B-LTA', `${input}.p7m`]);
    const verified = await verify([`${input}.p7m`, '--level', 'B-LTA']);
    expect(verified.code, verified.stderr).toBe(0);
    expect((verified.json() as Report).signatures.map((s) => [s.level, s.status])).toEqual([
      ['B-LTA', 'valid'],
      ['B-LTA', 'valid'],
    ]);
  });

  it('the archive timestamp carries its ats-hash-index-v3; a CRL removed after archiving fails the signature', async () => {
    const dir = await tempDir();
    const input = join(dir, 'notes.txt');
    await writeFile(input, 'archived\n');
    await sign(['--level', 'B-LTA', input]);
    const p7s = await readFile(`${input}.p7s`);
    const parsed = parseSignedData(p7s);
    const archive = parsed.unsignedAttributes.find((attribute) => attribute.type === OID_ARCHIVE_TIMESTAMP_V3);
    expect(archive?.values).toHaveLength(1);
    expect(parseSignedData(archive!.values[0]!).unsignedAttributes.map((attribute) => attribute.type)).toContain(
      OID_ATS_HASH_INDEX_V3,
    );
    // The same signature with its first CRL left out: the archived index names a value that is gone.
    const crl = parsed.revocationChoices.find((choice) => choice[0] === 0x30)!;
    const at = Buffer.from(p7s).indexOf(Buffer.from(crl));
    const stripped = stripRevocation(p7s, at, crl.length);
    await writeFile(`${input}.p7s`, stripped);
    const verified = await verify([input, '--signature', `${input}.p7s`]);
    expect(verified.code).toBe(9);
    const [signature] = (verified.json() as Report).signatures;
    expect(signature!.status).toBe('invalid');
    expect(signature!.problems.join('\n')).toContain('archive timestamp: a revocation data it archived is no longer');
  });
});

/** `der` without the `length` bytes at `at`, every enclosing definite length shortened to match. */
function stripRevocation(der: Uint8Array, at: number, length: number): Uint8Array {
  const out = Buffer.concat([der.subarray(0, at), der.subarray(at + length)]);
  // Shrink each enclosing header (ContentInfo, [0], SignedData, crls [1]) by `length`.
  const shrink = (offset: number): number => {
    const first = out[offset + 1]!;
    if (first < 0x80) {
      out[offset + 1] = first - length;
      return offset + 2;
    }
    const count = first & 0x7f;
    let value = 0;
    for (let i = 0; i < count; i++) value = value * 256 + out[offset + 2 + i]!;
    value -= length;
    for (let i = count - 1; i >= 0; i--) {
      out[offset + 2 + i] = value & 0xff;
      value = Math.floor(value / 256);
    }
    return offset + 2 + count;
  };
  // ContentInfo → (OID) → [0] → SignedData
  let offset = shrink(0);
  offset += 2 + out[offset + 1]!; // the content type OID
  offset = shrink(offset); // [0]
  shrink(offset); // SignedData
  // The crls [1] field, which comes before the CRL left out.
  const fields = decode(der, 'ContentInfo').items[1]!.items[0]!.items;
  const crls = fields.find((field) => isContext(field, 1))!;
  shrink(crls.encoded.byteOffset - der.byteOffset);
  return out;
}
