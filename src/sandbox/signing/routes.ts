/**
 * HTTP routes of the sandbox signing service under `/signing` (seed: remote signing service):
 * `/oauth2/authorize` with its sign-in and approval pages, `/oauth2/token`, and `/csc/v1/*`.
 *
 * Errors of `/csc/v1/*` are HTTP statuses with JSON `{error, error_description}`; the codes are
 * `invalid_request`, `invalid_token` (401), `unknown_credential`, `credential_disabled`,
 * `invalid_sad` and `expired_sad`. Authorization errors go back on the redirect, except for an
 * unknown client or redirect URI, which get an error page and are never redirected.
 */
import { DIGEST_OID, digestOfLength } from '../../core/cms/algorithms.js';
import type { SandboxDeps } from '../deps.js';
import {
  basicCredentials,
  bearerToken,
  formBody,
  html,
  json,
  jsonBody,
  redirect,
  type Router,
  type SandboxRequest,
  type SandboxResponse,
} from '../http.js';
import { pickLang } from '../pages.js';
import { consentPage, errorPage, expiredPage, signInPage } from './pages.js';
import {
  SANDBOX_USERS,
  SigningService,
  SigningServiceError,
  decodeStandardBase64,
  type AuthorizationRequest,
  type CredentialInfoOptionsV2,
  type RegisteredClient,
  type ServiceTokenHolder,
} from './service.js';
import { SealAuthority } from './seals.js';
import { SANDBOX_ORGANIZATION, SANDBOX_SEAL } from '../deps.js';
import { otpOutboxPage } from './pages.js';

export const V1_SPECS = '1.0.4.0';
export const V2_SPECS = '2.0.0.2';
export const V2_METHODS = [
  'auth/login',
  'credentials/list',
  'credentials/info',
  'credentials/authorize',
  'credentials/sendOTP',
  'signatures/signHash',
] as const;
/** v1.0.4 also has credentials/extendTransaction (§11.7), which v2 dropped. */
export const V1_METHODS = [...V2_METHODS, 'credentials/extendTransaction'] as const;

/** The redirect URI registered for the CLI; any loopback port is accepted with it (RFC 8252 §7.3). */
export const REGISTERED_REDIRECT_URI = 'http://127.0.0.1:8765/callback';
const DEFAULT_USER = 'alice';
const TOKEN_HEADERS = { 'cache-control': 'no-store', pragma: 'no-cache' };

export function mountSigning(router: Router, deps: SandboxDeps): void {
  const service = signingService(deps, 1);
  mountOAuth(router, deps, service);
  mountCscV1(router, deps, service);
  mountCredentialAuthorization(router, service, 1);
}

/** One store of PIN counters, TOTP steps and sent OTPs per sandbox: both dialects serve the same seals. */
const sealAuthorities = new WeakMap<SandboxDeps, SealAuthority>();

/** The service for one dialect: the same test users, credentials and keys, its own tokens. */
export function signingService(deps: SandboxDeps, version: 1 | 2): SigningService {
  const clients: RegisteredClient[] = [
    {
      clientId: deps.secrets.clientId,
      clientSecret: deps.secrets.clientSecret,
      redirectUris: [REGISTERED_REDIRECT_URI],
    },
    {
      clientId: SANDBOX_SEAL.clientId,
      clientSecret: SANDBOX_SEAL.clientSecret,
      redirectUris: [],
      organization: SANDBOX_ORGANIZATION,
    },
  ];
  let seals = sealAuthorities.get(deps);
  if (!seals) sealAuthorities.set(deps, (seals = new SealAuthority(deps.log)));
  const loginUsers = [
    { username: SANDBOX_SEAL.username, password: SANDBOX_SEAL.password, account: SANDBOX_ORGANIZATION },
  ];
  return new SigningService(deps.pki, deps.clock, clients, version, seals, loginUsers, deps.quirks);
}

/**
 * `credentials/authorize`, `credentials/sendOTP` and `auth/login` (v1.0.4 §11.2, §11.6, §11.8; v2
 * the same in its shapes: `hashes` + `hashAlgorithmOID`, the PIN and OTP as `authData`), and the
 * page where the sandbox shows the OTPs it "sent".
 */
