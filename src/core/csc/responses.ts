/**
 * Response processors for the remote signing service: each takes the status and raw body of one
 * call and returns a validated value or throws an EsignError with a stable code.
 */
import { EsignError, sentence } from '../errors.js';
import { notImplemented, permanentOAuthRefusal } from '../oauth-errors.js';
import {
  CREDENTIAL_AUTH_MODES,
  type AuthFactor,
  type CredentialAuthMode,
  type CredentialAuthorization,
  type CredentialInfo,
  type CredentialsPage,
  type OtpFactor,
  type ServiceSignIn,
  type TokenResponse,
} from './shapes.js';

type Body = Uint8Array | string;

interface ServiceError {
  error?: string;
  description?: string;
  /** The first bytes of a body that is not JSON (an HTML page, a proxy's text), control characters stripped. */
  looksLike?: string;
}

function parseJson(body: Body): unknown {
  try {
    return JSON.parse(typeof body === 'string' ? body : Buffer.from(body).toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

export function asObject(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function serviceError(body: Body): ServiceError {
  const parsed = parseJson(body);
  const object = asObject(parsed);
  const error = typeof object?.['error'] === 'string' ? object['error'] : undefined;
  const description = typeof object?.['error_description'] === 'string' ? object['error_description'] : undefined;
  return { error, description, ...(parsed === undefined ? looksLike(body) : {}) };
}

/** What a body that is not JSON starts with: at most 80 printable characters, whitespace folded. */
function looksLike(body: Body): { looksLike?: string } {
  const text = (typeof body === 'string' ? body : Buffer.from(body.subarray(0, 400)).toString('utf8'))
    .slice(0, 400)
    .replace(/\p{Cc}+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (text === '') return {};
  return { looksLike: text.length > 80 ? `${text.slice(0, 80)}…` : text };
}

function said({ error, description, looksLike }: ServiceError): string {
  if (looksLike) return ` (not JSON: ${JSON.stringify(looksLike)})`;
  if (!error && !description) return '';
  return ` (${[error, description].filter(Boolean).join(': ')})`;
}

/** An `error` member in a 2xx answer (some services report errors with HTTP 200). */
function errorIn(body: Body): boolean {
  return typeof asObject(parseJson(body))?.['error'] === 'string';
}

export function badResponse(operation: string, problem: string): EsignError {
  return new EsignError('CSC_BAD_RESPONSE', `The signing service's answer to ${operation} ${problem}.`, {
    hint: 'Check that signingBaseUrl points at a CSC signing service (and cscVersion, if set); report it to its operator if it does.',
  });
}

/**
 * Maps an error answer of a `/csc/v1/*` call (HTTP status + JSON `{error, error_description}`, or a
 * body that is not JSON) to an EsignError.
 */
export function cscError(status: number, body: Body, operation: string): EsignError {
  const parsed = serviceError(body);
  const text = `${parsed.error ?? ''} ${parsed.description ?? ''}`.toLowerCase();
  const details = { status, error: parsed.error, error_description: parsed.description, operation };
  if (status === 401 || parsed.error === 'invalid_token') {
    return new EsignError(
      'CSC_UNAUTHORIZED',
      `The signing service did not accept the service token for ${operation}${said(parsed)}.`,
      {
        hint: 'Run the command again to sign in to the signing service.',
        details,
      },
    );
  }
  if (parsed.error === 'expired_sad' || /sad.*expired|expired.*sad/.test(text)) {
    return new EsignError(
      'CSC_SAD_EXPIRED',
      `The signature authorization (SAD) expired before ${operation}${said(parsed)}.`,
      {
        hint: 'Run the command again and sign within 5 minutes of approving.',
        details,
      },
    );
  }
  if (parsed.error === 'invalid_sad' || /\bsad\b/.test(text)) {
    return new EsignError(
      'CSC_SAD_INVALID',
      `The signing service rejected the signature authorization (SAD) for ${operation}${said(parsed)}.`,
      {
        hint: 'Run the command again; a SAD is valid only for the credential and the hashes that were approved.',
        details,
      },
    );
  }
  if (parsed.error === 'credential_disabled' || /credential.*disabled|certificate is (expired|revoked)/.test(text)) {
    return new EsignError('CREDENTIAL_DISABLED', `The credential cannot sign${said(parsed)}.`, {
      hint: 'Choose an enabled credential: esign credentials list.',
      details,
    });
  }
  if (
    parsed.error === 'unknown_credential' ||
    /credential.*(unknown|not found)|(unknown|invalid).*credentialid/.test(text)
  ) {
    return new EsignError('CREDENTIAL_NOT_FOUND', `The signing service does not know this credential${said(parsed)}.`, {
      hint: 'List your credentials with `esign credentials list`.',
      details,
    });
  }
  if (status === 429) {
    return new EsignError(
      'HTTP_RATE_LIMITED',
      `The signing service is rate limiting ${operation} (HTTP 429${said(parsed)}).`,
      {
        hint: 'Try again in a moment.',
        details,
      },
    );
  }
  if (status === 501) return notImplemented('signing service', operation, said(parsed));
  if (status >= 500) {
    return new EsignError(
      'HTTP_SERVER_ERROR',
      `The signing service failed on ${operation} with HTTP ${status}${said(parsed)}.`,
      {
        hint: 'Try again in a moment.',
        details,
      },
    );
  }
  if (status >= 400 || parsed.error !== undefined) {
    return new EsignError(
      'CSC_INVALID_REQUEST',
      `The signing service rejected ${operation} with HTTP ${status}${said(parsed)}.`,
      {
        hint: 'Run with --verbose; if it repeats, report it with the error above.',
        details,
      },
    );
  }
  return badResponse(operation, `has the unexpected HTTP status ${status}`);
}

export function okJson(status: number, body: Body, operation: string): Record<string, unknown> {
  if (status !== 200 || errorIn(body)) throw cscError(status, body, operation);
  const object = asObject(parseJson(body));
  if (!object) throw badResponse(operation, `is not a JSON object${said(looksLike(body))}`);
  return object;
}

/** Reads a number sent either as a JSON number or as a string of digits. */
export function integerField(value: unknown): number | undefined {
  const number =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && /^\d+$/.test(value.trim())
        ? Number(value.trim())
        : undefined;
  return number !== undefined && Number.isSafeInteger(number) ? number : undefined; // "1e20" seconds is no lifetime
}

export function stringArray(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((item) => typeof item === 'string') ? (value as string[]) : undefined;
}

/** The token endpoint's answer: `Bearer` for scope service, `SAD` for scope credential. */
export function processTokenResponse(
  status: number,
  body: Body,
  expected: 'Bearer' | 'SAD',
  alsoAccepted: ReadonlyArray<'Bearer' | 'SAD'> = [],
): TokenResponse {
  const step = expected === 'SAD' ? 'the signature authorization' : 'the sign-in to the signing service';
  const parsedError = serviceError(body);
  const permanent = permanentOAuthRefusal(
    'signing service',
    `the token exchange for ${step}`,
    status,
    parsedError.error,
    parsedError.description,
  );
  if (permanent) throw permanent;
  if (status === 429 || status >= 500) throw cscError(status, body, `the token exchange for ${step}`);
  if (status !== 200) {
    const parsed = serviceError(body);
    const hint =
      parsed.error === 'invalid_client'
        ? 'Check the client id and the client secret (ESIGN_CLIENT_SECRET or the secrets file).'
        : 'Run the command again; an authorization code is valid once, for a short time.';
    throw new EsignError(
      'AUTH_TOKEN_REJECTED',
      `The signing service refused the token exchange for ${step} with HTTP ${status}${said(parsed)}.`,
      {
        hint,
        details: { status, error: parsed.error, error_description: parsed.description },
      },
    );
  }
  const object = asObject(parseJson(body));
  if (!object) throw badResponse('the token request', 'is not a JSON object');
  const accessToken = object['access_token'];
  const tokenType = object['token_type'];
  if (typeof accessToken !== 'string' || accessToken === '')
    throw badResponse('the token request', 'has no access_token');
  if (
    typeof tokenType !== 'string' ||
    ![expected, ...alsoAccepted].some((accepted) => accepted.toLowerCase() === tokenType.toLowerCase())
  ) {
    throw badResponse(
      'the token request',
      `has token_type ${JSON.stringify(tokenType)} where ${expected} was expected`,
    );
  }
  const expiresIn = object['expires_in'] === undefined ? undefined : integerField(object['expires_in']);
  if (object['expires_in'] !== undefined && expiresIn === undefined)
    throw badResponse('the token request', 'has an expires_in that is not a number of seconds');
  return expiresIn === undefined
    ? { accessToken, tokenType: expected }
    : { accessToken, tokenType: expected, expiresIn };
}

export function processCredentialsListResponse(status: number, body: Body): CredentialsPage {
  const object = okJson(status, body, 'credentials/list');
  const credentialIDs = stringArray(object['credentialIDs']);
  if (!credentialIDs) throw badResponse('credentials/list', 'has no credentialIDs array');
  const next = object['nextPageToken'];
  if (next !== undefined && next !== null && typeof next !== 'string')
    throw badResponse('credentials/list', 'has a nextPageToken that is not a string');
  return typeof next === 'string' && next !== '' ? { credentialIDs, nextPageToken: next } : { credentialIDs };
}

export function processCredentialsInfoResponse(status: number, body: Body, credentialID: string): CredentialInfo {
  const object = okJson(status, body, 'credentials/info');
  return credentialInfoFrom(object, credentialID, 'credentials/info', authorizationV1(object, 'credentials/info'));
}

/** How a credential is authorized, as credentials/info describes it. */
export interface CredentialAuth {
  authMode: CredentialAuthMode;
  pin?: AuthFactor;
  otp?: OtpFactor;
}

/** v1.0.4 §11.5: `authMode`, and for explicit credentials the `PIN` and `OTP` objects. */
export function authorizationV1(object: Record<string, unknown>, operation: string): CredentialAuth {
  const authMode = authModeOf(object['authMode'], operation);
  if (authMode !== 'explicit') return { authMode };
  const pin = factorFrom(asObject(object['PIN']), operation, 'PIN');
  const otpObject = asObject(object['OTP']);
  const otp = factorFrom(otpObject, operation, 'OTP');
  const auth: CredentialAuth = { authMode, ...(pin ? { pin } : {}) };
  if (otp && otpObject) {
    const type = otpObject['type'];
    if (type !== 'offline' && type !== 'online')
      throw badResponse(operation, `has OTP/type ${JSON.stringify(type)}, neither offline nor online`);
    auth.otp = { ...otp, type, ...optionalStrings(otpObject, { ID: 'id', provider: 'provider' }) };
  }
  return auth;
}

/**
 * v2 §11.5: `auth` with `mode`, and for explicit credentials `objects` of which the one with id
 * PIN and the one with id OTP are esign's concern. An OTP object with a `generator` (totp, hotp)
 * is made offline by an authenticator; one without is sent by the service (credentials/sendOTP).
 */
export function authorizationV2(auth: Record<string, unknown> | undefined, operation: string): CredentialAuth {
  const authMode = authModeOf(auth?.['mode'], operation);
  if (authMode !== 'explicit' || !auth) return { authMode };
  const objects = Array.isArray(auth['objects']) ? auth['objects'].map(asObject) : [];
  const byId = (id: string) => objects.find((object) => object?.['id'] === id);
  const pinObject = byId('PIN');
  const otpObject = byId('OTP');
  const pin = pinObject ? factorFrom({ presence: 'true', ...pinObject }, operation, 'PIN') : undefined;
  const otp = otpObject ? factorFrom({ presence: 'true', ...otpObject }, operation, 'OTP') : undefined;
  const result: CredentialAuth = { authMode, ...(pin ? { pin } : {}) };
  if (otp && otpObject)
    result.otp = {
      ...otp,
      type: typeof otpObject['generator'] === 'string' && otpObject['generator'] !== '' ? 'offline' : 'online',
    };
  return result;
}

function authModeOf(value: unknown, operation: string): CredentialAuthMode {
  if (!(CREDENTIAL_AUTH_MODES as readonly unknown[]).includes(value)) {
    throw badResponse(
      operation,
      `has the authorization mode ${JSON.stringify(value)}, none of ${CREDENTIAL_AUTH_MODES.join(', ')}`,
    );
  }
  return value as CredentialAuthMode;
}

/** A PIN or OTP object; undefined when it is absent or its presence is false. */
function factorFrom(
  object: Record<string, unknown> | undefined,
  operation: string,
  name: string,
): AuthFactor | undefined {
  if (!object) return undefined;
  const presence = object['presence'] === true ? 'true' : object['presence'] === false ? 'false' : object['presence'];
  if (presence === 'false') return undefined;
  if (presence !== 'true' && presence !== 'optional')
    throw badResponse(operation, `has ${name}/presence ${JSON.stringify(object['presence'])}`);
  const format = object['format'];
  if (format !== undefined && format !== 'A' && format !== 'N')
    throw badResponse(operation, `has ${name}/format ${JSON.stringify(format)}`);
  return {
    presence,
    ...(format ? { format } : {}),
    ...optionalStrings(object, { label: 'label', description: 'description' }),
  };
}

function optionalStrings<K extends string>(
  object: Record<string, unknown>,
  names: Record<string, K>,
): Partial<Record<K, string>> {
  const found: Partial<Record<K, string>> = {};
  for (const [from, to] of Object.entries(names)) {
    const value = object[from];
    if (typeof value === 'string' && value !== '') found[to] = value.slice(0, 255);
  }
  return found;
}

/** The key and cert objects both dialects share, with how the credential is authorized. */
export function credentialInfoFrom(
  object: Record<string, unknown>,
  credentialID: string,
  operation: string,
  auth: CredentialAuth,
): CredentialInfo {
  const key = asObject(object['key']);
  const cert = asObject(object['cert']);
  if (!key || !cert) throw badResponse(operation, 'lacks the key or cert object');
  const keyStatus = key['status'];
  if (keyStatus !== 'enabled' && keyStatus !== 'disabled')
    throw badResponse(operation, `has key/status ${JSON.stringify(keyStatus)}`);
  const algorithms = stringArray(key['algo']);
  if (!algorithms) throw badResponse(operation, 'has no key/algo array');
  const keyLengthBits = integerField(key['len']);
  if (keyLengthBits === undefined || keyLengthBits <= 0) throw badResponse(operation, 'has no usable key/len');
  const encoded = stringArray(cert['certificates']);
  if (!encoded || encoded.length === 0) throw badResponse(operation, 'has no cert/certificates');
  const certificates = encoded.map((text) => decodeBase64(text, operation, 'a certificate'));
  const info: CredentialInfo = { credentialID, status: keyStatus, algorithms, keyLengthBits, certificates, ...auth };
  const scal = object['SCAL'];
  if (scal === '1' || scal === '2' || scal === 1 || scal === 2) info.scal = String(scal) as '1' | '2';
  if (typeof cert['status'] === 'string') info.certificateStatus = cert['status'];
  const multisign = integerField(object['multisign']);
  if (multisign !== undefined && multisign >= 1) info.multisign = multisign;
  return info;
}

/** The signatures of a signHash call, in the order of the hashes sent; one per hash. */
export function processSignHashResponse(status: number, body: Body, expectedCount: number): Uint8Array[] {
  const object = okJson(status, body, 'signHash');
  const signatures = stringArray(object['signatures']);
  if (!signatures) throw badResponse('signHash', 'has no signatures array');
  if (signatures.length !== expectedCount)
    throw badResponse('signHash', `carries ${signatures.length} signatures for ${expectedCount} hashes`);
  return signatures.map((text) => decodeBase64(text, 'signHash', 'a signature'));
}

export function decodeBase64(text: string, operation: string, what: string): Uint8Array {
  const compact = text.replace(/\s+/g, '');
  if (compact === '' || !/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 !== 0) {
    throw badResponse(operation, `has ${what} that is not standard base64`);
  }
  return new Uint8Array(Buffer.from(compact, 'base64'));
}

/** `credentials/authorize` (v1 and v2): the SAD, and its lifetime when said. */
export function processAuthorizeResponse(status: number, body: Body): CredentialAuthorization {
  if (status !== 200 || errorIn(body)) throw authorizeError(status, body);
  return sadOf(okJson(status, body, 'credentials/authorize'), 'credentials/authorize');
}

/** The answer of credentials/extendTransaction (v1.0.4 §11.7): the new SAD, and its lifetime when said. */
export function processExtendTransactionResponse(status: number, body: Body): CredentialAuthorization {
  if (status !== 200 || errorIn(body)) throw cscError(status, body, 'credentials/extendTransaction');
  return sadOf(okJson(status, body, 'credentials/extendTransaction'), 'credentials/extendTransaction');
}

function sadOf(object: Record<string, unknown>, operation: string): CredentialAuthorization {
  const sad = object['SAD'];
  if (typeof sad !== 'string' || sad === '') throw badResponse(operation, 'has no SAD');
  const expiresIn = object['expiresIn'] === undefined ? undefined : integerField(object['expiresIn']);
  if (object['expiresIn'] !== undefined && expiresIn === undefined)
    throw badResponse(operation, 'has an expiresIn that is not a number of seconds');
  return expiresIn === undefined ? { sad } : { sad, expiresIn };
}

/**
 * The refusals of credentials/authorize a person can act on: a wrong PIN or OTP (with the tries
 * left when the service says), a locked PIN, OTP or credential. Everything else as any CSC call.
 */
function authorizeError(status: number, body: Body): EsignError {
  const parsed = serviceError(body);
  const description = parsed.description ?? '';
  const details = { status, error: parsed.error, error_description: parsed.description };
  const left =
    /(\d+)\s+(?:attempts?|tries|tries left|remaining)/i.exec(description)?.[1] ??
    /remaining\D*(\d+)/i.exec(description)?.[1];
  const tries =
    left === undefined ? '' : ` ${left} ${left === '1' ? 'try' : 'tries'} left before the credential is locked.`;
  if (/locked/i.test(description)) {
    return new EsignError(
      'AUTH_CREDENTIAL_LOCKED',
      `The signing service refused the authorization: ${sentence(description)}`,
      {
        hint: 'Too many wrong PINs or OTPs locked it: ask the administrator of the credential at your organization or its provider to unlock it; retrying cannot.',
        details,
      },
    );
  }
  if (parsed.error === 'invalid_pin') {
    return new EsignError(
      'AUTH_PIN_INVALID',
      `The signing service refused the PIN (${description || parsed.error}).${tries}`,
      {
        hint: 'Check ESIGN_CREDENTIAL_PIN or the --pin-file; nothing was signed.',
        details,
      },
    );
  }
  if (parsed.error === 'invalid_otp') {
    return new EsignError(
      'AUTH_OTP_INVALID',
      `The signing service refused the one-time password (${description || parsed.error}).${tries}`,
      {
        hint: 'Check ESIGN_TOTP_SECRET and the clock of this machine (a TOTP is valid for about 30 s), or type the code again; nothing was signed.',
        details,
      },
    );
  }
  return cscError(status, body, 'credentials/authorize');
}

/** `credentials/sendOTP`: 204 No Content (some services answer 200). */
export function processSendOtpResponse(status: number, body: Body): void {
  if (status === 204 || status === 200) return;
  if (status === 400 && /locked/i.test(serviceError(body).description ?? '')) throw authorizeError(status, body);
  throw cscError(status, body, 'credentials/sendOTP');
}

/** `auth/login`, or a client_credentials token request: the service token, and a refresh token when one came. */
/** What to check when a sign-in without a browser is refused. */
const SIGN_IN_HINTS = {
  'auth/login':
    'Check ESIGN_SIGNING_USERNAME and ESIGN_SIGNING_PASSWORD (or ask the provider whether auth/login is open to you).',
  'the client credentials token request':
    'Check ESIGN_CLIENT_ID and ESIGN_CLIENT_SECRET, and that the provider allows this client the client_credentials grant.',
  'the password grant token request':
    'Check ESIGN_SIGNING_USERNAME and ESIGN_SIGNING_PASSWORD, ESIGN_CLIENT_ID, and that the provider allows this client the password grant (ESIGN_CLIENT_AUTH, ESIGN_TOKEN_REQUEST).',
} as const;

export function processServiceSignInResponse(
  status: number,
  body: Body,
  operation: keyof typeof SIGN_IN_HINTS,
): ServiceSignIn {
  const parsedError = serviceError(body);
  const permanent = permanentOAuthRefusal(
    'signing service',
    operation,
    status,
    parsedError.error,
    parsedError.description,
  );
  if (permanent) throw permanent;
  if (status === 429 || status >= 500) throw cscError(status, body, operation);
  if (status !== 200) {
    const parsed = serviceError(body);
    const hint = SIGN_IN_HINTS[operation];
    throw new EsignError(
      'AUTH_TOKEN_REJECTED',
      `The signing service refused ${operation} with HTTP ${status}${said(parsed)}.`,
      {
        hint,
        details: { status, error: parsed.error, error_description: parsed.description },
      },
    );
  }
  const object = asObject(parseJson(body));
  if (!object) throw badResponse(operation, 'is not a JSON object');
  const accessToken = object['access_token'];
  if (typeof accessToken !== 'string' || accessToken === '') throw badResponse(operation, 'has no access_token');
  const tokenType = object['token_type'];
  if (tokenType !== undefined && (typeof tokenType !== 'string' || tokenType.toLowerCase() !== 'bearer'))
    throw badResponse(operation, `has token_type ${JSON.stringify(tokenType)} where Bearer was expected`);
  const expiresIn = object['expires_in'] === undefined ? undefined : integerField(object['expires_in']);
  if (object['expires_in'] !== undefined && expiresIn === undefined)
    throw badResponse(operation, 'has an expires_in that is not a number of seconds');
  const refreshToken = object['refresh_token'];
  if (refreshToken !== undefined && (typeof refreshToken !== 'string' || refreshToken === ''))
    throw badResponse(operation, 'has a refresh_token that is not a string');
  return {
    accessToken,
    ...(expiresIn === undefined ? {} : { expiresIn }),
    ...(typeof refreshToken === 'string' ? { refreshToken } : {}),
  };
}

/**
 * A call refused (401) again right after a fresh sign-in: not a stale token but the service
 * refusing that method to this client, which signing in once more cannot change.
 */
export function refusedAfterFreshSignIn(error: EsignError): EsignError {
  const operation = typeof error.details?.['operation'] === 'string' ? error.details['operation'] : 'the call';
  const description = [error.details?.['error'], error.details?.['error_description']]
    .filter((part) => typeof part === 'string' && part)
    .join(': ');
  return new EsignError(
    'CSC_METHOD_REFUSED',
    `The signing service refused ${operation} to this client even with the service token it had just issued${description ? ` (${description})` : ''}.`,
    {
      hint: `The service does not allow ${operation} to this client or this sign-in; run with --verbose to see the exchange, and ask the provider.`,
      ...(error.details ? { details: error.details } : {}),
    },
  );
}
