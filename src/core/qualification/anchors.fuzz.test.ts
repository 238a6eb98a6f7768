/**
 * Mutation fuzzing of the certificate-to-service matching (TS 119 615 trust anchors): damaged and
 * forged signer and CA certificates against a list that names the CA. Whatever the bytes, a verdict
 * is a qualified name only when the CA's key verifies the signer certificate as it is; otherwise
 * N/A or not qualified, never a thrown error. `ESIGN_FUZZ_RUNS=N` runs N times as many cases.
 */
import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuzzParams, mutatedInput } from '../../../test/helpers/fuzz.js';
import { listEntry } from '../../../test/helpers/qualified-lists.js';
import {
  KU,
  authorityKeyId,
  basicConstraints,
  certificatePolicies,
  dn,
  issue,
  keyUsage,
  qcStatements,
  subjectKeyId,
  type IssuedCertificate,
} from '../../sandbox/pki.js';
import { qualifyCertificate, qualifyTimestamp } from './index.js';

const rsa = () => generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
const LONG_AGO = new Date('2020-01-01T00:00:00Z');
const LATER = new Date('2030-01-01T00:00:00Z');

function certificateOf(
  name: string,
  issuer: IssuedCertificate | undefined,
  options: { ca: boolean; aki?: IssuedCertificate; key?: ReturnType<typeof rsa> },
) {
  const key = options.key ?? rsa();
  return issue({
    name,
    subject: dn(name),
    issuer,
    subjectKey: key,
    issuerKey: issuer?.privateKey ?? key,
    notBefore: LONG_AGO,
    notAfter: LATER,
    extensions: (ski) => [
      basicConstraints(options.ca),
      keyUsage(options.ca ? KU.keyCertSign | KU.cRLSign : KU.digitalSignature | KU.nonRepudiation),
      ...(options.ca
        ? []
        : [qcStatements({ types: ['esign'], sscd: true }), certificatePolicies(['0.4.0.194112.1.2'])]),
      subjectKeyId(ski),
      ...((options.aki ?? issuer) ? [authorityKeyId((options.aki ?? issuer) as IssuedCertificate)] : []),
    ],
  });
}

const root = certificateOf('Fuzz Root', undefined, { ca: true });
const ca = certificateOf('Fuzz Qualified CA', root, { ca: true });
const signer = certificateOf('Fuzz Signer', ca, { ca: false });
// Forgeries: the listed CA's name and key identifier, another key.
const forgedCa = certificateOf('Fuzz Qualified CA', undefined, { ca: true, aki: ca });
const forgedSigner = certificateOf('Fuzz Signer', forgedCa, { ca: false, aki: ca });
const selfMade = certificateOf('Fuzz Signer', undefined, { ca: false, aki: ca });

const STATUS = 'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/granted';
const EXT = 'http://uri.etsi.org/TrstSvc/TrustedList/SvcInfoExt/';
const lists = [
  listEntry(
    ['http://uri.etsi.org/TrstSvc/Svctype/CA/QC', 'http://uri.etsi.org/TrstSvc/Svctype/TSA/QTST'].map((type) => ({
      provider: 'Fuzz QTSP',
      providerTradeNames: [],
      name: `Fuzz ${type.split('/').pop()}`,
      type,
      identity: {
        certificates: [Buffer.from(ca.certificate).toString('base64')],
        subjectNames: [new X509Certificate(ca.certificate).subject],
        subjectKeyIdentifiers: [],
      },
      history: [
        {
          status: STATUS,
          from: '2019-01-01T00:00:00Z',
          additionalServiceInformation: [`${EXT}ForeSignatures`],
          qualifications: [],
        },
      ],
    })),
  ),
];

const QUALIFIED = new Set(['QESig', 'QESeal', 'AdESig-QC', 'AdESeal-QC', 'Unknown-QC', 'Unknown-QC-QSCD']);

function verifiedBy(der: Uint8Array, issuer: IssuedCertificate): boolean {
  try {
    const certificate = new X509Certificate(der);
    return (
      certificate.checkIssued(new X509Certificate(issuer.certificate)) &&
      certificate.verify(new X509Certificate(issuer.certificate).publicKey)
    );
  } catch {
    return false;
  }
}

function sameKey(der: Uint8Array, listed: IssuedCertificate): boolean {
  try {
    return new X509Certificate(der).publicKey.equals(new X509Certificate(listed.certificate).publicKey);
  } catch {
    return false;
  }
}

describe('certificate-to-service matching under mutation and forgery', () => {
  it('a damaged or forged signer certificate is qualified only when the listed CA key verifies it', () => {
    const seeds = [signer.certificate, forgedSigner.certificate, selfMade.certificate];
    fc.assert(
      fc.property(
        mutatedInput(seeds),
        fc.constantFrom<Uint8Array[]>([ca.certificate], [forgedCa.certificate, ca.certificate], []),
        ({ bytes }, chain) => {
          const result = qualifyCertificate({
            certificate: bytes,
            chain,
            signingTime: new Date('2025-01-01T00:00:00Z'),
            validationTime: new Date('2025-01-02T00:00:00Z'),
            lists,
          });
          if (QUALIFIED.has(result.name)) expect(verifiedBy(bytes, ca)).toBe(true);
          if (!verifiedBy(bytes, ca)) expect(result.name).toBe('N/A');
        },
      ),
      fuzzParams(120),
    );
  });

  it('a damaged CA certificate in the chain never lends the listed CA its trust', () => {
    fc.assert(
      fc.property(mutatedInput([forgedCa.certificate, ca.certificate]), ({ bytes }) => {
        const result = qualifyCertificate({
          certificate: forgedSigner.certificate,
          chain: [bytes],
          signingTime: new Date('2025-01-01T00:00:00Z'),
          validationTime: new Date('2025-01-02T00:00:00Z'),
          lists,
        });
        expect(result.name).toBe('N/A');
      }),
      fuzzParams(80),
    );
  });

  it('a damaged or forged TSA certificate is never a qualified time stamp unless the listed key is its own or its issuer', () => {
    fc.assert(
      fc.property(mutatedInput([ca.certificate, forgedCa.certificate]), fc.boolean(), ({ bytes }, tokenVerified) => {
        const result = qualifyTimestamp({
          certificate: bytes,
          chain: [],
          time: new Date('2025-01-01T00:00:00Z'),
          validationTime: new Date('2025-01-02T00:00:00Z'),
          lists,
          tokenVerified,
        });
        if (result.qualified) expect(tokenVerified && sameKey(bytes, ca)).toBe(true);
      }),
      fuzzParams(80),
    );
  });
});
