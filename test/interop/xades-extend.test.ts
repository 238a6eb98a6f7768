/**
 * `esign extend` of XAdES judged by tools we did not write: `xmlsec1 --verify` (given only the
 * sandbox root) still accepts each extended signature (its SignedInfo, SignatureValue and
 * references untouched); `openssl ts -verify` accepts each ArchiveTimeStamp the extension added,
 * against the imprint of EN 319 132-1 §5.5.2.2 computed here with xml-crypto (not esign's code);
 * `unzip -t` and `zipinfo` accept an extended container, whose documents are byte for byte the same.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DOMParser } from '@xmldom/xmldom';
import { ExclusiveCanonicalization } from 'xml-crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { XmlElement, XmlNode } from '../../src/core/xml/types/xml-libs.js';
import { runTool } from '../helpers/pdf-judges.js';
import { xmlJudges } from '../helpers/xml-judges.js';
import { runCli } from '../helpers/run-cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDirForFile } from '../helpers/tmp.js';

const has = (tool: string) => spawnSync('which', [tool]).status === 0;
const missing = ['xmlsec1', 'openssl', 'unzip', 'zipinfo'].filter((tool) => !has(tool));

let sandbox: TestSandbox;
let work: { dir: string; remove: () => Promise<void> };
beforeAll(async () => {
  if (missing.length > 0) return;
  sandbox = await startTestSandbox({ autoApprove: true });
  work = await tempDirForFile('esign-interop-xades-extend-');
});
afterAll(async () => {
  await sandbox?.close();
  await work?.remove();
});

const DS = 'http://www.w3.org/2000/09/xmldsig#';
const XADES = 'http://uri.etsi.org/01903/v1.3.2#';
const INVOICE =
  '<?xml version="1.0" encoding="UTF-8"?>\n<Invoice xmlns="urn:example:invoice">\n  <Total currency="EUR">21.00</Total>\n</Invoice>\n';

async function cli(args: string[]) {
  const result = await runCli(['--auto-approve', '--quiet', ...args], { env: sandbox.env });
  expect(result.code, result.stderr).toBe(0);
}

const { xmlsecVerify, opensslTsVerify } = xmlJudges(
  () => sandbox.rootPemPath,
  () => work.dir,
);

const c14n = (element: XmlNode): string => new ExclusiveCanonicalization().process(element, {});

function elements(parent: XmlNode): XmlElement[] {
  const out: XmlElement[] = [];
  for (let node = parent.firstChild; node; node = node.nextSibling)
    if (node.nodeType === 1) out.push(node as XmlElement);
  return out;
}

/**
 * Each ArchiveTimeStamp of an enveloped signature (its one document reference first, then the
 * SignedProperties) with the imprint §5.5.2.2 gives it: the references' octets, SignedInfo,
 * SignatureValue, KeyInfo, then every unsigned property before it, each exclusive c14n.
 */
function archiveImprints(xml: string): Array<{ token: string; imprint: string }> {
  const doc = new DOMParser().parseFromString(xml, 'text/xml');
  const signature = doc.getElementsByTagNameNS(DS, 'Signature')[0]!;
  const [signedInfo, signatureValue, keyInfo] = elements(signature);
  const root = doc.documentElement!;
  root.removeChild(signature);
  const documentOctets = c14n(root);
  root.insertBefore(signature, null);
  const signedProperties = doc.getElementsByTagNameNS(XADES, 'SignedProperties')[0]!;
  const children = elements(doc.getElementsByTagNameNS(XADES, 'UnsignedSignatureProperties')[0]!);
  return children.flatMap((child, index) => {
    if (child.localName !== 'ArchiveTimeStamp') return [];
    const hash = createHash('sha256')
      .update(documentOctets)
      .update(c14n(signedProperties))
      .update(c14n(signedInfo!))
      .update(c14n(signatureValue!))
      .update(c14n(keyInfo!));
    for (const before of children.slice(0, index)) hash.update(c14n(before));
    const token = child.getElementsByTagNameNS(XADES, 'EncapsulatedTimeStamp')[0]!.textContent!;
    return [{ token, imprint: hash.digest('hex') }];
  });
}

