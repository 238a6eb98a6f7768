/**
 * OAuth token-endpoint refusals that no retry and no new sign-in can change (RFC 6749 §5.2):
 * classified by the error code the service sends, whatever HTTP status carries it (a 501 with
 * unsupported_grant_type is as final as a 400).
 */
import { EsignError } from './errors.js';

const PERMANENT_HINTS: Record<string, string> = {
  unsupported_grant_type:
    'The service does not offer this way of signing in: choose another serviceAuth (esign config --help), or ask the provider which grants it supports.',
  unauthorized_client:
    'This client is not allowed this way of signing in: ask the provider to allow it, or choose another serviceAuth (esign config --help).',
  invalid_client:
    'Check the client id and the client secret (ESIGN_CLIENT_ID, ESIGN_CLIENT_SECRET or the secrets file) and how the service wants the client to authenticate.',
  invalid_scope:
    'The service does not grant the scope asked for to this client: ask the provider which scopes it allows.',
};

export const PERMANENT_OAUTH_ERRORS: readonly string[] = Object.keys(PERMANENT_HINTS);

/**
 * Exit 4 with the service's own description for a permanent OAuth refusal; undefined for any
 * other answer (which the caller classifies by status as before).
 */
export function permanentOAuthRefusal(
  service: string,
  step: string,
  status: number,
  error: string | undefined,
  description: string | undefined,
): EsignError | undefined {
  if (!error || !Object.hasOwn(PERMANENT_HINTS, error)) return undefined;
  return new EsignError(
    'AUTH_TOKEN_REJECTED',
    `The ${service} refused ${step}: ${error}${description ? ` (${description})` : ''}, HTTP ${status}.`,
    {
      hint: PERMANENT_HINTS[error],
      details: { status, error, error_description: description },
    },
  );
}

/** A 501: the service does not implement the call, which no retry changes. */
export function notImplemented(service: string, step: string, said: string): EsignError {
  return new EsignError('CSC_UNSUPPORTED_SERVICE', `The ${service} does not implement ${step} (HTTP 501${said}).`, {
    hint: 'Check the service URL and the settings for this provider (esign config --help); ask the provider whether it offers this.',
    details: { status: 501 },
  });
}
