/**
 * `esign verify` of XAdES counter-signatures (EN 319 132-1 §5.2.7): a signature by one of the
 * sandbox's credentials, counter-signed by another, built at run time by esign's XAdES writer
 * (test/helpers/xades-counter.ts); the counter-signature nested under its parent in --json and in
 * the text, and folded into the exit code; xmlsec1 as the independent judge of the counter-signature.
 * `esign extend` of such a file to B-LT and B-LTA (and a refresh): the counter-signature kept byte for
 * byte as an unsigned signature property before what the extension adds, the main signature at the
 * new level, both valid (online and offline), and xmlsec1 still accepting both.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SignatureReport, VerificationReport } from '../../src/core/verify/types.js';
import {
  counterSignedAsicSignatures,
  counterSignedXml,
  withSignatureValue,
  type CounterSigner,
} from '../helpers/xades-counter.js';
import { runCli } from '../helpers/run-cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDirForFile } from '../helpers/tmp.js';

let sandbox: TestSandbox;
let work: { dir: string; remove: () => Promise<void> };
let parent: CounterSigner;
let counter: CounterSigner;

beforeAll(async () => {
  sandbox = await startTestSandbox({ autoApprove: true });
  work = await tempDirForFile('esign-xades-counter-');
  const rsa = sandbox.sandbox.pki.credentials.filter(
    (credential) => credential.key.type === 'rsa' && credential.status === 'enabled',
  );
  const issuing = sandbox.sandbox.pki.issuingCa.certificate;
  const identity = (credential: (typeof rsa)[number]): CounterSigner => ({
    certificates: [credential.signer.certificate, issuing],
    privateKey: credential.signer.privateKey,
  });
  parent = identity(rsa[0]!);
  counter = identity(rsa[1] ?? rsa[0]!);
}, 60_000);
afterAll(async () => {
  await sandbox?.close();
  await work?.remove();
});

async function write(name: string, xml: string): Promise<string> {
  const file = join(work.dir, name);
  await writeFile(file, xml);
  return file;
}

async function verify(file: string, json = true) {
  const result = await runCli([...(json ? ['--json'] : []), 'verify', '--trust', sandbox.rootPemPath, file], {
    env: sandbox.env,
  });
  return { code: result.code, stdout: result.stdout, report: json ? result.json<VerificationReport>() : undefined };
}

function counterOf(report: VerificationReport | undefined): SignatureReport {
  expect(report!.signatures).toHaveLength(1);
  expect(report!.signatures[0]!.counterSignatures).toHaveLength(1);
  return report!.signatures[0]!.counterSignatures![0]!;
}

const flip = (text: string) => `${text[0] === 'A' ? 'B' : 'A'}${text.slice(1)}`;

describe('esign verify of XAdES counter-signatures', () => {
  it('valid: the counter-signature verified with its own signer and chain, nested in --json and in the text; exit 0', async () => {
    const file = await write('counter.xml', counterSignedXml(parent, counter));
    const { code, report, stdout } = await verify(file);
    expect(code, stdout).toBe(0);
    expect(report).toMatchObject({ kind: 'xades', status: 'valid', code: null });
    const countersignature = counterOf(report);
    expect(countersignature, stdout).toMatchObject({
      kind: 'xades',
      status: 'valid',
      indication: 'TOTAL-PASSED',
      level: 'B-B',
      chain: { trusted: true },
      signatureValue: { valid: true },
    });
    expect(countersignature.signer?.serialNumber).not.toBe(report!.signatures[0]!.signer?.serialNumber);

    const text = await verify(file, false);
    expect(text.code).toBe(0);
    const lines = text.stdout.split('\n');
    const at = lines.findIndex((line) => line.includes('Counter-signature'));
    expect(at, text.stdout).toBeGreaterThan(0);
    expect(lines[at]).toMatch(/^\s{4}#1 Counter-signature: ✓ valid/);
  });

  it('the parent SignatureValue changed after counter-signing: the counter-signature INVALID (HASH_FAILURE), exit 9', async () => {
    const file = await write('parent-changed.xml', withSignatureValue(counterSignedXml(parent, counter), 0, flip));
    const { code, report } = await verify(file);
    expect(code).toBe(9);
    expect(report).toMatchObject({ status: 'invalid', code: 'VERIFY_FAILED' });
    expect(counterOf(report)).toMatchObject({ status: 'invalid', subIndication: 'HASH_FAILURE' });
  });

  it("the counter-signature's bytes changed: its parent valid, it INVALID (SIG_CRYPTO_FAILURE), the file fails (exit 9)", async () => {
    const file = await write('counter-changed.xml', withSignatureValue(counterSignedXml(parent, counter), 1, flip));
    const { code, report } = await verify(file);
    expect(code).toBe(9);
    expect(report).toMatchObject({ status: 'invalid', code: 'VERIFY_FAILED' });
    expect(report!.signatures[0]).toMatchObject({ status: 'valid' });
    expect(counterOf(report)).toMatchObject({ status: 'invalid', subIndication: 'SIG_CRYPTO_FAILURE' });
    const text = await verify(file, false);
    expect(text.stdout).toMatch(/Counter-signature[^\n]*INVALID/);
  });

  it('a CountersignedSignature reference to the document instead: the counter-signature INVALID, the file fails (exit 9)', async () => {
    const file = await write('misdirected.xml', counterSignedXml(parent, counter, { counterUri: () => '#inv-1' }));
    const { code, report } = await verify(file);
    expect(code).toBe(9);
    expect(report!.signatures[0]).toMatchObject({ status: 'valid' });
    const countersignature = counterOf(report);
    expect(countersignature).toMatchObject({ status: 'invalid', integrity: { valid: false } });
    expect(countersignature.problems.join('\n')).toMatch(
      /CountersignedSignature reference \(#inv-1\) names something other/,
    );
  });
});

/** The xades:CounterSignature element of `xml`, as written. */
const counterElement = (xml: string) => /<xades:CounterSignature>[\s\S]*?<\/xades:CounterSignature>/.exec(xml)![0];

