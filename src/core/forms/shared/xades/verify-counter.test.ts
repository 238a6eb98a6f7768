/**
 * XAdES counter-signatures (EN 319 132-1 §5.2.7): built at run time by esign's XAdES writer
 * (test/helpers/xades-counter.ts), each read and verified as a signature of its own, nested under
 * the signature it countersigns, and folded into the file's verdict as CAdES's are.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { testTsa } from '../../../../../test/helpers/test-tsa.js';
import { counterSignedXml, withSignatureValue } from '../../../../../test/helpers/xades-counter.js';
import { issueTestCertificate } from '../../../cms/test-pki.js';
import { worstOfSignatures } from '../../../verify/types.js';
import { EsignError } from '../../../errors.js';
import { NS } from '../../../xml/namespaces.js';
import { verifyXadesXml } from './verify.js';

const root = issueTestCertificate({ commonName: 'XAdES Counter Root', ca: true });
const signer = issueTestCertificate({ commonName: 'XAdES Parent Signer', issuer: root });
const notary = issueTestCertificate({ commonName: 'XAdES Counter Signer', issuer: root });
const parent = { certificates: [signer.der, root.der], privateKey: signer.privateKey };
const counter = { certificates: [notary.der, root.der], privateKey: notary.privateKey };
const now = new Date();
const tsa = testTsa(root, 'XAdES Counter TSA', now);

/** A timestamp token over `data` from the test TSA (SHA-256 imprint). */
function timestamp(data: Uint8Array): Uint8Array {
  return tsa.token(new Uint8Array(createHash('sha256').update(data).digest()));
}

const options = { trustAnchors: [root.der], now, revocation: { mode: 'soft-fail' } as const };

async function verify(xml: string) {
  const results = await verifyXadesXml({ name: 'counter.xml', bytes: new TextEncoder().encode(xml) }, options);
  return results.map((result) => result.report);
}

/** Another base64 value of the same length: the first character changed. */
const flip = (text: string) => `${text[0] === 'A' ? 'B' : 'A'}${text.slice(1)}`;

