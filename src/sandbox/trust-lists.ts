/**
 * The sandbox's TEST trusted lists under `/trust`: a LOTL (`/trust/eu-lotl.xml`) pointing to one
 * national list, territory ZZ (`/trust/ZZ.xml`), each XML-signed by a TEST scheme operator whose key
 * lives in `dataDir/trust/`. The ZZ list names the sandbox's issuing CA as a qualified CA (CA/QC,
 * granted) with qualifiers that split its certificates by policy (QSCD or not, docs/trust.md), and
 * its TSA as a qualified TSA (TSA/QTST, granted). Both lists are marked TEST, so no profile but a
 * sandbox one accepts them. The quirks `tl-*` and `lotl-pivot` break them in the ways real lists break.
 */
import { createHash, createPrivateKey } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { signTrustedList, trustedListXml, type ListDescription } from '../core/trusted-list/build.js';
import type { Qualification } from '../core/trusted-list/model.js';
import type { SandboxDeps } from './deps.js';
import { withFileLock } from './file-lock.js';
import type { Router, SandboxRequest, SandboxResponse } from './http.js';
import { issueSchemeOperatorCertificate } from './pki.js';
import type { QuirkName } from './signing/quirks.js';

/** The TEST territory: ZZ is user-assigned in ISO 3166-1, so no real list will ever have it. */
export const SANDBOX_TERRITORY = 'ZZ';

const SVC = 'http://uri.etsi.org/TrstSvc/Svctype/';
const STATUS = 'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/';
const EXT = 'http://uri.etsi.org/TrstSvc/TrustedList/SvcInfoExt/';
const DAY_MS = 86_400_000;
/** The territories of the extra lists a benchmark asks for (--trust-lists N): user-assigned codes too. */
const EXTRA_TERRITORIES = [
  ...'ABCDEFGHIJKLMNOPQRSTUVWXYZ'.split('').map((letter) => `X${letter}`),
  ...'MNOPQRSTUVWXYZ'.split('').map((letter) => `Q${letter}`),
];
/** Services in each extra list: with the issuing CA's certificate each, about 400 KB, a real list's size. */
const EXTRA_LIST_SERVICES = 150;
/** When the sandbox's services were first granted: before any certificate it issues. */
const GRANTED_SINCE = new Date('2020-01-01T00:00:00Z');

/** ETSI EN 319 411-2 policies: the qualifiers below choose by them (docs/trust.md, "The sandbox's lists"). */
export const SANDBOX_QC_POLICIES = {
  /** QCP-n-qscd: natural person, key on a QSCD. */
  naturalQscd: '0.4.0.194112.1.2',
  /** QCP-n: natural person, key not on a QSCD. */
  natural: '0.4.0.194112.1.0',
  /** QCP-l-qscd: legal person (seal), key on a QSCD. */
  legalQscd: '0.4.0.194112.1.3',
  /** QCP-l: legal person (seal), key not on a QSCD. */
  legal: '0.4.0.194112.1.1',
} as const;

const byPolicies = (qualifier: string, policies: string[]): Qualification => ({
  qualifiers: [`${EXT}${qualifier}`],
  criteria: {
    assert: 'atLeastOne',
    keyUsage: [],
    policySets: policies.map((policy) => [policy]),
    extendedKeyUsage: [],
    subjectAttributes: [],
    criteriaLists: [],
  },
});

/** On the CA/QC service: QSCD for the *-qscd policies, not for the others. */
export const SANDBOX_QUALIFICATIONS: Qualification[] = [
  byPolicies('QCWithQSCD', [SANDBOX_QC_POLICIES.naturalQscd, SANDBOX_QC_POLICIES.legalQscd]),
  byPolicies('QCNoQSCD', [SANDBOX_QC_POLICIES.natural, SANDBOX_QC_POLICIES.legal]),
];

interface Signer {
  privateKeyPem: string;
  /** DER, base64. */
  certificate: string;
}

type SignerName = 'lotl-signer' | 'lotl-signer-rotated' | 'zz-operator';

