/**
 * The fault matrix (issue 9, item 2): every remote call esign makes, against the sandbox's fault
 * injection, with each transport and content fault. Every case asserts the documented exit code and
 * message (README "Exit codes"), the number of tries (DESIGN §4: idempotent calls at most 3, signHash
 * and token exchanges once), the input untouched and no output or temp file left. The results are
 * written to test/artifacts/fault-matrix.json; `node scripts/reliability-table.mjs` turns them into
 * the table in docs/reliability.md.
 */
import { createHash, randomBytes } from 'node:crypto';
import { cp, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, extname, join } from 'node:path';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MAX_TRUSTED_LIST_BYTES } from '../../src/core/trusted-list/xml-signature.js';
import type { Fault } from '../../src/sandbox/faults.js';
import { storageControl } from '../../src/sandbox/storage/routes.js';
import { SANDBOX_SEAL } from '../../src/sandbox/deps.js';
import { derToPem } from '../../src/sandbox/pki.js';
import type { QuirkName } from '../../src/sandbox/signing/quirks.js';
import type { VerificationReport } from '../../src/core/verify/types.js';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.js';
import { runCli, type CliResult } from '../helpers/run-cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir, tempDirForFile } from '../helpers/tmp.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';

/** The client's HTTP time-out in the time-out cases, and the delay that exceeds it. */
const TIMEOUT_MS = 700;
const DELAY_MS = 1_500;

const ROUTES = {
  discovery: 'identity GET /.well-known/openid-configuration',
  jwks: 'identity GET /jwks',
  identityToken: 'identity POST /oauth2/token',
  userinfo: 'identity-legacy GET /userinfo',
  signingToken: 'signing POST /oauth2/token',
  /** The same endpoint, with grant_type client_credentials (a seal's sign-in). */
  clientCredentialsToken: 'signing POST /oauth2/token',
  /** The same endpoint, with grant_type password (serviceAuth password; the sandbox's password-grant quirk). */
  passwordToken: 'signing POST /oauth2/token',
  /** The same endpoint, the client_credentials grant posted as JSON (tokenRequest json; the json-token-request quirk). */
  jsonToken: 'signing POST /oauth2/token',
  authLogin: 'signing POST /csc/v1/auth/login',
  credentialsAuthorize: 'signing POST /csc/v1/credentials/authorize',
  /** Called when a SAD lapses within 10 s (the sandbox's quirk short-sad makes every SAD do). */
  extendTransaction: 'signing POST /csc/v1/credentials/extendTransaction',
  list: 'signing POST /csc/v1/credentials/list',
  info: 'signing POST /csc/v1/credentials/info',
  authorize: 'signing GET /oauth2/authorize',
  signHash: 'signing POST /csc/v1/signatures/signHash',
  v2Info: 'signing-v2 POST /csc/v2/info',
  /** RFC 8414 metadata of the v2 info's oauth2Issuer (the sandbox's quirk issuer-only names no oauth2 base URI). */
  issuerMetadata: '.well-known GET /oauth-authorization-server/signing-v2',
  v2List: 'signing-v2 POST /csc/v2/credentials/list',
  v2SignHash: 'signing-v2 POST /csc/v2/signatures/signHash',
  tsa: 'tsa POST /tss03',
  storageCredentials: 'storage POST /v1/credentials',
  s3Put: 's3 PUT /{bucket}/{key}',
  /** UploadPart of part 2 (a multipart upload; the S3 gateway logs its requests in the host's log). */
  s3Part: 's3 PUT /{bucket}/{key}?partNumber=2&uploadId',
  /** `esign trust update`: the sandbox's TEST LOTL, then the national list (ZZ) it points to. */
  lotl: 'trust GET /eu-lotl.xml',
  nationalList: 'trust GET /ZZ.xml',
  /** `esign verify` of a B-B PDF without revocation data: the signer's OCSP responder (its CRL, the issuing CA's, faulted alike). */
  ocsp: 'pki POST /ocsp',
  /** The same: the root's CRL, where the issuing CA's status is published (no OCSP responder for it). */
  rootCrl: 'pki GET /root.crl',
} as const;
type CallName = keyof typeof ROUTES;

interface MatrixRow {
  call: CallName;
  route: string;
  fault: string;
  command: string;
  exitCode: number | null;
  errorCode: string | undefined;
  message: string;
  tries: number;
  maxTries: number;
  inputUntouched: boolean;
  leftovers: string[];
  pass: boolean;
}

const matrix: MatrixRow[] = [];
let t: TestSandbox;
let s3Proxy: FaultProxy;
let realS3Url: string;
let work: { dir: string; remove: () => Promise<void> };
let pdfBytes: Buffer;
/** The input of the multipart cases: three parts of at most 8 MiB. */
const multipartBytes = randomBytes(20 * 1024 * 1024);

beforeAll(async () => {
  t = await startTestSandbox({ autoApprove: true, s3: true });
  work = await tempDirForFile('esign-faults-');
  const control = storageControl(t.sandbox);
  realS3Url = control.s3.url;
  s3Proxy = await startFaultProxy(realS3Url);
  control.s3.url = s3Proxy.url;
  const document = await PDFDocument.create();
  const font = await document.embedFont(StandardFonts.Helvetica);
  document.addPage([595, 842]).drawText('fault matrix', { x: 72, y: 760, size: 14, font });
  pdfBytes = Buffer.from(await document.save({ useObjectStreams: false }));
  await seedTrustCache();
});

afterEach(async () => {
  t.sandbox.faults.clear();
  t.sandbox.quirks.set([]);
  s3Proxy.faults.length = 0;
  storageControl(t.sandbox).s3.url = s3Proxy.url;
  // Switches a case armed but did not use must not reach the next case.
  await postJson(`${t.sandbox.urls.identity}/_sandbox/switches/clear`, {});
  await postJson(`${t.sandbox.urls.tsa}/_faults/clear`, {});
});

afterAll(async () => {
  const artifacts = new URL('../artifacts/', import.meta.url);
  await mkdir(artifacts, { recursive: true });
  const sorted = [...matrix].sort((a, b) => Object.keys(ROUTES).indexOf(a.call) - Object.keys(ROUTES).indexOf(b.call));
  // Only a whole run describes the matrix: a run filtered with -t must not replace it with a part.
  if (
    matrix.length ===
    CASES.length +
      REFUSED_CASES.length +
      TRUST_CASES.length +
      TRUST_ADD_CASES.length +
      VERIFY_CASES.length +
      EXTEND_CASES.length
  ) {
    await writeFile(
      new URL('fault-matrix.json', artifacts),
      JSON.stringify(
        { generatedBy: 'test/integration/faults.test.ts', timeoutMs: TIMEOUT_MS, cases: sorted },
        null,
        2,
      ) + '\n',
    );
  }
  if (s3Proxy) {
    storageControl(t.sandbox).s3.url = realS3Url;
    await s3Proxy.close();
  }
  await t?.close();
  await work?.remove();
});

// ---- one case ------------------------------------------------------------------------------

