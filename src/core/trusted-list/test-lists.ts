/**
 * Signed trusted lists for unit tests: a scheme operator, a LOTL operator and one national list with
 * a qualified CA. Not used by the product.
 */
import { issueTestCertificate, type TestIdentity } from '../cms/test-pki.js';
import { signTrustedList, trustedListXml, type ListDescription } from './build.js';
import type { Qualification } from './model.js';

export const GRANTED = 'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/granted';
export const WITHDRAWN = 'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/withdrawn';
export const CA_QC = 'http://uri.etsi.org/TrstSvc/Svctype/CA/QC';
export const QC_WITH_QSCD = 'http://uri.etsi.org/TrstSvc/TrustedList/SvcInfoExt/QCWithQSCD';

export const QSCD_QUALIFICATION: Qualification = {
  qualifiers: [QC_WITH_QSCD],
  criteria: {
    assert: 'atLeastOne',
    keyUsage: [{ nonRepudiation: true }],
    policySets: [['0.4.0.194112.1.2']],
    extendedKeyUsage: [],
    subjectAttributes: [],
    criteriaLists: [],
  },
};

export interface TestSigner {
  identity: TestIdentity;
  /** DER, base64. */
  certificate: string;
}

export function testSigner(commonName: string): TestSigner {
  const identity = issueTestCertificate({ commonName, keyType: 'rsa' });
  return { identity, certificate: Buffer.from(identity.der).toString('base64') };
}

export function nationalListDescription(
  caCertificate: string,
  overrides: Partial<ListDescription> = {},
): ListDescription {
  return {
    territory: 'BE',
    operator: 'Test operator',
    sequenceNumber: 12,
    issueDate: new Date('2026-01-01T00:00:00Z'),
    nextUpdate: new Date('2026-07-01T00:00:00Z'),
    providers: [
      {
        name: 'Test QTSP',
        tradeNames: ['VATBE-0123456789'],
        services: [
          {
            name: 'Test qualified CA',
            type: CA_QC,
            certificates: [caCertificate],
            history: [
              {
                status: GRANTED,
                from: new Date('2025-06-01T00:00:00Z'),
                additionalServiceInformation: ['http://uri.etsi.org/TrstSvc/TrustedList/SvcInfoExt/ForeSignatures'],
                qualifications: [QSCD_QUALIFICATION],
              },
              { status: WITHDRAWN, from: new Date('2024-01-01T00:00:00Z') },
            ],
          },
        ],
      },
    ],
    ...overrides,
  };
}

export function signedList(description: ListDescription, signer: TestSigner): string {
  return signTrustedList(trustedListXml(description), signer.identity.privateKey, signer.certificate);
}