export async function mountTrustLists(router: Router, deps: SandboxDeps): Promise<void> {
  const dir = join(deps.dataDir, 'trust');
  const signers = await withFileLock(join(deps.dataDir, '.trust-lock'), () => loadOrCreateSigners(dir, deps));
  deps.shared.lotlSignerCertificate = signers['lotl-signer'].certificate;
  const trust = `${deps.urls.base}/trust`;
  const on = (name: QuirkName) => deps.quirks.list().includes(name);
  const territories = [SANDBOX_TERRITORY, ...EXTRA_TERRITORIES].slice(0, Math.max(1, deps.trustLists ?? 1));
  // Signing a list of real size takes a good part of a second: each one is signed once per hour and quirk set.
  const signed = new Map<string, string>();
  const signedOnce =
    (path: string, make: () => string) =>
    (request: SandboxRequest): SandboxResponse => {
      const key = `${path} ${deps.quirks.list().sort().join(',')} ${Math.floor(deps.clock.now().getTime() / 3_600_000)}`;
      let list = signed.get(key);
      if (list === undefined) {
        if (signed.size > 100) signed.clear();
        list = make();
        signed.set(key, list);
      }
      // An ETag, so that esign's conditional requests meet 304s as they do at real scheme operators.
      const etag = `"${createHash('sha256').update(list).digest('base64url').slice(0, 27)}"`;
      if (request.headers['if-none-match'] === etag) return { status: 304, headers: { etag } };
      return { status: 200, headers: { 'content-type': 'application/vnd.etsi.tsl+xml', etag }, body: list };
    };

  const lotl = (signer: SignerName, extra: Partial<ListDescription> = {}): ListDescription => {
    const now = deps.clock.now();
    return {
      territory: 'EU',
      operator: 'esign sandbox (TEST LOTL)',
      sequenceNumber: 1,
      issueDate: new Date(now.getTime() - 3_600_000),
      nextUpdate: new Date(now.getTime() + 30 * DAY_MS),
      test: true,
      pointers: [
        {
          territory: 'EU',
          location: `${trust}/eu-lotl.xml`,
          mimeType: 'application/vnd.etsi.tsl+xml',
          signingCertificates: [signers[signer].certificate],
        },
        ...territories.map((territory) => ({
          territory,
          // Port 1 on loopback refuses every connection.
          location:
            on('tl-unreachable') && territory === SANDBOX_TERRITORY
              ? 'http://127.0.0.1:1/trust/ZZ.xml'
              : `${trust}/${territory}.xml`,
          mimeType: 'application/vnd.etsi.tsl+xml',
          signingCertificates: [signers['zz-operator'].certificate],
        })),
      ],
      ...extra,
    };
  };

  router.get(
    '/eu-lotl.xml',
    signedOnce('/eu-lotl.xml', () => {
      if (!on('lotl-pivot')) return sign(trustedListXml(lotl('lotl-signer')), signers['lotl-signer']);
      const rotated = lotl('lotl-signer-rotated', { sequenceNumber: 2, pivots: [`${trust}/eu-lotl-pivot-1.xml`] });
      return sign(trustedListXml(rotated), signers['lotl-signer-rotated']);
    }),
  );
  // The pivot: the last LOTL the old key signed, handing over to the rotated one.
  router.get(
    '/eu-lotl-pivot-1.xml',
    signedOnce('/eu-lotl-pivot-1.xml', () => sign(trustedListXml(lotl('lotl-signer-rotated')), signers['lotl-signer'])),
  );
  router.get(
    `/${SANDBOX_TERRITORY}.xml`,
    signedOnce(`/${SANDBOX_TERRITORY}.xml`, () => {
      const list = sign(trustedListXml(nationalList(deps, on)), signers['zz-operator']);
      return on('tl-broken-signature') ? list.replace('esign sandbox QTSP', 'esign sandbox QTSQ') : list;
    }),
  );
  for (const territory of territories.slice(1)) {
    router.get(
      `/${territory}.xml`,
      signedOnce(`/${territory}.xml`, () => sign(trustedListXml(extraList(deps, territory)), signers['zz-operator'])),
    );
  }
}

/**
 * A TEST list of a real list's size: the ZZ list's CA service again and again under other names,
 * each with a certificate of its own, as in a real list (a chain's CA is on one list, not on all).
 */
function extraList(deps: SandboxDeps, territory: string): ListDescription {
  const zz = nationalList(deps, () => false);
  const [ca] = zz.providers![0]!.services;
  const services = Array.from({ length: EXTRA_LIST_SERVICES }, (_, index) => ({
    ...ca!,
    name: `esign sandbox CA ${index + 1} (TEST)`,
    certificates: [
      renamedCaCertificate(
        deps,
        territory,
        `esign Sandbox ${territory} TEST CA #${String(index + 1).padStart(3, '0')}`,
      ),
    ],
  }));
  const providers = Array.from({ length: EXTRA_LIST_SERVICES / 10 }, (_, index) => ({
    name: `esign sandbox QTSP ${territory} ${index + 1}`,
    services: services.slice(index * 10, index * 10 + 10),
  }));
  return { ...zz, territory, operator: `esign sandbox (TEST scheme operator ${territory})`, providers };
}

