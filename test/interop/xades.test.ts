/**
 * XAdES that esign writes, judged by tools we did not write: `xmlsec1 --verify` (given only the
 * sandbox root) on every enveloped signature, `openssl ts -verify` on each timestamp token against
 * the imprint EN 319 132-1 asks for (the digest of the exclusive-c14n'd `ds:SignatureValue` for a
 * SignatureTimeStamp), and the document outside the signature compared byte for byte.
 */
import { spawnSync } from 'node:child_process';
import { constants, createHash, verify, X509Certificate } from 'node:crypto';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DOMParser } from '@xmldom/xmldom';
import { ExclusiveCanonicalization } from 'xml-crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { XmlElement, XmlNode } from '../../src/core/xml/types/xml-libs.js';
import { runTool } from '../helpers/pdf-judges.js';
import { xmlJudges } from '../helpers/xml-judges.js';
import { runCli } from '../helpers/run-cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDirForFile } from '../helpers/tmp.js';

const SAMPLES = fileURLToPath(new URL('../../samples/', import.meta.url));
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

const { xmlsecVerify, opensslTsVerify } = xmlJudges(
  () => sandbox.rootPemPath,
  () => work.dir,
);

/** The document outside the signature: the output with its one `<ds:Signature …>…</ds:Signature>` cut out. */
function withoutSignature(signed: Buffer): Buffer {
  const text = signed.toString('latin1');
  const start = text.indexOf('<ds:Signature ');
  const end = text.indexOf('</ds:Signature>') + '</ds:Signature>'.length;
  expect(start).toBeGreaterThan(0);
  return Buffer.concat([signed.subarray(0, start), signed.subarray(end)]);
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

describe.skipIf(missing.length > 0 || !has('unzip') || !has('zipinfo'))(
  'ASiC-E with XAdES judged by xmlsec1, unzip and zipinfo',
  () => {
    /** Unzips a container into its own directory; returns it. */
    async function unzipped(container: string, name: string): Promise<string> {
      const dir = join(work.dir, name);
      await mkdir(dir, { recursive: true });
      const result = await runTool('unzip', ['-o', '-q', container, '-d', dir]);
      expect(result.status, result.stderr).toBe(0);
      return dir;
    }

    /**
     * `xmlsec1 --verify` of a signaturesN.xml, each file it references (by its URI) mapped to a copy of
     * the extracted file under a plain name (xmlsec1 opens the mapped path as a URI itself).
     */
    async function verifyContainerSignature(dir: string, signature: string, files: string[]) {
      const mapped: string[] = [];
      for (const [index, file] of files.entries()) {
        const copy = join(dir, `mapped-${index}`);
        await copyFile(join(dir, file), copy);
        mapped.push(`--url-map:${encodeURI(file)}`, copy, `--url-map:${file}`, copy);
      }
      return xmlsecVerify(join(dir, signature), mapped);
    }

    it('a new .asice is XAdES by default: signatures0.xml (one Reference per file, its MIME type) and an ODF manifest.xml; xmlsec1, unzip -t and zipinfo accept it', async () => {
      const dir = join(work.dir, 'bundle-in');
      await mkdir(join(dir, 'docs'), { recursive: true });
      await writeFile(join(dir, 'docs', 'contract.pdf'), '%PDF-1.7\n% not really\n');
      await writeFile(join(dir, 'docs', 'data table.csv'), 'a,b\n1,2\n');
      await writeFile(join(dir, 'docs', 'invoice.xml'), INVOICE);
      const container = join(work.dir, 'bundle.asice');
      await sign(['--format', 'asice', '--level', 'B-T', '-o', container, join(dir, 'docs')]);
      expect((await runTool('unzip', ['-t', container])).status).toBe(0);
      const listing = await runTool('zipinfo', ['-1', container]);
      expect(listing.stdout.split('\n').filter(Boolean)).toEqual([
        'mimetype',
        'docs/contract.pdf',
        'docs/data table.csv',
        'docs/invoice.xml',
        'META-INF/manifest.xml',
        'META-INF/signatures0.xml',
      ]);
      const out = await unzipped(container, 'bundle-out');
      const files = ['docs/contract.pdf', 'docs/data table.csv', 'docs/invoice.xml'];
      const verified = await verifyContainerSignature(out, 'META-INF/signatures0.xml', files);
      expect(verified.status, verified.stderr).toBe(0);
      const xml = await readFile(join(out, 'META-INF/signatures0.xml'), 'utf8');
      expect(xml).toMatch(/^<\?xml version="1.0" encoding="UTF-8" standalone="no"\?><asic:XAdESSignatures /);
      expect([...xml.matchAll(/<ds:Reference Id="r-[^"]+" URI="([^"]+)"/g)].map((m) => m[1])).toEqual([
        'docs/contract.pdf',
        'docs/data%20table.csv',
        'docs/invoice.xml',
      ]);
      expect([...xml.matchAll(/<xades:MimeType>([^<]+)</g)].map((m) => m[1])).toEqual([
        'application/pdf',
        'text/csv',
        'text/xml',
      ]);
      const manifest = await readFile(join(out, 'META-INF/manifest.xml'), 'utf8');
      expect(manifest).toContain('manifest:full-path="/" manifest:media-type="application/vnd.etsi.asic-e+zip"');
      for (const file of files) expect(manifest).toContain(`manifest:full-path="${file}"`);
      // The signature timestamp is over the c14n'd SignatureValue.
      const value = /<ds:SignatureValue Id="([^"]+)">([^<]+)<\/ds:SignatureValue>/.exec(xml)!;
      const canonical = `<ds:SignatureValue xmlns:ds="${DS}" Id="${value[1]}">${value[2]}</ds:SignatureValue>`;
      const token = /<xades:EncapsulatedTimeStamp>([^<]+)</.exec(xml)![1]!;
      const ts = await opensslTsVerify(token, createHash('sha256').update(canonical).digest('hex'), 'asice-ts');
      expect(ts.status, ts.stderr + ts.stdout).toBe(0);
      // A file changed inside the container no longer verifies.
      await writeFile(join(out, 'docs', 'data table.csv'), 'a,b\n1,3\n');
      expect((await verifyContainerSignature(out, 'META-INF/signatures0.xml', files)).status).not.toBe(0);

      // Signed again: a parallel XAdES signature, signatures1.xml, over the same files; both verify.
      await sign(['--level', 'B-B', '--credential', 'alice-ec-p256', container]);
      const again = await unzipped(container, 'bundle-again');
      expect((await runTool('unzip', ['-t', container])).status).toBe(0);
      for (const signature of ['META-INF/signatures0.xml', 'META-INF/signatures1.xml']) {
        const result = await verifyContainerSignature(again, signature, files);
        expect(result.status, `${signature}: ${result.stderr}`).toBe(0);
      }
    });

    it('B-LTA: validation data and an ArchiveTimeStamp in signatures0.xml; xmlsec1 verifies it; --asic-signature cades keeps the CAdES layout', async () => {
      const input = join(work.dir, 'lta-note.txt');
      await writeFile(input, 'pay 100 EUR\n');
      const container = join(work.dir, 'lta.asice');
      await sign(['--format', 'asice', '--level', 'B-LTA', '-o', container, input]);
      const out = await unzipped(container, 'lta-out');
      const verified = await verifyContainerSignature(out, 'META-INF/signatures0.xml', ['lta-note.txt']);
      expect(verified.status, verified.stderr).toBe(0);
      const xml = await readFile(join(out, 'META-INF/signatures0.xml'), 'utf8');
      for (const element of ['xades:CertificateValues', 'xades:RevocationValues', 'xades141:ArchiveTimeStamp'])
        expect(xml).toContain(`<${element}`);
      const cades = join(work.dir, 'cades.asice');
      await sign(['--format', 'asice', '--asic-signature', 'cades', '--level', 'B-B', '-o', cades, input]);
      const listing = await runTool('zipinfo', ['-1', cades]);
      expect(listing.stdout).toContain('META-INF/signature001.p7s');
      expect(listing.stdout).not.toContain('signatures0.xml');
    });
  },
);

