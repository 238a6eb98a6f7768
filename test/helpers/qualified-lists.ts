/**
 * Trusted-list cache entries for the tests' own sandbox, written with TrustedListCache as
 * `esign trust update` would after checking a list: its issuing CA as a granted CA/QC service that
 * splits the credentials on their policies (docs/trust.md), its TSA as a granted TSA/QTST service.
 */
import type {
  CriteriaList,
  TrustService,
  TrustedListCacheEntry,
  TrustedListSnapshot,
} from '../../src/core/trusted-list/model.js';
import { TrustedListCache } from '../../src/io/trusted-list-cache.js';
import type { SandboxPki } from '../../src/sandbox/pki.js';
import { QUALIFIED_POLICY } from '../../src/sandbox/pki.js';

const EXT = 'http://uri.etsi.org/TrstSvc/TrustedList/SvcInfoExt/';
const STATUS = 'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/';

function onPolicies(policies: string[]): CriteriaList {
  return {
    assert: 'atLeastOne',
    keyUsage: [],
    policySets: policies.map((policy) => [policy]),
    extendedKeyUsage: [],
    subjectAttributes: [],
    criteriaLists: [],
  };
}

export function sandboxServices(pki: SandboxPki, status = 'granted'): TrustService[] {
  const base64 = (der: Uint8Array): string => Buffer.from(der).toString('base64');
  const identity = (der: Uint8Array): TrustService['identity'] => ({
    certificates: [base64(der)],
    subjectNames: [],
    subjectKeyIdentifiers: [],
  });
  return [
    {
      provider: 'esign Sandbox QTSP',
      providerTradeNames: [],
      name: 'esign Sandbox TEST Issuing CA',
      type: 'http://uri.etsi.org/TrstSvc/Svctype/CA/QC',
      identity: identity(pki.issuingCa.certificate),
      history: [
        {
          status: `${STATUS}${status}`,
          from: '2016-07-01T00:00:00Z',
          additionalServiceInformation: [`${EXT}ForeSignatures`, `${EXT}ForeSeals`],
          qualifications: [
            {
              qualifiers: [`${EXT}QCWithQSCD`],
              criteria: onPolicies([QUALIFIED_POLICY.qcpNQscd, QUALIFIED_POLICY.qcpLQscd]),
            },
            { qualifiers: [`${EXT}QCNoQSCD`], criteria: onPolicies([QUALIFIED_POLICY.qcpN, QUALIFIED_POLICY.qcpL]) },
          ],
        },
      ],
    },
    {
      provider: 'esign Sandbox QTSP',
      providerTradeNames: [],
      name: 'esign Sandbox TEST TSA',
      type: 'http://uri.etsi.org/TrstSvc/Svctype/TSA/QTST',
      identity: identity(pki.tsa.certificate),
      history: [
        {
          status: `${STATUS}granted`,
          from: '2016-07-01T00:00:00Z',
          additionalServiceInformation: [],
          qualifications: [],
        },
      ],
    },
  ];
}

export function listEntry(
  services: TrustService[],
  overrides: Partial<TrustedListSnapshot> = {},
): TrustedListCacheEntry {
  const snapshot: TrustedListSnapshot = {
    territory: 'BE',
    isLotl: false,
    type: 'http://uri.etsi.org/TrstSvc/TrustedList/TSLType/EUgeneric',
    sequenceNumber: 7,
    issueDate: '2026-01-01T00:00:00Z',
    nextUpdate: '2099-01-01T00:00:00Z',
    operator: 'Test Supervisory Body',
    source: 'test',
    test: false,
    sha256: '00'.repeat(32),
    signerCertificate: '',
    pointers: [],
    pivots: [],
    services,
    ...overrides,
  };
  return { territory: snapshot.territory, snapshot, verifiedAt: '2026-01-01T00:00:00Z' };
}

/** Writes the entries into the cache `env` points at (ESIGN_CACHE_DIR, else ESIGN_CONFIG_DIR/cache). */
export async function writeLists(
  env: Record<string, string | undefined>,
  entries: TrustedListCacheEntry[],
): Promise<void> {
  // Where a sandbox profile reads its lists and where any other profile does: each case's profile finds them.
  for (const cache of [TrustedListCache.at(env), TrustedListCache.at(env, { sandbox: true })])
    for (const entry of entries) await cache.write(entry);
}
