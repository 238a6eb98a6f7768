import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildClassicPdf, minimalObjects } from '../../../test/helpers/pdf-fixtures.js';
import { bytesSource } from './byte-source.js';
import { readPdf } from './document.js';
import { decodeStream } from './filters.js';
import type { PdfStream } from './objects.js';
import { PdfDict, PdfRef, PdfString } from './objects.js';
import { prepareSignature, spliceContents } from './placeholder.js';
import { rc4 as rc4Reference, saslPrep } from './security.js';
import { listSignatureFields } from './signatures.js';

/** Made by scripts/encrypted-fixtures.sh with qpdf and Ghostscript from samples/contract.pdf. */
const fixture = (file: string): Uint8Array =>
  new Uint8Array(readFileSync(new URL(`../../../test/fixtures/encrypted/${file}`, import.meta.url)));
const TITLE = 'Sample service agreement';
/** How samples/contract.pdf (pdf-lib) shows its title on the page. */
const TITLE_SHOWN = `<${Buffer.from(TITLE).toString('hex').toUpperCase()}> Tj`;

/** The page's text and the /Info title, as decrypted: proof that strings and streams were both read right. */
async function textOf(bytes: Uint8Array, password?: string): Promise<{ content: string; title: string }> {
  const doc = await readPdf(bytesSource(bytes), { password });
  const page = await doc.page(1);
  const reference = page.dict.get('Contents');
  const contents = await doc.getObject((Array.isArray(reference) ? reference[0] : reference) as PdfRef);
  const info = await doc.resolveDict(doc.trailer.get('Info'));
  const title = info?.get('Title');
  return {
    content: Buffer.from(decodeStream(contents as PdfStream)).toString('latin1'),
    title: title instanceof PdfString ? Buffer.from(title.bytes.subarray(2)).swap16().toString('utf16le') : '',
  };
}

const EMPTY_USER_PASSWORD = [
  ['rc4-40-r2.pdf', 'RC4-40 (R2)'],
  ['rc4-128-r3.pdf', 'RC4-128 (R3)'],
  ['aes-128-r4.pdf', 'AES-128 (R4)'],
  ['aes-128-r4-cleartext-metadata.pdf', 'AES-128 (R4)'],
  ['aes-128-r4-object-streams.pdf', 'AES-128 (R4)'],
  ['aes-256-r5.pdf', 'AES-256 (R5)'],
  ['aes-256-r6.pdf', 'AES-256 (R6)'],
  ['ghostscript-rc4-128-r3.pdf', 'RC4-128 (R3)'],
] as const;

