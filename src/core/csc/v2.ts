/**
 * CSC API v2 (v2.0.0.x) on the wire: discovery (`info`), the authorization request of scope
 * credential (`hashes` + `hashAlgorithmOID`, or RFC 9396 `authorization_details`),
 * `credentials/list` with the credentials' info in one call, `credentials/info` and
 * `signatures/signHash` with `hashAlgorithmOID` and `signAlgo`. Pure, as `requests.ts` and
 * `responses.ts` are for v1.0.4: the domain values (CredentialInfo, signatures) are the same.
 */
import { EsignError } from '../errors.js';
import type { ServiceAuthSetting } from '../profile.js';
import {
  authorizeUrlWith,
  CREDENTIAL_INFO_WANTED,
  encodeHashes,
  hashAlgorithmOf,
  jsonRequest,
  type AuthorizeParams,
  type CredentialAuthorizeParams,
} from './requests.js';
import { asObject, authorizationV2, badResponse, credentialInfoFrom, okJson, stringArray } from './responses.js';
import { signAlgoNamesHash } from './signature.js';
import {
  CSC_SIGN_ALGO_RSA,
  MAX_HASHES_PER_CREDENTIAL_AUTHORIZATION,
  type CredentialInfo,
  type PreparedRequest,
} from './shapes.js';

type Body = Uint8Array | string;

/** The methods esign calls; a v2 service that lists none of one is refused before any browser step. */
export const METHODS_NEEDED = ['credentials/list', 'credentials/info', 'signatures/signHash'] as const;

/** What `info` says of a service, as far as esign uses it. */
export interface ServiceInfo {
  /** `specs` as the service sent it, e.g. "2.0.0.2" or "1.0.4.0". */
  specs: string;
  name?: string;
  methods: string[];
  authTypes: string[];
  /** v2: the OAuth 2.0 authorization server's base URI, when it is not the service's own. */
  oauth2?: string;
  /** v2: the authorization server named by its RFC 8414 issuer instead. */
  oauth2Issuer?: string;
}

/** `POST {base}/csc/v{1|2}/info` (no token; `{}` or `{lang}`). */
export function buildInfoRequest(baseUrl: string, version: 0 | 1 | 2, lang?: string): PreparedRequest {
  return jsonRequest(baseUrl, `/csc/v${version}/info`, undefined, lang ? { lang } : {});
}

/**
 * The answer to `info`, or undefined when the service has no such endpoint: 501, or any 4xx but
 * 429 (gateways in front of v1.0.4 services answer an unknown path with 400, 401 or 403 as often
 * as with 404). A 5xx or 429 is an error: guessing the dialect from an outage would mislead.
 */
export function processInfoResponse(status: number, body: Body): ServiceInfo | undefined {
  if (status === 501 || (status >= 400 && status < 500 && status !== 429)) return undefined;
  const object = okJson(status, body, 'info');
  const specs = object['specs'];
  if (typeof specs !== 'string' || !/^\d+(\.\d+)*$/.test(specs))
    throw badResponse('info', `has specs ${JSON.stringify(specs)}, not a version`);
  const info: ServiceInfo = {
    specs,
    methods: stringArray(object['methods']) ?? [],
    authTypes: stringArray(object['authType']) ?? [],
  };
  if (typeof object['name'] === 'string') info.name = object['name'];
  if (typeof object['oauth2'] === 'string' && object['oauth2'] !== '') info.oauth2 = object['oauth2'];
  if (typeof object['oauth2Issuer'] === 'string' && object['oauth2Issuer'] !== '')
    info.oauth2Issuer = object['oauth2Issuer'];
  return info;
}

/**
 * The info authType each way of signing in needs (CSC v1.0.4 §11.1, v2 §8.1); the OAuth password
 * grant has none (services that take it list oauth2code or nothing), so it is not checked.
 */
const AUTH_TYPE_FOR: Record<ServiceAuthSetting, string | undefined> = {
  browser: 'oauth2code',
  'client-credentials': 'oauth2client',
  password: undefined,
  basic: 'basic',
  external: 'external',
};
/** The serviceAuth setting that uses an info authType. */
const SETTING_FOR = Object.fromEntries(
  Object.entries(AUTH_TYPE_FOR).map(([setting, authType]) => [authType, setting]),
) as Record<string, ServiceAuthSetting | undefined>;

/**
 * Refuses a service (either dialect) that cannot do what esign needs, naming what is missing,
 * before any sign-in: a method, or the sign-in the serviceAuth setting asks for.
 */
