/**
 * EN 319 102-1's best-signature-time in the qualification: only a signature timestamp that passed
 * validation (its token verifies, its TSA's chain reaches a trust anchor) moves the time the
 * certificate's qualification at signing is determined at. A self-made token cannot backdate a
 * signature past a service's withdrawal. Certificates from the sandbox PKI's builders, a .p7s
 * through verifyCades as `esign verify` reads it.
 */
import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { listEntry } from '../../../test/helpers/qualified-lists.js';
import {
  KU,
  authorityKeyId,
  basicConstraints,
  certificatePolicies,
  dn,
  extKeyUsage,
  issue,
  keyUsage,
  qcStatements,
  subjectKeyId,
  type IssuedCertificate,
} from '../../sandbox/pki.js';
import { OID } from '../cms/oids.js';
import { buildSignedAttributes } from '../cms/signed-attributes.js';
import { archiveTimestampRequest, archiveTimestampToken, OID_ARCHIVE_TIMESTAMP_V3 } from '../cms/archive-timestamp.js';
import { attribute } from '../cms/signed-attributes.js';
import { addSignatureTimestamp, addUnsignedAttribute, buildSignedData } from '../cms/signed-data.js';
import type { TrustService, TrustedListCacheEntry } from '../trusted-list/model.js';
import { buildTimeStampToken } from '../tsp/token.js';
import { buildTstInfo } from '../tsp/tst-info.js';
import { verifyCades } from '../verify/cades.js';

const EXT = 'http://uri.etsi.org/TrstSvc/TrustedList/SvcInfoExt/';
const STATUS = 'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/';
const NOW = new Date('2025-10-01T00:00:00Z');
const BEFORE_WITHDRAWAL = new Date('2025-05-01T00:00:00Z');
const WITHDRAWN = '2025-06-01T00:00:00Z';
const CONTENT = new TextEncoder().encode('best-signature-time\n');

const rsa = (): KeyObject => generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
const base64 = (der: Uint8Array): string => Buffer.from(der).toString('base64');

let root: IssuedCertificate;
let ca: IssuedCertificate;
let signer: IssuedCertificate;
let expiredSigner: IssuedCertificate;
let listedTsa: IssuedCertificate;
let selfMadeTsa: IssuedCertificate;

function certificate(
  name: string,
  issuer: IssuedCertificate | undefined,
  extensions: (ski: Uint8Array) => ReturnType<typeof basicConstraints>[],
  notBefore = new Date('2024-01-01T00:00:00Z'),
): IssuedCertificate {
  const key = rsa();
  return issue({
    name,
    subject: dn(name),
    issuer,
    subjectKey: key,
    issuerKey: issuer?.privateKey ?? key,
    notBefore,
    notAfter: new Date('2030-01-01T00:00:00Z'),
    extensions: (ski) => [...extensions(ski), ...(issuer ? [authorityKeyId(issuer)] : [])],
  });
}

const tsaExtensions = (ski: Uint8Array) => [
  basicConstraints(false),
  keyUsage(KU.digitalSignature),
  extKeyUsage([OID_TIME_STAMPING], true),
  subjectKeyId(ski),
];
const OID_TIME_STAMPING = '1.3.6.1.5.5.7.3.8';

beforeAll(() => {
  root = certificate('BST Root', undefined, (ski) => [
    basicConstraints(true),
    keyUsage(KU.keyCertSign | KU.cRLSign),
    subjectKeyId(ski),
  ]);
  ca = certificate('BST Qualified CA', root, (ski) => [
    basicConstraints(true, 0),
    keyUsage(KU.keyCertSign | KU.cRLSign),
    subjectKeyId(ski),
  ]);
  signer = certificate(
    'BST Signer',
    ca,
    (ski) => [
      basicConstraints(false),
      keyUsage(KU.digitalSignature | KU.nonRepudiation),
      qcStatements({ types: ['esign'], sscd: true }),
      certificatePolicies(['0.4.0.194112.1.2']),
      subjectKeyId(ski),
    ],
    new Date('2025-01-01T00:00:00Z'),
  );
  expiredSigner = issue({
    name: 'BST Expired Signer',
    subject: dn('BST Expired Signer'),
    issuer: ca,
    subjectKey: rsa(),
    issuerKey: ca.privateKey,
    notBefore: new Date('2025-01-01T00:00:00Z'),
    notAfter: new Date('2025-08-01T00:00:00Z'),
    extensions: (ski) => [
      basicConstraints(false),
      keyUsage(KU.digitalSignature | KU.nonRepudiation),
      qcStatements({ types: ['esign'], sscd: true }),
      certificatePolicies(['0.4.0.194112.1.2']),
      subjectKeyId(ski),
      authorityKeyId(ca),
    ],
  });
  listedTsa = certificate('BST Qualified TSA', root, tsaExtensions);
  selfMadeTsa = certificate('BST Self-made TSA', undefined, tsaExtensions);
});

function lists(): TrustedListCacheEntry[] {
  const service = (
    name: string,
    type: string,
    of: IssuedCertificate,
    history: TrustService['history'],
  ): TrustService => ({
    provider: 'BST QTSP',
    providerTradeNames: [],
    name,
    type,
    identity: { certificates: [base64(of.certificate)], subjectNames: [], subjectKeyIdentifiers: [] },
    history,
  });
  const granted = { status: `${STATUS}granted`, from: '2020-01-01T00:00:00Z', qualifications: [] };
  return [
    listEntry(
      [
        service('BST CA', 'http://uri.etsi.org/TrstSvc/Svctype/CA/QC', ca, [
          {
            ...granted,
            status: `${STATUS}withdrawn`,
            from: WITHDRAWN,
            additionalServiceInformation: [`${EXT}ForeSignatures`],
          },
          { ...granted, additionalServiceInformation: [`${EXT}ForeSignatures`] },
        ]),
        service('BST TSA', 'http://uri.etsi.org/TrstSvc/Svctype/TSA/QTST', listedTsa, [
          { ...granted, additionalServiceInformation: [] },
        ]),
      ],
      { nextUpdate: '2026-01-01T00:00:00Z' },
    ),
  ];
}

