/**
 * `esign extend` of XAdES against the sandbox: an enveloped XML file B-T → B-LT and → B-LTA, a
 * B-LTA refresh (a TimeStampValidationData for the last archive timestamp's TSA, then a second
 * ArchiveTimeStamp), ASiC-E and ASiC-S with XAdES; `esign verify` then reports the new level; the
 * document outside the signature and the signed parts of the signature stay byte for byte; bad
 * input refused in one line, nothing written, the input unchanged.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VerificationReport } from '../../src/core/verify/types.js';
import { runCli } from '../helpers/run-cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/tmp.js';

let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox({ autoApprove: true });
});
afterAll(async () => {
  await sandbox?.close();
});

/** ISO-8859-1, a prolog with a comment and an instruction: every byte outside the signature must stay. */
const INVOICE = Buffer.from(
  '<?xml version="1.0" encoding="ISO-8859-1"?>\n<!-- before -->\n<?keep me?>\n' +
    '<inv:Invoice xmlns:inv="urn:example:invoice" xmlns="urn:example:default">\r\n  <Seller>Peñalver S.L.</Seller>\r\n' +
    '  <Total currency="EUR">21.00</Total>\r\n</inv:Invoice>\n<!-- after -->\n',
  'latin1',
);
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

async function signed(dir: string, level: string, args: string[] = ['--format', 'xades'], name = 'invoice.xml') {
  const input = join(dir, name);
  await writeFile(input, INVOICE);
  const result = await runCli(['--auto-approve', '--quiet', 'sign', '--level', level, ...args, input], {
    env: sandbox.env,
  });
  expect(result.code, result.stderr).toBe(0);
  return input;
}

async function extend(args: string[]) {
  return runCli(['--json', 'extend', ...args], { env: sandbox.env });
}

async function verified(file: string): Promise<VerificationReport> {
  const result = await runCli(['--json', 'verify', '--trust', sandbox.rootPemPath, file], { env: sandbox.env });
  const report = result.json<VerificationReport>();
  expect(result.code, result.stdout).toBe(0);
  // Every archive timestamp checks out (a broken one is a warning, not a failure of the level).
  expect(result.stdout).not.toContain('archive timestamp does not validate');
  return report;
}

/** The parts of each signature extending must not touch, and the document around it. */
function signedParts(xml: string): string[] {
  const parts = [
    ...xml.matchAll(
      /<ds:SignedInfo>[\s\S]*?<\/ds:SignedInfo>|<ds:SignatureValue[\s\S]*?<\/ds:SignatureValue>|<xades:SignedProperties[\s\S]*?<\/xades:SignedProperties>/g,
    ),
  ].map((m) => m[0]);
  expect(parts.length).toBeGreaterThanOrEqual(3);
  return parts;
}

function outside(xml: Buffer): Buffer {
  const text = xml.toString('latin1');
  const start = text.indexOf('<ds:Signature ');
  const end = text.lastIndexOf('</ds:Signature>') + '</ds:Signature>'.length;
  return Buffer.concat([xml.subarray(0, start), xml.subarray(end)]);
}

const count = (text: string, what: string) => text.split(what).length - 1;

