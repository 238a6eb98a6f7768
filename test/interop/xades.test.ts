/**
 * XAdES that esign writes, judged by tools we did not write: `xmlsec1 --verify` (given only the
 * sandbox root) on every enveloped signature, `openssl ts -verify` on each timestamp token against
 * the imprint EN 319 132-1 asks for (the digest of the exclusive-c14n'd `ds:SignatureValue` for a
 * SignatureTimeStamp), and the document outside the signature compared byte for byte.
 */
import { spawnSync } from 'node:child_process';
import { constants, createHash, verify, X509Certificate } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DOMParser } from '@xmldom/xmldom';
import { ExclusiveCanonicalization } from 'xml-crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { XmlElement, XmlNode } from '../../src/core/xml/types/xml-libs.js';
import { runTool } from '../helpers/pdf-judges.js';
import { runCli } from '../helpers/run-cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDirForFile } from '../helpers/tmp.js';

const has = (tool: string) => spawnSync('which', [tool]).status === 0;
const missing = ['xmlsec1', 'openssl'].filter((tool) => !has(tool));

let sandbox: TestSandbox;
let work: { dir: string; remove: () => Promise<void> };
beforeAll(async () => {
  if (missing.length > 0) return;
  sandbox = await startTestSandbox({ autoApprove: true });
  work = await tempDirForFile('esign-interop-xades-');
});
afterAll(async () => {
  await sandbox?.close();
  await work?.remove();
});

const INVOICE = `<?xml version="1.0" encoding="UTF-8"?>
<?xml-stylesheet type="text/xsl" href="invoice.xsl"?>
<inv:Invoice xmlns:inv="urn:example:invoice" xmlns="urn:example:default" version="1.0">
  <!-- a comment, which the signature does not cover -->
  <Seller country="ES">Acme S.L.</Seller>
  <Line qty="2" price="10.50">Tornillos &amp; tuercas — M6 ✓</Line>
  <Total currency="EUR">21.00</Total>
</inv:Invoice>
`;

async function sign(args: string[]) {
  const signed = await runCli(['--auto-approve', '--quiet', 'sign', ...args], { env: sandbox.env });
  expect(signed.code, signed.stderr).toBe(0);
  return signed;
}

/** `xmlsec1 --verify` with only the sandbox root trusted; SignedProperties' Id registered as an ID attribute. */
function xmlsecVerify(file: string, extra: string[] = []) {
  return runTool('xmlsec1', [
    '--verify',
    '--trusted-pem',
    sandbox.rootPemPath,
    '--id-attr:Id',
    'http://uri.etsi.org/01903/v1.3.2#:SignedProperties',
    ...extra,
    file,
  ]);
}

/** The document outside the signature: the output with its one `<ds:Signature …>…</ds:Signature>` cut out. */
function withoutSignature(signed: Buffer): Buffer {
  const text = signed.toString('latin1');
  const start = text.indexOf('<ds:Signature ');
  const end = text.indexOf('</ds:Signature>') + '</ds:Signature>'.length;
  expect(start).toBeGreaterThan(0);
  return Buffer.concat([signed.subarray(0, start), signed.subarray(end)]);
}

/** Runs `openssl ts -verify` on a base64 token against `imprint` (hex), with the sandbox root. */
async function opensslTsVerify(tokenBase64: string, imprintHex: string, name: string) {
  const token = join(work.dir, `${name}.tst`);
  await writeFile(token, Buffer.from(tokenBase64, 'base64'));
  return runTool('openssl', [
    'ts',
    '-verify',
    '-digest',
    imprintHex,
    '-token_in',
    '-in',
    token,
    '-CAfile',
    sandbox.rootPemPath,
    '-partial_chain',
  ]);
}

