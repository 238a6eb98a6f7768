/**
 * The authorization request of the identity service (seed 001 §4.1) and the meaning of the errors
 * it returns on the redirect (§7). Pure.
 */
import { EsignError } from '../errors.js';

export const MAX_STATE_BYTES = 255;

export interface IdentityAuthorizeParams {
  authorizationEndpoint: string;
  clientId: string;
  redirectUri: string;
  scopes: readonly string[];
  state: string;
  nonce: string;
  codeChallenge: string;
  lang?: string;
}

/**
 * `GET /oauth2/authorize?response_type=code…`. The language goes out twice: `ui_locales` as the
 * document specifies and `lang` as its samples write it.
 */
export function buildIdentityAuthorizeUrl(params: IdentityAuthorizeParams): string {
  if (Buffer.byteLength(params.state, 'utf8') > MAX_STATE_BYTES)
    throw new EsignError('INTERNAL', `The OAuth state is longer than ${MAX_STATE_BYTES} bytes.`);
  if (!params.scopes.includes('openid')) throw new EsignError('INTERNAL', 'The identity scope must contain openid.');
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: params.clientId,
    redirect_uri: params.redirectUri,
    scope: params.scopes.join(' '),
    state: params.state,
    nonce: params.nonce,
    code_challenge: params.codeChallenge,
    code_challenge_method: 'S256',
  });
  if (params.lang) {
    query.set('ui_locales', params.lang);
    query.set('lang', params.lang);
  }
  const url = new URL(params.authorizationEndpoint);
  for (const [name, value] of query) url.searchParams.append(name, value);
  return url.toString();
}

export type AuthorizeErrorCase =
  | 'ChallengeExpired'
  | 'EmailUnverified'
  | 'ConsentExpired'
  | 'ConsentRejected'
  | 'ProcessExpired'
  | 'TechnicalProblem'
  | 'InvalidRequest'
  | 'AccessDenied';

interface CaseText {
  case: AuthorizeErrorCase;
  message: string;
  hint: string;
}

/** access_denied cases by their `error_description` (seed §7), compared case-insensitively. */
const ACCESS_DENIED: ReadonlyArray<[description: string, text: CaseText]> = [
  [
    'authentication challenge expired',
    {
      case: 'ChallengeExpired',
      message: 'The QR code has expired (ChallengeExpired).',
      hint: 'Run esign login again and scan the QR code within 10 minutes.',
    },
  ],
  [
    'user email is unverified',
    {
      case: 'EmailUnverified',
      message: 'Your e-mail address is not verified at the identity service (EmailUnverified).',
      hint: 'Follow the verification instructions of the identity service (in its app), then run esign login again.',
    },
  ],
  [
    'consent request expired',
    {
      case: 'ConsentExpired',
      message: 'The PIN was not entered in time (ConsentExpired).',
      hint: 'Run esign login again and enter your PIN promptly.',
    },
  ],
  [
    'resource owner rejected consent',
    {
      case: 'ConsentRejected',
      message: 'You did not agree to share the requested data (ConsentRejected).',
      hint: 'Run esign login again and give consent, or ask for fewer claims with --scope.',
    },
  ],
  [
    'process expired',
    {
      case: 'ProcessExpired',
      message: 'The time limit of the login was reached (ProcessExpired).',
      hint: 'Run esign login again and enter the PIN within 10 minutes.',
    },
  ],
];

/**
 * The EsignError for an `error` on the authorization redirect: the document's case and what the
 * user can do, in English. Five server_error cases carry no description, so they read alike.
 */
export function identityAuthorizeError(error: string, description: string | undefined): EsignError {
  const said = description && description !== 'n/a' ? description : undefined;
  const details = { error, error_description: description, case: undefined as AuthorizeErrorCase | undefined };
  if (error === 'access_denied') {
    const known = ACCESS_DENIED.find(([text]) => text === said?.trim().toLowerCase())?.[1];
    const text: CaseText = known ?? {
      case: 'AccessDenied',
      message: `The identity service denied the login${said ? ` (${said})` : ''}.`,
      hint: 'Run esign login again and complete the steps in the browser.',
    };
    return new EsignError('AUTH_DENIED', `Login failed: ${lowerFirst(text.message)}`, {
      hint: text.hint,
      details: { ...details, case: text.case },
    });
  }
  if (error === 'server_error' || error === 'temporarily_unavailable') {
    return new EsignError(
      'AUTH_SERVER_ERROR',
      `Login failed: the identity service reported a generic technical problem (${error}${said ? `: ${said}` : ''}).`,
      {
        hint: 'Retry esign login in a moment; if it keeps failing, contact the identity service.',
        details: { ...details, case: 'TechnicalProblem' },
      },
    );
  }
  return new EsignError(
    'AUTH_INVALID_REQUEST',
    `Login failed: the identity service rejected the request (${error}${said ? `: ${said}` : ''}).`,
    {
      hint: 'Check the identity settings of the profile (clientId, redirectUri, scopes) with esign config list.',
      details: { ...details, case: 'InvalidRequest' },
    },
  );
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}
