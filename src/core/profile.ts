/**
 * Profiles: which services esign talks to and as whom. Pure resolution with a fixed precedence,
 * flag > environment > stored profile > default, and a record of where each value came from.
 * Secrets are not settings: they come from ESIGN_* variables or a 0600 secrets file only.
 */
import { MAX_HASHES_PER_AUTHORIZATION, MAX_HASHES_PER_CREDENTIAL_AUTHORIZATION } from './csc/shapes.js';
import { EsignError } from './errors.js';

export interface ProfileSettings {
  signingBaseUrl?: string;
  identityBaseUrl?: string;
  identityLegacyBaseUrl?: string;
  storageAuthUrl?: string;
  tsaUrls?: string[];
  clientId?: string;
  redirectUri?: string;
  tsaUsername?: string;
  /** The TSA policy asked for and required: an OID, or `any`. */
  tsaPolicy?: string;
  trustAnchors?: string[];
  credential?: string;
  lang?: string;
  region?: string;
  identityIssuer?: string;
  jwksUri?: string;
  clientSecretInBody?: boolean;
  secretsFile?: string;
  level?: string;
  cscVersion?: CscVersionSetting;
  cscAuthorizationDetails?: boolean;
  cscSadAsBearer?: boolean;
  cscMaxSignatures?: number;
  serviceAuth?: ServiceAuthSetting;
  caFile?: string;
  clientCert?: string;
  clientKey?: string;
  oauthUrl?: string;
  oauthAuthorizeUrl?: string;
  oauthTokenUrl?: string;
  tokenRequest?: TokenRequestSetting;
  clientAuth?: ClientAuthSetting;
  hashEncoding?: HashEncodingSetting;
  cscClientData?: string;
  accountToken?: boolean;
  accountId?: string;
  apiKeyHeader?: string;
  /** Where `esign trust update` fetches the EU List of Trusted Lists. */
  lotlUrl?: string;
  /** The national lists `esign trust update` fetches (two-letter territories); all when unset. */
  trustListTerritories?: string[];
  /** default: a trusted list past its next update is still used, with a warning (DSS's default policy); strict: it is not used. */
  trustListPolicy?: TrustListPolicySetting;
}

export type TrustListPolicySetting = 'default' | 'strict';

/** How the token request's body is encoded: a form (RFC 6749) or JSON (some providers). */
export type TokenRequestSetting = 'form' | 'json';
/** How the OAuth client authenticates at the token endpoint: HTTP Basic, client_secret in the body, or its client_id alone. */
export type ClientAuthSetting = 'basic' | 'body' | 'none';
/** How hashes are encoded in the authorization URL: base64url (the specification) or standard base64. */
export type HashEncodingSetting = 'base64url' | 'base64';

/**
 * How esign signs in to the signing service: a person in the browser (OAuth authorization code),
 * the client itself (client_credentials), a user name and password (CSC auth/login), or not at all
 * (external: the service is authorized by other means, a LAN, a VPN, a gateway).
 */
export type ServiceAuthSetting = 'browser' | 'client-credentials' | 'password' | 'basic' | 'external';

/** Which CSC API the signing service speaks: found out from its `info` (auto), or said; `0` is v1.0.4 on `/csc/v0/` paths. */
export type CscVersionSetting = 'auto' | '0' | '1' | '2';

export type ProfileKey = keyof ProfileSettings;
type ValueKind =
  | 'url'
  | 'urls'
  | 'string'
  | 'paths'
  | 'boolean'
  | 'lang'
  | 'level'
  | 'signatureCount'
  | 'choice'
  | 'headerName'
  | 'policy'
  | 'territories';

interface KeySpec {
  kind: ValueKind;
  env: string;
  description: string;
  /** The values a `choice` setting takes. */
  choices?: readonly string[];
}

/** The values of each choice setting: the data `parseSettingValue` checks against. */
export const SETTING_CHOICES = {
  serviceAuth: ['browser', 'client-credentials', 'password', 'basic', 'external'],
  cscVersion: ['auto', '0', '1', '2'],
  tokenRequest: ['form', 'json'],
  clientAuth: ['basic', 'body', 'none'],
  hashEncoding: ['base64url', 'base64'],
  trustListPolicy: ['default', 'strict'],
} as const satisfies Partial<Record<ProfileKey, readonly string[]>>;
export const SERVICE_AUTH_SETTINGS: readonly ServiceAuthSetting[] = SETTING_CHOICES.serviceAuth;
export const CSC_VERSION_SETTINGS: readonly CscVersionSetting[] = SETTING_CHOICES.cscVersion;