describe('the standard security handler', () => {
  it.each(EMPTY_USER_PASSWORD)(
    'opens %s with the empty user password and decrypts strings and streams',
    async (file, description) => {
      const bytes = fixture(file);
      const { content, title } = await textOf(bytes);
      // Ghostscript writes the page again with its own font encoding; that it inflated at all shows the key was right.
      if (file.startsWith('ghostscript')) expect(content).toMatch(/BT[\s\S]*T[jJ][\s\S]*ET/);
      else expect(content).toContain(TITLE_SHOWN);
      expect(title).toBe(TITLE);
      const doc = await readPdf(bytesSource(bytes));
      expect(doc.security?.description).toBe(description);
      expect(doc.security?.openedAs).toBe('user');
    },
  );

  it.each([
    ['rc4-128-r3-user.pdf', 'user', 'user'],
    ['rc4-128-r3-user.pdf', 'owner', 'owner'],
    ['aes-256-r6-user.pdf', 'user', 'user'],
    ['aes-256-r6-user.pdf', 'owner', 'owner'],
    ['utf8-r6.pdf', 'üser', 'user'],
    ['utf8-r6.pdf', 'ówner', 'owner'],
    // SASLprep: NFKC folds the decomposed ü (u + U+0308) and drops a soft hyphen.
    ['utf8-r6.pdf', 'u\u0308s\u00ader', 'user'],
    ['aes-256-r6.pdf', 'owner', 'owner'],
    ['rc4-40-r2.pdf', 'owner', 'owner'],
  ])('opens %s with the password %j as its %s password', async (file, password, as) => {
    expect((await textOf(fixture(file), password)).content).toContain(TITLE_SHOWN);
    expect((await readPdf(bytesSource(fixture(file)), { password })).security?.openedAs).toBe(as);
  });

  it.each(['rc4-128-r3-user.pdf', 'aes-256-r6-user.pdf', 'utf8-r6.pdf'])(
    'asks for the password of %s, and refuses a wrong one',
    async (file) => {
      await expect(readPdf(bytesSource(fixture(file)))).rejects.toMatchObject({
        code: 'PDF_PASSWORD_REQUIRED',
        hint: expect.stringContaining('ESIGN_PDF_PASSWORD'),
      });
      await expect(readPdf(bytesSource(fixture(file)), { password: 'wrong' })).rejects.toMatchObject({
        code: 'PDF_PASSWORD_WRONG',
      });
    },
  );

  it.each(['rc4-128-r3-nomodify.pdf', 'aes-256-r6-noform.pdf'])(
    'reads %s but refuses to update it unless the owner password opened it',
    async (file) => {
      const doc = await readPdf(bytesSource(fixture(file)));
      expect(() => doc.assertUpdatable()).toThrow(
        expect.objectContaining({ code: 'PDF_PERMISSION_DENIED', hint: expect.stringContaining('owner password') }),
      );
      await expect(prepareSignature(doc, { contentsSize: 64 })).rejects.toMatchObject({
        code: 'PDF_PERMISSION_DENIED',
      });
      const asOwner = await readPdf(bytesSource(fixture(file)), { password: 'owner' });
      expect(() => asOwner.assertUpdatable()).not.toThrow();
    },
  );

  it.each(['rc4-40-r2.pdf', 'aes-128-r4.pdf', 'aes-128-r4-object-streams.pdf', 'aes-256-r6-user.pdf'])(
    'signs %s in an update encrypted with its own key, /Contents in clear, /Encrypt and /ID kept',
    async (file) => {
      const original = fixture(file);
      const password = file.includes('user') ? 'user' : undefined;
      const doc = await readPdf(bytesSource(original), { password });
      const update = await prepareSignature(doc, {
        contentsSize: 64,
        reason: 'Approved (TEST)',
        signingTime: new Date(Date.UTC(2026, 0, 2)),
      });
      const cms = Uint8Array.from({ length: 40 }, (_, i) => i + 1);
      const spliced = spliceContents(update, cms);
      const text = Buffer.from(spliced).toString('latin1');
      expect(text).toContain(`<${Buffer.from(cms).toString('hex')}`);
      expect(text).not.toContain('Approved (TEST)');
      const signed = await readPdf(bytesSource(Buffer.concat([original, spliced])), { password });
      expect(signed.trailer.get('Encrypt')).toEqual(doc.trailer.get('Encrypt'));
      expect(signed.trailer.get('ID')).toEqual(doc.trailer.get('ID'));
      const [field] = await listSignatureFields(signed);
      expect(field?.reason).toBe('Approved (TEST)');
      expect(field?.signingTime).toMatch(/^D:20260102/);
      expect(Buffer.from(field!.contents!.subarray(0, cms.length))).toEqual(Buffer.from(cms));
      // The same update twice gives the same bytes (the split flow prepares again at --complete).
      const again = await prepareSignature(await readPdf(bytesSource(original), { password }), {
        contentsSize: 64,
        reason: 'Approved (TEST)',
        signingTime: new Date(Date.UTC(2026, 0, 2)),
      });
      expect(Buffer.from(again.update)).toEqual(Buffer.from(update.update));
    },
  );

  it('decrypts a file whose later update left /Encrypt out of its trailer, and writes /Encrypt again', async () => {
    const original = fixture('rc4-128-r3.pdf');
    const doc = await readPdf(bytesSource(original));
    const update = await prepareSignature(doc, { contentsSize: 64, signingTime: new Date() });
    // A sloppy writer's update: the same bytes with /Encrypt dropped from its trailer (padded to keep offsets).
    const sloppy = Buffer.from(update.update)
      .toString('latin1')
      .replace(/\/Encrypt \d+ 0 R/, (found) => ' '.repeat(found.length));
    expect(sloppy).not.toContain('/Encrypt');
    const reread = await readPdf(bytesSource(Buffer.concat([original, Buffer.from(sloppy, 'latin1')])));
    expect(reread.security?.description).toBe('RC4-128 (R3)');
    expect((await textOf(Buffer.concat([original, Buffer.from(sloppy, 'latin1')]))).content).toContain(TITLE_SHOWN);
    const next = await prepareSignature(reread, { contentsSize: 64, signingTime: new Date() });
    expect(Buffer.from(next.update).toString('latin1')).toMatch(/\/Encrypt \d+ 0 R/);
  });

  it('refuses public-key and unknown handlers, and damaged encryption dictionaries, with typed errors', async () => {
    const withEncrypt = (encrypt: string) =>
      buildClassicPdf(
        [...minimalObjects(), encrypt],
        '/Encrypt 4 0 R /ID [<00112233445566778899aabbccddeeff> <00112233445566778899aabbccddeeff>] ',
      );
    const cases: Array<[string, string, RegExp]> = [
      ['<< /Filter /Adobe.PubSec /SubFilter /adbe.pkcs7.s5 /V 4 /R 4 >>', 'PDF_ENCRYPTED', /certificate holders/],
      ['<< /Filter /FOPN_foweb /V 1 /R 2 >>', 'PDF_ENCRYPTED', /unknown security handler \(FOPN_foweb\)/],
      ['<< /Filter /Standard /V 2 /R 3 >>', 'PDF_ENCRYPTION_INVALID', /\/P is missing/],
      ['<< /Filter /Standard /V 3 /R 3 /P -4 /O <00> /U <00> >>', 'PDF_ENCRYPTION_INVALID', /\/V 3/],
      ['<< /Filter /Standard /V 2 /R 9 /P -4 /O <00> /U <00> >>', 'PDF_ENCRYPTION_INVALID', /\/R 9/],
      ['<< /Filter /Standard /V 2 /R 3 /P -4 /O <00> /U <00> >>', 'PDF_ENCRYPTION_INVALID', /shorter than 32/],
      [
        '<< /Filter /Standard /V 4 /R 4 /P -4 /StmF /StdCF /StrF /StdCF /O <00> /U <00> >>',
        'PDF_ENCRYPTION_INVALID',
        /crypt filter \/StdCF is not defined/,
      ],
      [
        '<< /Filter /Standard /V 4 /R 4 /P -4 /CF << /StdCF << /CFM /Unknown >> >> /StmF /StdCF /StrF /StdCF /O <00> /U <00> >>',
        'PDF_ENCRYPTED',
        /crypt filter method Unknown/,
      ],
      ['(not a dictionary)', 'PDF_ENCRYPTION_INVALID', /not a dictionary/],
    ];
    for (const [encrypt, code, message] of cases) {
      await expect(readPdf(bytesSource(withEncrypt(encrypt))), encrypt).rejects.toMatchObject({
        code,
        message: expect.stringMatching(message),
      });
    }
  });

  it('reads an /Identity string filter as no encryption, with streams through AES-128', async () => {
    // Written here from ISO 32000-2 Algorithms 1, 2 and 5 for the empty user password (qpdf cannot write /Identity).
    const pad = Buffer.from('28bf4e5e4e758a4164004e56fffa01082e2e00b6d0683e802f0ca9fe6453697a', 'hex');
    const id = randomBytes(16);
    const o = randomBytes(32);
    let key = createHash('md5')
      .update(pad)
      .update(o)
      .update(Buffer.from([0xfc, 0xff, 0xff, 0xff]))
      .update(id)
      .digest();
    for (let i = 0; i < 50; i++) key = createHash('md5').update(key).digest();
    const rc4 = (k: Buffer, data: Buffer) => Buffer.from(rc4Reference(k, data));
    let u = rc4(key, createHash('md5').update(pad).update(id).digest());
    for (let i = 1; i <= 19; i++) u = rc4(Buffer.from(key.map((byte) => byte ^ i)), u);
    const objectKey = createHash('md5')
      .update(key)
      .update(Buffer.from([4, 0, 0, 0, 0]))
      .update('sAlT')
      .digest();
    const iv = randomBytes(16);
    const cipher = createCipheriv('aes-128-cbc', objectKey, iv);
    const content = `BT /F1 12 Tf 72 700 Td (${TITLE}) Tj ET`;
    const data = Buffer.concat([iv, cipher.update(content), cipher.final()]);
    const hex = (bytes: Uint8Array) => `<${Buffer.from(bytes).toString('hex')}>`;
    const encrypt = `<< /Filter /Standard /V 4 /R 4 /P -4 /Length 128 /CF << /StdCF << /CFM /AESV2 /AuthEvent /DocOpen /Length 16 >> >> /StmF /StdCF /StrF /Identity /O ${hex(o)} /U ${hex(Buffer.concat([u, Buffer.alloc(16)]))} >>`;
    const pdf = buildClassicPdf(
      [...minimalObjects('', '/Contents 4 0 R'), { dict: '<< >>', data }, `<< /Title (${TITLE}) >>`, encrypt],
      `/Info 5 0 R /Encrypt 6 0 R /ID [${hex(id)} ${hex(id)}] `,
    );
    const read = await textOf(pdf);
    expect(read.content).toBe(content);
    const info = await (await readPdf(bytesSource(pdf))).resolveDict(new PdfRef(5, 0));
    expect(Buffer.from((info?.get('Title') as PdfString).bytes).toString('latin1')).toBe(TITLE);
  });

  it('computes RC4 as the published test vectors say', () => {
    expect(Buffer.from(rc4Reference(Buffer.from('Key'), Buffer.from('Plaintext'))).toString('hex')).toBe(
      'bbf316e8d940af0ad3',
    );
    expect(Buffer.from(rc4Reference(Buffer.from('Secret'), Buffer.from('Attack at dawn'))).toString('hex')).toBe(
      '45a01f645fc35b383552544b9bf5',
    );
  });

  it('prepares passwords as SASLprep says: spaces mapped, soft hyphens dropped, NFKC, UTF-8', () => {
    expect(Buffer.from(saslPrep('a\u00a0b\u00adc')).toString()).toBe('a bc');
    expect(Buffer.from(saslPrep('\u2168')).toString()).toBe('IX');
    expect(saslPrep('x'.repeat(200))).toHaveLength(127);
  });
});

describe('the /Encrypt dictionary itself', () => {
  it('is read as it is, never decrypted', async () => {
    const doc = await readPdf(bytesSource(fixture('aes-128-r4.pdf')));
    const encrypt = await doc.resolveDict(doc.trailer.get('Encrypt'));
    expect(encrypt).toBeInstanceOf(PdfDict);
    expect((encrypt?.get('O') as PdfString).bytes).toHaveLength(32);
  });
});