/** `esign extend --level LEVEL` of `file` into `output`; the input left as it was. */
async function extended(file: string, level: 'B-LT' | 'B-LTA', output: string): Promise<string> {
  const before = await readFile(file);
  const result = await runCli(['--json', 'extend', '--level', level, '-o', output, file], { env: sandbox.env });
  expect(result.code, result.stderr).toBe(0);
  expect(result.json()).toMatchObject({ format: 'XAdES', level, signatures: 1 });
  expect(await readFile(file)).toEqual(before);
  return readFile(output, 'utf8');
}

describe('esign extend of a counter-signed XAdES', () => {
  it.each(['B-LT', 'B-LTA'] as const)(
    '→ %s: the main signature at the new level, the counter-signature still nested, valid and byte for byte as it was',
    async (level) => {
      const xml = counterSignedXml(parent, counter);
      const file = await write(`counter-${level}.xml`, xml);
      const output = join(work.dir, `counter-${level}-extended.xml`);
      const out = await extended(file, level, output);
      expect(counterElement(out)).toBe(counterElement(xml));
      // The counter-signature stays an unsigned signature property, before what the extension added.
      const properties = /<xades:UnsignedSignatureProperties>([\s\S]*)<\/xades:UnsignedSignatureProperties>/.exec(
        out,
      )![1]!;
      expect(properties.startsWith(counterElement(xml))).toBe(true);
      const added = ['SignatureTimeStamp', 'CertificateValues', 'RevocationValues'];
      if (level === 'B-LTA') added.push('ArchiveTimeStamp');
      expect(
        [...properties.slice(counterElement(xml).length).matchAll(/<xades(?:141)?:(\w+)[ >]/g)].map((m) => m[1]),
      ).toEqual(expect.arrayContaining(added));
      const { code, report, stdout } = await verify(output);
      expect(code, stdout).toBe(0);
      expect(report).toMatchObject({ kind: 'xades', status: 'valid', code: null });
      expect(report!.signatures[0]).toMatchObject({ status: 'valid', indication: 'TOTAL-PASSED', level });
      expect(stdout).not.toContain('archive timestamp does not validate');
      expect(counterOf(report), stdout).toMatchObject({
        kind: 'xades',
        status: 'valid',
        indication: 'TOTAL-PASSED',
        signatureValue: { valid: true },
      });
      // The file holds the validation data of both signers: the root CRL too, though the KeyInfo stops
      // at the issuing CA (the root came from the profile's trust anchors), and the counter-signer's
      // OCSP answer beside the signer's. Offline, with a cache of its own (answers cached by the runs
      // above would hide what the file lacks), both signatures pass from the file alone.
      expect(out.match(/<xades:EncapsulatedOCSPValue>/g)).toHaveLength(2);
      const offline = await runCli(['--json', 'verify', '--offline', '--trust', sandbox.rootPemPath, output], {
        env: { ...sandbox.env, ESIGN_CACHE_DIR: join(work.dir, `no-cache-${level}`) },
      });
      expect(offline.code, offline.stdout).toBe(0);
      const offlineReport = offline.json<VerificationReport>();
      expect(offlineReport.signatures[0], offline.stdout).toMatchObject({ status: 'valid', level });
      expect(counterOf(offlineReport)).toMatchObject({ status: 'valid', indication: 'TOTAL-PASSED' });
      expect(counterOf(offlineReport).chain!.revocation.map((entry) => entry.source)).toEqual([
        'xades-ocsp',
        'xades-crl',
        'trust-anchor',
      ]);
    },
  );

  it('B-LTA refreshed in place: a second archive timestamp over the counter-signature and the first; both signatures valid', async () => {
    const xml = counterSignedXml(parent, counter);
    const file = await write('counter-refresh.xml', xml);
    const output = join(work.dir, 'counter-refresh-lta.xml');
    await extended(file, 'B-LTA', output);
    const result = await runCli(['--json', 'extend', '--in-place', output], { env: sandbox.env });
    expect(result.code, result.stderr).toBe(0);
    const out = await readFile(output, 'utf8');
    expect(out.split('ArchiveTimeStamp xmlns').length - 1).toBe(2);
    expect(counterElement(out)).toBe(counterElement(xml));
    const { code, report, stdout } = await verify(output);
    expect(code, stdout).toBe(0);
    expect(stdout).not.toContain('archive timestamp does not validate');
    expect(report!.signatures[0]).toMatchObject({ status: 'valid', level: 'B-LTA' });
    expect(counterOf(report)).toMatchObject({ status: 'valid' });
    expect((await readdir(work.dir)).filter((name) => name.startsWith('.'))).toEqual([]);
  });
});