export const PROFILE_KEYS: Record<ProfileKey, KeySpec> = {
  signingBaseUrl: {
    kind: 'url',
    env: 'ESIGN_SIGNING_URL',
    description: 'base URL of the remote signing service (CSC API)',
  },
  identityBaseUrl: {
    kind: 'url',
    env: 'ESIGN_IDENTITY_URL',
    description: 'base URL of the identity service (authorize, token)',
  },
  identityLegacyBaseUrl: {
    kind: 'url',
    env: 'ESIGN_IDENTITY_LEGACY_URL',
    description: 'base URL of the identity legacy host (/userinfo)',
  },
  storageAuthUrl: {
    kind: 'url',
    env: 'ESIGN_STORAGE_URL',
    description: 'base URL of the storage authorization service',
  },
  tsaUrls: {
    kind: 'urls',
    env: 'ESIGN_TSA_URL',
    description: 'timestamping endpoint(s), comma-separated, tried in order',
  },
  clientId: { kind: 'string', env: 'ESIGN_CLIENT_ID', description: 'OAuth client id registered with the services' },
  redirectUri: {
    kind: 'url',
    env: 'ESIGN_REDIRECT_URI',
    description:
      'redirect URI registered with the services: loopback http://127.0.0.1:PORT/PATH, or an https:// page (then esign prints the URL and reads the address the browser lands on)',
  },
  tsaUsername: {
    kind: 'string',
    env: 'ESIGN_TSA_USERNAME',
    description: 'timestamping user name (password: ESIGN_TSA_PASSWORD)',
  },
  tsaPolicy: {
    kind: 'policy',
    env: 'ESIGN_TSA_POLICY',
    description:
      "the TSA policy asked for and required in every timestamp: an OID (default 0.4.0.2023.1.1, the ETSI baseline policy), or any (ask for none and accept the TSA's own, as openssl ts does)",
  },
  trustAnchors: {
    kind: 'paths',
    env: 'ESIGN_TRUST_ANCHORS',
    description: 'PEM files of trusted roots, comma-separated',
  },
  credential: { kind: 'string', env: 'ESIGN_CREDENTIAL', description: 'default signing credential id' },
  lang: { kind: 'lang', env: 'ESIGN_LANG', description: 'language of the browser pages: en or nl' },
  region: { kind: 'string', env: 'ESIGN_S3_REGION', description: 'S3 region for uploads' },
  identityIssuer: {
    kind: 'string',
    env: 'ESIGN_IDENTITY_ISSUER',
    description: 'expected ID token issuer, when no discovery document exists',
  },
  jwksUri: { kind: 'url', env: 'ESIGN_JWKS_URI', description: 'JWKS URL, when no discovery document exists' },
  clientSecretInBody: {
    kind: 'boolean',
    env: 'ESIGN_CLIENT_SECRET_IN_BODY',
    description: 'also send the client secret in the token request form',
  },
  secretsFile: {
    kind: 'string',
    env: 'ESIGN_SECRETS_FILE',
    description: 'file (mode 0600) with CLIENT_SECRET= and TSA_PASSWORD= lines',
  },
  level: { kind: 'level', env: 'ESIGN_LEVEL', description: 'default signature level: B-B, B-T, B-LT or B-LTA' },
  cscVersion: {
    kind: 'choice',
    choices: SETTING_CHOICES.cscVersion,
    env: 'ESIGN_CSC_VERSION',
    description:
      'CSC API of the signing service: auto (ask its info), 1 (v1.0.4), 2 (v2) or 0 (v1.0.4 field names on /csc/v0/ paths)',
  },
  cscAuthorizationDetails: {
    kind: 'boolean',
    env: 'ESIGN_CSC_AUTHORIZATION_DETAILS',
    description: 'CSC v2: ask for the approval with RFC 9396 authorization_details (documentDigests) instead of hashes',
  },
  cscSadAsBearer: {
    kind: 'boolean',
    env: 'ESIGN_CSC_SAD_AS_BEARER',
    description: 'CSC v2: send the SAD as the Bearer token of signHash instead of in its body',
  },
  cscMaxSignatures: {
    kind: 'signatureCount',
    env: 'ESIGN_CSC_MAX_SIGNATURES',
    description: `most signatures one authorization (numSignatures) may cover, 1 to ${MAX_HASHES_PER_CREDENTIAL_AUTHORIZATION} (a browser approval covers at most ${MAX_HASHES_PER_AUTHORIZATION}; a credential's multisign can lower it)`,
  },
  serviceAuth: {
    kind: 'choice',
    choices: SETTING_CHOICES.serviceAuth,
    env: 'ESIGN_SERVICE_AUTH',
    description:
      'sign-in to the signing service: browser, client-credentials (ESIGN_CLIENT_ID/ESIGN_CLIENT_SECRET, no browser), password (OAuth password grant with ESIGN_SIGNING_USERNAME/ESIGN_SIGNING_PASSWORD), basic (auth/login with the same) or external (no token: the service is reached through a LAN, VPN or gateway)',
  },
  caFile: {
    kind: 'string',
    env: 'ESIGN_CA_FILE',
    description:
      'PEM bundle of certificate authorities trusted for TLS besides the system ones (a private CA, a TLS-inspecting proxy)',
  },
  clientCert: {
    kind: 'string',
    env: 'ESIGN_CLIENT_CERT',
    description: 'PEM file of the TLS client certificate shown to servers that ask for one (with clientKey)',
  },
  clientKey: {
    kind: 'string',
    env: 'ESIGN_CLIENT_KEY',
    description:
      "PEM file of the TLS client certificate's private key (encrypted: passphrase in ESIGN_CLIENT_KEY_PASSPHRASE)",
  },
  oauthUrl: {
    kind: 'url',
    env: 'ESIGN_OAUTH_URL',
    description:
      "base URL of the signing service's OAuth server ({url}/oauth2/authorize and /oauth2/token), when it is not the API's",
  },
  oauthAuthorizeUrl: {
    kind: 'url',
    env: 'ESIGN_OAUTH_AUTHORIZE_URL',
    description: "the OAuth authorization endpoint itself (overrides oauthUrl and the service's info)",
  },
  oauthTokenUrl: {
    kind: 'url',
    env: 'ESIGN_OAUTH_TOKEN_URL',
    description: "the OAuth token endpoint itself (overrides oauthUrl and the service's info)",
  },
  tokenRequest: {
    kind: 'choice',
    choices: SETTING_CHOICES.tokenRequest,
    env: 'ESIGN_TOKEN_REQUEST',
    description: 'body of the OAuth token request: form (RFC 6749, default) or json',
  },
  clientAuth: {
    kind: 'choice',
    choices: SETTING_CHOICES.clientAuth,
    env: 'ESIGN_CLIENT_AUTH',
    description:
      'client authentication at the token endpoint: basic (HTTP Basic, default), body (client_secret in the body) or none (client_id alone)',
  },
  hashEncoding: {
    kind: 'choice',
    choices: SETTING_CHOICES.hashEncoding,
    env: 'ESIGN_HASH_ENCODING',
    description: 'hashes in the authorization URL: base64url (the specification, default) or base64',
  },
  cscClientData: {
    kind: 'string',
    env: 'ESIGN_CSC_CLIENT_DATA',
    description: 'clientData sent with credentials/list (some providers filter the list by it, e.g. EVCS)',
  },
  accountToken: {
    kind: 'boolean',
    env: 'ESIGN_ACCOUNT_TOKEN',
    description:
      'on: send a CSC account_token (§8.3.1, HS256 keyed by SHA-256 of the client secret) with every authorization request; needs accountId',
  },
  accountId: {
    kind: 'string',
    env: 'ESIGN_ACCOUNT_ID',
    description: 'the Account ID registered with the provider: the sub of the account_token',
  },
  apiKeyHeader: {
    kind: 'headerName',
    env: 'ESIGN_API_KEY_HEADER',
    description:
      "name of the HTTP header carrying the signing service's API key (the key: ESIGN_API_KEY), e.g. x-api-key",
  },
  lotlUrl: {
    kind: 'url',
    env: 'ESIGN_LOTL_URL',
    description: "the EU List of Trusted Lists esign trust update fetches (default: the Commission's, docs/trust.md)",
  },
  trustListTerritories: {
    kind: 'territories',
    env: 'ESIGN_TRUST_LIST_TERRITORIES',
    description: 'the national trusted lists to fetch, comma-separated territory codes (e.g. BE,FR; default all)',
  },
  trustListPolicy: {
    kind: 'choice',
    choices: SETTING_CHOICES.trustListPolicy,
    env: 'ESIGN_TRUST_LIST_POLICY',
    description:
      'default: a trusted list past its next update is still used for qualification, with a warning (as the EU validator DSS does by default); strict: it is not used (docs/trust.md)',
  },
};

