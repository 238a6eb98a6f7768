#!/usr/bin/env node
/* global Buffer */
/**
 * Writes test/fixtures/foreign: signatures esign did not make, for `esign verify` to judge.
 *   root.pem                 the trust anchor (a throw-away CA; its key is not kept)
 *   content.txt              what the detached .p7s files sign
 *   cms/<kind>.p7s           `openssl cms -sign` with RSA 2048/1024, EC P-256/384/521, RSASSA-PSS,
 *                            without signed attributes (-noattr), with SHA-1, and in BER with
 *                            indefinite lengths (-stream -indef); EdDSA (Ed25519, Ed448), which
 *                            OpenSSL 3.0's cms cannot write, is assembled here and signed by OpenSSL
 *                            (node:crypto) as RFC 8419 says
 *   pdf/<kind>.pdf           a one-page PDF whose /Contents is such a CMS over its ByteRange
 *                            (ETSI.CAdES.detached or adbe.pkcs7.detached), an adbe.pkcs7.sha1 one,
 *                            and one signed by `mutool sign` (MuPDF: SHA-1)
 * NSS (pdfsig -add-signature) writes a 480 KB PDF; the interop test makes it at run time instead.
 * The tests read these files as committed; run this again only to add a case.
 * Needs openssl, qpdf and mutool (Debian: openssl qpdf mupdf-tools).
 */
import { execFileSync } from 'node:child_process';
import { createHash, createPrivateKey, sign } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const out = join(dirname(fileURLToPath(import.meta.url)), '../test/fixtures/foreign');
const work = mkdtempSync(join(tmpdir(), 'esign-foreign-'));
const at = (name) => join(work, name);
const openssl = (...args) => execFileSync('openssl', args, { stdio: ['ignore', 'pipe', 'pipe'] });