export function checkService(info: ServiceInfo, serviceAuth: ServiceAuthSetting = 'browser'): void {
  const needed = [...METHODS_NEEDED, ...(serviceAuth === 'basic' ? ['auth/login'] : [])];
  const missing = needed.filter((method) => !info.methods.includes(method));
  if (missing.length > 0) {
    throw new EsignError(
      'CSC_UNSUPPORTED_SERVICE',
      `The signing service (CSC API ${info.specs}) does not offer ${missing.join(', ')}, which esign needs to sign.`,
      {
        hint: 'Ask the provider whether another base URL offers them; esign signs hashes with signatures/signHash.',
        details: { missing, methods: info.methods },
      },
    );
  }
  const authType = AUTH_TYPE_FOR[serviceAuth];
  if (authType !== undefined && info.authTypes.length > 0 && !info.authTypes.includes(authType)) {
    const usable = info.authTypes
      .map((offered) => SETTING_FOR[offered])
      .filter((setting): setting is ServiceAuthSetting => setting !== undefined);
    throw new EsignError(
      'CSC_UNSUPPORTED_SERVICE',
      `The signing service (CSC API ${info.specs}) offers no ${authType} sign-in (it offers ${info.authTypes.join(', ')}), which serviceAuth ${serviceAuth} needs.`,
      {
        hint:
          usable.length > 0
            ? `Set ESIGN_SERVICE_AUTH (or serviceAuth) to ${usable.join(' or ')}.`
            : 'esign cannot sign in to it in any way it offers; ask the provider for OAuth 2.0, auth/login or external access.',
        details: { authTypes: info.authTypes },
      },
    );
  }
}

/**
 * `GET {oauth2}/oauth2/authorize`, v2. Scope credential carries `hashes` (base64url, comma-separated)
 * with `hashAlgorithmOID`, or, with `authorizationDetails`, one RFC 9396 entry of type credential
 * whose `documentDigests` hold the hashes (standard base64).
 */
export function buildAuthorizeUrlV2(params: AuthorizeParams, options: { authorizationDetails?: boolean } = {}): string {
  if (params.scope === 'credential' && options.authorizationDetails) {
    const { credentialID, hashes, scope: _scope, ...common } = params;
    const url = new URL(authorizeUrlWith({ ...common, scope: 'service' }, () => undefined));
    url.searchParams.delete('scope');
    url.searchParams.set('authorization_details', credentialAuthorizationDetails(credentialID, hashes));
    return url.toString();
  }
  return authorizeUrlWith(params, (query, hashes) => {
    query.set('hashes', encodeHashes(hashes, params.hashEncoding));
    query.set('hashAlgorithmOID', hashAlgorithmOf(hashes));
  });
}

/**
 * RFC 9396 `authorization_details` for a credential step: one entry of type credential. The token
 * request repeats it (§8.4.4), so it is built the same way for both.
 */
export function credentialAuthorizationDetails(credentialID: string, hashes: Uint8Array[]): string {
  const hashAlgorithmOID = hashAlgorithmOf(hashes);
  const documentDigests = hashes.map((hash, index) => ({
    hash: Buffer.from(hash).toString('base64'),
    label: `document ${index + 1}`,
  }));
  return JSON.stringify([{ type: 'credential', credentialID, documentDigests, hashAlgorithmOID }]);
}

/** `credentials/list` asking for every credential's info in the same answer. */
export function buildCredentialsListRequestV2(
  baseUrl: string,
  accessToken: string | undefined,
  clientData?: string,
): PreparedRequest {
  return jsonRequest(baseUrl, '/csc/v2/credentials/list', accessToken, {
    credentialInfo: true,
    ...CREDENTIAL_INFO_WANTED,
    ...(clientData === undefined ? {} : { clientData }),
  });
}

/**
 * The ids, and each credential's info when the service sent `credentialInfos` (it may not). An
 * entry esign cannot use as it is (say, without the certificates a service left out) is left out
 * here: `credentials/info` is asked for that credential instead.
 */
export function processCredentialsListResponseV2(
  status: number,
  body: Body,
): { credentialIDs: string[]; infos: Map<string, CredentialInfo> } {
  const object = okJson(status, body, 'credentials/list');
  const credentialIDs = stringArray(object['credentialIDs']);
  if (!credentialIDs) throw badResponse('credentials/list', 'has no credentialIDs array');
  const infos = new Map<string, CredentialInfo>();
  const listed = object['credentialInfos'];
  if (listed !== undefined) {
    if (!Array.isArray(listed)) throw badResponse('credentials/list', 'has a credentialInfos that is not an array');
    for (const entry of listed) {
      const item = asObject(entry);
      const id = item?.['credentialID'];
      if (!item || typeof id !== 'string')
        throw badResponse('credentials/list', 'has a credentialInfos entry without a credentialID');
      const info = usableInfo(() =>
        credentialInfoFrom(item, id, 'credentials/list', authorizationV2(asObject(item['auth']), 'credentials/list')),
      );
      if (info) infos.set(id, info);
    }
  }
  return { credentialIDs, infos };
}