describe('esign extend of enveloped XAdES', () => {
  it('B-T → B-LT: CertificateValues and RevocationValues; verify says B-LT; NAME-lt.xml, the input unchanged', async () => {
    const dir = await tempDir();
    await signed(dir, 'B-T');
    const input = join(dir, 'invoice-signed.xml');
    const bt = await readFile(input);
    const result = await extend(['--level', 'B-LT', input]);
    expect(result.code, result.stderr).toBe(0);
    const output = join(dir, 'invoice-signed-lt.xml');
    const lt = await readFile(output);
    expect(result.json()).toMatchObject({
      input,
      output,
      format: 'XAdES',
      level: 'B-LT',
      signatures: 1,
      documentTimestamps: 0,
      validationData: { ocsps: expect.any(Number) },
      bytes: lt.length,
      sha256: sha256(lt),
    });
    expect(await readFile(input)).toEqual(bt);
    const text = lt.toString('latin1');
    expect(count(text, '<xades:CertificateValues')).toBe(1);
    expect(count(text, '<xades:RevocationValues')).toBe(1);
    expect(text).not.toContain('ArchiveTimeStamp');
    expect(signedParts(text)).toEqual(signedParts(bt.toString('latin1')));
    expect(outside(lt)).toEqual(outside(bt));
    expect(outside(lt)).toEqual(INVOICE);
    expect((await verified(output)).signatures[0]!.level).toBe('B-LT');
  });

  it('B-T → B-LTA, then a refresh in place: a TimeStampValidationData and a second ArchiveTimeStamp; verify says B-LTA', async () => {
    const dir = await tempDir();
    await signed(dir, 'B-T');
    const input = join(dir, 'invoice-signed.xml');
    const bt = await readFile(input);
    const first = await extend([input]);
    expect(first.code, first.stderr).toBe(0);
    const output = join(dir, 'invoice-signed-lta.xml');
    expect(first.json()).toMatchObject({ output, level: 'B-LTA', archiveTimestamp: expect.any(String) });
    const lta = await readFile(output);
    const text = lta.toString('latin1');
    expect(count(text, 'ArchiveTimeStamp xmlns')).toBe(1);
    expect(text.indexOf('RevocationValues')).toBeLessThan(text.indexOf('ArchiveTimeStamp'));
    expect(outside(lta)).toEqual(outside(bt));
    expect(signedParts(text)).toEqual(signedParts(bt.toString('latin1')));
    expect((await verified(output)).signatures[0]!.level).toBe('B-LTA');

    // The sandbox's OCSP answers and CRLs carry whole seconds: fetched again within the same second
    // they are byte for byte what the file holds, and the refresh rightly adds no TimeStampValidationData.
    // Into the next second, so that they are newer (a wait, not a timing assertion).
    await new Promise((resolve) => setTimeout(resolve, 1050 - (Date.now() % 1000)));
    const refreshed = await extend(['--in-place', output]);
    expect(refreshed.code, refreshed.stderr).toBe(0);
    expect(refreshed.json()).toMatchObject({ input: output, output, level: 'B-LTA', signatures: 1 });
    const twice = await readFile(output);
    const again = twice.toString('latin1');
    expect(count(again, 'ArchiveTimeStamp xmlns')).toBe(2);
    expect(count(again, '<xades141:TimeStampValidationData')).toBe(1);
    // The first extension's properties stay as they were, the refresh's come after them.
    const before = text.slice(0, text.indexOf('</xades:UnsignedSignatureProperties>'));
    expect(again.startsWith(before)).toBe(true);
    const order = ['ArchiveTimeStamp xmlns', 'TimeStampValidationData', 'ArchiveTimeStamp xmlns'];
    let at = 0;
    for (const what of order) {
      const next = again.indexOf(what, at);
      expect(next).toBeGreaterThan(at);
      at = next + 1;
    }
    expect(outside(twice)).toEqual(INVOICE);
    expect((await verified(output)).signatures[0]!.level).toBe('B-LTA');
    expect((await readdir(dir)).sort()).toEqual(['invoice-signed-lta.xml', 'invoice-signed.xml', 'invoice.xml']);
  });

  it('a signature written with other prefixes, a comment and a ">" in an attribute in its unsigned properties: extended in place, verify says B-LTA', async () => {
    const dir = await tempDir();
    await signed(dir, 'B-T');
    const bt = (await readFile(join(dir, 'invoice-signed.xml'))).toString('latin1');
    // The unsigned properties are not signed: rewritten as another tool might write them.
    const other = bt
      .replace(
        '<xades:UnsignedProperties><xades:UnsignedSignatureProperties>',
        '<u:UnsignedProperties xmlns:u="http://uri.etsi.org/01903/v1.3.2#"><!-- </xades:UnsignedSignatureProperties> --><u:UnsignedSignatureProperties Note="a>b">',
      )
      .replace(
        /<xades:SignatureTimeStamp Id="([^"]+)"><ds:CanonicalizationMethod/,
        '<u:SignatureTimeStamp Id="$1" xmlns:d="http://www.w3.org/2000/09/xmldsig#"><d:CanonicalizationMethod',
      )
      .replace('<xades:EncapsulatedTimeStamp>', '<u:EncapsulatedTimeStamp>')
      .replace(
        '</xades:EncapsulatedTimeStamp></xades:SignatureTimeStamp>',
        '</u:EncapsulatedTimeStamp></u:SignatureTimeStamp>',
      )
      .replace(
        '</xades:UnsignedSignatureProperties></xades:UnsignedProperties>',
        '</u:UnsignedSignatureProperties></u:UnsignedProperties>',
      );
    expect(other).toContain('<u:SignatureTimeStamp');
    expect(other).not.toContain('xades:SignatureTimeStamp');
    const input = join(dir, 'other.xml');
    await writeFile(input, other, 'latin1');
    expect((await verified(input)).signatures[0]!.level).toBe('B-T');
    const result = await extend([input]);
    expect(result.code, result.stderr).toBe(0);
    const output = (await readFile(join(dir, 'other-lta.xml'))).toString('latin1');
    const end = other.indexOf('</u:UnsignedSignatureProperties>');
    expect(output.startsWith(other.slice(0, end))).toBe(true);
    expect(output.endsWith(other.slice(end))).toBe(true);
    expect(output.slice(end)).toMatch(/^<xades:CertificateValues xmlns:xades=/);
    expect((await verified(join(dir, 'other-lta.xml'))).signatures[0]!.level).toBe('B-LTA');
  });

  it('--continue-on-error: a bad file is reported, the others extended; exit 10', async () => {
    const dir = await tempDir();
    await signed(dir, 'B-T');
    const good = join(dir, 'invoice-signed.xml');
    const bad = join(dir, 'plain.xml');
    await writeFile(bad, '<a>not signed</a>\n');
    const result = await extend(['--level', 'B-LT', '--continue-on-error', bad, good]);
    expect(result.code, result.stderr).toBe(10);
    expect(result.stdout).toMatch(/"input":"[^"]*plain\.xml","error":\{"code":"XADES_REFUSED"/);
    expect((await verified(join(dir, 'invoice-signed-lt.xml'))).signatures[0]!.level).toBe('B-LT');
    expect((await readdir(dir)).sort()).toEqual([
      'invoice-signed-lt.xml',
      'invoice-signed.xml',
      'invoice.xml',
      'plain.xml',
    ]);
  });

  it('B-B → B-LT: a SignatureTimeStamp first (from the profile’s TSA), then the validation data; verify says B-LT', async () => {
    const dir = await tempDir();
    await signed(dir, 'B-B');
    const input = join(dir, 'invoice-signed.xml');
    const bb = await readFile(input);
    expect(bb.toString('latin1')).not.toContain('SignatureTimeStamp');
    const result = await extend(['--level', 'B-LT', input]);
    expect(result.code, result.stderr).toBe(0);
    const lt = await readFile(join(dir, 'invoice-signed-lt.xml'));
    const text = lt.toString('latin1');
    expect(count(text, '<xades:SignatureTimeStamp')).toBe(1);
    expect(text.indexOf('<xades:SignatureTimeStamp')).toBeLessThan(text.indexOf('<xades:CertificateValues'));
    expect(outside(lt)).toEqual(INVOICE);
    expect(signedParts(text)).toEqual(signedParts(bb.toString('latin1')));
    expect((await verified(join(dir, 'invoice-signed-lt.xml'))).signatures[0]!.level).toBe('B-LT');
  });

  it('bad input: unsigned XML, a modified document, a .p7s: one line, exit 7 or 2, nothing written, input unchanged', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'invoice.xml'), INVOICE);
    const modified = join(dir, 'modified.xml');
    const btDir = await tempDir();
    await signed(btDir, 'B-T');
    await writeFile(
      modified,
      (await readFile(join(btDir, 'invoice-signed.xml'))).toString('latin1').replace('21.00', '99.00'),
      'latin1',
    );
    const p7sDir = await tempDir();
    await signed(p7sDir, 'B-T', [], 'notes.xml');
    const cases: Array<[string, number, RegExp]> = [
      [join(dir, 'invoice.xml'), 7, /no XML signature to extend/],
      [modified, 7, /signature 1 does not verify/],
      [join(p7sDir, 'notes.xml.p7s'), 2, /CAdES signature, which esign extend does not raise/],
    ];
    for (const [file, exit, message] of cases) {
      const listing = (await readdir(join(file, '..'))).sort();
      const bytes = await readFile(file);
      const result = await extend([file]);
      expect(result.code, `${file}: ${result.stderr}`).toBe(exit);
      const error = result.json<{ error: { message: string } }>().error;
      expect(error.message).toMatch(message);
      expect(error.message).not.toContain('\n');
      expect((await readdir(join(file, '..'))).sort()).toEqual(listing);
      expect(await readFile(file)).toEqual(bytes);
    }
  });
});

