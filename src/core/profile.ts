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
}

/**
 * How esign signs in to the signing service: a person in the browser (OAuth authorization code),
 * the client itself (client_credentials), a user name and password (CSC auth/login), or not at all
 * (external: the service is authorized by other means, a LAN, a VPN, a gateway).
 */
export type ServiceAuthSetting = 'browser' | 'client-credentials' | 'basic' | 'external';
export const SERVICE_AUTH_SETTINGS: readonly ServiceAuthSetting[] = ['browser', 'client-credentials', 'basic', 'external'];

/** Which CSC API the signing service speaks: found out from its `info` (auto), or said. */
export type CscVersionSetting = 'auto' | '1' | '2';
export const CSC_VERSION_SETTINGS: readonly CscVersionSetting[] = ['auto', '1', '2'];

export type ProfileKey = keyof ProfileSettings;
type ValueKind = 'url' | 'urls' | 'string' | 'paths' | 'boolean' | 'lang' | 'level' | 'cscVersion' | 'signatureCount' | 'serviceAuth';

interface KeySpec {
  kind: ValueKind;
  env: string;
  description: string;
}

export const PROFILE_KEYS: Record<ProfileKey, KeySpec> = {
  signingBaseUrl: { kind: 'url', env: 'ESIGN_SIGNING_URL', description: 'base URL of the remote signing service (CSC API)' },
  identityBaseUrl: { kind: 'url', env: 'ESIGN_IDENTITY_URL', description: 'base URL of the identity service (authorize, token)' },
  identityLegacyBaseUrl: { kind: 'url', env: 'ESIGN_IDENTITY_LEGACY_URL', description: 'base URL of the identity legacy host (/userinfo)' },
  storageAuthUrl: { kind: 'url', env: 'ESIGN_STORAGE_URL', description: 'base URL of the storage authorization service' },
  tsaUrls: { kind: 'urls', env: 'ESIGN_TSA_URL', description: 'timestamping endpoint(s), comma-separated, tried in order' },
  clientId: { kind: 'string', env: 'ESIGN_CLIENT_ID', description: 'OAuth client id registered with the services' },
  redirectUri: { kind: 'url', env: 'ESIGN_REDIRECT_URI', description: 'loopback redirect URI registered with the services' },
  tsaUsername: { kind: 'string', env: 'ESIGN_TSA_USERNAME', description: 'timestamping user name (password: ESIGN_TSA_PASSWORD)' },
  trustAnchors: { kind: 'paths', env: 'ESIGN_TRUST_ANCHORS', description: 'PEM files of trusted roots, comma-separated' },
  credential: { kind: 'string', env: 'ESIGN_CREDENTIAL', description: 'default signing credential id' },
  lang: { kind: 'lang', env: 'ESIGN_LANG', description: 'language of the browser pages: en or nl' },
  region: { kind: 'string', env: 'ESIGN_S3_REGION', description: 'S3 region for uploads' },
  identityIssuer: { kind: 'string', env: 'ESIGN_IDENTITY_ISSUER', description: 'expected ID token issuer, when no discovery document exists' },
  jwksUri: { kind: 'url', env: 'ESIGN_JWKS_URI', description: 'JWKS URL, when no discovery document exists' },
  clientSecretInBody: { kind: 'boolean', env: 'ESIGN_CLIENT_SECRET_IN_BODY', description: 'also send the client secret in the token request form' },
  secretsFile: { kind: 'string', env: 'ESIGN_SECRETS_FILE', description: 'file (mode 0600) with CLIENT_SECRET= and TSA_PASSWORD= lines' },
  level: { kind: 'level', env: 'ESIGN_LEVEL', description: 'default signature level: B-B, B-T, B-LT or B-LTA' },
  cscVersion: { kind: 'cscVersion', env: 'ESIGN_CSC_VERSION', description: 'CSC API of the signing service: auto (ask its info), 1 (v1.0.4) or 2 (v2)' },
  cscAuthorizationDetails: {
    kind: 'boolean',
    env: 'ESIGN_CSC_AUTHORIZATION_DETAILS',
    description: 'CSC v2: ask for the approval with RFC 9396 authorization_details (documentDigests) instead of hashes',
  },
  cscSadAsBearer: { kind: 'boolean', env: 'ESIGN_CSC_SAD_AS_BEARER', description: 'CSC v2: send the SAD as the Bearer token of signHash instead of in its body' },
  cscMaxSignatures: {
    kind: 'signatureCount',
    env: 'ESIGN_CSC_MAX_SIGNATURES',
    description: `most signatures one authorization (numSignatures) may cover, 1 to ${MAX_HASHES_PER_CREDENTIAL_AUTHORIZATION} (a browser approval covers at most ${MAX_HASHES_PER_AUTHORIZATION}; a credential's multisign can lower it)`,
  },
  serviceAuth: {
    kind: 'serviceAuth',
    env: 'ESIGN_SERVICE_AUTH',
    description: 'sign-in to the signing service: browser, client-credentials (ESIGN_CLIENT_ID/ESIGN_CLIENT_SECRET, no browser) basic (auth/login with ESIGN_SIGNING_USERNAME/ESIGN_SIGNING_PASSWORD) or external (no token: the service is reached through a LAN, VPN or gateway)',
  },
  caFile: { kind: 'string', env: 'ESIGN_CA_FILE', description: 'PEM bundle of certificate authorities trusted for TLS besides the system ones (a private CA, a TLS-inspecting proxy)' },
  clientCert: { kind: 'string', env: 'ESIGN_CLIENT_CERT', description: 'PEM file of the TLS client certificate shown to servers that ask for one (with clientKey)' },
  clientKey: { kind: 'string', env: 'ESIGN_CLIENT_KEY', description: 'PEM file of the TLS client certificate\'s private key (encrypted: passphrase in ESIGN_CLIENT_KEY_PASSPHRASE)' },
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
      const items = text.split(',').map((item) => item.trim()).filter(Boolean);
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
      if (!(SIGNATURE_LEVELS as readonly string[]).includes(text)) throw invalid(`expected one of ${SIGNATURE_LEVELS.join(', ')}`);
      return text;
    case 'signatureCount': {
      const count = /^\d{1,4}$/.test(text) ? Number(text) : NaN;
      if (!(count >= 1 && count <= MAX_HASHES_PER_CREDENTIAL_AUTHORIZATION)) throw invalid(`expected a whole number from 1 to ${MAX_HASHES_PER_CREDENTIAL_AUTHORIZATION}`);
      return count;
    }
    case 'serviceAuth':
      if (!(SERVICE_AUTH_SETTINGS as readonly string[]).includes(text)) throw invalid(`expected one of ${SERVICE_AUTH_SETTINGS.join(', ')}`);
      return text;
    case 'cscVersion':
      if (!(CSC_VERSION_SETTINGS as readonly string[]).includes(text)) throw invalid(`expected one of ${CSC_VERSION_SETTINGS.join(', ')}`);
      return text;
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