interface FaultCase {
  call: CallName;
  fault: string;
  /** Arms the fault (sandbox injector, TSA or identity switches, S3 proxy, runtime file). */
  arm: (env: Record<string, string>) => Promise<void> | void;
  /** The CLI run that makes the call. */
  command:
    | 'sign'
    | 'sign (browser)'
    | 'sign B-T'
    | 'credentials list'
    | 'sign (v2)'
    | 'credentials list (v2)'
    | 'credentials list (v2, oauth2Issuer)'
    | 'login'
    | 'upload'
    | 'upload (multipart)'
    | 'timestamp'
    | 'sign (seal)'
    | 'sign (seal, auth/login)'
    | 'sign (seal, password grant)'
    | 'sign (seal, JSON token)'
    | 'trust update'
    | 'trust add'
    | 'verify'
    | 'verify (soft-fail)'
    | 'extend (xades)';
  errorCode: string | RegExp;
  exitCode: number;
  message: RegExp;
  /** Calls of the faulted route expected (exactly, or a range). */
  tries: number | [number, number];
  /** Runs with the short HTTP time-out. */
  shortTimeout?: boolean;
  /** The run takes at least this long (a Retry-After waited out). */
  minMs?: number;
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** How each seal command signs in, beyond client_credentials; and the sandbox quirks its provider needs. */
const SEAL_SIGN_IN: Partial<Record<FaultCase['command'], Record<string, string>>> = {
  'sign (seal, auth/login)': { ESIGN_SERVICE_AUTH: 'basic' },
  'sign (seal, password grant)': { ESIGN_SERVICE_AUTH: 'password' },
  'sign (seal, JSON token)': { ESIGN_SERVICE_AUTH: 'client-credentials', ESIGN_TOKEN_REQUEST: 'json' },
};
const COMMAND_QUIRKS: Partial<Record<FaultCase['command'], QuirkName[]>> = {
  'credentials list (v2, oauth2Issuer)': ['issuer-only'],
  'sign (seal, password grant)': ['password-grant'],
  'sign (seal, JSON token)': ['json-token-request'],
};

async function runCase(c: FaultCase): Promise<void> {
  if (c.command === 'trust update' || c.command === 'trust add') return runTrustCase(c);
  if (c.command === 'verify' || c.command === 'verify (soft-fail)') return runVerifyCase(c);
  const dir = await tempDir('esign-fault-');
  const configDir = join(dir, '.config');
  const docs = join(dir, 'docs');
  await mkdir(docs);
  // `esign extend` works on a signed XML file (signed before the fault is armed, untimed), the others on a PDF.
  const input = join(docs, c.command === 'extend (xades)' ? 'contract-signed.xml' : 'contract.pdf');
  await writeFile(
    input,
    c.command === 'upload (multipart)'
      ? multipartBytes
      : c.command === 'extend (xades)'
        ? await signedXades()
        : pdfBytes,
  );
  const before = sha256(await readFile(input));
  // A seal on the sandbox profile: the organization's client (or login user) and its bulk seal, no browser.
  const seal: Record<string, string> = c.command.startsWith('sign (seal')
    ? {
        ...(SEAL_SIGN_IN[c.command] ?? { ESIGN_SERVICE_AUTH: 'client-credentials' }),
        ESIGN_CREDENTIAL_PIN: SANDBOX_SEAL.pin,
      }
    : {};
  // The sandbox behaves as the provider the sign-in is for (password grant only, a JSON token endpoint).
  t.sandbox.quirks.set(COMMAND_QUIRKS[c.command] ?? []);
  const env: Record<string, string> = {
    ...t.env,
    ESIGN_CONFIG_DIR: configDir,
    ...seal,
    ...(c.shortTimeout ? { ESIGN_HTTP_TIMEOUT_MS: String(TIMEOUT_MS) } : {}),
  };
  const prefix = `case-${matrix.length}`;
  if (c.command.startsWith('upload')) {
    const login = await runCli(['--auto-approve', 'login', '--scope', 'com.vendor.storage'], {
      env: { ...t.env, ESIGN_CONFIG_DIR: configDir },
    });
    expect(login.code, login.stderr).toBe(0);
  }
  await c.arm(env);
  const route = ROUTES[c.call];
  const logStart = t.sandbox.requestLog.length;
  const putsStart = s3Proxy.puts;
  // The trust commands run in runTrustCase, verify in runVerifyCase.
  const args: Record<
    Exclude<FaultCase['command'], 'trust update' | 'trust add' | 'verify' | 'verify (soft-fail)'>,
    string[]
  > = {
    sign: ['--auto-approve', '--json', 'sign', '--level', 'B-B', input],
    'sign (browser)': ['--json', '--timeout', '20', 'sign', '--level', 'B-B', input],
    'sign B-T': ['--auto-approve', '--json', 'sign', '--level', 'B-T', input],
    'credentials list': ['--auto-approve', '--json', 'credentials', 'list'],
    'sign (v2)': ['--auto-approve', '--json', '--profile', 'sandbox-v2', 'sign', '--level', 'B-B', input],
    'credentials list (v2)': ['--auto-approve', '--json', '--profile', 'sandbox-v2', 'credentials', 'list'],
    'credentials list (v2, oauth2Issuer)': [
      '--auto-approve',
      '--json',
      '--profile',
      'sandbox-v2',
      'credentials',
      'list',
    ],
    login: ['--auto-approve', '--json', 'login'],
    upload: ['--json', 'upload', '--prefix', prefix, input],
    'upload (multipart)': ['--json', 'upload', '--prefix', prefix, input],
    timestamp: ['--json', 'timestamp', input],
    'sign (seal)': ['--json', 'sign', '--level', 'B-B', input],
    'sign (seal, auth/login)': ['--json', 'sign', '--level', 'B-B', input],
    'sign (seal, password grant)': ['--json', 'sign', '--level', 'B-B', input],
    'sign (seal, JSON token)': ['--json', 'sign', '--level', 'B-B', input],
    'extend (xades)': ['--json', 'extend', '--level', 'B-LTA', '--in-place', input],
  };
  const result: CliResult = await runCli(args[c.command], { env, timeoutMs: 60_000 });
  // A delayed request reaches its handler after the client gave up on it; the last one was sent at
  // least TIMEOUT_MS before the CLI exited. Let it finish before the next case arms a switch it could
  // otherwise consume (an ID token fault, a spoiled TSA token).
  if (c.shortTimeout) await new Promise((resolve) => setTimeout(resolve, DELAY_MS - TIMEOUT_MS + 200));
  const tries =
    c.call === 's3Put'
      ? s3Proxy.puts - putsStart
      : t.sandbox.requestLog.slice(logStart).filter((id) => id === route).length;
  const errorLine = result.stdout.trim().split('\n').at(-1) ?? '';
  let errorCode: string | undefined;
  try {
    errorCode = (JSON.parse(errorLine) as { error?: { code?: string } }).error?.code;
  } catch {
    errorCode = undefined;
  }
  const message = result.stderr.trim().split('\n').at(-1) ?? '';
  const leftovers = (await readdir(docs)).filter((name) => name !== basename(input));
  const untouched = sha256(await readFile(input)) === before;
  const [minTries, maxTries] = typeof c.tries === 'number' ? [c.tries, c.tries] : c.tries;
  const row: MatrixRow = {
    call: c.call,
    route,
    fault: c.fault,
    command: `esign ${args[c.command].filter((arg) => !arg.startsWith('/')).join(' ')}`,
    exitCode: result.code,
    errorCode,
    message: message
      // esign extend's message names its input: the table keeps the file name (the temp dir changes run to run).
      .split(input)
      .join(basename(input))
      .replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:PORT')
      .replace(/case-\d+/g, 'case-N')
      .replace(/esign-[0-9a-f]{40}/g, 'esign-BUCKET'),
    tries,
    maxTries,
    inputUntouched: untouched,
    leftovers,
    pass: false,
  };
  matrix.push(row);
  expect({ exit: result.code, errorCode }, result.stderr).toEqual({
    exit: c.exitCode,
    errorCode: typeof c.errorCode === 'string' ? c.errorCode : expect.stringMatching(c.errorCode),
  });
  expect(message).toMatch(c.message);
  expect(message).toMatch(/^esign: /);
  if (c.command === 'extend (xades)') {
    // One line: the sandbox profile's banner aside, nothing else on stderr.
    const lines = result.stderr.trim().split('\n');
    expect(lines.filter((line) => !line.startsWith('esign: sandbox profile'))).toEqual([message]);
  }
  expect(tries).toBeGreaterThanOrEqual(minTries);
  expect(tries).toBeLessThanOrEqual(maxTries);
  expect(untouched).toBe(true);
  expect(leftovers).toEqual([]);
  row.pass = true;
}

// ---- the matrix ------------------------------------------------------------------------------

const inject =
  (call: CallName, fault: Fault, times = 1) =>
  () =>
    t.sandbox.faults.inject({ route: ROUTES[call], fault, times });
const status = (code: number, headers: Record<string, string> = {}): Fault => ({
  kind: 'status',
  status: code,
  headers,
});
const malformed = (body: string, contentType = 'application/json'): Fault => ({ kind: 'malformed', body, contentType });

/** Transport and status faults, with what each yields for a call retried (idempotent) or sent once. */
function standardCases(
  call: CallName,
  command: FaultCase['command'],
  idempotent: boolean,
  service: RegExp,
): FaultCase[] {
  const retried = idempotent ? 3 : 1;
  return [
    {
      call,
      command,
      fault: 'connection reset',
      arm: inject(call, { kind: 'reset' }, 3),
      errorCode: 'HTTP_UNREACHABLE',
      exitCode: 5,
      message: /Could not reach the/,
      tries: retried,
    },
    {
      call,
      command,
      fault: 'time-out',
      arm: inject(call, { kind: 'delay', ms: DELAY_MS }, 3),
      errorCode: 'HTTP_TIMEOUT',
      exitCode: 5,
      message: /did not answer within/,
      tries: retried,
      shortTimeout: true,
    },
    {
      call,
      command,
      fault: 'HTTP 429',
      arm: inject(call, status(429, { 'retry-after': '0' }), 3),
      errorCode: 'HTTP_RATE_LIMITED',
      exitCode: 5,
      message: service,
      tries: retried,
    },
    {
      call,
      command,
      fault: 'HTTP 500',
      arm: inject(call, status(500), 3),
      errorCode: 'HTTP_SERVER_ERROR',
      exitCode: 5,
      message: service,
      tries: 1,
    },
    {
      call,
      command,
      fault: 'HTTP 502',
      arm: inject(call, status(502), 3),
      errorCode: 'HTTP_SERVER_ERROR',
      exitCode: 5,
      message: service,
      tries: retried,
    },
    {
      call,
      command,
      fault: 'HTTP 503',
      arm: inject(call, status(503), 3),
      errorCode: 'HTTP_SERVER_ERROR',
      exitCode: 5,
      message: service,
      tries: retried,
    },
  ];
}

/** The case with the sandbox's SADs living 5 s, so that esign extends each before its signHash. */
function withShortSads(c: FaultCase): FaultCase {
  return {
    ...c,
    arm: async (env) => {
      t.sandbox.quirks.set(['short-sad']);
      await c.arm(env);
    },
  };
}

/** signHash answers a signature value that does not verify with the credential's certificate. */
function forgedSignature(call: CallName, command: FaultCase['command']): FaultCase {
  const forged = JSON.stringify({ signatures: [Buffer.alloc(256, 7).toString('base64')] });
  return {
    call,
    command,
    fault: 'signature does not verify',
    arm: inject(call, malformed(forged)),
    errorCode: 'CSC_SIGNATURE_INVALID',
    exitCode: 6,
    message: /does not verify/,
    tries: 1,
  };
}

/**
 * The TSA's faults (idempotent: its own retry loop), through a command that asks it for one token:
 * transport and status faults, answers that are not a TimeStampResp, a rejection, and tokens that
 * fail the client's checks.
 */
function tsaCases(command: FaultCase['command']): FaultCase[] {
  return [
    ...standardCases('tsa', command, true, /timestamp authority/).map((c): FaultCase => {
      if (c.fault === 'HTTP 429' || c.fault.startsWith('HTTP 5'))
        return { ...c, errorCode: 'TSA_HTTP_ERROR', exitCode: 5, tries: c.fault === 'HTTP 500' ? 1 : 3 };
      return c;
    }),
    // Answers that are no TimeStampResp.
    ...(
      [
        ['malformed DER', '\x30\x7f\x02\x01', 'application/timestamp-reply', /timestamp/],
        ['wrong ASN.1 types', '\x30\x03\x02\x01\x00', 'application/timestamp-reply', /timestamp/],
        ['wrong content type', '{}', 'application/json', /Content-Type/],
      ] as const
    ).map(([fault, body, contentType, message]): FaultCase => ({
      call: 'tsa',
      command,
      fault,
      arm: inject('tsa', malformed(body, contentType)),
      errorCode: 'TSA_BAD_RESPONSE',
      exitCode: 6,
      message,
      tries: 1,
    })),
    {
      call: 'tsa',
      command,
      fault: 'failInfo timeNotAvailable',
      arm: () => postJson(`${t.sandbox.urls.tsa}/_faults`, { failInfo: 'timeNotAvailable', times: 3 }),
      errorCode: 'TSA_REJECTED',
      exitCode: 6,
      message: /timeNotAvailable/,
      tries: 3,
    },
    ...(
      [
        ['signature', 'signature does not verify', 'TSA_SIGNATURE_INVALID', /not validly signed/],
        ['imprint', 'token for other data (imprint)', 'TSA_IMPRINT_MISMATCH', /message imprint mismatch/],
        ['nonce', 'nonce not echoed', 'TSA_NONCE_MISMATCH', /does not echo the nonce/],
      ] as const
    ).map(([tamper, fault, errorCode, message]): FaultCase => ({
      call: 'tsa',
      command,
      fault,
      arm: () => postJson(`${t.sandbox.urls.tsa}/_faults`, { tamper, times: 1 }),
      errorCode,
      exitCode: 6,
      message,
      tries: 1,
    })),
  ];
}

const CASES: FaultCase[] = [
  // identity metadata: discovery document and JWKS (idempotent), through `esign login`
  ...standardCases('discovery', 'login', true, /identity service/),
  {
    call: 'discovery',
    command: 'login',
    fault: 'malformed JSON',
    arm: inject('discovery', malformed('{"issuer": ')),
    errorCode: 'OIDC_DISCOVERY_FAILED',
    exitCode: 4,
    message: /discovery document .* is not a JSON object/,
    tries: 1,
  },
  {
    call: 'discovery',
    command: 'login',
    fault: 'wrong field types',
    arm: inject('discovery', malformed('{"issuer": 42, "jwks_uri": []}')),
    errorCode: 'OIDC_DISCOVERY_FAILED',
    exitCode: 4,
    message: /issuer/,
    tries: 1,
  },
  ...standardCases('jwks', 'login', true, /identity service/),
  {
    call: 'jwks',
    command: 'login',
    fault: 'malformed JSON',
    arm: inject('jwks', malformed('{"keys": ')),
    errorCode: 'OIDC_DISCOVERY_FAILED',
    exitCode: 4,
    message: /JWKS/,
    tries: 1,
  },
  {
    call: 'jwks',
    command: 'login',
    fault: 'wrong field types',
    arm: inject('jwks', malformed('{"keys": [{"kty": 7, "n": true}]}')),
    errorCode: /^OIDC_(BAD_RESPONSE|SIGNATURE_INVALID)$/,
    exitCode: 4,
    message: /identity service/,
    tries: 1,
  },

  // identity: token exchange (never retried) and userinfo (idempotent), through `esign login`
  ...standardCases('identityToken', 'login', false, /identity service/),
  {
    call: 'identityToken',
    command: 'login',
    fault: 'malformed JSON',
    arm: inject('identityToken', malformed('{"access_token": ')),
    errorCode: 'OIDC_BAD_RESPONSE',
    exitCode: 4,
    message: /identity service/,
    tries: 1,
  },
  {
    call: 'identityToken',
    command: 'login',
    fault: 'wrong field types',
    arm: inject(
      'identityToken',
      malformed('{"access_token": 42, "token_type": "Bearer", "id_token": 7, "expires_in": "soon"}'),
    ),
    errorCode: 'OIDC_BAD_RESPONSE',
    exitCode: 4,
    message: /identity service/,
    tries: 1,
  },
  {
    call: 'identityToken',
    command: 'login',
    fault: 'signature does not verify (ID token)',
    arm: () => postJson(`${t.sandbox.urls.identity}/_sandbox/switches`, { idToken: 'bad-signature', times: 1 }),
    errorCode: 'OIDC_SIGNATURE_INVALID',
    exitCode: 4,
    message: /does not carry a valid signature/,
    tries: 1,
  },
  ...standardCases('userinfo', 'login', true, /identity service/),
  {
    call: 'userinfo',
    command: 'login',
    fault: 'malformed JSON',
    arm: inject('userinfo', malformed('{"sub": ')),
    errorCode: 'OIDC_BAD_RESPONSE',
    exitCode: 4,
    message: /identity service/,
    tries: 1,
  },
  {
    call: 'userinfo',
    command: 'login',
    fault: 'wrong field types',
    arm: inject('userinfo', malformed('{"sub": 42, "email_verified": "yes"}')),
    errorCode: /^OIDC_(BAD_RESPONSE|SUB_MISMATCH)$/,
    exitCode: 4,
    message: /identity service/,
    tries: 1,
  },
  {
    call: 'userinfo',
    command: 'login',
    fault: 'sub differs from the ID token',
    arm: () => postJson(`${t.sandbox.urls.identity}/_sandbox/switches`, { idToken: 'userinfo-sub', times: 1 }),
    errorCode: 'OIDC_SUB_MISMATCH',
    exitCode: 4,
    message: /sub/i,
    tries: 1,
  },

  // signing service: service-token exchange (first token call of a run; never retried)
  ...standardCases('signingToken', 'credentials list', false, /signing service/),
  {
    call: 'signingToken',
    command: 'credentials list',
    fault: 'malformed JSON',
    arm: inject('signingToken', malformed('{"access_token": ')),
    errorCode: 'CSC_BAD_RESPONSE',
    exitCode: 6,
    message: /signing service/,
    tries: 1,
  },
  {
    call: 'signingToken',
    command: 'credentials list',
    fault: 'wrong field types',
    arm: inject('signingToken', malformed('{"access_token": 42, "token_type": "Bearer"}')),
    errorCode: 'CSC_BAD_RESPONSE',
    exitCode: 6,
    message: /access_token/,
    tries: 1,
  },

  // credentials/list (idempotent)
  ...standardCases('list', 'credentials list', true, /signing service/),
  {
    call: 'list',
    command: 'credentials list',
    fault: 'malformed JSON',
    arm: inject('list', malformed('{"credentialIDs": [')),
    errorCode: 'CSC_BAD_RESPONSE',
    exitCode: 6,
    message: /credentials\/list/,
    tries: 1,
  },
  {
    call: 'list',
    command: 'credentials list',
    fault: 'wrong field types',
    arm: inject('list', malformed('{"credentialIDs": "alice-rsa2048"}')),
    errorCode: 'CSC_BAD_RESPONSE',
    exitCode: 6,
    message: /credentials\/list/,
    tries: 1,
  },

  // credentials/info (idempotent), through `esign sign`
  ...standardCases('info', 'sign', true, /signing service/),
  {
    call: 'info',
    command: 'sign',
    fault: 'malformed JSON',
    arm: inject('info', malformed('{"key": {')),
    errorCode: 'CSC_BAD_RESPONSE',
    exitCode: 6,
    message: /credentials\/info/,
    tries: 1,
  },
  {
    call: 'info',
    command: 'sign',
    fault: 'wrong field types',
    arm: inject(
      'info',
      malformed(
        '{"key": {"status": "enabled", "algo": "1.2.840.113549.1.1.1", "len": "many"}, "cert": {"certificates": "MII="}, "authMode": "oauth2code"}',
      ),
    ),
    errorCode: 'CSC_BAD_RESPONSE',
    exitCode: 6,
    message: /credentials\/info/,
    tries: 1,
  },

  // the credential authorization redirect (browser step): error redirects, through `esign sign`
  ...['access_denied', 'server_error', 'temporarily_unavailable', 'invalid_scope'].map((error): FaultCase => ({
    call: 'authorize',
    command: 'sign (browser)',
    fault: `redirect error=${error}`,
    arm: (env) => {
      env['ESIGN_BROWSER'] = `${process.execPath} ${fileUrlPath('redirect-error-browser.js')} ${error}`;
    },
    errorCode:
      error === 'access_denied'
        ? 'AUTH_DENIED'
        : error === 'invalid_scope'
          ? 'AUTH_INVALID_REQUEST'
          : 'AUTH_SERVER_ERROR',
    exitCode: 4,
    message: new RegExp(error),
    tries: [0, 0],
  })),
  {
    call: 'authorize',
    command: 'sign (browser)',
    fault: 'redirect with a foreign state',
    arm: (env) => {
      env['ESIGN_BROWSER'] = `${process.execPath} ${fileUrlPath('redirect-error-browser.js')} wrong-state`;
    },
    errorCode: 'AUTH_STATE_MISMATCH',
    exitCode: 4,
    message: /state/,
    tries: [0, 0],
  },

  // signHash (never retried after sending)
  ...standardCases('signHash', 'sign', false, /signing service/),
  {
    call: 'signHash',
    command: 'sign',
    fault: 'malformed JSON',
    arm: inject('signHash', malformed('{"signatures": [')),
    errorCode: 'CSC_BAD_RESPONSE',
    exitCode: 6,
    message: /signHash/,
    tries: 1,
  },
  {
    call: 'signHash',
    command: 'sign',
    fault: 'wrong field types',
    arm: inject('signHash', malformed('{"signatures": [42]}')),
    errorCode: 'CSC_BAD_RESPONSE',
    exitCode: 6,
    message: /signHash/,
    tries: 1,
  },
  forgedSignature('signHash', 'sign'),

  // CSC API v2 (--profile sandbox-v2): info (idempotent, asked before any browser step),
  // credentials/list with the credentials' info, and signHash (never retried after sending)
  ...standardCases('v2Info', 'credentials list (v2)', true, /signing service/),
  {
    call: 'v2Info',
    command: 'credentials list (v2)',
    fault: 'malformed JSON',
    arm: inject('v2Info', malformed('{"specs": ')),
    errorCode: 'CSC_BAD_RESPONSE',
    exitCode: 6,
    message: /answer to info/,
    tries: 1,
  },
  {
    call: 'v2Info',
    command: 'credentials list (v2)',
    fault: 'wrong field types',
    arm: inject('v2Info', malformed('{"specs": 2, "methods": "all"}')),
    errorCode: 'CSC_BAD_RESPONSE',
    exitCode: 6,
    message: /answer to info/,
    tries: 1,
  },
  {
    call: 'v2Info',
    command: 'credentials list (v2)',
    fault: 'a method esign needs is missing',
    arm: inject(
      'v2Info',
      malformed(
        JSON.stringify({
          specs: '2.0.0.2',
          authType: ['oauth2code'],
          methods: ['credentials/list', 'credentials/info', 'signatures/signDoc'],
        }),
      ),
    ),
    errorCode: 'CSC_UNSUPPORTED_SERVICE',
    exitCode: 6,
    message: /does not offer signatures\/signHash/,
    tries: 1,
  },
  // RFC 8414 metadata of oauth2Issuer (idempotent; asked after info, before any browser step)
  ...standardCases('issuerMetadata', 'credentials list (v2, oauth2Issuer)', true, /signing service/),
  {
    call: 'issuerMetadata',
    command: 'credentials list (v2, oauth2Issuer)',
    fault: 'malformed JSON',
    arm: inject('issuerMetadata', malformed('{"issuer": ')),
    errorCode: 'CSC_BAD_RESPONSE',
    exitCode: 6,
    message: /OAuth 2\.0 server metadata \(RFC 8414\) is not a JSON object/,
    tries: 1,
  },
  {
    call: 'issuerMetadata',
    command: 'credentials list (v2, oauth2Issuer)',
    fault: 'wrong field types',
    arm: () =>
      t.sandbox.faults.inject({
        route: ROUTES.issuerMetadata,
        fault: malformed(
          JSON.stringify({ issuer: t.sandbox.urls.signingV2, authorization_endpoint: 7, token_endpoint: ['x'] }),
        ),
        times: 1,
      }),
    errorCode: 'CSC_BAD_RESPONSE',
    exitCode: 6,
    message: /has no usable authorization_endpoint/,
    tries: 1,
  },
  {
    call: 'issuerMetadata',
    command: 'credentials list (v2, oauth2Issuer)',
    // RFC 8414 §3.3: metadata naming another issuer is not used (a mix-up or a hijacked discovery).
    fault: 'names another issuer',
    arm: inject(
      'issuerMetadata',
      malformed(
        JSON.stringify({
          issuer: 'https://attacker.example',
          authorization_endpoint: 'https://attacker.example/authorize',
          token_endpoint: 'https://attacker.example/token',
        }),
      ),
    ),
    errorCode: 'CSC_BAD_RESPONSE',
    exitCode: 6,
    message: /names the issuer "https:\/\/attacker\.example"/,
    tries: 1,
  },
  ...standardCases('v2List', 'credentials list (v2)', true, /signing service/),
  {
    call: 'v2List',
    command: 'credentials list (v2)',
    fault: 'malformed JSON',
    arm: inject('v2List', malformed('{"credentialIDs": [')),
    errorCode: 'CSC_BAD_RESPONSE',
    exitCode: 6,
    message: /credentials\/list/,
    tries: 1,
  },
  {
    call: 'v2List',
    command: 'credentials list (v2)',
    fault: 'wrong field types',
    arm: inject('v2List', malformed('{"credentialIDs": ["alice-rsa2048"], "credentialInfos": {"alice-rsa2048": {}}}')),
    errorCode: 'CSC_BAD_RESPONSE',
    exitCode: 6,
    message: /credentials\/list/,
    tries: 1,
  },
  ...standardCases('v2SignHash', 'sign (v2)', false, /signing service/),
  {
    call: 'v2SignHash',
    command: 'sign (v2)',
    fault: 'malformed JSON',
    arm: inject('v2SignHash', malformed('{"signatures": [')),
    errorCode: 'CSC_BAD_RESPONSE',
    exitCode: 6,
    message: /signHash/,
    tries: 1,
  },
  {
    call: 'v2SignHash',
    command: 'sign (v2)',
    // An expired SAD is authorized once more (a second approval) and signHash made again; a second expiry stops.
    fault: 'refused: SAD expired, twice',
    arm: inject(
      'v2SignHash',
      {
        kind: 'status',
        status: 400,
        body: JSON.stringify({ error: 'invalid_request', error_description: 'SAD expired' }),
      },
      2,
    ),
    errorCode: 'CSC_SAD_EXPIRED',
    exitCode: 6,
    message: /SAD expired/,
    tries: 2,
  },
  forgedSignature('v2SignHash', 'sign (v2)'),

  // TSA (idempotent: its own retry loop), through `esign sign --level B-T`
  ...tsaCases('sign B-T'),

  // storage credentials (idempotent), through `esign upload` after `esign login --scope com.vendor.storage`
  ...standardCases('storageCredentials', 'upload', true, /storage service/).map((c): FaultCase =>
    c.fault.startsWith('HTTP 5') ? { ...c, errorCode: 'STORAGE_UNAVAILABLE' } : c,
  ),
  {
    call: 'storageCredentials',
    command: 'upload',
    fault: 'malformed JSON',
    arm: inject('storageCredentials', malformed('{"bucket": ')),
    errorCode: 'STORAGE_BAD_RESPONSE',
    exitCode: 6,
    message: /storage service/,
    tries: 1,
  },
  {
    call: 'storageCredentials',
    command: 'upload',
    fault: 'wrong field types',
    arm: inject(
      'storageCredentials',
      malformed(
        '{"bucket": 42, "endpoint": true, "credentials": {"accessKeyId": 1, "secretAccessKey": [], "sessionToken": null, "expiration": "never"}}',
      ),
    ),
    errorCode: 'STORAGE_BAD_RESPONSE',
    exitCode: 6,
    message: /storage service/,
    tries: 1,
  },

  // A seal's calls (no browser): the client_credentials token, auth/login, credentials/authorize;
  // none is retried once sent (a token exchange, a login, an authorization that counts PINs and OTPs).
  ...standardCases('clientCredentialsToken', 'sign (seal)', false, /signing service/),
  {
    call: 'clientCredentialsToken',
    command: 'sign (seal)',
    fault: 'malformed JSON',
    arm: inject('clientCredentialsToken', malformed('{"access_token": ')),
    errorCode: 'CSC_BAD_RESPONSE',
    exitCode: 6,
    message: /client credentials token request is not a JSON object/,
    tries: 1,
  },
  {
    call: 'clientCredentialsToken',
    command: 'sign (seal)',
    fault: 'wrong field types',
    arm: inject('clientCredentialsToken', malformed('{"access_token": 42, "expires_in": "soon"}')),
    errorCode: 'CSC_BAD_RESPONSE',
    exitCode: 6,
    message: /access_token/,
    tries: 1,
  },
  // The password grant and a JSON token request (issue 29): the same token endpoint, never retried once sent.
  ...standardCases('passwordToken', 'sign (seal, password grant)', false, /signing service/),
  {
    call: 'passwordToken',
    command: 'sign (seal, password grant)',
    fault: 'malformed JSON',
    arm: inject('passwordToken', malformed('{"access_token": ')),
    errorCode: 'CSC_BAD_RESPONSE',
    exitCode: 6,
    message: /password grant token request is not a JSON object/,
    tries: 1,
  },
  {
    call: 'passwordToken',
    command: 'sign (seal, password grant)',
    fault: 'wrong field types',
    arm: inject('passwordToken', malformed('{"access_token": 42, "expires_in": "soon"}')),
    errorCode: 'CSC_BAD_RESPONSE',
    exitCode: 6,
    message: /access_token/,
    tries: 1,
  },
  ...standardCases('jsonToken', 'sign (seal, JSON token)', false, /signing service/),
  {
    call: 'jsonToken',
    command: 'sign (seal, JSON token)',
    fault: 'malformed JSON',
    arm: inject('jsonToken', malformed('{"access_token": ')),
    errorCode: 'CSC_BAD_RESPONSE',
    exitCode: 6,
    message: /client credentials token request is not a JSON object/,
    tries: 1,
  },
  {
    call: 'jsonToken',
    command: 'sign (seal, JSON token)',
    fault: 'wrong field types',
    arm: inject('jsonToken', malformed('{"access_token": 42, "expires_in": "soon"}')),
    errorCode: 'CSC_BAD_RESPONSE',
    exitCode: 6,
    message: /access_token/,
    tries: 1,
  },
  ...standardCases('authLogin', 'sign (seal, auth/login)', false, /signing service/),
  {
    call: 'authLogin',
    command: 'sign (seal, auth/login)',
    fault: 'malformed JSON',
    arm: inject('authLogin', malformed('{"access_token": ')),
    errorCode: 'CSC_BAD_RESPONSE',
    exitCode: 6,
    message: /auth\/login is not a JSON object/,
    tries: 1,
  },
  {
    call: 'authLogin',
    command: 'sign (seal, auth/login)',
    fault: 'wrong field types',
    arm: inject('authLogin', malformed('{"access_token": "x", "refresh_token": 7}')),
    errorCode: 'CSC_BAD_RESPONSE',
    exitCode: 6,
    message: /refresh_token/,
    tries: 1,
  },
  ...standardCases('credentialsAuthorize', 'sign (seal)', false, /signing service/),
  {
    call: 'credentialsAuthorize',
    command: 'sign (seal)',
    fault: 'malformed JSON',
    arm: inject('credentialsAuthorize', malformed('{"SAD": ')),
    errorCode: 'CSC_BAD_RESPONSE',
    exitCode: 6,
    message: /credentials\/authorize/,
    tries: 1,
  },
  {
    call: 'credentialsAuthorize',
    command: 'sign (seal)',
    fault: 'wrong field types',
    arm: inject('credentialsAuthorize', malformed('{"SAD": 42, "expiresIn": "later"}')),
    errorCode: 'CSC_BAD_RESPONSE',
    exitCode: 6,
    message: /credentials\/authorize has no SAD/,
    tries: 1,
  },
  // credentials/extendTransaction (v1.0.4 §11.7; never retried: it spends the SAD it extends), with SADs of 5 s.
  ...standardCases('extendTransaction', 'sign (seal)', false, /signing service/).map((c) => withShortSads(c)),
  withShortSads({
    call: 'extendTransaction',
    command: 'sign (seal)',
    fault: 'malformed JSON',
    arm: inject('extendTransaction', malformed('{"SAD": ')),
    errorCode: 'CSC_BAD_RESPONSE',
    exitCode: 6,
    message: /credentials\/extendTransaction is not a JSON object/,
    tries: 1,
  }),
  withShortSads({
    call: 'extendTransaction',
    command: 'sign (seal)',
    fault: 'wrong field types',
    arm: inject('extendTransaction', malformed('{"SAD": 42, "expiresIn": "later"}')),
    errorCode: 'CSC_BAD_RESPONSE',
    exitCode: 6,
    message: /credentials\/extendTransaction has no SAD/,
    tries: 1,
  }),
  // A service token refused (401 invalid_token) is renewed once; refused again, the run stops.
  {
    call: 'signHash',
    command: 'sign (seal)',
    fault: 'HTTP 401 invalid_token, twice',
    arm: inject(
      'signHash',
      {
        kind: 'status',
        status: 401,
        body: JSON.stringify({ error: 'invalid_token', error_description: 'The access token was revoked.' }),
      },
      2,
    ),
    errorCode: 'CSC_METHOD_REFUSED',
    exitCode: 6,
    message: /refused signHash to this client even with the service token it had just issued/,
    tries: 2,
  },

  // S3 PUT, through a fault proxy: the SDK's retries follow DESIGN §4 (PutObject of a whole object is
  // idempotent): 3 tries on reset, time-out, 429, 502 and 503; a 500 (the malformed XML comes with one) once.
  ...(['connection reset', 'time-out', 'HTTP 429', 'HTTP 500', 'HTTP 502', 'HTTP 503', 'malformed XML'] as const).map(
    (fault): FaultCase => ({
      call: 's3Put',
      command: 'upload',
      fault,
      arm: () => {
        const armed: Fault =
          fault === 'connection reset'
            ? { kind: 'reset' }
            : fault === 'time-out'
              ? { kind: 'delay', ms: DELAY_MS }
              : fault === 'malformed XML'
                ? { kind: 'malformed', body: '<Error><Code>', contentType: 'application/xml' }
                : status(Number(fault.slice(5)));
        for (let index = 0; index < 3; index++) s3Proxy.faults.push(armed);
      },
      errorCode: fault === 'HTTP 429' ? 'HTTP_RATE_LIMITED' : 'STORAGE_UNAVAILABLE',
      exitCode: 5,
      message:
        fault === 'time-out'
          ? /storage server.*\(no answer in time\)/
          : fault === 'HTTP 429'
            ? /storage server is rate limiting the upload/
            : /storage server is unavailable/,
      tries: fault === 'HTTP 500' || fault === 'malformed XML' ? 1 : 3,
      shortTimeout: fault === 'time-out',
    }),
  ),

  // S3 UploadPart (part 2 of a 20 MiB upload), through the sandbox gateway's own fault injection (not
  // the proxy: it forwards the SDK's `Connection: close` and then reuses the socket): the part's own
  // error is reported (no AbortMultipartUpload, which the session policy does not allow).
  ...([429, 500, 503] as const).map((code): FaultCase => ({
    call: 's3Part',
    command: 'upload (multipart)',
    fault: `HTTP ${code}`,
    arm: () => {
      storageControl(t.sandbox).s3.url = realS3Url;
      inject('s3Part', status(code, { 'retry-after': '0' }), 3)();
    },
    errorCode: code === 429 ? 'HTTP_RATE_LIMITED' : 'STORAGE_UNAVAILABLE',
    exitCode: 5,
    message: new RegExp(
      `The storage server ${code === 429 ? 'is rate limiting' : 'is unavailable for'} the upload of case-\\d+/contract\\.pdf in bucket esign-\\w+ \\(HTTP ${code}\\): Injected HTTP ${code} \\(sandbox fault\\)\\. Try again in a moment\\.$`,
    ),
    tries: code === 500 ? 1 : 3,
  })),
];

describe('fault matrix: every remote call, every fault', () => {
  it.each(CASES.map((c) => [`${c.call} × ${c.fault}`, c] as const))('%s', async (_name, c) => {
    await runCase(c);
  });
});

// ---- esign trust update: the LOTL and the national list it points to ------------------------

/**
 * The trusted lists as the sandbox serves them, and a cache holding both, verified: each case starts
 * from a copy of it. The copy is made by `trust import`, so it has no ETags: every GET of a case is
 * unconditional and meets the whole body (a 304 would leave a truncated body or a size limit untried).
 */
const trustLists = {
  cache: '',
  lotl: '',
  national: '',
  status: new Map<string, TrustListStatus>(),
  /** The ZZ list's signing certificate, as `esign trust add --signer` takes it. */
  zzSigner: '',
};

async function seedTrustCache(): Promise<void> {
  const [lotl, national] = await Promise.all(
    ['eu-lotl.xml', 'ZZ.xml'].map(async (name) => (await fetch(`${t.sandbox.urls.base}/trust/${name}`)).text()),
  );
  Object.assign(trustLists, { cache: join(work.dir, 'trust-cache'), lotl, national });
  await writeFile(join(work.dir, 'eu-lotl.xml'), lotl!);
  await writeFile(join(work.dir, 'ZZ.xml'), national!);
  const seeded = await runCli(['trust', 'import', join(work.dir, 'eu-lotl.xml'), join(work.dir, 'ZZ.xml')], {
    env: { ...t.env, ESIGN_CACHE_DIR: trustLists.cache },
  });
  expect(seeded.code, seeded.stderr).toBe(0);
  trustLists.status = await trustStatus({ ...t.env, ESIGN_CACHE_DIR: trustLists.cache });
  const operator = JSON.parse(await readFile(join(t.dataDir, 'trust', 'zz-operator.json'), 'utf8')) as {
    certificate: string;
  };
  trustLists.zzSigner = join(work.dir, 'zz-operator.pem');
  await writeFile(trustLists.zzSigner, derToPem(Buffer.from(operator.certificate, 'base64'), 'CERTIFICATE'));
}

/** The name `esign trust add` gives the ZZ list in the fault rows of that command. */
const ADDED_LIST = 'acme-tsl';

interface TrustListOutcome {
  territory: string;
  state: 'updated' | 'unchanged' | 'failed';
  reason?: string;
  code?: string;
}
interface TrustListStatus {
  territory: string;
  state: string;
  verifiedAt: string | null;
  sequenceNumber: number | null;
  lastFailure: { reason: string } | null;
}

async function trustStatus(env: Record<string, string>): Promise<Map<string, TrustListStatus>> {
  const status = await runCli(['--json', 'trust', 'status'], { env });
  expect(status.code, status.stderr).toBe(0);
  return new Map(status.json<{ lists: TrustListStatus[] }>().lists.map((list) => [list.territory, list]));
}

/** Temp files (hidden, beside their target) under `dir`. */
async function tempFilesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.name.startsWith('.')).map((entry) => entry.name);
}

