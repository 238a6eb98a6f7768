import { describe, expect, it } from 'vitest';
import { issueTestCertificate } from '../../cms/test-pki.js';
import type { DocumentSource, SignJob } from '../../documents.js';
import type { SigningCredential } from '../../ports.js';
import { checkEnveloped, prepareEnveloped, readWhole } from './enveloped-sign.js';
import { MAX_ENVELOPED_BYTES } from './enveloped.js';
import { mayNameDsig, parseInputXml } from './input-xml.js';
import { DSIG_NS } from '../shared/xades/algorithms.js';

/** A source of `size` bytes (of `content` when given) that counts its reads (and allocates nothing for them). */
function sourceOf(size: number, content?: Uint8Array): DocumentSource & { reads: number } {
  return {
    path: 'big.xml',
    size,
    reads: 0,
    async read(offset: number, length: number) {
      this.reads++;
      if (content) return content.subarray(offset, offset + length);
      return new Uint8Array(Math.max(0, Math.min(length, size - offset)));
    },
    unchanged: async () => true,
    close: async () => undefined,
  };
}

describe('readWhole', () => {
  it('refuses a document past the limit on its size, before reading anything', async () => {
    const source = sourceOf(MAX_ENVELOPED_BYTES + 1);
    await expect(readWhole(source)).rejects.toMatchObject({
      code: 'XML_TOO_LARGE',
      message: `big.xml is ${MAX_ENVELOPED_BYTES + 1} bytes, above the ${MAX_ENVELOPED_BYTES}-byte limit of an enveloped XML signature.`,
    });
    expect(source.reads).toBe(0);
  });

  it('refuses a file larger than any buffer (1 TiB) the same way: nothing is allocated for it', async () => {
    const source = sourceOf(2 ** 40);
    await expect(readWhole(source)).rejects.toMatchObject({ code: 'XML_TOO_LARGE' });
    expect(source.reads).toBe(0);
  });

  it('reads a document at the limit whole, in one read', async () => {
    const source = sourceOf(1000);
    expect((await readWhole(source)).length).toBe(1000);
    expect(source.reads).toBe(1);
  });
});

describe('an enveloped document, checked then prepared', () => {
  const signer = issueTestCertificate({ commonName: 'Enveloped Signer' });
  const credential = {
    credentialID: 'test',
    certificates: [signer.der],
    scheme: { kind: 'rsa-pkcs1', digest: 'sha256' },
  } as unknown as SigningCredential;
  const job: SignJob = { input: 'big.xml', output: 'big-signed.xml', kind: 'xades' };
  const options = { level: 'B-B', signingTime: new Date('2026-01-02T03:04:05Z'), overwrite: false } as const;
  const document = new Uint8Array(
    Buffer.from('<?xml version="1.0" encoding="UTF-8"?>\n<Invoice xmlns="urn:x"><Total>21.00</Total></Invoice>\n'),
  );

  it('is read once: prepare takes over what the check read, and signs what reading it again would', async () => {
    const source = sourceOf(document.length, document);
    const checked = await checkEnveloped(source);
    const prepared = await prepareEnveloped(job, source, credential, options, checked);
    expect(source.reads).toBe(1);
    const fresh = sourceOf(document.length, document);
    const again = await prepareEnveloped(job, fresh, credential, options);
    expect(fresh.reads).toBe(1);
    expect(prepared.toBeSigned.toBeSignedHash).toEqual(again.toBeSigned.toBeSignedHash);
    // Taken over once: a second prepare from the same check reads the file.
    await prepareEnveloped(job, source, credential, options, checked);
    expect(source.reads).toBe(2);
  });
});

describe('a document signed already', () => {
  const signature = (namespace: string) =>
    `<Invoice xmlns="urn:x"><Total>1</Total><ds:Signature xmlns:ds="${namespace}"/></Invoice>`;

  it('is refused whether its signature names the XML-DSig namespace literally or through character references', () => {
    expect(() => parseInputXml(signature(DSIG_NS), 'a.xml')).toThrow(/signed already/);
    const spelled = DSIG_NS.replace(/[/:#]/g, (c) => `&#${c.charCodeAt(0)};`);
    expect(mayNameDsig(signature(spelled))).toBe(true);
    expect(() => parseInputXml(signature(spelled), 'a.xml')).toThrow(/signed already/);
  });

  it('is not looked for in a document that cannot name the namespace', () => {
    expect(mayNameDsig('<Invoice xmlns="urn:x"><Item>a &amp; b</Item></Invoice>')).toBe(false);
    expect(
      parseInputXml('<Invoice xmlns="urn:x"><ds:Signature xmlns:ds="urn:other"/></Invoice>', 'a.xml'),
    ).toBeTruthy();
  });
});
