/**
 * `esign verify` of XAdES: esign's own enveloped XAdES at every level and key kind, signatures
 * xmlsec1 made (enveloped, enveloping, detached, with XAdES QualifyingProperties in its template)
 * with the sandbox's keys, ASiC-E and ASiC-S with XAdES built with Info-ZIP zip, and the refusals.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SignatureReport, VerificationReport } from '../../src/core/verify/types.js';
import { runCli } from '../helpers/run-cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDirForFile } from '../helpers/tmp.js';

let sandbox: TestSandbox;
let work: { dir: string; remove: () => Promise<void> };
let signerKey: string;
let signerCert: string;
let signerDer: Uint8Array;
let issuingCa: string;

beforeAll(async () => {
  sandbox = await startTestSandbox({ autoApprove: true });
  work = await tempDirForFile('esign-xades-verify-');
  const alice = sandbox.sandbox.pki.credentials.find(
    (credential) => credential.key.type === 'rsa' && credential.status === 'enabled',
  )!;
  signerKey = join(work.dir, 'signer.key');
  signerCert = join(work.dir, 'signer.pem');
  signerDer = alice.signer.certificate;
  await writeFile(signerKey, alice.signer.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
  await writeFile(signerCert, alice.signer.certificatePem);
  issuingCa = join(work.dir, 'issuing-ca.pem');
  await writeFile(issuingCa, sandbox.sandbox.pki.issuingCa.certificatePem);
}, 60_000);
afterAll(async () => {
  await sandbox?.close();
  await work?.remove();
});

type Report = VerificationReport & { valid: boolean };

async function verify(
  args: string[],
): Promise<{ code: number | null; report: Report; stdout: string; stderr: string }> {
  const result = await runCli(['--json', 'verify', '--trust', sandbox.rootPemPath, ...args], { env: sandbox.env });
  return { code: result.code, report: result.json<Report>(), stdout: result.stdout, stderr: result.stderr };
}

async function refused(args: string[]): Promise<{ code: number | null; message: string; errorCode: string }> {
  const result = await runCli(['--json', 'verify', '--trust', sandbox.rootPemPath, ...args], { env: sandbox.env });
  const error = result.json<{ error: { code: string; message: string } }>().error;
  return { code: result.code, message: error.message, errorCode: error.code };
}

function only(report: Report): SignatureReport {
  expect(report.signatures).toHaveLength(1);
  return report.signatures[0]!;
}

const INVOICE = `<?xml version="1.0" encoding="UTF-8"?>
<inv:Invoice xmlns:inv="urn:example:invoice" xmlns="urn:example:default" Id="invoice">
  <!-- not covered by an enveloped signature -->
  <Seller country="ES">Acme S.L.</Seller>
  <Line qty="2" price="10.50">Tornillos &amp; tuercas — M6 ✓</Line>
  <Total currency="EUR">21.00</Total>
</inv:Invoice>
`;

async function signWithEsign(name: string, level: string, credential?: string): Promise<string> {
  const input = join(work.dir, `${name}.xml`);
  await writeFile(input, INVOICE);
  const signed = await runCli(
    [
      '--auto-approve',
      '--quiet',
      'sign',
      '--format',
      'xades',
      '--level',
      level,
      ...(credential ? ['--credential', credential] : []),
      input,
    ],
    { env: sandbox.env },
  );
  expect(signed.code, signed.stderr).toBe(0);
  return join(work.dir, `${name}-signed.xml`);
}

async function tamper(path: string, from: string, to: string): Promise<string> {
  const xml = await readFile(path, 'utf8');
  expect(xml).toContain(from);
  const copy = path.replace(
    /\.xml$/,
    `-tampered-${createHash('sha1')
      .update(from + to)
      .digest('hex')
      .slice(0, 6)}.xml`,
  );
  await writeFile(copy, xml.replace(from, to));
  return copy;
}

describe('esign verify of the XAdES esign writes', () => {
  for (const level of ['B-B', 'B-T', 'B-LT', 'B-LTA']) {
    it(`${level}: valid, TOTAL-PASSED, level ${level}; a changed amount: TOTAL-FAILED/HASH_FAILURE (exit 9)`, async () => {
      const output = await signWithEsign(`own-${level}`, level);
      const { code, report, stdout } = await verify([output]);
      expect(code, stdout).toBe(0);
      expect(report).toMatchObject({ kind: 'xades', status: 'valid', code: null });
      const signature = only(report);
      expect(signature, stdout).toMatchObject({
        kind: 'xades',
        status: 'valid',
        indication: 'TOTAL-PASSED',
        level,
        integrity: { valid: true, digestAlgorithm: 'sha256' },
        signatureValue: { valid: true, algorithm: 'sha256WithRSAEncryption' },
        chain: { trusted: true },
      });
      if (level !== 'B-B') expect(signature.timestamp).toMatchObject({ valid: true });
      if (level === 'B-LT' || level === 'B-LTA')
        expect(signature.chain!.revocation[0]!.source).toMatch(/^xades-(ocsp|crl)$/);

      const changed = await tamper(output, '21.00', '99.00');
      const bad = await verify([changed]);
      expect(bad.code).toBe(9);
      expect(only(bad.report)).toMatchObject({
        status: 'invalid',
        indication: 'TOTAL-FAILED',
        subIndication: 'HASH_FAILURE',
      });
    });
  }

  it('B-T: a changed SignatureValue is SIG_CRYPTO_FAILURE, and its timestamp no longer matches', async () => {
    const output = await signWithEsign('own-sigvalue', 'B-T');
    const xml = await readFile(output, 'utf8');
    const value = /SignatureValue[^>]*>([A-Za-z0-9+/]{8})/.exec(xml)![1]!;
    const flipped = value.startsWith('A') ? `B${value.slice(1)}` : `A${value.slice(1)}`;
    const { code, report } = await verify([await tamper(output, value, flipped)]);
    expect(code).toBe(9);
    const signature = only(report);
    expect(signature).toMatchObject({
      status: 'invalid',
      indication: 'TOTAL-FAILED',
      subIndication: 'SIG_CRYPTO_FAILURE',
    });
    expect(signature.problems.join('\n')).toContain('signature timestamp: the message imprint does not match');
  });

  it('without a trust anchor: VERIFY_UNTRUSTED, INDETERMINATE/NO_CERTIFICATE_CHAIN_FOUND', async () => {
    const output = await signWithEsign('own-untrusted', 'B-B');
    // The TSA's certificate: an anchor, but not of the signer's chain.
    const other = join(work.dir, 'tsa.pem');
    await writeFile(
      other,
      `-----BEGIN CERTIFICATE-----\n${Buffer.from(sandbox.sandbox.pki.tsa.certificate).toString('base64')}\n-----END CERTIFICATE-----\n`,
    );
    const result = await runCli(['--json', 'verify', '--trust', other, output], { env: sandbox.env });
    expect(result.code).toBe(9);
    const signature = only(result.json<Report>());
    expect(signature).toMatchObject({
      status: 'untrusted',
      indication: 'INDETERMINATE',
      subIndication: 'NO_CERTIFICATE_CHAIN_FOUND',
    });
  });

  for (const [credential, algorithm] of [
    ['alice-ec-p256', /^ecdsa-with-SHA256$/],
    ['alice-ec-p384', /^ecdsa-with-SHA384$/],
    ['alice-rsa-pss', /^RSASSA-PSS \(sha256, MGF1 sha256, salt 32\)$/],
  ] as const) {
    it(`${credential}: ${String(algorithm)} verified (ECDSA values raw r||s)`, async () => {
      const output = await signWithEsign(credential, 'B-T', credential);
      const { code, report, stdout } = await verify([output]);
      expect(code, stdout).toBe(0);
      expect(only(report).signatureValue.algorithm).toMatch(algorithm);
    });
  }
});

describe('esign verify of the ASiC containers with XAdES esign writes', () => {
  for (const level of ['B-T', 'B-LTA']) {
    it(`ASiC-E (META-INF/signatures0.xml) at ${level}: valid, every file covered`, async () => {
      const a = join(work.dir, `asice-${level}-a.txt`);
      const b = join(work.dir, `asice-${level}-b.txt`);
      await writeFile(a, 'first file\n');
      await writeFile(b, 'second file\n');
      const output = join(work.dir, `bundle-${level}.asice`);
      const signed = await runCli(
        ['--auto-approve', '--quiet', 'sign', '--format', 'asice', '--level', level, '--output', output, a, b],
        {
          env: sandbox.env,
        },
      );
      expect(signed.code, signed.stderr).toBe(0);
      const { code, report, stdout } = await verify([output]);
      expect(code, stdout).toBe(0);
      expect(report).toMatchObject({ kind: 'xades', packaging: 'asic-e', uncovered: [] });
      expect(only(report)).toMatchObject({
        kind: 'xades',
        status: 'valid',
        level,
        covers: [`asice-${level}-a.txt`, `asice-${level}-b.txt`],
      });
    });
  }

  it('ASiC-S with XAdES (--asic-signature xades) at B-LT: valid', async () => {
    const input = join(work.dir, 'single.txt');
    await writeFile(input, 'one document\n');
    const signed = await runCli(
      ['--auto-approve', '--quiet', 'sign', '--format', 'asics', '--asic-signature', 'xades', '--level', 'B-LT', input],
      {
        env: sandbox.env,
      },
    );
    expect(signed.code, signed.stderr).toBe(0);
    const { code, report, stdout } = await verify([join(work.dir, 'single.txt.asics')]);
    expect(code, stdout).toBe(0);
    expect(report).toMatchObject({ kind: 'xades', packaging: 'asic-s' });
    expect(only(report)).toMatchObject({ status: 'valid', level: 'B-LT', covers: ['single.txt'] });
  });
});

// ---------------------------------------------------------------------------------------------
// Signatures xmlsec1 makes from templates, with the sandbox's signer key.

const has = (tool: string) => spawnSync('which', [tool]).status === 0;

function xmlsecSign(template: string, output: string, extra: string[] = []): void {
  const run = spawnSync(
    'xmlsec1',
    [
      '--sign',
      '--privkey-pem',
      `${signerKey},${signerCert},${issuingCa}`,
      '--id-attr:Id',
      'http://uri.etsi.org/01903/v1.3.2#:SignedProperties',
      '--id-attr:Id',
      'urn:example:invoice:Invoice',
      '--id-attr:Id',
      'http://www.w3.org/2000/09/xmldsig#:Object',
      ...extra,
      '--output',
      output,
      template,
    ],
    { encoding: 'utf8' },
  );
  expect(run.status, run.stderr).toBe(0);
}

const DS = 'http://www.w3.org/2000/09/xmldsig#';
const XADES = 'http://uri.etsi.org/01903/v1.3.2#';

function certDigest(algorithm: 'sha256' | 'sha1'): string {
  return createHash(algorithm).update(signerDer).digest('base64');
}

/** A ds:Signature template with XAdES SignedProperties (SigningTime, SigningCertificateV2 or v1). */
function signatureTemplate(options: {
  references: string;
  c14n?: string;
  method?: string;
  objects?: string;
  v1?: boolean;
  noXades?: boolean;
}): string {
  const c14n = options.c14n ?? 'http://www.w3.org/2001/10/xml-exc-c14n#';
  const method = options.method ?? 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';
  const signingCertificate = options.v1
    ? `<xades:SigningCertificate><xades:Cert><xades:CertDigest><ds:DigestMethod Algorithm="http://www.w3.org/2000/09/xmldsig#sha1"/><ds:DigestValue>${certDigest('sha1')}</ds:DigestValue></xades:CertDigest><xades:IssuerSerial><ds:X509IssuerName>x</ds:X509IssuerName><ds:X509SerialNumber>1</ds:X509SerialNumber></xades:IssuerSerial></xades:Cert></xades:SigningCertificate>`
    : `<xades:SigningCertificateV2><xades:Cert><xades:CertDigest><ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/><ds:DigestValue>${certDigest('sha256')}</ds:DigestValue></xades:CertDigest></xades:Cert></xades:SigningCertificateV2>`;
  const xades = options.noXades
    ? ''
    : `<ds:Object><xades:QualifyingProperties xmlns:xades="${XADES}" Target="#S1"><xades:SignedProperties Id="SP1"><xades:SignedSignatureProperties><xades:SigningTime>2026-01-02T03:04:05Z</xades:SigningTime>${signingCertificate}</xades:SignedSignatureProperties></xades:SignedProperties></xades:QualifyingProperties></ds:Object>`;
  const propertiesReference = options.noXades
    ? ''
    : `<ds:Reference Type="http://uri.etsi.org/01903#SignedProperties" URI="#SP1"><ds:Transforms><ds:Transform Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/></ds:Transforms><ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/><ds:DigestValue/></ds:Reference>`;
  return `<ds:Signature xmlns:ds="${DS}" Id="S1"><ds:SignedInfo><ds:CanonicalizationMethod Algorithm="${c14n}"/><ds:SignatureMethod Algorithm="${method}"/>${options.references}${propertiesReference}</ds:SignedInfo><ds:SignatureValue/><ds:KeyInfo><ds:X509Data><ds:X509Certificate/></ds:X509Data></ds:KeyInfo>${xades}${options.objects ?? ''}</ds:Signature>`;
}