/**
 * One `esign trust update` against a fault on the LOTL or the national list, from a cache where both
 * were verified before. Beyond what every case asserts: the failing list is named in one line (the
 * only line on stderr), the copy verified before is still there, unchanged, with the failure noted
 * (the table's "input untouched"), and the other list was still fetched and verified. For `esign
 * trust add` of the national list under a name of its own: the same line, nothing kept under that
 * name, and the lists cached before untouched.
 */
async function runTrustCase(c: FaultCase): Promise<void> {
  const dir = await tempDir('esign-fault-trust-');
  const cache = join(dir, 'cache');
  await cp(trustLists.cache, cache, { recursive: true });
  const env: Record<string, string> = {
    ...t.env,
    ESIGN_CONFIG_DIR: join(dir, '.config'),
    ESIGN_CACHE_DIR: cache,
    // Outside the time-out cases, a time-out far beyond runCli's 60 s: a fault that left its timer
    // running (a body cut short once did) keeps the CLI alive until it is killed, and the case fails
    // on its exit code, with no bound on how long a busy runner takes.
    ESIGN_HTTP_TIMEOUT_MS: String(c.shortTimeout ? TIMEOUT_MS : 600_000),
  };
  const before = trustLists.status;
  const adding = c.command === 'trust add';
  const territory = adding ? ADDED_LIST : c.call === 'lotl' ? 'EU' : 'ZZ';
  await c.arm(env);
  const route = ROUTES[c.call];
  const logStart = t.sandbox.requestLog.length;
  const args = adding
    ? ['--json', 'trust', 'add', ADDED_LIST, `${t.sandbox.urls.base}/trust/ZZ.xml`, '--signer', trustLists.zzSigner]
    : ['--json', 'trust', 'update'];
  const started = Date.now();
  const result = await runCli(args, { env, timeoutMs: 60_000 });
  const elapsedMs = Date.now() - started;
  if (c.shortTimeout) await new Promise((resolve) => setTimeout(resolve, DELAY_MS - TIMEOUT_MS + 200));
  const tries = t.sandbox.requestLog.slice(logStart).filter((id) => id === route).length;
  const lists = result.json<{ lists: TrustListOutcome[] }>().lists;
  const failed = lists.find((list) => list.territory === territory);
  // The sandbox profile's banner aside, stderr is the failing list's line.
  const stderr = result.stderr
    .trim()
    .split('\n')
    .filter((line) => !line.startsWith('esign: sandbox profile'));
  const message = stderr.at(-1) ?? '';
  const after = await trustStatus(env);
  const kept = after.get(territory);
  const sameAsBefore = (name: string) =>
    after.get(name)?.state === 'verified' &&
    after.get(name)?.verifiedAt === before.get(name)?.verifiedAt &&
    after.get(name)?.sequenceNumber === before.get(name)?.sequenceNumber;
  const untouched = adding
    ? kept?.state !== 'verified' && sameAsBefore('EU') && sameAsBefore('ZZ')
    : sameAsBefore(territory) && kept?.lastFailure?.reason === failed?.reason;
  const [minTries, maxTries] = typeof c.tries === 'number' ? [c.tries, c.tries] : c.tries;
  const row: MatrixRow = {
    call: c.call,
    route,
    fault: c.fault,
    command: `esign ${args.join(' ')}`,
    exitCode: result.code,
    errorCode: failed?.code,
    // The lists' sizes follow the port in their URLs: the table keeps what does not change run to run.
    message: message.replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:PORT').replace(/\(\d+ of \d+ bytes\)/, '(N of M bytes)'),
    tries,
    maxTries,
    inputUntouched: untouched,
    leftovers: await tempFilesUnder(cache),
    pass: false,
  };
  matrix.push(row);
  expect({ exit: result.code, errorCode: failed?.code }, result.stderr).toEqual({
    exit: c.exitCode,
    errorCode: typeof c.errorCode === 'string' ? c.errorCode : expect.stringMatching(c.errorCode),
  });
  expect(stderr).toHaveLength(1);
  expect(message).toBe(`error: ${failed?.reason}`);
  expect(message).toMatch(new RegExp(`^error: ${territory}: `));
  expect(message).toMatch(c.message);
  expect(tries).toBeGreaterThanOrEqual(minTries);
  expect(tries).toBeLessThanOrEqual(maxTries);
  // The other list was still fetched and checked (against the LOTL verified before, when the LOTL failed).
  expect(lists.map((list) => list.territory)).toEqual(adding ? [ADDED_LIST] : ['EU', 'ZZ']);
  expect(lists.filter((list) => list.state === 'failed').map((list) => list.territory)).toEqual([territory]);
  expect(untouched, JSON.stringify({ before: before.get(territory), after: kept })).toBe(true);
  expect(row.leftovers).toEqual([]);
  if (c.minMs !== undefined) expect(elapsedMs).toBeGreaterThanOrEqual(c.minMs);
  row.pass = true;
}