describe.skipIf(missing.length > 0)('enveloped XAdES judged by xmlsec1 and openssl', () => {
  it('B-B: xmlsec1 verifies it with only the root; the document is byte-identical outside the signature, which is the root’s last child', async () => {
    const input = join(work.dir, 'invoice.xml');
    await writeFile(input, INVOICE);
    await sign(['--format', 'xades', '--level', 'B-B', input]);
    const output = join(work.dir, 'invoice-signed.xml');
    const signed = await readFile(output);
    const verified = await xmlsecVerify(output);
    expect(verified.status, verified.stderr).toBe(0);
    expect(verified.stderr).toMatch(/OK/);
    expect(withoutSignature(signed).equals(Buffer.from(INVOICE))).toBe(true);
    expect(signed.toString('utf8')).toMatch(/<\/ds:Signature><\/inv:Invoice>\n$/);
    const xml = signed.toString('utf8');
    for (const property of ['SigningTime', 'SigningCertificateV2', 'DataObjectFormat'])
      expect(xml).toContain(`<xades:${property}`);
    expect(xml).toContain('Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"');
    // A changed document no longer verifies.
    await writeFile(output, signed.toString('utf8').replace('21.00', '2100.00'));
    expect((await xmlsecVerify(output)).status).not.toBe(0);
  });

  it('B-T: xmlsec1 verifies it; openssl ts -verify accepts the SignatureTimeStamp over the digest of the c14n SignatureValue', async () => {
    const input = join(work.dir, 'factura.xml');
    await writeFile(input, INVOICE);
    await sign(['--format', 'xades', '--level', 'B-T', input]);
    const output = join(work.dir, 'factura-signed.xml');
    const xml = await readFile(output, 'utf8');
    const verified = await xmlsecVerify(output);
    expect(verified.status, verified.stderr).toBe(0);
    // The imprint as EN 319 132-1 §5.3 says: the digest of the element, exclusive c14n (its namespace on it, attributes sorted).
    const value = /<ds:SignatureValue Id="([^"]+)">([^<]+)<\/ds:SignatureValue>/.exec(xml)!;
    const canonical = `<ds:SignatureValue xmlns:ds="http://www.w3.org/2000/09/xmldsig#" Id="${value[1]}">${value[2]}</ds:SignatureValue>`;
    const imprint = createHash('sha256').update(canonical).digest('hex');
    const token = /<xades:EncapsulatedTimeStamp>([^<]+)<\/xades:EncapsulatedTimeStamp>/.exec(xml)![1]!;
    const ts = await opensslTsVerify(token, imprint, 'sig-ts');
    expect(ts.status, ts.stderr + ts.stdout).toBe(0);
    expect(ts.stdout).toMatch(/Verification: OK/);
    // The digest of the bare signature value (what a CMS timestamp covers) is not what it stamps.
    const raw = createHash('sha256').update(Buffer.from(value[2]!, 'base64')).digest('hex');
    expect((await opensslTsVerify(token, raw, 'sig-ts-raw')).status).not.toBe(0);
  });

  it('an ISO-8859-1 document with CRLF line ends keeps its bytes, and verifies', async () => {
    const input = join(work.dir, 'latin.xml');
    const original = Buffer.from(
      '<?xml version="1.0" encoding="ISO-8859-1"?>\r\n<Factura>\r\n  <Nombre>Jos\xe9 Mu\xf1oz</Nombre>\r\n</Factura>\r\n',
      'latin1',
    );
    await writeFile(input, original);
    await sign(['--format', 'xades', '--level', 'B-B', input]);
    const output = join(work.dir, 'latin-signed.xml');
    expect(withoutSignature(await readFile(output)).equals(original)).toBe(true);
    const verified = await xmlsecVerify(output);
    expect(verified.status, verified.stderr).toBe(0);
  });
});

/** Exclusive c14n of an element, by xml-crypto (a library, not esign's XAdES code). */
function c14n(element: XmlNode): string {
  return new ExclusiveCanonicalization().process(element, {});
}

function elements(parent: XmlNode): XmlElement[] {
  const out: XmlElement[] = [];
  for (let node = parent.firstChild; node; node = node.nextSibling)
    if (node.nodeType === 1) out.push(node as XmlElement);
  return out;
}

const DS = 'http://www.w3.org/2000/09/xmldsig#';
const XADES = 'http://uri.etsi.org/01903/v1.3.2#';