function reference(uri: string, transforms: string[], digest = 'http://www.w3.org/2001/04/xmlenc#sha256'): string {
  const list = transforms.map((t) => (t.startsWith('<') ? t : `<ds:Transform Algorithm="${t}"/>`)).join('');
  return `<ds:Reference URI="${uri}">${list ? `<ds:Transforms>${list}</ds:Transforms>` : ''}<ds:DigestMethod Algorithm="${digest}"/><ds:DigestValue/></ds:Reference>`;
}

const ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature';
const EXC = 'http://www.w3.org/2001/10/xml-exc-c14n#';
const C14N = 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315';
const C14N11 = 'http://www.w3.org/2006/12/xml-c14n11';

/** The invoice with `signature` as the last child of its root. */
function enveloped(signature: string): string {
  return INVOICE.replace('</inv:Invoice>', `${signature}</inv:Invoice>`);
}

let made = 0;
async function xmlsecFile(xml: string, extra: string[] = []): Promise<string> {
  const template = join(work.dir, `template-${++made}.xml`);
  const output = join(work.dir, `xmlsec-${made}.xml`);
  await writeFile(template, xml);
  xmlsecSign(template, output, extra);
  return output;
}

describe.skipIf(!has('xmlsec1'))('esign verify of XAdES that xmlsec1 signed', () => {
  const enveloping: Array<[string, string, string[]]> = [
    ['enveloped, exclusive c14n', EXC, [ENVELOPED, EXC]],
    ['enveloped, inclusive c14n 1.0', C14N, [ENVELOPED, C14N]],
    ['enveloped, c14n 1.1 (read as 1.0 where they agree)', C14N11, [ENVELOPED, C14N11]],
    ['enveloped, no c14n transform (Canonical XML 1.0 by default)', C14N, [ENVELOPED]],
    [
      'enveloped by XPath not(ancestor-or-self::ds:Signature)',
      C14N,
      [
        `<ds:Transform Algorithm="http://www.w3.org/TR/1999/REC-xpath-19991116"><ds:XPath>not(ancestor-or-self::ds:Signature)</ds:XPath></ds:Transform>`,
      ],
    ],
    [
      'enveloped by XPath Filter 2.0 subtracting the signature',
      EXC,
      [
        `<ds:Transform Algorithm="http://www.w3.org/2002/06/xmldsig-filter2"><dsig-xpath:XPath xmlns:dsig-xpath="http://www.w3.org/2002/06/xmldsig-filter2" Filter="subtract">/descendant::ds:Signature</dsig-xpath:XPath></ds:Transform>`,
        EXC,
      ],
    ],
  ];
  for (const [name, c14n, transforms] of enveloping) {
    it(`${name}: valid B-B, TOTAL-PASSED; a changed line: HASH_FAILURE`, async () => {
      const output = await xmlsecFile(enveloped(signatureTemplate({ c14n, references: reference('', transforms) })));
      const { code, report, stdout } = await verify([output]);
      expect(code, stdout).toBe(0);
      expect(only(report)).toMatchObject({ status: 'valid', level: 'B-B', claimedTime: '2026-01-02T03:04:05.000Z' });
      const bad = await verify([await tamper(output, 'Acme S.L.', 'Acme S.A.')]);
      expect(only(bad.report)).toMatchObject({ subIndication: 'HASH_FAILURE' });
    });
  }

  it('a reference to the root by its Id covers the document', async () => {
    const output = await xmlsecFile(
      enveloped(signatureTemplate({ references: reference('#invoice', [ENVELOPED, EXC]) })),
    );
    const { code, report } = await verify([output]);
    expect(code).toBe(0);
    expect(only(report).warnings).toEqual([]);
  });

  it('enveloping: a signed ds:Object', async () => {
    const object = `<ds:Object Id="data"><note xmlns="urn:example:note">hello</note></ds:Object>`;
    const output = await xmlsecFile(signatureTemplate({ references: reference('#data', [EXC]), objects: object }));
    const { code, report, stdout } = await verify([output]);
    expect(code, stdout).toBe(0);
    expect(only(report)).toMatchObject({ status: 'valid', level: 'B-B' });
    const bad = await verify([await tamper(output, 'hello', 'hellO')]);
    expect(only(bad.report)).toMatchObject({ subIndication: 'HASH_FAILURE' });
  });

  it('enveloping with the base64 transform (binary content in a ds:Object, as DSS writes it)', async () => {
    const object = `<ds:Object Id="bin">${Buffer.from('binary \u0000 content').toString('base64')}</ds:Object>`;
    const output = await xmlsecFile(
      signatureTemplate({
        references: reference('#bin', ['http://www.w3.org/2000/09/xmldsig#base64']),
        objects: object,
      }),
    );
    const { code, report, stdout } = await verify([output]);
    expect(code, stdout).toBe(0);
    expect(only(report)).toMatchObject({ status: 'valid', integrity: { valid: true } });
  });

  it('detached: --signature sig.xml over the file it names', async () => {
    const content = join(work.dir, 'report.pdf');
    await writeFile(content, '%PDF-1.4 not really a PDF, just bytes\n');
    const output = await xmlsecFile(signatureTemplate({ references: reference('report.pdf', []) }), [
      '--url-map:report.pdf',
      content,
    ]);
    const { code, report, stdout } = await verify([content, '--signature', output]);
    expect(code, stdout).toBe(0);
    expect(report.kind).toBe('xades');
    expect(only(report)).toMatchObject({ status: 'valid', covers: ['report.pdf'] });
    const other = join(work.dir, 'other.pdf');
    await writeFile(other, 'other bytes');
    const missing = await verify([other, '--signature', output]);
    expect(missing.code).toBe(9);
    expect(only(missing.report).problems.join('\n')).toContain('report.pdf, which was not given');
  });

  it('SigningCertificate v1 (SHA-1 digest): the certificate still matches; weak, exit 12', async () => {
    const output = await xmlsecFile(
      enveloped(signatureTemplate({ v1: true, references: reference('', [ENVELOPED, EXC]) })),
    );
    const { code, report } = await verify([output]);
    expect(code).toBe(12);
    expect(only(report)).toMatchObject({
      status: 'weak',
      subIndication: 'CRYPTO_CONSTRAINTS_FAILURE',
      signatureValue: { valid: true },
    });
  });

  it('rsa-sha1 with SHA-1 digests: weak, exit 12, never invalid', async () => {
    const output = await xmlsecFile(
      enveloped(
        signatureTemplate({
          method: 'http://www.w3.org/2000/09/xmldsig#rsa-sha1',
          noXades: true,
          references: reference('', [ENVELOPED, EXC], 'http://www.w3.org/2000/09/xmldsig#sha1'),
        }),
      ),
    );
    const { code, report } = await verify([output]);
    expect(code).toBe(12);
    expect(only(report)).toMatchObject({
      status: 'weak',
      indication: 'INDETERMINATE',
      subIndication: 'CRYPTO_CONSTRAINTS_FAILURE',
    });
  });

  it('an algorithm esign does not implement: INDETERMINATE naming it', async () => {
    const output = await xmlsecFile(enveloped(signatureTemplate({ references: reference('', [ENVELOPED, EXC]) })));
    const changed = await tamper(output, 'xmldsig-more#rsa-sha256', 'xmldsig-more#rsa-whirlpool');
    const { code, report } = await verify([changed]);
    expect(code).toBe(9);
    const signature = only(report);
    expect(signature.indication).toBe('INDETERMINATE');
    expect(signature.problems.join('\n')).toContain(
      'esign does not implement the signature algorithm http://www.w3.org/2001/04/xmldsig-more#rsa-whirlpool',
    );
  });
});