const has = (tool: string) => spawnSync('which', [tool]).status === 0;

describe.skipIf(!has('zip'))('esign extend of a counter-signed XAdES in an ASiC-E', () => {
  it('→ B-LTA in place: the container verifies, its signature B-LTA over both files, the counter-signature nested and valid', async () => {
    const dir = join(work.dir, 'asice');
    await mkdir(join(dir, 'META-INF'), { recursive: true });
    const files = { 'a.txt': Buffer.from('first file\n'), 'b.txt': Buffer.from('second file\n') };
    for (const [name, bytes] of Object.entries(files)) await writeFile(join(dir, name), bytes);
    const signatures = counterSignedAsicSignatures(files, parent, counter);
    await writeFile(join(dir, 'META-INF', 'signatures0.xml'), signatures);
    await writeFile(join(dir, 'mimetype'), 'application/vnd.etsi.asic-e+zip');
    // Info-ZIP: mimetype first and stored, then the files and the signature.
    execFileSync('zip', ['-q', '-X', '-0', 'counter.asice', 'mimetype'], { cwd: dir });
    execFileSync('zip', ['-q', '-X', 'counter.asice', 'a.txt', 'b.txt', 'META-INF/signatures0.xml'], { cwd: dir });
    const bundle = join(dir, 'counter.asice');
    expect(counterOf((await verify(bundle)).report)).toMatchObject({ status: 'valid' });

    const result = await runCli(['--json', 'extend', '--in-place', bundle], { env: sandbox.env });
    expect(result.code, result.stderr).toBe(0);
    expect(result.json()).toMatchObject({ output: bundle, format: 'XAdES', level: 'B-LTA', signatures: 1 });
    const { code, report, stdout } = await verify(bundle);
    expect(code, stdout).toBe(0);
    expect(stdout).not.toContain('archive timestamp does not validate');
    expect(report!.signatures[0]).toMatchObject({ status: 'valid', level: 'B-LTA', covers: ['a.txt', 'b.txt'] });
    expect(counterOf(report)).toMatchObject({ status: 'valid', indication: 'TOTAL-PASSED' });
    const extended = execFileSync('unzip', ['-p', bundle, 'META-INF/signatures0.xml'], { encoding: 'utf8' });
    expect(counterElement(extended)).toBe(counterElement(signatures));
    for (const [name, bytes] of Object.entries(files))
      expect(execFileSync('unzip', ['-p', bundle, name])).toEqual(bytes);
  });
});