try {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(join(out, 'cms'), { recursive: true });
  mkdirSync(join(out, 'pdf'), { recursive: true });

  // ── a CA and one signer per key kind, valid for a century (no timestamps: checked at "now")
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    at('root.key'),
    '-out',
    at('root.pem'),
    '-days',
    '36500',
    '-subj',
    '/CN=esign foreign-fixtures root',
    '-addext',
    'basicConstraints=critical,CA:true',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  writeFileSync(at('leaf.ext'), 'basicConstraints=CA:false\nkeyUsage=critical,digitalSignature,nonRepudiation\n');
  const keys = {
    rsa2048: ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048'],
    rsa1024: ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:1024'],
    p256: ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256'],
    p384: ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-384'],
    p521: ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-521'],
    ed25519: ['-algorithm', 'ED25519'],
    ed448: ['-algorithm', 'ED448'],
  };
  for (const [name, args] of Object.entries(keys)) {
    openssl('genpkey', ...args, '-out', at(`${name}.key`));
    openssl(
      'req',
      '-new',
      '-key',
      at(`${name}.key`),
      '-subj',
      `/CN=esign foreign-fixtures ${name} signer`,
      '-out',
      at(`${name}.csr`),
    );
    openssl(
      'x509',
      '-req',
      '-in',
      at(`${name}.csr`),
      '-CA',
      at('root.pem'),
      '-CAkey',
      at('root.key'),
      '-set_serial',
      `0x${name.length}${Date.now()}`,
      '-days',
      '36500',
      '-extfile',
      at('leaf.ext'),
      '-out',
      at(`${name}.pem`),
    );
  }
  writeFileSync(join(out, 'root.pem'), readFileSync(at('root.pem')));
  const content = 'The content of the detached .p7s fixtures.\n';
  writeFileSync(join(out, 'content.txt'), content);

  // ── CMS by openssl: [name, key, extra options]
  const cmsKinds = [
    ['rsa2048', 'rsa2048', ['-md', 'sha256']],
    ['rsa1024', 'rsa1024', ['-md', 'sha256']],
    ['p256', 'p256', ['-md', 'sha256']],
    ['p384', 'p384', ['-md', 'sha384']],
    ['p521', 'p521', ['-md', 'sha512']],
    ['rsa-pss', 'rsa2048', ['-md', 'sha256', '-keyopt', 'rsa_padding_mode:pss', '-keyopt', 'rsa_pss_saltlen:32']],
    ['rsa2048-noattr', 'rsa2048', ['-md', 'sha256', '-noattr']],
    ['p256-noattr', 'p256', ['-md', 'sha256', '-noattr']],
    ['rsa2048-sha1', 'rsa2048', ['-md', 'sha1']],
  ];
  const opensslCms = (inFile, key, extra) =>
    openssl(
      'cms',
      '-sign',
      '-binary',
      '-in',
      inFile,
      '-signer',
      at(`${key}.pem`),
      '-inkey',
      at(`${key}.key`),
      '-outform',
      'DER',
      ...extra,
    );
  writeFileSync(at('content.txt'), content);
  for (const [name, key, extra] of cmsKinds)
    writeFileSync(join(out, 'cms', `${name}.p7s`), opensslCms(at('content.txt'), key, extra));
  for (const name of ['ed25519', 'ed448'])
    writeFileSync(join(out, 'cms', `${name}.p7s`), eddsaCms(Buffer.from(content), name));
  writeFileSync(join(out, 'cms', 'rsa2048-ber.p7s'), berDetachedCms(at('content.txt')));

  // ── PDFs: [name, SubFilter, CMS maker over the signed bytes]
  const pdfKinds = [
    ['p256', 'ETSI.CAdES.detached', (tbs) => opensslCms(tbs, 'p256', ['-md', 'sha256', '-cades'])],
    ['p384', 'ETSI.CAdES.detached', (tbs) => opensslCms(tbs, 'p384', ['-md', 'sha384', '-cades'])],
    ['p521', 'ETSI.CAdES.detached', (tbs) => opensslCms(tbs, 'p521', ['-md', 'sha512', '-cades'])],
    [
      'rsa-pss',
      'ETSI.CAdES.detached',
      (tbs) =>
        opensslCms(tbs, 'rsa2048', [
          '-md',
          'sha256',
          '-cades',
          '-keyopt',
          'rsa_padding_mode:pss',
          '-keyopt',
          'rsa_pss_saltlen:32',
        ]),
    ],
    ['rsa1024', 'adbe.pkcs7.detached', (tbs) => opensslCms(tbs, 'rsa1024', ['-md', 'sha256'])],
    ['noattr', 'adbe.pkcs7.detached', (tbs) => opensslCms(tbs, 'rsa2048', ['-md', 'sha256', '-noattr'])],
    ['ber', 'adbe.pkcs7.detached', berDetachedCms],
    ['ed25519', 'ETSI.CAdES.detached', (tbs) => eddsaCms(readFileSync(tbs), 'ed25519')],
    ['ed448', 'ETSI.CAdES.detached', (tbs) => eddsaCms(readFileSync(tbs), 'ed448')],
    // adbe.pkcs7.sha1: the CMS encapsulates the SHA-1 of the signed bytes and signs that
    [
      'adbe-pkcs7-sha1',
      'adbe.pkcs7.sha1',
      (tbs) => {
        writeFileSync(at('sha1.bin'), createHash('sha1').update(readFileSync(tbs)).digest());
        return opensslCms(at('sha1.bin'), 'rsa2048', ['-md', 'sha1', '-nodetach']);
      },
    ],
  ];
  for (const [name, subFilter, makeCms] of pdfKinds)
    writeFileSync(join(out, 'pdf', `${name}.pdf`), signedPdf(subFilter, makeCms));

  // ── MuPDF signs an empty signature field (its own appearance, SHA-1)
  writeFileSync(
    at('field-raw.pdf'),
    onePagePdf(
      ['/AcroForm << /Fields [4 0 R] /SigFlags 3 >>', '/Annots [4 0 R]'],
      ['<< /Type /Annot /Subtype /Widget /FT /Sig /T (Signature1) /Rect [10 10 110 40] /F 4 /P 3 0 R >>'],
    ),
  );
  execFileSync('qpdf', [at('field-raw.pdf'), at('field.pdf')]);
  openssl(
    'pkcs12',
    '-export',
    '-inkey',
    at('rsa2048.key'),
    '-in',
    at('rsa2048.pem'),
    '-passout',
    'pass:',
    '-out',
    at('rsa2048.p12'),
  );
  const field = /^\s*(\d+): Signature is not signed/m.exec(
    execFileSync('mutool', ['sign', at('field.pdf')], { encoding: 'utf8' }),
  )?.[1];
  execFileSync('mutool', [
    'sign',
    '-s',
    at('rsa2048.p12'),
    '-P',
    '',
    '-o',
    join(out, 'pdf', 'mutool-sha1.pdf'),
    at('field.pdf'),
    field,
  ]);
} finally {
  rmSync(work, { recursive: true, force: true });
}