export function mountCredentialAuthorization(router: Router, service: SigningService, version: 1 | 2): void {
  const base = `/csc/v${version}`;
  router.post(`${base}/auth/login`, (request) =>
    cscCall(request, (body) => {
      const refreshToken = optionalString(body['refresh_token'], 'refresh_token');
      const rememberMe = body['rememberMe'] ?? false;
      if (typeof rememberMe !== 'boolean')
        throw new SigningServiceError(400, 'invalid_request', 'Invalid parameter rememberMe');
      optionalString(body['clientData'], 'clientData');
      const header = request.headers['authorization'];
      const basic = basicCredentials(request);
      if (refreshToken === undefined && (!header || !basic))
        throw new SigningServiceError(401, 'invalid_request', 'Malformed authentication parameter.');
      if (header && !basic) throw new SigningServiceError(400, 'invalid_request', 'Malformed username-password.');
      return service.login(basic ?? undefined, { ...(refreshToken === undefined ? {} : { refreshToken }), rememberMe });
    }),
  );

  router.post(`${base}/credentials/authorize`, (request) =>
    csc(service, request, (body, holder) => {
      const credentialID = v1OrV2String(body['credentialID'], 'credentialID', version);
      const numSignatures = body['numSignatures'];
      if (typeof numSignatures !== 'number' || !Number.isInteger(numSignatures))
        throw new SigningServiceError(
          400,
          'invalid_request',
          'Missing (or invalid type) integer parameter numSignatures',
        );
      const hashField = version === 2 ? 'hashes' : 'hash';
      const hashes = body[hashField] === undefined ? undefined : standardBase64Hashes(body[hashField]);
      if (version === 2 && hashes !== undefined && !hashesOfOneDigest(hashes, body['hashAlgorithmOID']))
        throw new SigningServiceError(400, 'invalid_request', 'Invalid parameter hashAlgorithmOID');
      const factors =
        version === 2
          ? authData(body['authData'])
          : { pin: optionalString(body['PIN'], 'PIN'), otp: optionalString(body['OTP'], 'OTP') };
      optionalString(body['description'], 'description');
      optionalString(body['clientData'], 'clientData');
      return service.authorizeCredential(holder, {
        credentialID,
        numSignatures,
        ...(hashes === undefined ? {} : { hashes }),
        ...(factors.pin === undefined ? {} : { pin: factors.pin }),
        ...(factors.otp === undefined ? {} : { otp: factors.otp }),
      });
    }),
  );

  router.post(`${base}/credentials/sendOTP`, (request) => {
    const answer = csc(service, request, (body, holder) => {
      service.sendOtp(holder, v1OrV2String(body['credentialID'], 'credentialID', version));
      optionalString(body['clientData'], 'clientData');
      return {};
    });
    return answer.status === 200 ? { status: 204, headers: {}, body: '' } : answer;
  });

  router.get('/otp', () => html(200, otpOutboxPage(service.seals.outbox)));
}

/** Whether every hash is a value of the digest `oid` names. */
function hashesOfOneDigest(hashes: Uint8Array[], oid: unknown): boolean {
  return hashes.every((hash) => {
    const digest = digestOfLength(hash.length);
    return digest !== undefined && DIGEST_OID[digest] === oid;
  });
}

/** v2 `authData`: `[{id, value}]`; the PIN and the OTP by their ids. */
function authData(value: unknown): { pin?: string; otp?: string } {
  if (value === undefined) return {};
  if (!Array.isArray(value))
    throw new SigningServiceError(400, 'invalid_request', 'Missing (or invalid type) array parameter authData');
  const found: { pin?: string; otp?: string } = {};
  for (const entry of value) {
    const item = typeof entry === 'object' && entry !== null ? (entry as Record<string, unknown>) : {};
    if (typeof item['id'] !== 'string' || typeof item['value'] !== 'string')
      throw new SigningServiceError(400, 'invalid_request', 'Invalid parameter authData');
    if (item['id'] === 'PIN') found.pin = item['value'];
    if (item['id'] === 'OTP') found.otp = item['value'];
  }
  return found;
}

function v1OrV2String(value: unknown, name: string, version: 1 | 2): string {
  if (typeof value !== 'string' || value === '') {
    throw new SigningServiceError(
      400,
      'invalid_request',
      version === 2
        ? `Missing (or invalid type) string parameter ${name}`
        : `Missing or invalid string parameter ${name}.`,
    );
  }
  return value;
}