describe.skipIf(missing.length > 0)('esign extend of XAdES judged by xmlsec1, openssl and unzip', () => {
  it('an enveloped B-T raised to B-LT, to B-LTA and refreshed: xmlsec1 accepts each; openssl ts -verify each archive timestamp', async () => {
    const input = join(work.dir, 'invoice.xml');
    await writeFile(input, INVOICE);
    await cli(['sign', '--format', 'xades', '--level', 'B-T', input]);
    const signed = join(work.dir, 'invoice-signed.xml');
    await cli(['extend', '--level', 'B-LT', signed]);
    await cli(['extend', '--level', 'B-LTA', signed]);
    const lta = join(work.dir, 'invoice-signed-lta.xml');
    await copyFile(lta, join(work.dir, 'once.xml'));
    await cli(['extend', '--in-place', lta]);
    for (const file of ['invoice-signed-lt.xml', 'once.xml', 'invoice-signed-lta.xml']) {
      const verified = await xmlsecVerify(join(work.dir, file));
      expect(verified.status, `${file}: ${verified.stderr}`).toBe(0);
      expect(verified.stderr).toMatch(/OK/);
    }
    const stamps = archiveImprints(await readFile(lta, 'utf8'));
    expect(stamps).toHaveLength(2);
    for (const [index, { token, imprint }] of stamps.entries()) {
      const ts = await opensslTsVerify(token, imprint, `ats-${index}`);
      expect(ts.status, ts.stderr + ts.stdout).toBe(0);
      expect(ts.stdout).toMatch(/Verification: OK/);
    }
    // The second one covers the first and the TimeStampValidationData: the first's imprint does not verify it.
    expect((await opensslTsVerify(stamps[1]!.token, stamps[0]!.imprint, 'ats-wrong')).status).not.toBe(0);
  });

  it('a B-B raised to B-LT: xmlsec1 accepts it; openssl ts -verify the SignatureTimeStamp added, over the digest of the c14n SignatureValue', async () => {
    const input = join(work.dir, 'basic.xml');
    await writeFile(input, INVOICE);
    await cli(['sign', '--format', 'xades', '--level', 'B-B', input]);
    await cli(['extend', '--level', 'B-LT', join(work.dir, 'basic-signed.xml')]);
    const output = join(work.dir, 'basic-signed-lt.xml');
    const verified = await xmlsecVerify(output);
    expect(verified.status, verified.stderr).toBe(0);
    const doc = new DOMParser().parseFromString(await readFile(output, 'utf8'), 'text/xml');
    const value = doc.getElementsByTagNameNS(DS, 'SignatureValue')[0]!;
    const imprint = createHash('sha256').update(c14n(value)).digest('hex');
    const stamp = doc.getElementsByTagNameNS(XADES, 'SignatureTimeStamp')[0]!;
    const token = stamp.getElementsByTagNameNS(XADES, 'EncapsulatedTimeStamp')[0]!.textContent!;
    const ts = await opensslTsVerify(token, imprint, 'added-sig-ts');
    expect(ts.status, ts.stderr + ts.stdout).toBe(0);
    expect(ts.stdout).toMatch(/Verification: OK/);
  });

  it('an ASiC-E with XAdES raised to B-LTA: unzip -t and zipinfo accept it, its files unchanged, xmlsec1 accepts signatures0.xml', async () => {
    const dir = join(work.dir, 'bundle-in');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'a.txt'), 'first\n');
    await writeFile(join(dir, 'b.xml'), INVOICE);
    const container = join(work.dir, 'bundle.asice');
    await cli(['sign', '--format', 'asice', '--level', 'B-T', '-o', container, join(dir, 'a.txt'), join(dir, 'b.xml')]);
    await cli(['extend', container]);
    const extended = join(work.dir, 'bundle-lta.asice');
    const tested = await runTool('unzip', ['-t', extended]);
    expect(tested.status, tested.stdout).toBe(0);
    const listing = async (file: string) => (await runTool('zipinfo', ['-1', file])).stdout;
    expect(await listing(extended)).toBe(await listing(container));
    const out = join(work.dir, 'bundle-out');
    await mkdir(out, { recursive: true });
    expect((await runTool('unzip', ['-o', '-q', extended, '-d', out])).status).toBe(0);
    expect(await readFile(join(out, 'a.txt'), 'utf8')).toBe('first\n');
    expect(await readFile(join(out, 'b.xml'), 'utf8')).toBe(INVOICE);
    expect(await readFile(join(out, 'mimetype'), 'utf8')).toBe('application/vnd.etsi.asic-e+zip');
    const signatures = await readFile(join(out, 'META-INF', 'signatures0.xml'), 'utf8');
    expect(signatures).toContain('ArchiveTimeStamp');
    const mapped: string[] = [];
    for (const file of ['a.txt', 'b.xml']) mapped.push(`--url-map:${file}`, join(out, file));
    const verified = await xmlsecVerify(join(out, 'META-INF', 'signatures0.xml'), mapped);
    expect(verified.status, verified.stderr).toBe(0);
  });

  it('an ASiC-S with XAdES raised to B-LT in place: unzip -t accepts it, xmlsec1 accepts signatures.xml', async () => {
    const input = join(work.dir, 'single.txt');
    await writeFile(input, 'one file\n');
    await cli(['sign', '--format', 'asics', '--asic-signature', 'xades', '--level', 'B-T', input]);
    const container = join(work.dir, 'single.txt.asics');
    await cli(['extend', '--level', 'B-LT', '--in-place', container]);
    expect((await runTool('unzip', ['-t', container])).status).toBe(0);
    const out = join(work.dir, 'single-out');
    await mkdir(out, { recursive: true });
    expect((await runTool('unzip', ['-o', '-q', container, '-d', out])).status).toBe(0);
    expect(await readFile(join(out, 'META-INF', 'signatures.xml'), 'utf8')).toContain('RevocationValues');
    const verified = await xmlsecVerify(join(out, 'META-INF', 'signatures.xml'), [
      '--url-map:single.txt',
      join(out, 'single.txt'),
    ]);
    expect(verified.status, verified.stderr).toBe(0);
  });
});