export const SIGNATURE_LEVELS = ['B-B', 'B-T', 'B-LT', 'B-LTA'] as const;
export type SignatureLevel = (typeof SIGNATURE_LEVELS)[number];

export type ValueSource = 'flag' | 'env' | 'profile' | 'default';

export interface ResolvedSettings {
  settings: ProfileSettings;
  sources: Partial<Record<ProfileKey, ValueSource>>;
}

export interface ResolveInput {
  flags?: ProfileSettings;
  env?: Record<string, string | undefined>;
  stored?: ProfileSettings;
  defaults?: ProfileSettings;
}

export function isProfileKey(key: string): key is ProfileKey {
  return Object.hasOwn(PROFILE_KEYS, key);
}

/** Applies flag > env > profile > default for every key. */
export function resolveSettings({ flags = {}, env = {}, stored = {}, defaults = {} }: ResolveInput): ResolvedSettings {
  const settings: Record<string, unknown> = {};
  const sources: Partial<Record<ProfileKey, ValueSource>> = {};
  for (const key of Object.keys(PROFILE_KEYS) as ProfileKey[]) {
    const envText = env[PROFILE_KEYS[key].env];
    const candidates: Array<[ValueSource, unknown]> = [
      ['flag', flags[key]],
      ['env', envText === undefined || envText === '' ? undefined : parseEnvValue(key, envText)],
      ['profile', stored[key]],
      ['default', defaults[key]],
    ];
    const found = candidates.find(([, value]) => value !== undefined);
    if (found) {
      settings[key] = found[1];
      sources[key] = found[0];
    }
  }
  return { settings: settings as ProfileSettings, sources };
}

