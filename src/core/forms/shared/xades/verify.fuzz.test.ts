/**
 * Mutation fuzzing of the XAdES reader (`verifyXadesXml`): damaged copies of enveloped XAdES
 * signatures (B-B, B-T with a real timestamp token, and B-B with a counter-signature), built by
 * esign's XAdES writer. Every input ends in a report or a typed EsignError (XML_* or XADES_REFUSED, one line), never a crash or a
 * hang; and a signature still found valid covers exactly the content the original did (the
 * document canonicalized independently, by xml-crypto, its signatures left out), by the same signer.
 */
import { createHash, sign } from 'node:crypto';
import { DOMParser } from '@xmldom/xmldom';
import { ExclusiveCanonicalization } from 'xml-crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuzzParams, mutatedInput, outcomeAsync } from '../../../../../test/helpers/fuzz.js';
import { testTsa } from '../../../../../test/helpers/test-tsa.js';
import { COUNTER_DOCUMENT, counterSignedXml, envelopedObject } from '../../../../../test/helpers/xades-counter.js';
import { issueTestCertificate } from '../../../cms/test-pki.js';
import { NS } from '../../../xml/namespaces.js';
import type { XmlDocument, XmlElement } from '../../../xml/types/xml-libs.js';
import { draftSignature, signatureTimestampInput, signatureXml, toBeSignedOf } from './signature.js';
import { verifyXadesXml } from './verify.js';

const root = issueTestCertificate({ commonName: 'XAdES Fuzz Root', ca: true });
const signer = issueTestCertificate({ commonName: 'XAdES Fuzz Signer', issuer: root });
const now = new Date();
const tsa = testTsa(root, 'XAdES Fuzz TSA', now);

const DOCUMENT = COUNTER_DOCUMENT;

/** An enveloped XAdES of DOCUMENT by `signer`, as esign's writer makes it; with a signature timestamp when `timestamped`. */
function signedDocument(timestamped: boolean): Uint8Array {
  const scheme = { kind: 'rsa-pkcs1', digest: 'sha256' } as const;
  const draft = draftSignature({
    objects: [envelopedObject(DOCUMENT)],
    certificates: [signer.der, root.der],
    scheme,
    signingTime: new Date('2026-01-01T00:00:00Z'),
  });
  const value = new Uint8Array(sign('sha256', toBeSignedOf(draft).der, signer.privateKey));
  let token: Uint8Array | undefined;
  if (timestamped) {
    const imprint = new Uint8Array(createHash('sha256').update(signatureTimestampInput(draft, value)).digest());
    token = tsa.token(imprint);
  }
  const signature = signatureXml(draft, value, token ? { signatureTimestamp: token } : {});
  return new TextEncoder().encode(DOCUMENT.replace('</inv:Invoice>', `${signature}</inv:Invoice>`));
}

const identity = { certificates: [signer.der, root.der], privateKey: signer.privateKey };
const seeds = [
  signedDocument(false),
  signedDocument(true),
  new TextEncoder().encode(counterSignedXml(identity, identity)),
];
// The test PKI publishes no revocation status: verified as Acrobat would (the rules of revocation have tests of their own).
const options = { trustAnchors: [root.der], now, revocation: { mode: 'soft-fail' } as const };

/** What a reader of the document sees: its root element in exclusive c14n, every ds:Signature left out (xml-crypto, not esign's reader). */
function content(bytes: Uint8Array): string | undefined {
  let doc: XmlDocument;
  try {
    doc = new DOMParser({ errorHandler: { warning: () => {}, error: () => {}, fatalError: () => {} } }).parseFromString(
      new TextDecoder().decode(bytes),
      'text/xml',
    ) as unknown as XmlDocument;
  } catch {
    return undefined;
  }
  const rootElement = doc?.documentElement;
  if (!rootElement) return undefined;
  for (const signature of Array.from(doc.getElementsByTagNameNS(NS.ds, 'Signature')) as XmlElement[])
    signature.parentNode?.removeChild(signature);
  return new ExclusiveCanonicalization().process(rootElement, {});
}

const original = content(seeds[0]!);

describe('XAdES under mutation', () => {
  it('the seeds verify: valid, B-B and B-T', async () => {
    const levels = [];
    for (const seed of seeds) {
      const [result] = await verifyXadesXml({ name: 'seed', bytes: seed }, options);
      expect(result!.report, JSON.stringify(result!.report.problems)).toMatchObject({ status: 'valid' });
      levels.push(result!.report.level);
      for (const counter of result!.report.counterSignatures ?? []) expect(counter.status).toBe('valid');
    }
    expect(levels).toEqual(['B-B', 'B-T', 'B-B']);
  });

  it('a report or a typed one-line EsignError; a valid signature only over the original content, by the original signer', async () => {
    await fc.assert(
      fc.asyncProperty(mutatedInput(seeds), async ({ bytes }) => {
        const result = await outcomeAsync('verifyXadesXml', () => verifyXadesXml({ name: 'fuzz', bytes }, options));
        if (!result.ok) {
          expect(result.error.code).toMatch(/^(XML_|XADES_REFUSED)/);
          expect(result.error.message).not.toContain('\n');
          return;
        }
        for (const { report } of result.value) {
          if (report.status !== 'valid' && report.status !== 'weak') continue;
          expect(content(bytes)).toBe(original);
          expect(report.signer?.subject).toContain('XAdES Fuzz Signer');
          for (const counter of report.counterSignatures ?? [])
            if (counter.status === 'valid' || counter.status === 'weak')
              expect(counter.signer?.subject).toContain('XAdES Fuzz Signer');
        }
      }),
      fuzzParams(150),
    );
  });
});