/**
 * The issuing CA's certificate with another subject common name, and another issuer (a root of the
 * territory), each of the same length, its bytes otherwise unchanged: a stand-in for another CA's
 * certificate, cheap to make by the thousand. Its signature no longer verifies, which nothing asks
 * of a listed CA certificate; it issued nothing.
 */
function renamedCaCertificate(deps: SandboxDeps, territory: string, commonName: string): string {
  const der = Buffer.from(deps.pki.issuingCa.certificate);
  for (const [from, to] of [
    [ROOT_CA_NAME, `esign Sandbox ${territory} TEST Root`],
    [ISSUING_CA_NAME, commonName],
  ] as const) {
    const at = der.indexOf(Buffer.from(from, 'utf8')); // the issuer field comes first, then the subject
    if (at === -1 || to.length !== from.length) throw new Error(`cannot rename ${from}`);
    Buffer.from(to, 'utf8').copy(der, at);
  }
  return der.toString('base64');
}

const ROOT_CA_NAME = 'esign Sandbox TEST Root CA';
const ISSUING_CA_NAME = 'esign Sandbox TEST Issuing CA';

function nationalList(deps: SandboxDeps, on: (quirk: QuirkName) => boolean): ListDescription {
  const now = deps.clock.now();
  const expired = on('tl-expired');
  const base64 = (der: Uint8Array) => Buffer.from(der).toString('base64');
  const granted = {
    status: `${STATUS}granted`,
    from: GRANTED_SINCE,
    additionalServiceInformation: [`${EXT}ForeSignatures`, `${EXT}ForeSeals`],
    qualifications: SANDBOX_QUALIFICATIONS,
  };
  return {
    territory: SANDBOX_TERRITORY,
    operator: 'esign sandbox (TEST scheme operator)',
    sequenceNumber: 1,
    issueDate: new Date(now.getTime() - (expired ? 60 : 1) * DAY_MS),
    nextUpdate: new Date(now.getTime() + (expired ? -30 : 30) * DAY_MS),
    test: true,
    providers: [
      {
        name: 'esign sandbox QTSP',
        tradeNames: ['VATZZ-0000000000'],
        services: [
          {
            name: 'esign sandbox issuing CA (TEST)',
            type: `${SVC}CA/QC`,
            certificates: [base64(deps.pki.issuingCa.certificate)],
            history: on('tl-withdrawn-service')
              ? [{ status: `${STATUS}withdrawn`, from: new Date(now.getTime() - 3_600_000) }, granted]
              : [granted],
          },
          {
            name: 'esign sandbox TSA (TEST)',
            type: `${SVC}TSA/QTST`,
            certificates: [base64(deps.pki.tsa.certificate)],
            history: [{ status: `${STATUS}granted`, from: GRANTED_SINCE }],
          },
        ],
      },
    ],
  };
}

function sign(xmlText: string, signer: Signer): string {
  return signTrustedList(xmlText, createPrivateKey(signer.privateKeyPem), signer.certificate);
}

async function loadOrCreateSigners(dir: string, deps: SandboxDeps): Promise<Record<SignerName, Signer>> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const names: SignerName[] = ['lotl-signer', 'lotl-signer-rotated', 'zz-operator'];
  const entries = await Promise.all(
    names.map(async (name): Promise<[SignerName, Signer]> => {
      const path = join(dir, `${name}.json`);
      try {
        return [name, JSON.parse(await readFile(path, 'utf8')) as Signer];
      } catch {
        const now = deps.clock.now();
        const issued = await issueSchemeOperatorCertificate({
          commonName: `esign sandbox ${name}`,
          notBefore: new Date(now.getTime() - DAY_MS),
          notAfter: new Date(now.getTime() + 10 * 365 * DAY_MS),
        });
        const signer: Signer = {
          privateKeyPem: issued.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
          certificate: Buffer.from(issued.certificate).toString('base64'),
        };
        await writeFile(path, JSON.stringify(signer), { mode: 0o600 });
        return [name, signer];
      }
    }),
  );
  return Object.fromEntries(entries) as Record<SignerName, Signer>;
}