/** Parses a setting's ESIGN_* variable; a bad value is reported under the variable's name. */
function parseEnvValue(key: ProfileKey, text: string): ProfileSettings[ProfileKey] {
  try {
    return parseSettingValue(key, text);
  } catch (error) {
    if (!(error instanceof EsignError)) throw error;
    const variable = PROFILE_KEYS[key].env;
    throw new EsignError('CONFIG_INVALID', error.message.replace(`Invalid value for ${key}`, `Invalid ${variable}`), {
      hint: `Fix or unset ${variable} (expected ${PROFILE_KEYS[key].description}).`,
    });
  }
}

/** Parses the text form of a setting (from `esign config set` or an env var). */
export function parseSettingValue(key: ProfileKey, text: string): ProfileSettings[ProfileKey] {
  const spec = PROFILE_KEYS[key];
  const invalid = (why: string) =>
    new EsignError('CONFIG_INVALID', `Invalid value for ${key}: ${why}.`, { hint: `Expected ${spec.description}.` });
  switch (spec.kind) {
    case 'boolean':
      if (/^(1|true|yes|on)$/i.test(text)) return true;
      if (/^(0|false|no|off)$/i.test(text)) return false;
      throw invalid('expected true or false');
    case 'urls':
    case 'paths': {
      const items = text
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean);
      if (spec.kind === 'urls') items.forEach((item) => checkUrl(item, invalid));
      return items;
    }
    case 'url':
      checkUrl(text, invalid);
      return text.replace(/\/+$/, '');
    case 'lang':
      if (text !== 'en' && text !== 'nl') throw invalid('expected en or nl');
      return text;
    case 'level':
      if (!(SIGNATURE_LEVELS as readonly string[]).includes(text))
        throw invalid(`expected one of ${SIGNATURE_LEVELS.join(', ')}`);
      return text;
    case 'signatureCount': {
      const count = /^\d{1,4}$/.test(text) ? Number(text) : NaN;
      if (!(count >= 1 && count <= MAX_HASHES_PER_CREDENTIAL_AUTHORIZATION))
        throw invalid(`expected a whole number from 1 to ${MAX_HASHES_PER_CREDENTIAL_AUTHORIZATION}`);
      return count;
    }
    case 'choice':
      if (!spec.choices?.includes(text)) throw invalid(`expected one of ${spec.choices?.join(', ')}`);
      return text;
    case 'headerName':
      // RFC 9110 token characters; never a header esign sets itself.
      if (
        !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(text) ||
        /^(authorization|content-type|content-length|host|accept)$/i.test(text)
      )
        throw invalid('expected an HTTP header name such as x-api-key');
      return text;
    case 'policy':
      if (text !== 'any' && !/^[0-2](\.(0|[1-9]\d*))+$/.test(text))
        throw invalid('expected an object identifier such as 1.2.3.4.1, or any');
      return text;
    case 'territories': {
      const territories = text
        .split(',')
        .map((item) => item.trim().toUpperCase())
        .filter(Boolean);
      const bad = territories.find((item) => !/^[A-Z]{2}$/.test(item));
      if (bad !== undefined) throw invalid(`${JSON.stringify(bad)} is not a two-letter territory code`);
      return territories;
    }
    case 'string':
      return text;
  }
}