describe.skipIf(!has('xmlsec1'))(
  'esign verify refuses XML it will not read (exit 7, one line, XADES_REFUSED or XML_*)',
  () => {
    const cases: Array<[string, () => Promise<string>, string, string]> = [
      [
        'a DOCTYPE',
        async () => write(`<!DOCTYPE a [<!ENTITY x "y">]>${INVOICE.replace(/^<\?xml[^>]*>\n/, '')}`),
        'XML_UNSAFE',
        'a DOCTYPE',
      ],
      [
        'an external entity reference',
        async () => write(INVOICE.replace('Acme', '&ext;')),
        'XML_UNSAFE',
        'an entity reference &ext;',
      ],
      [
        'duplicate Ids',
        async () =>
          tamper(
            await xmlsecFile(enveloped(signatureTemplate({ references: reference('', [ENVELOPED, EXC]) }))),
            '<Total currency="EUR">',
            '<Total Id="SP1" currency="EUR">',
          ),
        'XADES_REFUSED',
        'the Id "SP1" is given to two elements',
      ],
      [
        'an external reference',
        async () =>
          write(
            enveloped(
              signatureTemplate({ references: reference('http://example.com/x.xml', []) }).replace(
                /<ds:DigestValue\/>/g,
                '<ds:DigestValue>AA==</ds:DigestValue>',
              ),
            ),
          ),
        'XADES_REFUSED',
        'an external reference to "http://example.com/x.xml"',
      ],
      [
        'a reference to a file outside the document',
        async () => write(enveloped(signatureTemplate({ references: reference('../secret.txt', []) }))),
        'XADES_REFUSED',
        'outside the signature',
      ],
      [
        'an XSLT transform',
        async () =>
          write(
            enveloped(
              signatureTemplate({
                references: reference('', [
                  `<ds:Transform Algorithm="http://www.w3.org/TR/1999/REC-xslt-19991116"><xsl:stylesheet xmlns:xsl="http://www.w3.org/1999/XSL/Transform" version="1.0"/></ds:Transform>`,
                ]),
              }),
            ),
          ),
        'XADES_REFUSED',
        'an XSLT transform',
      ],
      [
        'another XPath transform',
        async () =>
          write(
            enveloped(
              signatureTemplate({
                references: reference('', [
                  `<ds:Transform Algorithm="http://www.w3.org/TR/1999/REC-xpath-19991116"><ds:XPath>self::text()</ds:XPath></ds:Transform>`,
                ]),
              }),
            ),
          ),
        'XADES_REFUSED',
        'an XPath transform other than not(ancestor-or-self::ds:Signature)',
      ],
      [
        'a second SignedProperties',
        async () =>
          tamper(
            await xmlsecFile(enveloped(signatureTemplate({ references: reference('', [ENVELOPED, EXC]) }))),
            '</xades:QualifyingProperties>',
            '<xades:SignedProperties Id="SP2"/></xades:QualifyingProperties>',
          ),
        'XADES_REFUSED',
        '2 SignedProperties in one Signature',
      ],
      [
        'a moved (wrapped) signature: an enveloped transform on an element that does not hold it',
        async () => {
          const signed = await xmlsecFile(
            enveloped(signatureTemplate({ references: reference('#invoice', [ENVELOPED, EXC]) })),
          );
          const xml = await readFile(signed, 'utf8');
          const signature = /<ds:Signature[\s\S]*<\/ds:Signature>/.exec(xml)![0];
          return write(`<wrapper>${xml.replace(/^<\?xml[^>]*>\n/, '').replace(signature, '')}${signature}</wrapper>`);
        },
        'XADES_REFUSED',
        'which does not hold the signature (a moved signature)',
      ],
      [
        'SignedProperties referenced without the XAdES Type',
        async () =>
          tamper(
            await xmlsecFile(enveloped(signatureTemplate({ references: reference('', [ENVELOPED, EXC]) }))),
            ' Type="http://uri.etsi.org/01903#SignedProperties"',
            '',
          ),
        'XADES_REFUSED',
        'referenced without the XAdES Type',
      ],
      [
        'QualifyingProperties for another signature',
        async () =>
          tamper(
            await xmlsecFile(enveloped(signatureTemplate({ references: reference('', [ENVELOPED, EXC]) }))),
            'Target="#S1"',
            'Target="#S2"',
          ),
        'XADES_REFUSED',
        'the QualifyingProperties target "#S2"',
      ],
    ];
    for (const [name, make, errorCode, what] of cases) {
      it(`${name}: ${errorCode}`, async () => {
        const file = await make();
        const before = await readdir(work.dir);
        const original = await readFile(file);
        const { code, message, errorCode: got } = await refused([file]);
        expect(got).toBe(errorCode);
        expect(code).toBe(7);
        expect(message).toContain(what);
        expect(message).not.toContain('\n');
        expect(await readdir(work.dir)).toEqual(before);
        expect((await readFile(file)).equals(original)).toBe(true);
      });
    }

    it('a document over the 50 MB limit: XML_TOO_LARGE, nothing read', async () => {
      const big = join(work.dir, 'big.xml');
      await writeFile(big, `<a>${'x'.repeat(50 * 1024 * 1024)}</a>`);
      const { code, errorCode } = await refused([big]);
      expect([code, errorCode]).toEqual([7, 'XML_TOO_LARGE']);
    });
  },
);