/** `/oauth2/authorize` with its pages, and `/oauth2/token`: the same in both dialects but for what the service checks. */
export function mountOAuth(router: Router, deps: SandboxDeps, service: SigningService): void {
  router.get('/oauth2/authorize', (request) => {
    const check = service.checkAuthorizeRequest(request.query);
    const lang = pickLang(request.query.get('lang'), 'en');
    if (check.kind === 'fatal') return html(400, errorPage(lang, check.description));
    if (check.kind === 'redirect-error')
      return redirectError(check.redirectUri, check.state, check.error, check.description);
    if (deps.autoApprove) return approveAtOnce(service, check.request);
    return html(200, signInPage(lang, `${request.baseUrl}/oauth2/authorize/login`, request.query, SANDBOX_USERS));
  });

  router.post('/oauth2/authorize/login', (request) => {
    const form = formBody(request);
    const user = form.get('user') ?? '';
    const action = form.get('action');
    form.delete('user');
    form.delete('action');
    const check = service.checkAuthorizeRequest(form);
    const lang = pickLang(form.get('lang'), 'en');
    if (check.kind === 'fatal') return html(400, errorPage(lang, check.description));
    if (check.kind === 'redirect-error')
      return redirectError(check.redirectUri, check.state, check.error, check.description);
    if (action === 'cancel')
      return redirectError(
        check.request.redirectUri,
        check.request.state,
        'access_denied',
        'The signer cancelled the sign-in.',
      );
    try {
      const ticket = service.signIn(check.request, user);
      return html(200, consentPage(lang, `${request.baseUrl}/oauth2/authorize/decision`, ticket, check.request, user));
    } catch (error) {
      return onRedirectError(check.request, error);
    }
  });

  router.post('/oauth2/authorize/decision', (request) => {
    const form = formBody(request);
    const approval = service.takeApproval(form.get('ticket') ?? '');
    if (!approval) return html(400, expiredPage('en'));
    const { request: authorization, user } = approval;
    if (form.get('decision') !== 'approve') {
      return redirectError(
        authorization.redirectUri,
        authorization.state,
        'access_denied',
        'The signer refused the request.',
      );
    }
    return redirectCode(authorization, service.issueCode(authorization, user));
  });

  router.post('/oauth2/token', (request) => token(service, request));
}

/**
 * `POST /csc/v{1|2}/info` (§11.1): what both dialects say of the service, `extra` what only v2 says,
 * as the quirks switched on reword it.
 */
export function mountInfo(
  router: Router,
  deps: SandboxDeps,
  version: 1 | 2,
  extra: Record<string, unknown> = {},
): void {
  router.post(`/csc/v${version}/info`, (request) =>
    cscCall(request, (body) => {
      optionalString(body['lang'], 'lang');
      return deps.quirks.info({
        specs: version === 2 ? V2_SPECS : V1_SPECS,
        name: `esign sandbox signing service (CSC API ${version === 2 ? 'v2' : 'v1.0.4'})`,
        logo: `${request.baseUrl}/logo.png`,
        region: 'NL',
        lang: 'en-US',
        description: 'Test signatures only: keys and certificates of the esign sandbox PKI.',
        authType: ['basic', 'oauth2code', 'oauth2client'],
        oauth2: request.baseUrl,
        methods: [...(version === 2 ? V2_METHODS : V1_METHODS)],
        ...extra,
      });
    }),
  );
}

function mountCscV1(router: Router, deps: SandboxDeps, service: SigningService): void {
  mountInfo(router, deps, 1);

  router.post('/csc/v1/credentials/list', (request) =>
    csc(service, request, (body, holder) => {
      const maxResults = optionalPositiveInteger(body['maxResults'], 'maxResults');
      const pageToken = optionalString(body['pageToken'], 'pageToken');
      optionalString(body['clientData'], 'clientData');
      return service.listCredentials(holder.user, { maxResults, pageToken });
    }),
  );

  router.post('/csc/v1/credentials/info', (request) =>
    csc(service, request, (body, holder) => {
      const credentialID = requiredString(body['credentialID'], 'credentialID');
      optionalString(body['lang'], 'lang');
      optionalString(body['clientData'], 'clientData');
      return service.credentialInfo(
        holder.user,
        credentialID,
        infoOptions(body, (description) => new SigningServiceError(400, 'invalid_request', `${description}.`)),
      );
    }),
  );

  router.post('/csc/v1/credentials/extendTransaction', (request) =>
    csc(service, request, (body, holder) => {
      const credentialID = requiredString(body['credentialID'], 'credentialID');
      const sad = requiredString(body['SAD'], 'SAD');
      const hashes = body['hash'] === undefined ? undefined : standardBase64Hashes(body['hash']);
      optionalString(body['clientData'], 'clientData');
      return service.extendTransaction(holder, { credentialID, sad, ...(hashes === undefined ? {} : { hashes }) });
    }),
  );

  router.post('/csc/v1/signatures/signHash', (request) =>
    csc(service, request, (body, holder) => {
      const credentialID = requiredString(body['credentialID'], 'credentialID');
      const sad = requiredString(body['SAD'], 'SAD');
      const hashes = standardBase64Hashes(body['hash']);
      // hashAlgo may be left out where signAlgo names the hash (ecdsa-with-SHA384…); the service then checks that.
      const hashAlgo = optionalString(body['hashAlgo'], 'hashAlgo');
      const signAlgo = requiredString(body['signAlgo'], 'signAlgo');
      const signAlgoParams = optionalString(body['signAlgoParams'], 'signAlgoParams');
      optionalString(body['clientData'], 'clientData');
      return {
        signatures: service.signHash(holder, {
          credentialID,
          sad,
          hashes,
          ...(hashAlgo === undefined ? {} : { hashAlgo }),
          signAlgo,
          ...(signAlgoParams === undefined ? {} : { signAlgoParams }),
        }),
      };
    }),
  );
}