describe.skipIf(missing.length > 0)('enveloped XAdES at B-LT and B-LTA', () => {
  it('B-LT: CertificateValues and RevocationValues that openssl parses; xmlsec1 still verifies it', async () => {
    const input = join(work.dir, 'lt.xml');
    await writeFile(input, INVOICE);
    await sign(['--format', 'xades', '--level', 'B-LT', input]);
    const output = join(work.dir, 'lt-signed.xml');
    const xml = await readFile(output, 'utf8');
    expect((await xmlsecVerify(output)).status).toBe(0);
    const certificates = [...xml.matchAll(/<xades:EncapsulatedX509Certificate>([^<]+)</g)].map((m) => m[1]!);
    const crls = [...xml.matchAll(/<xades:EncapsulatedCRLValue>([^<]+)</g)].map((m) => m[1]!);
    const ocsps = [...xml.matchAll(/<xades:EncapsulatedOCSPValue>([^<]+)</g)].map((m) => m[1]!);
    expect(certificates.length).toBeGreaterThan(1);
    expect(crls.length + ocsps.length).toBeGreaterThan(0);
    for (const [index, crl] of crls.entries()) {
      const file = join(work.dir, `lt-${index}.crl`);
      await writeFile(file, Buffer.from(crl, 'base64'));
      const parsed = await runTool('openssl', ['crl', '-inform', 'DER', '-in', file, '-noout', '-text']);
      expect(parsed.status, parsed.stderr).toBe(0);
    }
    for (const [index, ocsp] of ocsps.entries()) {
      const file = join(work.dir, `lt-${index}.ocsp`);
      await writeFile(file, Buffer.from(ocsp, 'base64'));
      const parsed = await runTool('openssl', ['ocsp', '-respin', file, '-resp_text', '-noverify']);
      expect(parsed.status, parsed.stderr).toBe(0);
      expect(parsed.stdout).toMatch(/Cert Status: good/);
    }
    // The signature timestamp comes before the validation data, in the order EN 319 132-1 lists them.
    expect(xml.indexOf('<xades:SignatureTimeStamp')).toBeLessThan(xml.indexOf('<xades:CertificateValues'));
  });

  it('B-LTA: openssl ts -verify accepts the ArchiveTimeStamp over the imprint of EN 319 132-1 §5.5.2 computed here', async () => {
    const input = join(work.dir, 'lta.xml');
    await writeFile(input, INVOICE);
    await sign(['--format', 'xades', '--level', 'B-LTA', input]);
    const output = join(work.dir, 'lta-signed.xml');
    const xml = await readFile(output, 'utf8');
    expect((await xmlsecVerify(output)).status).toBe(0);
    const doc = new DOMParser().parseFromString(xml, 'text/xml');
    const signature = doc.getElementsByTagNameNS(DS, 'Signature')[0]!;
    const [signedInfo, signatureValue, keyInfo] = elements(signature);
    // The references in order: the document (enveloped: the root without the signature, comments
    // dropped, the stylesheet instruction before it), then the SignedProperties.
    const root = doc.documentElement!;
    root.removeChild(signature);
    const documentOctets = `<?xml-stylesheet type="text/xsl" href="invoice.xsl"?>\n${c14n(root)}`;
    root.insertBefore(signature, null);
    const signedProperties = doc.getElementsByTagNameNS(XADES, 'SignedProperties')[0]!;
    const unsigned = doc.getElementsByTagNameNS(XADES, 'UnsignedSignatureProperties')[0]!;
    const children = elements(unsigned);
    const archive = children.at(-1)!;
    expect(archive.localName).toBe('ArchiveTimeStamp');
    const hash = createHash('sha256')
      .update(documentOctets)
      .update(c14n(signedProperties))
      .update(c14n(signedInfo!))
      .update(c14n(signatureValue!))
      .update(c14n(keyInfo!));
    for (const child of children.slice(0, -1)) hash.update(c14n(child));
    const token = archive.getElementsByTagNameNS(XADES, 'EncapsulatedTimeStamp')[0]!.textContent!;
    const ts = await opensslTsVerify(token, hash.digest('hex'), 'archive');
    expect(ts.status, ts.stderr + ts.stdout).toBe(0);
  });
});

describe.skipIf(missing.length > 0)('enveloped XAdES with each kind of key', () => {
  for (const credential of ['alice-ec-p256', 'alice-ec-p384', 'alice-ec-p521']) {
    it(`${credential}: ECDSA, its value raw r||s, verified by xmlsec1`, async () => {
      const input = join(work.dir, `${credential}.xml`);
      await writeFile(input, INVOICE);
      await sign(['--format', 'xades', '--level', 'B-T', '--credential', credential, input]);
      const output = join(work.dir, `${credential}-signed.xml`);
      const verified = await xmlsecVerify(output);
      expect(verified.status, verified.stderr).toBe(0);
      expect(await readFile(output, 'utf8')).toMatch(/xmldsig-more#ecdsa-sha(256|384|512)"/);
    });
  }

  it('alice-rsa-pss: RSASSA-PSS (RFC 6931), its SignedInfo verified by node:crypto over xml-crypto’s c14n (xmlsec1 1.2 has no PSS)', async () => {
    const input = join(work.dir, 'pss.xml');
    await writeFile(input, INVOICE);
    await sign(['--format', 'xades', '--level', 'B-B', '--credential', 'alice-rsa-pss', input]);
    const xml = await readFile(join(work.dir, 'pss-signed.xml'), 'utf8');
    expect(xml).toContain('Algorithm="http://www.w3.org/2007/05/xmldsig-more#sha256-rsa-MGF1"');
    const doc = new DOMParser().parseFromString(xml, 'text/xml');
    const signedInfo = doc.getElementsByTagNameNS(DS, 'SignedInfo')[0]!;
    const value = Buffer.from(doc.getElementsByTagNameNS(DS, 'SignatureValue')[0]!.textContent!, 'base64');
    const certificate = new X509Certificate(
      Buffer.from(doc.getElementsByTagNameNS(DS, 'X509Certificate')[0]!.textContent!, 'base64'),
    );
    const valid = verify(
      'sha256',
      Buffer.from(c14n(signedInfo)),
      { key: certificate.publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 },
      value,
    );
    expect(valid).toBe(true);
  });
});