describe('XAdES counter-signatures', () => {
  it('a valid counter-signature is verified and reported under its parent, with its own signer, chain and level', async () => {
    const reports = await verify(counterSignedXml(parent, counter));
    expect(reports).toHaveLength(1);
    const [report] = reports;
    expect(report, JSON.stringify(report!.problems)).toMatchObject({ status: 'valid', level: 'B-B' });
    expect(report!.signer?.subject).toContain('XAdES Parent Signer');
    expect(report!.counterSignatures).toHaveLength(1);
    const [countersignature] = report!.counterSignatures!;
    expect(countersignature, JSON.stringify(countersignature!.problems)).toMatchObject({
      index: 1,
      kind: 'xades',
      status: 'valid',
      indication: 'TOTAL-PASSED',
      level: 'B-B',
      integrity: { valid: true },
      signatureValue: { valid: true },
      chain: { trusted: true },
    });
    expect(countersignature!.signer?.subject).toContain('XAdES Counter Signer');
    expect(countersignature!.warnings.join('\n')).not.toMatch(/covers only parts/);
    expect(worstOfSignatures(reports)).toBe('valid');
  });

  it('a timestamped counter-signature: its SignatureTimeStamp checked over its own SignatureValue, level B-T', async () => {
    const xml = counterSignedXml(parent, counter, { counterTimestamp: timestamp });
    const [report] = await verify(xml);
    expect(report).toMatchObject({ status: 'valid', level: 'B-B' });
    const [countersignature] = report!.counterSignatures!;
    expect(countersignature, JSON.stringify(countersignature!.problems)).toMatchObject({
      status: 'valid',
      level: 'B-T',
      timestamp: { valid: true },
    });
    // The token over another value (the parent's): its imprint does not match.
    const parentValue = /<ds:SignatureValue [^>]*>[^<]*<\/ds:SignatureValue>/.exec(xml)![0];
    const stamped = /<xades:EncapsulatedTimeStamp>([^<]*)</.exec(xml)![1]!;
    const other = Buffer.from(
      timestamp(
        new TextEncoder().encode(parentValue.replace('<ds:SignatureValue ', `<ds:SignatureValue xmlns:ds="${NS.ds}" `)),
      ),
    ).toString('base64');
    const [moved] = await verify(xml.replace(stamped, other));
    expect(moved!.counterSignatures![0]!.problems.join('\n')).toMatch(/message imprint does not match/);
  });

  it('the parent SignatureValue changed after counter-signing: the counter-signature is INVALID (its digest), and the file', async () => {
    const reports = await verify(withSignatureValue(counterSignedXml(parent, counter), 0, flip));
    const [countersignature] = reports[0]!.counterSignatures!;
    expect(countersignature).toMatchObject({ status: 'invalid', subIndication: 'HASH_FAILURE' });
    expect(countersignature!.integrity).toMatchObject({ valid: false });
    expect(countersignature!.problems.join('\n')).toContain('the countersigned SignatureValue does not match');
    expect(worstOfSignatures(reports)).toBe('invalid');
  });

  it("the counter-signature's own value changed: it is INVALID while its parent stays valid, and the file fails", async () => {
    const reports = await verify(withSignatureValue(counterSignedXml(parent, counter), 1, flip));
    expect(reports[0]).toMatchObject({ status: 'valid' });
    const [countersignature] = reports[0]!.counterSignatures!;
    expect(countersignature).toMatchObject({
      status: 'invalid',
      subIndication: 'SIG_CRYPTO_FAILURE',
      integrity: { valid: true },
      signatureValue: { valid: false },
    });
    expect(worstOfSignatures(reports)).toBe('invalid');
  });

  it("a counter-signature's SignedProperties changed: its SignedProperties digest fails", async () => {
    const xml = counterSignedXml(parent, counter);
    const at = xml.lastIndexOf('<xades:SigningTime>2026-01-02');
    const changed = `${xml.slice(0, at)}<xades:SigningTime>2026-01-03${xml.slice(at + '<xades:SigningTime>2026-01-02'.length)}`;
    const [countersignature] = (await verify(changed))[0]!.counterSignatures!;
    expect(countersignature).toMatchObject({ status: 'invalid', subIndication: 'HASH_FAILURE' });
  });

  it('a CountersignedSignature reference to anything but the parent SignatureValue: the counter-signature INVALID, its parent valid (as DSS)', async () => {
    const reports = await verify(counterSignedXml(parent, counter, { counterUri: () => '#inv-1' }));
    expect(reports[0]).toMatchObject({ status: 'valid' });
    const [countersignature] = reports[0]!.counterSignatures!;
    expect(countersignature).toMatchObject({ status: 'invalid', integrity: { valid: false } });
    expect(countersignature!.problems).toContain(
      "the counter-signature's CountersignedSignature reference (#inv-1) names something other than its parent's SignatureValue",
    );
    expect(worstOfSignatures(reports)).toBe('invalid');
  });

  it('a counter-signature that does not cover its parent SignatureValue is INVALID', async () => {
    const xml = counterSignedXml(parent, counter, { counterUri: () => '#inv-1', untyped: true });
    const [countersignature] = (await verify(xml))[0]!.counterSignatures!;
    expect(countersignature).toMatchObject({ status: 'invalid' });
    expect(countersignature!.problems, JSON.stringify(countersignature!.problems)).toContain(
      "the counter-signature has no reference to its parent's SignatureValue",
    );
  });

  it('an empty CounterSignature is refused in one line (XADES_REFUSED)', async () => {
    const xml = counterSignedXml(parent, counter);
    const start = xml.indexOf('<xades:CounterSignature>') + '<xades:CounterSignature>'.length;
    const empty = xml.slice(0, start) + xml.slice(xml.indexOf('</xades:CounterSignature>'));
    await expect(verify(empty)).rejects.toSatisfy(
      (error: unknown) =>
        error instanceof EsignError &&
        error.code === 'XADES_REFUSED' &&
        error.message.includes('0 Signature elements in a CounterSignature, one expected') &&
        !error.message.includes('\n'),
    );
  });

  it('a CountersignedSignature Type in a signature that is not a counter-signature: read as any reference (as DSS)', async () => {
    // The counter-signature moved out to be a signature of the document of its own: it covers a part of it.
    const xml = counterSignedXml(parent, counter);
    const start = xml.indexOf('<xades:CounterSignature>');
    const end = xml.indexOf('</xades:CounterSignature>') + '</xades:CounterSignature>'.length;
    const inner = xml.slice(start + '<xades:CounterSignature>'.length, end - '</xades:CounterSignature>'.length);
    const moved = (xml.slice(0, start) + xml.slice(end)).replace('</inv:Invoice>', `${inner}</inv:Invoice>`);
    const reports = await verify(moved);
    // The first one's enveloped document now holds the moved signature: changed after signing.
    expect(reports.map((report) => report.status)).toEqual(['invalid', 'valid']);
    expect(reports[0]).toMatchObject({ subIndication: 'HASH_FAILURE' });
    expect(reports[1]!.counterSignatures).toBeUndefined();
    expect(reports[1]!.warnings.join('\n')).toMatch(/covers only parts of the document/);
  });
});