function approveAtOnce(service: SigningService, request: AuthorizationRequest): SandboxResponse {
  try {
    service.takeApproval(service.signIn(request, DEFAULT_USER));
    return redirectCode(request, service.issueCode(request, DEFAULT_USER));
  } catch (error) {
    return onRedirectError(request, error);
  }
}

function onRedirectError(request: AuthorizationRequest, error: unknown): SandboxResponse {
  if (!(error instanceof SigningServiceError)) throw error;
  return redirectError(request.redirectUri, request.state, error.error, error.description);
}

function redirectCode(request: AuthorizationRequest, code: string): SandboxResponse {
  const url = new URL(request.redirectUri);
  url.searchParams.set('code', code);
  url.searchParams.set('state', request.state);
  return redirect(url.toString());
}

function redirectError(
  redirectUri: string,
  state: string | undefined,
  error: string,
  description: string,
): SandboxResponse {
  const url = new URL(redirectUri);
  url.searchParams.set('error', error);
  url.searchParams.set('error_description', description);
  if (state !== undefined) url.searchParams.set('state', state);
  return redirect(url.toString());
}

function token(service: SigningService, request: SandboxRequest): SandboxResponse {
  const fail = (error: SigningServiceError): SandboxResponse =>
    json(
      error.status,
      { error: error.error, error_description: error.description },
      {
        ...TOKEN_HEADERS,
        ...(error.status === 401 ? { 'www-authenticate': 'Basic realm="esign sandbox signing service"' } : {}),
      },
    );
  if (!(request.headers['content-type'] ?? '').toLowerCase().startsWith('application/x-www-form-urlencoded')) {
    return fail(
      new SigningServiceError(400, 'invalid_request', 'The token request must be application/x-www-form-urlencoded.'),
    );
  }
  const basic = basicCredentials(request);
  if (!basic)
    return fail(new SigningServiceError(401, 'invalid_client', 'Client authentication with HTTP Basic is required.'));
  const client = service.authenticateClient(basic.user, basic.password);
  if (!client) return fail(new SigningServiceError(401, 'invalid_client', 'Client authentication failed.'));
  const form = formBody(request);
  for (const name of new Set(form.keys())) {
    if (form.getAll(name).length > 1)
      return fail(new SigningServiceError(400, 'invalid_request', `The parameter ${name} is repeated.`));
  }
  const clientId = form.get('client_id');
  if (!clientId) return fail(new SigningServiceError(400, 'invalid_request', 'The client_id parameter is required.'));
  if (clientId !== client.clientId)
    return fail(new SigningServiceError(401, 'invalid_client', 'The client_id differs from the authenticated client.'));
  const secretInBody = form.get('client_secret');
  if (secretInBody !== null && !service.authenticateClient(clientId, secretInBody)) {
    return fail(new SigningServiceError(401, 'invalid_client', 'Client authentication failed.'));
  }
  const grantType = form.get('grant_type');
  if (!grantType) return fail(new SigningServiceError(400, 'invalid_request', 'The grant_type parameter is required.'));
  if (grantType === 'client_credentials') {
    try {
      return json(200, service.clientCredentialsGrant(client, form.get('scope') ?? undefined), TOKEN_HEADERS);
    } catch (error) {
      if (error instanceof SigningServiceError) return fail(error);
      throw error;
    }
  }
  if (grantType !== 'authorization_code')
    return fail(
      new SigningServiceError(
        400,
        'unsupported_grant_type',
        'Only grant_type=authorization_code and client_credentials are supported.',
      ),
    );
  try {
    const grant = service.exchangeCode(client, {
      code: form.get('code') ?? undefined,
      redirectUri: form.get('redirect_uri') ?? undefined,
      codeVerifier: form.get('code_verifier') ?? undefined,
      authorizationDetails: form.get('authorization_details') ?? undefined,
    });
    return json(200, grant, TOKEN_HEADERS);
  } catch (error) {
    if (error instanceof SigningServiceError) return fail(error);
    throw error;
  }
}

