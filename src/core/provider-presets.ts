/**
 * Provider presets (`esign config init NAME --provider ID`): the public settings of signing services
 * as other CSC clients' public code and documentation record them
 * (`csc-provider-behaviours.md`), each value with its source. Data only: a preset is a set of
 * settings in their text form, checked by the same parser as `esign config set`. None was tried
 * against the live service; the sandbox emulates each behaviour (a quirk), which is as far as
 * they are proven.
 */
import type { ProfileKey } from './profile.js';

export interface ProviderPreset {
  name: string;
  /** Settings in their text form, each with where it was recorded. */
  settings: Partial<Record<ProfileKey, { value: string; source: string }>>;
  /** What the user still has to set or know (client, secrets, account). */
  notes: string;
  /** The sandbox quirks that emulate what the preset's settings are for. */
  emulatedBy: string[];
}

const JSIGN = 'jsign ESignerSigningService.java';
const TIDDLY = 'tiddlyinstall web/sign-services.js';
const VALERA = 'a-sit-plus/valera SigningService.kt (QtspConfig)';
const CSCTESTER = 'vincent-vega/csctester csctester3.py (env_URLs)';

export const PROVIDER_PRESETS: Record<string, ProviderPreset> = {
  'sslcom-sandbox': {
    name: 'SSL.com eSigner, sandbox (cs-try.ssl.com)',
    settings: {
      signingBaseUrl: { value: 'https://cs-try.ssl.com', source: `${JSIGN}; ${TIDDLY} (SSLCOM_HOSTS)` },
      cscVersion: { value: '0', source: `${JSIGN} (/csc/v0/, spec 0.1.7.9)` },
      oauthTokenUrl: { value: 'https://oauth-sandbox.ssl.com/oauth2/token', source: `${JSIGN}; ${TIDDLY}` },
      serviceAuth: { value: 'password', source: `${JSIGN} getAccessToken (grant_type=password)` },
      tokenRequest: { value: 'json', source: `${JSIGN} RESTClient.java (application/json)` },
      clientAuth: {
        value: 'none',
        source: `${TIDDLY} (the sandbox issues a token from client_id alone, checked 2026-09-20)`,
      },
      cscMaxSignatures: { value: '1', source: `${JSIGN} sign(); ${TIDDLY} SSLCOM.sign (one SAD per signature)` },
    },
    notes:
      'Set clientId (your app), ESIGN_SIGNING_USERNAME/ESIGN_SIGNING_PASSWORD and ESIGN_TOTP_SECRET (base64, as SSL.com gives it). Code-signing accounts list their credentials only with cscClientData=EVCS.',
    emulatedBy: ['v0-paths', 'oauth-elsewhere', 'password-grant', 'json-token-request', 'client-data-filter'],
  },
  sslcom: {
    name: 'SSL.com eSigner (cs.ssl.com)',
    settings: {
      signingBaseUrl: { value: 'https://cs.ssl.com', source: `${JSIGN}; ${TIDDLY} (SSLCOM_HOSTS)` },
      cscVersion: { value: '0', source: `${JSIGN} (/csc/v0/, spec 0.1.7.9)` },
      oauthTokenUrl: { value: 'https://login.ssl.com/oauth2/token', source: `${JSIGN}; ${TIDDLY}` },
      serviceAuth: { value: 'password', source: `${JSIGN} getAccessToken (grant_type=password)` },
      tokenRequest: { value: 'json', source: `${JSIGN} RESTClient.java (application/json)` },
      cscMaxSignatures: { value: '1', source: `${JSIGN} sign(); ${TIDDLY} SSLCOM.sign (one SAD per signature)` },
    },
    notes:
      'Set clientId, ESIGN_CLIENT_SECRET, ESIGN_SIGNING_USERNAME/ESIGN_SIGNING_PASSWORD and ESIGN_TOTP_SECRET (base64). A browser sign-in needs an https redirectUri registered with SSL.com. Code-signing accounts: cscClientData=EVCS.',
    emulatedBy: ['v0-paths', 'oauth-elsewhere', 'password-grant', 'json-token-request', 'client-data-filter'],
  },
  'atrust-test': {
    name: 'A-Trust, CSC v2 test system (hs-abnahme.a-trust.at)',
    settings: {
      signingBaseUrl: { value: 'https://hs-abnahme.a-trust.at', source: `${VALERA} ATRUST (…/csc/v2)` },
      cscVersion: { value: '2', source: `${VALERA} ATRUST` },
      oauthUrl: { value: 'https://hs-abnahme.a-trust.at/csc/v1', source: `${VALERA} ATRUST (OAuth under /csc/v1)` },
    },
    notes: 'Set clientId, ESIGN_CLIENT_SECRET and the redirectUri A-Trust registered for you.',
    emulatedBy: ['oauth-elsewhere'],
  },
  'namirial-test': {
    name: 'Namirial (bit4id-hosted CSC v2, test)',
    settings: {
      signingBaseUrl: {
        value: 'https://csc-api.fba.users.bit4id.click/api',
        source: 'a-sit-plus/valera commit 41b780a2 (…/api/csc/v2/oauth2/…)',
      },
      cscVersion: { value: '2', source: 'a-sit-plus/valera commit 41b780a2' },
    },
    notes:
      'Its credentials/list returns no credentialInfos (esign asks credentials/info per ID, no setting needed). Set clientId, ESIGN_CLIENT_SECRET and your redirectUri.',
    emulatedBy: ['list-without-infos'],
  },
  'primesign-test': {
    name: 'PrimeSign (Cryptas), CSC v2 test (qs.primesign-test.com)',
    settings: {
      signingBaseUrl: {
        value: 'https://qs.primesign-test.com',
        source: 'a-sit-plus/valera commits 4a8625ce, 5fe07c41 (…/csc/v2)',
      },
      cscVersion: { value: '2', source: 'a-sit-plus/valera commits 4a8625ce, 5fe07c41' },
      oauthAuthorizeUrl: {
        value: 'https://id.primesign-test.com/realms/qs-staging/protocol/openid-connect/auth',
        source:
          "valera (Keycloak realm id.primesign-test.com/realms/qs-staging); the path is Keycloak's standard one (inferred)",
      },
      oauthTokenUrl: {
        value: 'https://id.primesign-test.com/realms/qs-staging/protocol/openid-connect/token',
        source: "valera (Keycloak realm); Keycloak's standard token path (inferred)",
      },
    },
    notes: 'Set clientId, ESIGN_CLIENT_SECRET and your redirectUri.',
    emulatedBy: ['oauth-elsewhere'],
  },
  time4mind: {
    name: 'Intesi Group Time4Mind (services.time4mind.com, CSC v0)',
    settings: {
      signingBaseUrl: { value: 'https://services.time4mind.com', source: `${CSCTESTER}` },
      cscVersion: { value: '0', source: `${CSCTESTER} (/csc/v0)` },
      serviceAuth: { value: 'basic', source: 'vincent-vega/csctester login_test (auth/login, HTTP Basic, rememberMe)' },
    },
    notes: 'Set ESIGN_SIGNING_USERNAME/ESIGN_SIGNING_PASSWORD (auth/login). Code of 2020: check the URL with Intesi.',
    emulatedBy: ['v0-paths'],
  },
  'globalsign-time4mind': {
    name: 'GlobalSign on Time4Mind (globalsign.time4mind.com, CSC v0)',
    settings: {
      signingBaseUrl: { value: 'https://globalsign.time4mind.com', source: `${CSCTESTER}` },
      cscVersion: { value: '0', source: `${CSCTESTER} (/csc/v0)` },
      serviceAuth: { value: 'basic', source: 'vincent-vega/csctester login_test (auth/login, HTTP Basic, rememberMe)' },
    },
    notes:
      'Set ESIGN_SIGNING_USERNAME/ESIGN_SIGNING_PASSWORD (auth/login). Code of 2020: check the URL with GlobalSign.',
    emulatedBy: ['v0-paths'],
  },
  'digicert-dtm': {
    name: 'DigiCert Document Trust Manager (API key)',
    settings: {
      apiKeyHeader: { value: 'x-api-key', source: 'dev.digicert.com content-trust-api (API token in x-api-key)' },
    },
    notes:
      'Set signingBaseUrl to your DigiCert CSC URL, ESIGN_API_KEY to your API token, and serviceAuth as your account allows (client-credentials, or external for the API key alone).',
    emulatedBy: ['api-key'],
  },
  zealid: {
    name: 'ZealID',
    settings: {
      accountToken: {
        value: 'on',
        source:
          'developer.zealid.com/reference/authorize-1 (account_token mandatory, HS256, key SHA-256 of client_secret)',
      },
      cscMaxSignatures: {
        value: '10',
        source: 'developer.zealid.com/reference/authorize-1 (the GET URL breaks beyond about 10 hashes)',
      },
    },
    notes: 'Set signingBaseUrl, clientId, ESIGN_CLIENT_SECRET, accountId (your Account ID) and your redirectUri.',
    emulatedBy: ['account-token'],
  },
  cleverbase: {
    name: 'Cleverbase (Vidua)',
    settings: {
      cscMaxSignatures: {
        value: '1',
        source: 'vidua.nl/en/business/developer/signing/api-reference (numSignatures must be 1)',
      },
      accountToken: {
        value: 'on',
        source: 'vidua.nl/en/business/developer/signing/account-tokens (when one app serves several customers)',
      },
    },
    notes:
      'Set signingBaseUrl, clientId, ESIGN_CLIENT_SECRET, accountId and your redirectUri; a batch needs one approval per document.',
    emulatedBy: ['account-token'],
  },
  eideasy: {
    name: 'eID Easy (CSC sample app)',
    settings: {
      tokenRequest: {
        value: 'json',
        source: 'eideasy/eid-sample-app CscApiController.php (oauth2/token posted as JSON)',
      },
      clientAuth: { value: 'body', source: 'eideasy/eid-sample-app CscApiController.php (client_secret in the body)' },
      hashEncoding: {
        value: 'base64',
        source: 'eideasy/eid-sample-app CscApiController.php (authorize hash in standard base64)',
      },
    },
    notes:
      'Set signingBaseUrl, clientId, ESIGN_CLIENT_SECRET and your redirectUri; accountToken=on with accountId if eID Easy asks for an account_token.',
    emulatedBy: ['json-token-request', 'client-auth-body', 'base64-authorize-hash'],
  },
};

export const PROVIDER_IDS = Object.keys(PROVIDER_PRESETS);
