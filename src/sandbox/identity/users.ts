/**
 * The sandbox identity service's test users: two ordinary ones (alice with every claim, bob with
 * several claims that cannot be shared) and one designated user per error case of seed 001 §7.
 * Everything here is fictitious.
 */

export type IdentityCase =
  | 'ChallengeExpired'
  | 'EmailUnverified'
  | 'ConsentExpired'
  | 'ConsentRejected'
  | 'ProcessExpired'
  | 'NonPkioCertificate'
  | 'VerificationFailed'
  | 'SystemError'
  | 'ConsentInvalidated'
  | 'AuthenticationFailure';

export interface CaseSpec {
  error: 'access_denied' | 'server_error';
  /** Absent for the cases the document lists with description "none". */
  description?: string;
  /** Where in the flow the case happens: at the (simulated) QR scan or at the PIN step. */
  phase: 'scan' | 'consent';
}

/** Seed 001 §7, to the letter. */
export const CASES: Readonly<Record<IdentityCase, CaseSpec>> = {
  ChallengeExpired: { error: 'access_denied', description: 'authentication challenge expired', phase: 'scan' },
  EmailUnverified: { error: 'access_denied', description: 'user email is unverified', phase: 'scan' },
  ConsentExpired: { error: 'access_denied', description: 'consent request expired', phase: 'consent' },
  ConsentRejected: { error: 'access_denied', description: 'Resource owner rejected consent', phase: 'consent' },
  ProcessExpired: { error: 'access_denied', description: 'process expired', phase: 'consent' },
  NonPkioCertificate: { error: 'server_error', description: 'n/a', phase: 'scan' },
  VerificationFailed: { error: 'server_error', phase: 'scan' },
  SystemError: { error: 'server_error', phase: 'scan' },
  ConsentInvalidated: { error: 'server_error', phase: 'consent' },
  AuthenticationFailure: { error: 'server_error', phase: 'scan' },
};

export const IDENTITY_CASES = Object.keys(CASES) as IdentityCase[];

export function isIdentityCase(value: unknown): value is IdentityCase {
  return typeof value === 'string' && Object.hasOwn(CASES, value);
}

export interface TestUser {
  id: string;
  /** The error case this user always ends in, if designated for one. */
  triggers?: IdentityCase;
  /** Identity claims this user can share (a claim absent here cannot be shared). */
  claims: Record<string, unknown>;
}

/** `ChallengeExpired` → `challenge-expired`. */
export function designatedUserId(errorCase: IdentityCase): string {
  return errorCase.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase();
}

const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

function proofPdf(name: string): string {
  const text = `(TEST identity proof for ${name} - no legal effect) Tj`;
  const content = `BT /F1 12 Tf 72 720 Td ${text} ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let pdf = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, index) => {
    offsets.push(pdf.length);
    pdf += `${index + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = pdf.length;
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('')}`;
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(pdf, 'latin1').toString('base64');
}

const ALICE: TestUser = {
  id: 'alice',
  claims: {
    email: 'alice@example.test',
    email_verified: true,
    given_name: 'Alice Maria',
    'com.vendor.last_name': 'van den Berg',
    birthdate: '1985-04-12',
    'com.vendor.birthplace': 'Utrecht',
    'com.vendor.nationality': 'Nederlandse',
    'com.vendor.nl_brp_voornaam': 'Alice Maria',
    'com.vendor.nl_brp_voorvoegsel': 'van den',
    'com.vendor.nl_brp_geslachtsnaam': 'van den Berg',
    'com.vendor.nl_brp_geslachtsnaam_zonder_voorvoegsel': 'Berg',
    'com.vendor.id_number': 'NXC4R8TJ1',
    'com.vendor.document.type': 'PASSPORT',
    'com.vendor.id_document_issuance_date': '2019-03-01',
    'com.vendor.id_document_issuance_place': 'Utrecht',
    'com.vendor.id_document_expiration_date': '2029-03-01',
    'com.vendor.proof': [
      {
        id: 'identity-report',
        content_type: 'application/pdf',
        base64_encoded_content: proofPdf('Alice Maria van den Berg'),
      },
      { id: 'portrait', content_type: 'image/png', base64_encoded_content: PNG_1X1 },
    ],
  },
};

/** Bob has no e-mail address, no BRP prefix, no birthplace and no proof on file: those are not shared. */
const BOB: TestUser = {
  id: 'bob',
  claims: {
    given_name: 'Bob',
    'com.vendor.last_name': 'Jansen',
    birthdate: '1990-11-30',
    'com.vendor.nationality': 'Nederlandse',
    'com.vendor.nl_brp_voornaam': 'Bob',
    'com.vendor.nl_brp_geslachtsnaam': 'Jansen',
    'com.vendor.nl_brp_geslachtsnaam_zonder_voorvoegsel': 'Jansen',
    'com.vendor.id_number': 'IDB7730K2',
    'com.vendor.document.type': 'ID_CARD',
    'com.vendor.id_document_issuance_date': '2021-06-15',
    'com.vendor.id_document_issuance_place': 'Amsterdam',
  },
};

export const DEFAULT_USER = ALICE.id;

export const TEST_USERS: readonly TestUser[] = [
  ALICE,
  BOB,
  ...IDENTITY_CASES.map((errorCase): TestUser => ({
    id: designatedUserId(errorCase),
    triggers: errorCase,
    claims:
      errorCase === 'EmailUnverified'
        ? { email: 'unverified@example.test', email_verified: false }
        : { given_name: 'Test' },
  })),
];

export function findUser(id: string): TestUser | undefined {
  return TEST_USERS.find((user) => user.id === id);
}