/** A detached CMS over CONTENT by `by`. */
function cmsBy(by: IssuedCertificate): { cms: Uint8Array; signatureValue: Uint8Array } {
  const signedAttributes = buildSignedAttributes({
    contentDigest: new Uint8Array(createHash('sha256').update(CONTENT).digest()),
    signerCertificate: by.certificate,
  }).der;
  const signatureValue = new Uint8Array(sign('sha256', signedAttributes, by.privateKey));
  const cms = buildSignedData({
    signedAttributesDer: signedAttributes,
    signatureValue,
    certificates: [by.certificate, ca.certificate],
  });
  return { cms, signatureValue };
}

function token(tsa: IssuedCertificate, genTime: Date, imprint: Uint8Array, chain: Uint8Array[]): Uint8Array {
  const tstInfo = buildTstInfo({
    policy: '0.4.0.2023.1.1',
    hashAlgorithm: OID.sha256,
    hashedMessage: imprint,
    serialNumber: randomBytes(8),
    genTime,
  });
  return buildTimeStampToken({
    tstInfo,
    signerCertificate: tsa.certificate,
    privateKey: tsa.privateKey,
    certificates: chain,
  });
}

/** A detached CMS over CONTENT by the signer, with a signature timestamp by `tsa` at `genTime`. */
function p7s(tsa: IssuedCertificate, genTime: Date, chain: Uint8Array[]): Uint8Array {
  const { cms, signatureValue } = cmsBy(signer);
  const imprint = new Uint8Array(createHash('sha256').update(signatureValue).digest());
  return addSignatureTimestamp(cms, token(tsa, genTime, imprint, chain));
}

/** The expired signer's CMS with an archive-time-stamp-v3 by the listed TSA at `genTime` (a proof of existence). */
function archivedP7s(genTime: Date): Uint8Array {
  const { cms } = cmsBy(expiredSigner);
  const contentHash = new Uint8Array(createHash('sha256').update(CONTENT).digest());
  const { imprint, index } = archiveTimestampRequest(cms, contentHash, 'sha256');
  const archive = archiveTimestampToken(
    token(listedTsa, genTime, imprint, [listedTsa.certificate, root.certificate]),
    index,
  );
  return addUnsignedAttribute(cms, attribute(OID_ARCHIVE_TIMESTAMP_V3, archive), 'the archive timestamp');
}

async function verify(bytes: Uint8Array) {
  const report = await verifyCades(bytes, 'bst.p7s', async (consume) => consume(CONTENT), {
    trustAnchors: [],
    now: NOW,
    trustedLists: lists(),
    // The test PKI publishes no revocation status; these tests are about the best-signature-time.
    revocation: { mode: 'soft-fail' },
  });
  return report.signatures[0]!;
}

describe('best-signature-time (EN 319 102-1) in the qualification', () => {
  it('best-signature-time: a timestamp that passed validation moves it, before the withdrawal: QESig', async () => {
    const signature = await verify(p7s(listedTsa, BEFORE_WITHDRAWAL, [listedTsa.certificate, root.certificate]));
    expect(signature.timestamp?.chain?.trusted).toBe(true);
    expect(signature.qualification).toMatchObject({ name: 'QESig', signingTime: BEFORE_WITHDRAWAL.toISOString() });
    expect(signature.chain?.checkedAt).toBe(BEFORE_WITHDRAWAL.toISOString());
  });

  it('best-signature-time: a self-made timestamp does not backdate the signature past the withdrawal', async () => {
    const signature = await verify(p7s(selfMadeTsa, BEFORE_WITHDRAWAL, [selfMadeTsa.certificate]));
    expect(signature.timestamp?.chain?.trusted).toBe(false);
    expect(signature.chain?.checkedAt).toBe(NOW.toISOString());
    expect(signature.qualification?.signingTime).toBe(NOW.toISOString());
    expect(signature.qualification?.name).toBe('Indeterminate AdESig');
    expect(signature.qualification?.qualifiedAtSigning).toBe(false);
    expect(signature.timestamp?.qualified).toMatchObject({ name: 'N/A', qualified: false });
  });

  it('best-signature-time: an archive timestamp that passed validation is a proof of existence: an expired signer checked at its time', async () => {
    const archivedAt = new Date('2025-05-15T00:00:00Z');
    const signature = await verify(archivedP7s(archivedAt));
    expect(signature.chain?.checkedAt).toBe(archivedAt.toISOString());
    expect(signature.problems.join('\n')).not.toMatch(/expired on/);
    expect(signature.qualification).toMatchObject({ name: 'QESig', signingTime: archivedAt.toISOString() });
  });

  it('best-signature-time: without it, the expired signer is checked at the verification time', async () => {
    const signature = await verify(cmsBy(expiredSigner).cms);
    expect(signature.chain?.checkedAt).toBe(NOW.toISOString());
    expect(signature.problems.join('\n')).toMatch(/expired on/);
    expect(signature.qualification?.name).toMatch(/^(Indeterminate AdESig|Not AdES)$/);
  });
});