describe('esign extend of XAdES containers', () => {
  it('ASiC-E with XAdES B-T → B-LTA: each entry kept, signatures0.xml extended, verify says B-LTA', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'a.txt'), 'first file\n');
    await writeFile(join(dir, 'b.xml'), '<b>second</b>\n');
    const bundle = join(dir, 'bundle.asice');
    const made = await runCli(
      [
        '--auto-approve',
        '--quiet',
        'sign',
        '--format',
        'asice',
        '--level',
        'B-T',
        '-o',
        bundle,
        join(dir, 'a.txt'),
        join(dir, 'b.xml'),
      ],
      { env: sandbox.env },
    );
    expect(made.code, made.stderr).toBe(0);
    const before = await readFile(bundle);
    const result = await extend([bundle]);
    expect(result.code, result.stderr).toBe(0);
    const output = join(dir, 'bundle-lta.asice');
    expect(result.json()).toMatchObject({ output, format: 'XAdES', level: 'B-LTA', signatures: 1 });
    expect(await readFile(bundle)).toEqual(before);
    const report = await verified(output);
    expect(report.signatures[0]).toMatchObject({ level: 'B-LTA', covers: ['a.txt', 'b.xml'] });
    const lt = await extend(['--level', 'B-LT', '-o', join(dir, 'copy.sce'), bundle]);
    expect(lt.code, lt.stderr).toBe(0);
    expect((await verified(join(dir, 'copy.sce'))).signatures[0]!.level).toBe('B-LT');
  });

  it('an ASiC-E with two XAdES signatures (signatures0.xml, signatures1.xml): both extended', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'a.txt'), 'first file\n');
    const bundle = join(dir, 'two.asice');
    for (const args of [['--format', 'asice', '-o', bundle, join(dir, 'a.txt')], [bundle]]) {
      const made = await runCli(['--auto-approve', '--quiet', 'sign', '--level', 'B-T', ...args], { env: sandbox.env });
      expect(made.code, made.stderr).toBe(0);
    }
    const result = await extend(['--in-place', bundle]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.json()).toMatchObject({ signatures: 2, level: 'B-LTA' });
    const report = await verified(bundle);
    expect(report.signatures.map((signature) => signature.level)).toEqual(['B-LTA', 'B-LTA']);
  });

  it('ASiC-S with XAdES B-T → B-LT in place', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'single.txt'), 'one file\n');
    const made = await runCli(
      [
        '--auto-approve',
        '--quiet',
        'sign',
        '--format',
        'asics',
        '--asic-signature',
        'xades',
        '--level',
        'B-T',
        join(dir, 'single.txt'),
      ],
      { env: sandbox.env },
    );
    expect(made.code, made.stderr).toBe(0);
    const container = join(dir, 'single.txt.asics');
    const result = await extend(['--level', 'B-LT', '--in-place', container]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.json()).toMatchObject({ output: container, level: 'B-LT', signatures: 1 });
    expect((await verified(container)).signatures[0]!.level).toBe('B-LT');
    expect((await readdir(dir)).sort()).toEqual(['single.txt', 'single.txt.asics']);
  });
});