/** Runs a `/csc/v1/*` handler on the JSON body; SigningServiceErrors become status + JSON. */
export function csc(
  service: SigningService,
  request: SandboxRequest,
  handle: (body: Record<string, unknown>, holder: ServiceTokenHolder) => object,
): SandboxResponse {
  return cscCall(request, (body) => handle(body, service.authenticate(bearerToken(request))));
}

/** A CSC call that authenticates itself (v2 signHash takes a SAD as the Bearer token), or none (info). */
export function cscCall(request: SandboxRequest, handle: (body: Record<string, unknown>) => object): SandboxResponse {
  try {
    if (!(request.headers['content-type'] ?? '').toLowerCase().startsWith('application/json')) {
      throw new SigningServiceError(400, 'invalid_request', 'The request body must be application/json.');
    }
    const body = jsonBody(request);
    if (!body) throw new SigningServiceError(400, 'invalid_request', 'The request body must be a JSON object.');
    return json(200, handle(body));
  } catch (error) {
    if (!(error instanceof SigningServiceError)) throw error;
    const headers: Record<string, string> =
      error.status === 401
        ? { 'www-authenticate': `Bearer error="invalid_token", error_description="${error.description}"` }
        : {};
    return json(error.status, { error: error.error, error_description: error.description }, headers);
  }
}

export function requiredString(value: unknown, name: string): string {
  if (typeof value !== 'string' || value === '')
    throw new SigningServiceError(400, 'invalid_request', `Missing or invalid string parameter ${name}.`);
  return value;
}

export function optionalString(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string')
    throw new SigningServiceError(400, 'invalid_request', `Invalid parameter ${name}: a string is expected.`);
  return value;
}

/** maxResults is documented once as a string and sent as a number in the samples: both are read. */
function optionalPositiveInteger(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  const number =
    typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(number) || number < 1)
    throw new SigningServiceError(400, 'invalid_request', `Invalid parameter ${name}: a positive integer is expected.`);
  return number;
}

/** How a dialect words the refusals of a hash array. */
export interface HashArrayWords {
  missing: string;
  empty: string;
  encoding: string;
  length: string;
}

const V1_HASH_WORDS: HashArrayWords = {
  missing: 'Missing or invalid array parameter hash.',
  empty: 'Missing or invalid array parameter hash.',
  encoding: 'Invalid parameter hash: standard base64 (not base64url) is expected.',
  length: 'Invalid parameter hash: a SHA-256, SHA-384 or SHA-512 value (32, 48 or 64 bytes) is expected.',
};

export function standardBase64Hashes(value: unknown, words: HashArrayWords = V1_HASH_WORDS): Uint8Array[] {
  const refuse = (description: string) => new SigningServiceError(400, 'invalid_request', description);
  if (!Array.isArray(value)) throw refuse(words.missing);
  if (value.length === 0) throw refuse(words.empty);
  return value.map((item) => {
    const hash = typeof item === 'string' ? decodeStandardBase64(item) : undefined;
    if (!hash) throw refuse(words.encoding);
    // Which digest, and whether it is the one signAlgo or hashAlgo names, the service checks.
    if (digestOfLength(hash.length) === undefined) throw refuse(words.length);
    return hash;
  });
}

/**
 * `certificates` (none, single, chain; single when absent), `certInfo` and `authInfo` (false when
 * absent) of `credentials/info` and v2 `credentials/list`; `refuse` words a bad one in the dialect.
 */
export function infoOptions(
  body: Record<string, unknown>,
  refuse: (description: string) => SigningServiceError,
): CredentialInfoOptionsV2 {
  const certificates = body['certificates'] ?? 'single';
  if (certificates !== 'none' && certificates !== 'single' && certificates !== 'chain')
    throw refuse('Invalid parameter certificates');
  const flag = (name: string): boolean => {
    const value = body[name] ?? false;
    if (typeof value !== 'boolean') throw refuse(`Invalid parameter ${name}: a boolean is expected`);
    return value;
  };
  return { certificates, certInfo: flag('certInfo'), authInfo: flag('authInfo') };
}