const ASIC = 'http://uri.etsi.org/02918/v1.2.1#';

/** An ASiC container built with Info-ZIP zip: `mimetype` first and stored, then `files` and META-INF/. */
async function container(
  name: string,
  mimetype: string,
  files: Record<string, string>,
  meta: Record<string, string>,
): Promise<string> {
  const dir = join(work.dir, `c-${name}`);
  await mkdir(join(dir, 'META-INF'), { recursive: true });
  await writeFile(join(dir, 'mimetype'), mimetype);
  for (const [file, content] of Object.entries(files)) await writeFile(join(dir, file), content);
  for (const [file, content] of Object.entries(meta)) await writeFile(join(dir, 'META-INF', file), content);
  const out = join(work.dir, name);
  const zip = (args: string[]) => {
    const run = spawnSync('zip', args, { cwd: dir, encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
  };
  zip(['-q', '-0', '-X', out, 'mimetype']);
  zip(['-q', '-X', '-r', out, ...Object.keys(files), 'META-INF']);
  return out;
}

/** A detached XAdES over `files` (each a reference by its entry name), signed by xmlsec1 and wrapped in asic:XAdESSignatures. */
async function signaturesXml(files: Record<string, string>): Promise<string> {
  const refs = Object.keys(files)
    .map((file) => reference(encodeURIComponent(file), []))
    .join('');
  const maps: string[] = [];
  for (const [file, content] of Object.entries(files)) {
    const path = join(work.dir, `entry-${++made}-${file}`);
    await writeFile(path, content);
    maps.push(`--url-map:${file}`, path);
  }
  const signed = await xmlsecFile(
    `<asic:XAdESSignatures xmlns:asic="${ASIC}">${signatureTemplate({ references: refs })}</asic:XAdESSignatures>`,
    maps,
  );
  return readFile(signed, 'utf8');
}

describe.skipIf(!has('xmlsec1') || !has('zip'))('esign verify of ASiC containers with XAdES', () => {
  const files = { 'contract.txt': 'the contract\n', 'annex b.txt': 'an annex with a space in its name\n' };
  for (const extension of ['asice', 'sce', 'bdoc']) {
    it(`.${extension}: META-INF/signatures0.xml covers every file: valid, each file covered`, async () => {
      const path = await container(`ok.${extension}`, 'application/vnd.etsi.asic-e+zip', files, {
        'signatures0.xml': await signaturesXml(files),
      });
      const { code, report, stdout } = await verify([path]);
      expect(code, stdout).toBe(0);
      expect(report).toMatchObject({ kind: 'xades', packaging: 'asic-e', uncovered: [], status: 'valid' });
      expect(only(report).covers).toEqual(['contract.txt', 'annex b.txt']);
    });
  }

  it('a changed file: TOTAL-FAILED/HASH_FAILURE (exit 9)', async () => {
    const signed = await signaturesXml(files);
    const path = await container(
      'changed.asice',
      'application/vnd.etsi.asic-e+zip',
      { ...files, 'contract.txt': 'the contract, changed\n' },
      { 'signatures0.xml': signed },
    );
    const { code, report } = await verify([path]);
    expect(code).toBe(9);
    expect(only(report)).toMatchObject({ status: 'invalid', subIndication: 'HASH_FAILURE' });
  });

  it('a file no signature covers: VERIFY_MODIFIED, the file named', async () => {
    const signed = await signaturesXml(files);
    const path = await container(
      'added.asice',
      'application/vnd.etsi.asic-e+zip',
      { ...files, 'extra.txt': 'added later\n' },
      { 'signatures0.xml': signed },
    );
    const { code, report } = await verify([path]);
    expect(code).toBe(9);
    expect(report).toMatchObject({ status: 'modified', code: 'VERIFY_MODIFIED', uncovered: ['extra.txt'] });
  });

  it('a file the signature names is gone: VERIFY_MODIFIED', async () => {
    const signed = await signaturesXml(files);
    const path = await container(
      'gone.asice',
      'application/vnd.etsi.asic-e+zip',
      { 'contract.txt': files['contract.txt'] },
      { 'signatures0.xml': signed },
    );
    const { code, report } = await verify([path]);
    expect(code).toBe(9);
    expect(only(report).problems.join('\n')).toContain('names annex b.txt, which the container does not hold');
  });

  it('ASiC-S with META-INF/signatures.xml over its one document', async () => {
    const one = { 'invoice.txt': 'one invoice\n' };
    const path = await container('one.asics', 'application/vnd.etsi.asic-s+zip', one, {
      'signatures.xml': await signaturesXml(one),
    });
    const { code, report, stdout } = await verify([path]);
    expect(code, stdout).toBe(0);
    expect(report).toMatchObject({ kind: 'xades', packaging: 'asic-s', status: 'valid' });
    expect(only(report).covers).toEqual(['invoice.txt']);
  });

  it('--extract writes the documents of a container that checks out', async () => {
    const path = await container('extract.asice', 'application/vnd.etsi.asic-e+zip', files, {
      'signatures0.xml': await signaturesXml(files),
    });
    const target = join(work.dir, 'extracted');
    const { code } = await verify([path, '--extract', target]);
    expect(code).toBe(0);
    expect(await readFile(join(target, 'annex b.txt'), 'utf8')).toBe(files['annex b.txt']);
  });
});

let written = 0;
async function write(xml: string): Promise<string> {
  const path = join(work.dir, `refused-${++written}.xml`);
  await writeFile(path, xml);
  return path;
}