/**
 * BER with indefinite lengths, as NSS writes: `openssl cms -sign -stream` writes it, but always with
 * the content inside (eContent); cutting that [0] out leaves the detached signature, whose signed
 * attributes and signature value do not cover eContent's encoding.
 */
function berDetachedCms(inFile) {
  const ber = Buffer.from(
    openssl(
      'cms',
      '-sign',
      '-binary',
      '-stream',
      '-in',
      inFile,
      '-signer',
      at('rsa2048.pem'),
      '-inkey',
      at('rsa2048.key'),
      '-outform',
      'DER',
      '-md',
      'sha256',
    ),
  );
  const dataOid = oidDer('1.2.840.113549.1.7.1');
  const start = ber.indexOf(dataOid) + dataOid.length;
  if (ber[start] !== 0xa0) throw new Error('no eContent to cut');
  return Buffer.concat([ber.subarray(0, start), ber.subarray(berEnd(ber, start))]);
}

/** The offset after the BER element at `at` (definite or indefinite length). */
function berEnd(ber, at) {
  const first = ber[at + 1];
  if (first !== 0x80) {
    const count = first & 0x80 ? first & 0x7f : 0;
    const length = count === 0 ? first : ber.subarray(at + 2, at + 2 + count).reduce((n, b) => n * 256 + b, 0);
    return at + 2 + count + length;
  }
  let next = at + 2;
  while (!(ber[next] === 0 && ber[next + 1] === 0)) next = berEnd(ber, next);
  return next + 2;
}