describe.skipIf(missing.length > 0 || !has('unzip'))('ASiC-S with XAdES, and XAdES-EPES', () => {
  it('--format asics --asic-signature xades: META-INF/signatures.xml over the document, verified by xmlsec1', async () => {
    const input = join(work.dir, 'single.txt');
    await writeFile(input, 'one document\n');
    await sign(['--format', 'asics', '--asic-signature', 'xades', '--level', 'B-T', input]);
    const container = `${input}.asics`;
    const listing = await runTool('zipinfo', ['-1', container]);
    expect(listing.stdout.split('\n').filter(Boolean)).toEqual(['mimetype', 'single.txt', 'META-INF/signatures.xml']);
    const dir = join(work.dir, 'single-out');
    await mkdir(dir, { recursive: true });
    expect((await runTool('unzip', ['-o', '-q', container, '-d', dir])).status).toBe(0);
    const verified = await xmlsecVerify(join(dir, 'META-INF/signatures.xml'), [
      '--url-map:single.txt',
      join(dir, 'single.txt'),
    ]);
    expect(verified.status, verified.stderr).toBe(0);
  });

  it('--signature-policy facturae-3.1: a FacturaE invoice gets XAdES-EPES (the policy, its SHA-1 hash, the issuer role, the invoice described); xmlsec1 verifies it', async () => {
    const input = join(work.dir, 'facturae.xml');
    await writeFile(input, await readFile(join(SAMPLES, 'facturae-invoice.xml')));
    await sign(['--format', 'xades', '--level', 'B-T', '--signature-policy', 'facturae-3.1', input]);
    const output = join(work.dir, 'facturae-signed.xml');
    expect((await xmlsecVerify(output)).status).toBe(0);
    const xml = await readFile(output, 'utf8');
    expect(xml).toContain(
      '<xades:Identifier>http://www.facturae.es/politica_de_firma_formato_facturae/politica_de_firma_formato_facturae_v3_1.pdf</xades:Identifier>',
    );
    expect(xml).toContain(
      '<ds:DigestMethod Algorithm="http://www.w3.org/2000/09/xmldsig#sha1"/><ds:DigestValue>Ohixl6upD6av8N7pEvDABhEL6hM=</ds:DigestValue>',
    );
    expect(xml).toContain('<xades:SignerRole><xades:ClaimedRoles><xades:ClaimedRole>emisor</xades:ClaimedRole>');
    expect(xml).toContain('<xades:Identifier Qualifier="OIDAsURN">urn:oid:1.2.840.10003.5.109.10</xades:Identifier>');
  });
});