function checkUrl(text: string, invalid: (why: string) => EsignError): void {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid(`${JSON.stringify(text)} is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid('only http(s) URLs are allowed');
}

/** Parses a secrets file: `NAME=value` lines, `#` comments. */
export function parseSecretsFile(text: string): Record<string, string> {
  const secrets: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const match = /^\s*([A-Z_][A-Z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (match?.[1] && !line.trimStart().startsWith('#')) secrets[match[1]] = (match[2] ?? '').replace(/^"(.*)"$/, '$1');
  }
  return secrets;
}

/** The secrets a profile's settings may call for, by whether they are present. */
export interface PresentSecrets {
  clientSecret: boolean;
  apiKey: boolean;
  signingUsername: boolean;
  signingPassword: boolean;
}

/**
 * Settings that contradict each other (a password grant without its user, an API-key header
 * without its key…): found before any request, and refused in one line naming both sides.
 * `name` words a setting as the user gave it (its variable, or the profile key).
 */
export function checkSettingConflicts(
  settings: ProfileSettings,
  secrets: PresentSecrets,
  name: (key: ProfileKey) => string,
): void {
  const conflict = (message: string, hint: string) => new EsignError('CONFIG_INVALID', message, { hint });
  const auth = settings.serviceAuth;
  if (auth === 'password' && !(secrets.signingUsername && secrets.signingPassword)) {
    const missing = secrets.signingUsername ? 'ESIGN_SIGNING_PASSWORD' : 'ESIGN_SIGNING_USERNAME';
    throw conflict(
      `${name('serviceAuth')} is ${auth}, but ${missing} is not set.`,
      `Set ESIGN_SIGNING_USERNAME and ESIGN_SIGNING_PASSWORD (or SIGNING_USERNAME=/SIGNING_PASSWORD= in the secrets file), or choose another ${name('serviceAuth')}.`,
    );
  }
  if (settings.apiKeyHeader && !secrets.apiKey) {
    throw conflict(
      `${name('apiKeyHeader')} names the header ${settings.apiKeyHeader}, but ESIGN_API_KEY is not set.`,
      'Set ESIGN_API_KEY (or API_KEY= in the secrets file) to the key, or unset the header name.',
    );
  }
  if (!settings.apiKeyHeader && secrets.apiKey) {
    throw conflict(
      `ESIGN_API_KEY is set, but ${name('apiKeyHeader')} (the header that carries it) is not.`,
      'Set ESIGN_API_KEY_HEADER to the header the provider names (e.g. x-api-key), or unset ESIGN_API_KEY.',
    );
  }
  if (settings.accountToken && !settings.accountId) {
    throw conflict(
      `${name('accountToken')} is on, but ${name('accountId')} (its sub, the Account ID) is not set.`,
      `Set ${name('accountId')} to the Account ID registered with the provider, or turn ${name('accountToken')} off.`,
    );
  }
  if (settings.accountToken && !secrets.clientSecret) {
    throw conflict(
      `${name('accountToken')} is on, but there is no client secret to key it with (ESIGN_CLIENT_SECRET).`,
      'Set ESIGN_CLIENT_SECRET (the account_token is an HMAC keyed by its SHA-256), or turn the account token off.',
    );
  }
  if (settings.clientAuth === 'none' && settings.clientSecretInBody) {
    throw conflict(
      `${name('clientAuth')} is none, but ${name('clientSecretInBody')} asks for the client secret in the body.`,
      `Use ${name('clientAuth')}=body for the secret in the body, or unset ${name('clientSecretInBody')}.`,
    );
  }
  if (settings.cscVersion === '0' || settings.cscVersion === '1') {
    for (const key of ['cscAuthorizationDetails', 'cscSadAsBearer'] as const) {
      if (settings[key])
        throw conflict(
          `${name(key)} is a CSC v2 setting, but ${name('cscVersion')} is ${settings.cscVersion}.`,
          `Unset ${name(key)}, or set ${name('cscVersion')} to 2 or auto.`,
        );
    }
  }
}