/** A one-page PDF (classic xref) with `catalogExtra`/`pageExtra` and extra objects numbered from 4. */
function onePagePdf([catalogExtra, pageExtra], extraObjects) {
  const stream = 'BT /F1 14 Tf 20 60 Td (A signed fixture) Tj ET';
  const font = '/Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >>';
  const objects = [
    `<< /Type /Catalog /Pages 2 0 R ${catalogExtra} >>`,
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 120] /Contents ${4 + extraObjects.length} 0 R ${font} ${pageExtra} >>`,
    ...extraObjects,
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
  ];
  let body = '%PDF-1.7\n%\xe2\xe3\xcf\xd3\n';
  const offsets = objects.map((object, i) => {
    const offset = Buffer.byteLength(body, 'latin1');
    body += `${i + 1} 0 obj\n${object}\nendobj\n`;
    return offset;
  });
  const xref = Buffer.byteLength(body, 'latin1');
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}

/** A one-page PDF with a signature field whose /Contents is `makeCms(file of the signed bytes)`. */
function signedPdf(subFilter, makeCms) {
  const contentsHex = 8192;
  const placeholder = '[0 ********** ********** **********]';
  const sig = `<< /Type /Sig /Filter /Adobe.PPKLite /SubFilter /${subFilter} /M (D:20260101000000Z) /ByteRange ${placeholder} /Contents <${'0'.repeat(contentsHex)}> >>`;
  const pdf = onePagePdf(
    ['/AcroForm << /Fields [4 0 R] /SigFlags 3 >>', '/Annots [4 0 R]'],
    ['<< /Type /Annot /Subtype /Widget /FT /Sig /T (Signature1) /Rect [0 0 0 0] /F 132 /P 3 0 R /V 5 0 R >>', sig],
  );
  const text = pdf.toString('latin1');
  const start = text.indexOf('/Contents <') + '/Contents '.length;
  const end = start + contentsHex + 2;
  const byteRange = [0, start, end, pdf.length - end];
  const rangeText = `[${byteRange.join(' ')}]`.padEnd(placeholder.length, ' ');
  pdf.write(rangeText, text.indexOf(placeholder), 'latin1');
  writeFileSync(at('tbs.bin'), Buffer.concat([pdf.subarray(0, start), pdf.subarray(end)]));
  const cms = makeCms(at('tbs.bin')).toString('hex');
  if (cms.length > contentsHex) throw new Error('the CMS does not fit its placeholder');
  pdf.write(cms, start + 1, 'latin1');
  return pdf;
}

// ── DER, for the EdDSA CMS only
function tlv(tag, ...parts) {
  const body = Buffer.concat(parts);
  const n = body.length;
  const length = n < 0x80 ? Buffer.of(n) : n < 0x100 ? Buffer.of(0x81, n) : Buffer.of(0x82, n >> 8, n & 0xff);
  return Buffer.concat([Buffer.of(tag), length, body]);
}
function seq(...parts) {
  return tlv(0x30, ...parts);
}
function set(...parts) {
  return tlv(0x31, ...parts.sort(Buffer.compare));
}
function oidDer(dotted) {
  const [a, b, ...rest] = dotted.split('.').map(Number);
  const bytes = [a * 40 + b];
  for (const arc of rest) {
    const group = [arc & 0x7f];
    for (let v = arc >>> 7; v > 0; v >>>= 7) group.unshift((v & 0x7f) | 0x80);
    bytes.push(...group);
  }
  return tlv(0x06, Buffer.from(bytes));
}
function int(n) {
  return tlv(0x02, Buffer.of(n));
}

/**
 * RFC 8419: SignedData whose SignerInfo carries content-type, message-digest (SHA-512 for Ed25519;
 * SHAKE256 with a 512-bit output, id-shake256-len, for Ed448) and signing-time, and a PureEdDSA
 * signature over their DER.
 */
function eddsaCms(signedBytes, name) {
  const certDer = Buffer.from(openssl('x509', '-in', at(`${name}.pem`), '-outform', 'DER'));
  const ed448 = name === 'ed448';
  const digestAlgorithm = ed448
    ? seq(oidDer('2.16.840.1.101.3.4.2.18'), tlv(0x02, Buffer.of(0x02, 0x00)))
    : seq(oidDer('2.16.840.1.101.3.4.2.3'));
  const digest = ed448
    ? createHash('shake256', { outputLength: 64 }).update(signedBytes).digest()
    : createHash('sha512').update(signedBytes).digest();
  const attributes = set(
    seq(oidDer('1.2.840.113549.1.9.3'), set(oidDer('1.2.840.113549.1.7.1'))),
    seq(oidDer('1.2.840.113549.1.9.4'), set(tlv(0x04, digest))),
    seq(oidDer('1.2.840.113549.1.9.5'), set(tlv(0x17, Buffer.from('260101000000Z')))),
  );
  const signature = sign(null, attributes, createPrivateKey(readFileSync(at(`${name}.key`))));
  // issuerAndSerialNumber, read from the certificate: tbsCertificate = [0] version, serial, signature, issuer
  const tbs = children(children(certDer)[0]);
  const signerInfo = seq(
    int(1),
    seq(tbs[3], tbs[1]),
    digestAlgorithm,
    Buffer.concat([Buffer.of(0xa0), attributes.subarray(1)]),
    seq(oidDer(ed448 ? '1.3.101.113' : '1.3.101.112')),
    tlv(0x04, signature),
  );
  const signedData = seq(
    int(1),
    set(digestAlgorithm),
    seq(oidDer('1.2.840.113549.1.7.1')),
    tlv(0xa0, certDer),
    set(signerInfo),
  );
  return seq(oidDer('1.2.840.113549.1.7.2'), tlv(0xa0, signedData));
}

/** The DER elements inside a constructed one (definite lengths only). */
function children(der) {
  const items = [];
  const header = (at) =>
    der[at + 1] < 0x80
      ? [2, der[at + 1]]
      : [
          2 + (der[at + 1] & 0x7f),
          der.subarray(at + 2, at + 2 + (der[at + 1] & 0x7f)).reduce((n, b) => n * 256 + b, 0),
        ];
  const [outerHead] = header(0);
  for (let at = outerHead; at < der.length;) {
    const [head, length] = header(at);
    items.push(der.subarray(at, at + head + length));
    at += head + length;
  }
  return items;
}