describe('esign verify reads TimeStampValidationData', () => {
  it('validation data found only in a TimeStampValidationData counts as the signature’s own (offline: B-LT, no revocation unknown)', async () => {
    const dir = await tempDir();
    await signed(dir, 'B-T');
    const input = join(dir, 'invoice-signed.xml');
    const result = await extend(['--level', 'B-LT', input]);
    expect(result.code, result.stderr).toBe(0);
    const lt = (await readFile(join(dir, 'invoice-signed-lt.xml'))).toString('latin1');
    // The same values moved into a TimeStampValidationData (EN 319 132-1 §5.5.1), nothing else kept.
    const values = /<xades:CertificateValues[\s\S]*<\/xades:RevocationValues>/.exec(lt)![0];
    const moved = lt.replace(
      values,
      `<xades141:TimeStampValidationData xmlns:xades141="http://uri.etsi.org/01903/v1.4.1#" Id="tsvd-only">${values}</xades141:TimeStampValidationData>`,
    );
    expect(moved).not.toBe(lt);
    const file = join(dir, 'tsvd-only.xml');
    await writeFile(file, moved, 'latin1');
    const offline = (path: string) =>
      runCli(['--json', 'verify', '--offline', '--trust', sandbox.rootPemPath, path], { env: sandbox.env });
    const inTsvd = await offline(file);
    expect(inTsvd.code, inTsvd.stdout).toBe(0);
    expect(inTsvd.json<VerificationReport>().signatures[0]).toMatchObject({ status: 'valid', level: 'B-LT' });
    // Without it (the B-T original), offline verification cannot establish revocation: the data was read from there.
    const bare = await offline(input);
    expect(bare.json<VerificationReport>().signatures[0]!.level).not.toBe('B-LT');
  });
});