function usableInfo(read: () => CredentialInfo): CredentialInfo | undefined {
  try {
    return read();
  } catch (error) {
    if (error instanceof EsignError && error.code === 'CSC_BAD_RESPONSE') return undefined;
    throw error;
  }
}

export function buildCredentialsInfoRequestV2(
  baseUrl: string,
  accessToken: string | undefined,
  credentialID: string,
): PreparedRequest {
  return jsonRequest(baseUrl, '/csc/v2/credentials/info', accessToken, { credentialID, ...CREDENTIAL_INFO_WANTED });
}

export function processCredentialsInfoResponseV2(status: number, body: Body, credentialID: string): CredentialInfo {
  const object = okJson(status, body, 'credentials/info');
  return credentialInfoFrom(
    object,
    credentialID,
    'credentials/info',
    authorizationV2(asObject(object['auth']), 'credentials/info'),
  );
}

export interface SignHashParamsV2 {
  baseUrl: string;
  /** The service token, or the credential-scoped token (the SAD) when `sadAsBearer`; none for external. */
  accessToken: string | undefined;
  credentialID: string;
  sad: string;
  hashes: Uint8Array[];
  /** One of the credential's key/algo: rsaEncryption, RSASSA-PSS and id-ecPublicKey go with hashAlgorithmOID; sha256WithRSAEncryption, ecdsa-with-SHA384… name the hash themselves. */
  signAlgo?: string;
  /** Base64 DER parameters of the signature algorithm (RSASSA-PSS). */
  signAlgoParams?: string;
  /** The SAD travels as the Bearer token instead of in the body (services differ; CSC v2 allows both). */
  sadAsBearer?: boolean;
}

/**
 * `POST {base}/csc/v2/signatures/signHash`: hashes in standard base64, synchronous. With
 * rsaEncryption (or PSS, or id-ecPublicKey) `hashAlgorithmOID` names the hashes' digest; a signAlgo
 * such as sha256WithRSAEncryption names it itself, and the specification wants it omitted then.
 */
export function buildSignHashRequestV2(params: SignHashParamsV2): PreparedRequest {
  const hashAlgorithmOID = hashAlgorithmOf(params.hashes, MAX_HASHES_PER_CREDENTIAL_AUTHORIZATION);
  const signAlgo = params.signAlgo ?? CSC_SIGN_ALGO_RSA;
  const body: Record<string, unknown> = {
    credentialID: params.credentialID,
    ...(params.sadAsBearer ? {} : { SAD: params.sad }),
    hashes: params.hashes.map((hash) => Buffer.from(hash).toString('base64')),
    ...(signAlgoNamesHash(signAlgo) ? {} : { hashAlgorithmOID }),
    signAlgo,
    ...(params.signAlgoParams === undefined ? {} : { signAlgoParams: params.signAlgoParams }),
  };
  return jsonRequest(
    params.baseUrl,
    '/csc/v2/signatures/signHash',
    params.sadAsBearer ? params.sad : params.accessToken,
    body,
  );
}

/**
 * `POST {base}/csc/v2/credentials/authorize` (§11.6): numSignatures, `hashes` with
 * `hashAlgorithmOID`, and the PIN and OTP as `authData` entries `{id, value}`.
 */
export function buildCredentialsAuthorizeRequestV2(params: CredentialAuthorizeParams): PreparedRequest {
  const hashAlgorithmOID = hashAlgorithmOf(params.hashes, MAX_HASHES_PER_CREDENTIAL_AUTHORIZATION);
  const authData = [
    ...(params.pin === undefined ? [] : [{ id: 'PIN', value: params.pin }]),
    ...(params.otp === undefined ? [] : [{ id: 'OTP', value: params.otp }]),
  ];
  return jsonRequest(params.baseUrl, '/csc/v2/credentials/authorize', params.accessToken, {
    credentialID: params.credentialID,
    numSignatures: params.hashes.length,
    hashes: params.hashes.map((hash) => Buffer.from(hash).toString('base64')),
    hashAlgorithmOID,
    ...(authData.length > 0 ? { authData } : {}),
  });
}