/** The faults of a list's GET: each transport and status fault, and the bodies a list server can send. */
function trustListCases(
  call: 'lotl' | 'nationalList',
  command: 'trust update' | 'trust add' = 'trust update',
): FaultCase[] {
  const territory = command === 'trust add' ? ADDED_LIST : call === 'lotl' ? 'EU' : 'ZZ';
  // A national list failing is a partial update (10); the LOTL failing, or the one list added, is the run's failure.
  const exitFor = (exitCode: number) => (call === 'lotl' || command === 'trust add' ? exitCode : 10);
  const file = call === 'lotl' ? 'eu-lotl\\.xml' : 'ZZ\\.xml';
  const unavailable = new RegExp(`${file} is (unavailable|rate limited) \\(HTTP (429|5\\d\\d)\\); try again later$`);
  const listBytes = () => (call === 'lotl' ? trustLists.lotl : trustLists.national);
  const base: Pick<FaultCase, 'call' | 'command'> = { call, command };
  return [
    ...standardCases(call, command, true, unavailable).map((c): FaultCase => ({
      ...c,
      exitCode: exitFor(c.exitCode),
      message:
        c.fault === 'connection reset'
          ? new RegExp(`Could not reach the trusted list server of ${territory}`)
          : c.message,
    })),
    {
      ...base,
      fault: 'HTTP 429 without Retry-After',
      arm: inject(call, status(429), 3),
      errorCode: 'HTTP_RATE_LIMITED',
      exitCode: exitFor(5),
      message: unavailable,
      tries: 3,
    },
    {
      ...base,
      // Retry-After: 1 is waited out before each of the two tries again.
      fault: 'HTTP 503 with Retry-After: 1',
      arm: inject(call, status(503, { 'retry-after': '1' }), 3),
      errorCode: 'HTTP_SERVER_ERROR',
      exitCode: exitFor(5),
      message: unavailable,
      tries: 3,
      minMs: 2_000,
    },
    {
      ...base,
      fault: 'HTTP 404',
      arm: inject(call, status(404), 3),
      errorCode: 'HTTP_CLIENT_ERROR',
      exitCode: exitFor(6),
      message: new RegExp(`${file} answered HTTP 404$`),
      tries: 1,
    },
    {
      ...base,
      fault: 'redirect loop',
      arm: () =>
        t.sandbox.faults.inject({
          route: ROUTES[call],
          fault: status(302, {
            location: `${t.sandbox.urls.base}/trust/${call === 'lotl' ? 'eu-lotl.xml' : 'ZZ.xml'}`,
          }),
          times: 10,
        }),
      errorCode: 'HTTP_BAD_RESPONSE',
      exitCode: exitFor(6),
      message: /too many redirects/,
      tries: 6,
    },
    {
      ...base,
      fault: 'connection closed mid-body',
      arm: inject(call, { kind: 'truncated' }, 3),
      errorCode: 'HTTP_UNREACHABLE',
      exitCode: exitFor(5),
      message: new RegExp(
        `The connection to the trusted list server of ${territory} at \\S+ closed before its whole answer came \\(\\d+ of \\d+ bytes\\)\\.$`,
      ),
      tries: 3,
    },
    {
      ...base,
      fault: 'body cut short (HTTP 200)',
      arm: () => inject(call, malformed(listBytes().slice(0, listBytes().length / 2), 'application/xml'))(),
      errorCode: 'TRUST_LIST_MALFORMED',
      exitCode: exitFor(7),
      message: /: not well-formed XML: [^\t[]+$/,
      tries: 1,
    },
    {
      ...base,
      fault: 'not XML (an HTML page)',
      arm: inject(call, malformed('<!doctype html><html><body>Maintenance</body></html>', 'text/html')),
      errorCode: 'TRUST_LIST_MALFORMED',
      exitCode: exitFor(7),
      message: /answered a web page \(text\/html\), not a list$/,
      tries: 1,
    },
    {
      ...base,
      fault: 'over the size limit',
      arm: inject(call, malformed(`<x>${' '.repeat(MAX_TRUSTED_LIST_BYTES)}</x>`, 'application/xml')),
      errorCode: 'HTTP_BAD_RESPONSE',
      exitCode: exitFor(6),
      message: new RegExp(`sent more than ${MAX_TRUSTED_LIST_BYTES} bytes`),
      tries: 1,
    },
    {
      ...base,
      fault: "another list's bytes",
      arm: () => inject(call, malformed(call === 'lotl' ? trustLists.national : trustLists.lotl, 'application/xml'))(),
      errorCode: /^TRUST_LIST_(SIGNER_UNTRUSTED|WRONG_TERRITORY)$/,
      exitCode: exitFor(9),
      message: new RegExp(`^error: ${territory}: `),
      tries: 1,
    },
  ];
}

const TRUST_CASES: FaultCase[] = [...trustListCases('lotl'), ...trustListCases('nationalList')];
const TRUST_ADD_CASES: FaultCase[] = trustListCases('nationalList', 'trust add');

describe('fault matrix: esign trust update, every fault on each list', () => {
  it.each(TRUST_CASES.map((c) => [`${c.call} × ${c.fault}`, c] as const))('%s', async (_name, c) => {
    await runCase(c);
  });
});

describe('fault matrix: esign trust add, every fault on the list added', () => {
  it.each(TRUST_ADD_CASES.map((c) => [`${c.call} (trust add) × ${c.fault}`, c] as const))('%s', async (_name, c) => {
    await runCase(c);
  });
});

// ---- esign verify: the revocation data a file does not hold, fetched --------------------------

/**
 * `name` holding `bytes()`, signed by the sandbox once, on first use (before that case arms its
 * fault; untimed): the bytes of NAME-signed.EXT, which each case then writes a copy of.
 */
function signedOnce(name: string, bytes: () => string | Uint8Array, options: string[]): () => Promise<Uint8Array> {
  let signed: Promise<Uint8Array> | undefined;
  return () =>
    (signed ??= (async () => {
      const dir = await tempDir('esign-fault-signed-');
      const input = join(dir, name);
      await writeFile(input, bytes());
      const result = await runCli(['--auto-approve', '--quiet', 'sign', ...options, input], {
        env: { ...t.env, ESIGN_CONFIG_DIR: join(dir, '.config') },
      });
      expect(result.code, result.stderr).toBe(0);
      const extension = extname(name);
      return new Uint8Array(await readFile(join(dir, `${basename(name, extension)}-signed${extension}`)));
    })());
}

/** A B-B PDF the sandbox signed, without revocation data: verify asks the OCSP responder and the CRLs. */
const signedWithoutRevocation = signedOnce('contract.pdf', () => pdfBytes, ['--level', 'B-B']);

/**
 * One `esign verify --trust ROOT` of a signed PDF without revocation data against a fault on a
 * revocation source: the status cannot be established, so the signature is INDETERMINATE/TRY_LATER
 * (VERIFY_REVOCATION_UNKNOWN, exit 9) with one line on stderr naming the URL; under `--revocation
 * soft-fail` it passes (exit 0) with a warning naming it. No crash, the input untouched, nothing written.
 */
async function runVerifyCase(c: FaultCase): Promise<void> {
  const dir = await tempDir('esign-fault-verify-');
  const docs = join(dir, 'docs');
  await mkdir(docs);
  const input = join(docs, 'contract-signed.pdf');
  await writeFile(input, await signedWithoutRevocation());
  const before = sha256(await readFile(input));
  const root = join(dir, 'root.pem');
  await writeFile(root, derToPem(t.sandbox.pki.root.certificate, 'CERTIFICATE'));
  const env: Record<string, string> = {
    ...t.env,
    ESIGN_CONFIG_DIR: join(dir, '.config'),
    ...(c.shortTimeout ? { ESIGN_HTTP_TIMEOUT_MS: String(TIMEOUT_MS) } : {}),
  };
  await c.arm(env);
  const route = ROUTES[c.call];
  const logStart = t.sandbox.requestLog.length;
  const args = [
    '--json',
    'verify',
    ...(c.command === 'verify (soft-fail)' ? ['--revocation', 'soft-fail'] : []),
    '--trust',
    root,
    input,
  ];
  const result = await runCli(args, { env, timeoutMs: 60_000 });
  if (c.shortTimeout) await new Promise((resolve) => setTimeout(resolve, DELAY_MS - TIMEOUT_MS + 200));
  const tries = t.sandbox.requestLog.slice(logStart).filter((id) => id === route).length;
  const report = result.json<VerificationReport>();
  const signature = report.signatures[0];
  const stderr = result.stderr
    .trim()
    .split('\n')
    .filter((line) => line && !line.startsWith('esign: sandbox profile'));
  // Soft-fail: the line is the signature's warning; hard: the one line on stderr.
  const message =
    c.command === 'verify (soft-fail)'
      ? `esign: ${signature?.warnings.find((w) => w.includes('soft-fail')) ?? ''}`
      : (stderr.at(-1) ?? '');
  const leftovers = (await readdir(docs)).filter((name) => name !== 'contract-signed.pdf');
  const untouched = sha256(await readFile(input)) === before;
  const [minTries, maxTries] = typeof c.tries === 'number' ? [c.tries, c.tries] : c.tries;
  const row: MatrixRow = {
    call: c.call,
    route,
    fault: c.fault,
    command: `esign ${args.filter((arg) => !arg.startsWith('/')).join(' ')}`,
    exitCode: result.code,
    errorCode: report.code ?? undefined,
    message: message.replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:PORT'),
    tries,
    maxTries,
    inputUntouched: untouched,
    leftovers,
    pass: false,
  };
  matrix.push(row);
  expect({ exit: result.code, errorCode: report.code ?? '' }, result.stderr).toEqual({
    exit: c.exitCode,
    errorCode: typeof c.errorCode === 'string' ? c.errorCode : expect.stringMatching(c.errorCode),
  });
  if (c.command === 'verify') {
    expect(stderr).toHaveLength(1);
    expect(signature).toMatchObject({ indication: 'INDETERMINATE', subIndication: 'TRY_LATER' });
  } else expect(signature).toMatchObject({ indication: 'TOTAL-PASSED' });
  expect(message).toMatch(c.message);
  expect(tries).toBeGreaterThanOrEqual(minTries);
  expect(tries).toBeLessThanOrEqual(maxTries);
  expect(untouched).toBe(true);
  expect(leftovers).toEqual([]);
  row.pass = true;
}

/** Each fault on the signer's OCSP responder (the issuing CA's CRL faulted alike) and on the root's CRL. */
/**
 * The faults of a revocation source (an OCSP responder, a CRL distribution point): whether the
 * HTTP client tries it again, and what the message says of it.
 */
const REVOCATION_FAULTS: Array<[name: string, fault: Fault, retried: boolean, said: string]> = [
  ['connection reset', { kind: 'reset' }, true, 'Could not reach'],
  ['time-out', { kind: 'delay', ms: DELAY_MS }, true, 'did not answer within'],
  ['HTTP 500', status(500), false, 'answered HTTP 500'],
  ['HTTP 503', status(503, { 'retry-after': '0' }), true, 'answered HTTP 503'],
  ['garbage (200, the right type)', malformed('not DER at all', 'application/ocsp-response'), false, 'cannot be used'],
  [
    'wrong content type (200, an HTML page)',
    malformed('<html>maintenance</html>', 'text/html'),
    false,
    'cannot be used',
  ],
];

/** The signer's OCSP responder faulted, and the issuing CA's CRL (its fallback) alike. */
const ocspAndItsCrl = (fault: Fault) => () => {
  inject('ocsp', fault, 3)();
  t.sandbox.faults.inject({ route: 'pki GET /issuing.crl', fault, times: 3 });
};

function verifyCases(): FaultCase[] {
  const cases: FaultCase[] = [];
  for (const [name, fault, retried, said] of REVOCATION_FAULTS) {
    const tries = retried ? 3 : 1;
    cases.push(
      {
        call: 'ocsp',
        command: 'verify',
        fault: name,
        arm: ocspAndItsCrl(fault),
        errorCode: 'VERIFY_REVOCATION_UNKNOWN',
        exitCode: 9,
        message: new RegExp(
          `^esign: VERIFY_REVOCATION_UNKNOWN: #1 revocation-unknown \\(of 1\\): signer: the revocation status of .*: .*OCSP (responder|response).*127\\.0\\.0\\.1:\\d+/pki/ocsp.*${said}.*; .*CRL.*127\\.0\\.0\\.1:\\d+/pki/issuing\\.crl.*\\.$`,
        ),
        tries,
        shortTimeout: name === 'time-out',
      },
      {
        call: 'rootCrl',
        command: 'verify',
        fault: name,
        arm: inject('rootCrl', fault, 3),
        errorCode: 'VERIFY_REVOCATION_UNKNOWN',
        exitCode: 9,
        message: new RegExp(
          `^esign: VERIFY_REVOCATION_UNKNOWN: #1 revocation-unknown \\(of 1\\): signer: the revocation status of .*Issuing.*: .*CRL.*127\\.0\\.0\\.1:\\d+/pki/root\\.crl.*${said}.*\\.$`,
        ),
        tries,
        shortTimeout: name === 'time-out',
      },
    );
  }
  // --revocation soft-fail: the responder and the CRL down, the signature passes and says so.
  cases.push({
    call: 'ocsp',
    command: 'verify (soft-fail)',
    fault: 'connection reset (--revocation soft-fail)',
    arm: ocspAndItsCrl({ kind: 'reset' }),
    errorCode: '',
    exitCode: 0,
    message:
      /^esign: signer: the revocation status of .*127\.0\.0\.1:\d+\/pki\/ocsp.*; passed under --revocation soft-fail \(not EN 319 102-1\)$/,
    tries: 3,
  });
  return cases;
}
const VERIFY_CASES = verifyCases();

describe('fault matrix: esign verify, every fault on the revocation data it fetches', () => {
  it.each(VERIFY_CASES.map((c) => [`${c.call} (${c.command}) × ${c.fault}`, c] as const))('%s', async (_name, c) => {
    await runCase(c);
  });
});

// ---- esign extend of XAdES: the revocation data and the archive timestamp it adds ------------

/**
 * `esign --json extend --level B-LTA --in-place` of an enveloped XAdES B-T (signed once, untimed,
 * before any fault is armed; each case writes a copy): the signer's OCSP responder with the issuing
 * CA's CRL (its fallback) faulted alike, the root's CRL (the issuing CA's and the TSA's status), and
 * the TSA asked for the archive timestamp. Each fails in one line with its documented exit code, the
 * XML file byte for byte as it was (an in-place extension goes through a temp file) and no temp file
 * left beside it.
 */
function extendCases(): FaultCase[] {
  const command = 'extend (xades)';
  const label = (c: FaultCase): FaultCase => ({ ...c, fault: `${c.fault} (esign extend)` });
  const revocation = REVOCATION_FAULTS.flatMap(([name, fault, retried, said]): FaultCase[] => {
    const tries = retried ? 3 : 1;
    // A source that cannot be had is unavailable (exit 5); one that answers garbage, a bad response (exit 6).
    const garbage = fault.kind === 'malformed';
    const exitCode = garbage ? 6 : 5;
    const errorCode = garbage ? 'REVOCATION_BAD_RESPONSE' : 'REVOCATION_UNAVAILABLE';
    return [
      {
        call: 'ocsp',
        command,
        fault: name,
        arm: ocspAndItsCrl(fault),
        errorCode,
        exitCode,
        message: new RegExp(
          `^esign: .*OCSP (responder|response).*127\\.0\\.0\\.1:\\d+/pki/ocsp.*${said}.*, and its CRL fallback failed too: .*127\\.0\\.0\\.1:\\d+/pki/issuing\\.crl.*${said}`,
        ),
        tries,
        shortTimeout: name === 'time-out',
      },
      {
        call: 'rootCrl',
        command,
        fault: name,
        arm: inject('rootCrl', fault, 3),
        errorCode,
        exitCode,
        message: new RegExp(`^esign: .*CRL.*127\\.0\\.0\\.1:\\d+/pki/root\\.crl.*${said}`),
        tries,
        shortTimeout: name === 'time-out',
      },
    ];
  });
  return [...revocation, ...tsaCases(command)].map(label);
}
const EXTEND_CASES = extendCases();

describe('fault matrix: esign extend of XAdES, every fault on the revocation data and the archive timestamp', () => {
  it.each(EXTEND_CASES.map((c) => [`${c.call} × ${c.fault}`, c] as const))('%s', async (_name, c) => {
    await runCase(c);
  });
});

/** An enveloped XAdES B-T the sandbox signed: `esign extend` fetches its revocation data and stamps it. */
const signedXades = signedOnce(
  'contract.xml',
  () => '<?xml version="1.0" encoding="UTF-8"?>\n<contract><party>Acme</party></contract>\n',
  ['--format', 'xades', '--level', 'B-T'],
);

const REFUSED_CASES = [
  [
    'signing',
    'signing',
    'credentials list',
    /Could not reach the signing service at (http:\/\/)?127\.0\.0\.1:\d+ \(ECONNREFUSED\)/,
  ],
  ['identity', 'identity', 'login', /Could not reach the identity service/],
  [
    'userinfo',
    'identityLegacy',
    'login',
    /Could not reach the identity service at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/,
  ],
  ['tsa', 'tsaEndpoint', 'sign B-T', /Could not reach the timestamp authority/],
  ['storage credentials', 'storage', 'upload', /Could not reach the storage authorization service/],
  ['s3', 's3', 'upload', /storage server/],
] as const;

describe('connection refused (a service URL on a closed port)', () => {
  it.each(REFUSED_CASES)('%s', async (name, key, command, message) => {
    const closed = await closedPort();
    // A call the unreachable host would have had (the signing service's info comes first now, but
    // other runs on the shared sandbox ask it too, so the count is of a route only this case reaches).
    const firstCall: Record<typeof name, CallName> = {
      signing: 'authorize',
      identity: 'discovery',
      userinfo: 'userinfo',
      tsa: 'tsa',
      'storage credentials': 'storageCredentials',
      s3: 's3Put',
    };
    const call = firstCall[name];
    await runCase({
      call,
      command,
      fault: 'connection refused',
      arm: async (env) => {
        if (key === 's3') {
          storageControl(t.sandbox).s3.url = `http://127.0.0.1:${closed}`;
          return;
        }
        // A second sandbox data dir whose runtime.json names a closed port for one service.
        const dataDir = join(env['ESIGN_CONFIG_DIR']!, '..', 'sandbox-refused');
        await mkdir(dataDir, { recursive: true });
        const runtime = JSON.parse(await readFile(join(t.dataDir, 'runtime.json'), 'utf8')) as {
          urls: Record<string, string>;
        };
        runtime.urls[key] =
          `http://127.0.0.1:${closed}${key === 'tsaEndpoint' ? '/tsa/tss03' : key === 'identityLegacy' ? '/identity-legacy' : `/${key}`}`;
        await writeFile(join(dataDir, 'runtime.json'), JSON.stringify(runtime));
        env['ESIGN_SANDBOX_DIR'] = dataDir;
      },
      errorCode: key === 's3' ? 'STORAGE_UNAVAILABLE' : 'HTTP_UNREACHABLE',
      exitCode: 5,
      message,
      tries: [0, 0],
    }).finally(() => {
      storageControl(t.sandbox).s3.url = s3Proxy.url;
    });
  });
});

async function postJson(url: string, body: unknown): Promise<void> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
}

function fileUrlPath(name: string): string {
  return new URL(`../helpers/${name}`, import.meta.url).pathname;
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
