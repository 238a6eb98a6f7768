/**
 * The storage authorization service's answer to `POST /v1/credentials`, validated: pure (status,
 * the WWW-Authenticate header and the parsed JSON body in; a grant or an EsignError out), so it can
 * be tested and fuzzed without a server.
 */
import { EsignError, ExitCode, sentence } from '../core/errors.js';
import { assertSecureUrl } from './http.js';

export const STORAGE_SCOPE = 'com.vendor.storage';
const LOGIN_HINT = 'Run `esign login --scope openid --scope com.vendor.storage` first.';

export interface StorageGrant {
  bucket: string;
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string;
  expiration: Date;
}

/** Maps the answer to a grant or an EsignError (RFC 9457 bodies read for the detail). */
export function processStorageCredentialsResponse(
  status: number,
  wwwAuthenticate: string | null,
  json: unknown,
): StorageGrant {
  const body = asObject(json);
  const detail =
    typeof body?.['detail'] === 'string'
      ? body['detail']
      : typeof body?.['title'] === 'string'
        ? body['title']
        : undefined;
  const said = (what: string) => sentence(detail ? `${what}: ${detail}` : what);
  if (status === 401) {
    const insufficientScope =
      /insufficient_scope/i.test(wwwAuthenticate ?? '') || (detail ?? '').includes(STORAGE_SCOPE);
    throw new EsignError('STORAGE_UNAUTHORIZED', said('The storage service did not accept your login session'), {
      hint: insufficientScope
        ? 'Log in again with the storage scope: esign login --scope openid --scope com.vendor.storage'
        : LOGIN_HINT,
      exitCode: ExitCode.auth,
      details: { status: 401 },
    });
  }
  if (status === 400) {
    throw new EsignError('STORAGE_BAD_REQUEST', said('The storage service refused the login token'), {
      hint: `The identity service issued a token without the claims storage needs. ${LOGIN_HINT}`,
      exitCode: ExitCode.auth,
      details: { status: 400 },
    });
  }
  if (status === 429) {
    throw new EsignError(
      'HTTP_RATE_LIMITED',
      said('The storage service is rate limiting credential requests (HTTP 429)'),
      { hint: 'Try again in a moment.', details: { status } },
    );
  }
  if (status >= 500) {
    throw new EsignError(
      'STORAGE_UNAVAILABLE',
      said(`The storage service ${status === 500 ? 'failed' : 'is unavailable'} (HTTP ${status})`),
      { hint: 'Try again in a moment.', details: { status } },
    );
  }
  if (status !== 200 || !body)
    throw new EsignError('STORAGE_BAD_RESPONSE', `The storage service answered HTTP ${status} with no credentials.`, {
      hint: 'Check storageAuthUrl in the profile (esign config list).',
    });
  const credentials = asObject(body['credentials']);
  const fields = {
    bucket: body['bucket'],
    endpoint: body['endpoint'],
    accessKeyId: credentials?.['accessKeyId'],
    secretAccessKey: credentials?.['secretAccessKey'],
    sessionToken: credentials?.['sessionToken'],
    expiration: credentials?.['expiration'],
  };
  const missing = Object.entries(fields)
    .filter(([, value]) => typeof value !== 'string' || value === '')
    .map(([name]) => name);
  const expiration = new Date(String(fields.expiration));
  if (missing.length > 0 || Number.isNaN(expiration.getTime())) {
    throw new EsignError(
      'STORAGE_BAD_RESPONSE',
      `The storage service's credentials answer lacks ${missing.join(', ') || 'a valid expiration'}.`,
      { hint: 'Report it to the storage service.' },
    );
  }
  assertSecureUrl(fields.endpoint as string, 'storage server');
  return { ...(fields as Record<keyof typeof fields, string>), expiration };
}

function asObject(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