describe.skipIf(!has('xmlsec1'))('xmlsec1 judges the counter-signature', () => {
  /** xmlsec1 --verify of the ds:Signature with Id `id`, the Ids of Signature, SignatureValue and SignedProperties registered. */
  function xmlsecVerify(file: string, id: string) {
    return spawnSync(
      'xmlsec1',
      [
        '--verify',
        '--trusted-pem',
        sandbox.rootPemPath,
        '--id-attr:Id',
        'http://uri.etsi.org/01903/v1.3.2#:SignedProperties',
        '--id-attr:Id',
        'http://www.w3.org/2000/09/xmldsig#:SignatureValue',
        '--id-attr:Id',
        'http://www.w3.org/2000/09/xmldsig#:Signature',
        '--node-id',
        id,
        file,
      ],
      { encoding: 'utf8' },
    );
  }
  const counterId = (xml: string) => /<xades:CounterSignature><ds:Signature [^>]*Id="([^"]+)"/.exec(xml)![1]!;

  it('valid: xmlsec1 verifies the counter-signature (its reference to the parent SignatureValue); changed parent: it fails', async () => {
    const xml = counterSignedXml(parent, counter);
    const good = xmlsecVerify(await write('judge.xml', xml), counterId(xml));
    expect(good.status, good.stderr).toBe(0);
    const changed = withSignatureValue(xml, 0, flip);
    const bad = xmlsecVerify(await write('judge-changed.xml', changed), counterId(changed));
    expect(bad.status).not.toBe(0);
  });

  it.each(['B-LT', 'B-LTA'] as const)(
    'extended to %s: xmlsec1 still accepts the main signature and the counter-signature',
    async (level) => {
      const file = await write(`judge-${level}.xml`, counterSignedXml(parent, counter));
      const xml = await extended(file, level, join(work.dir, `judge-${level}-extended.xml`));
      const mainId = /<ds:Signature [^>]*Id="([^"]+)"/.exec(xml)![1]!;
      expect(mainId).not.toBe(counterId(xml));
      const output = await write(`judge-${level}-extended.xml`, xml);
      for (const id of [mainId, counterId(xml)]) {
        const verified = xmlsecVerify(output, id);
        expect(verified.status, `${id}: ${verified.stderr}`).toBe(0);
        expect(verified.stderr).toMatch(/OK/);
      }
    },
  );
});
