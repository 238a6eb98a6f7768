/**
 * Sandbox quirks: how real CSC services differ from the specification text
 * (`csc-provider-behaviours.md`), switched on by name (`esign sandbox start --quirk NAME`,
 * `POST /_sandbox/quirks`). Off, the signing sandbox follows the text to the letter. Each quirk is
 * one small function on one point of the service: its `info`, the chain it returns, the status it
 * reports, who calls without a token.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { SANDBOX_API_KEY, SANDBOX_ORGANIZATION, SANDBOX_SEAL, SANDBOX_SECRETS } from '../accounts.js';
import { html, json, jsonBody, type SandboxRequest, type SandboxResponse } from '../http.js';

/** The seals' PIN under the quirk leading-zero-pin: all digits, a leading zero. */
export const LEADING_ZERO_PIN = `0${SANDBOX_SEAL.pin}`;
/** Under the quirk odd-credential-ids, the sandbox's credential ID X is shown as `eu/X +1`. */
const ODD_PREFIX = 'eu/';
const ODD_SUFFIX = ' +1';

/** The points of the signing service a quirk can bend. */
interface QuirkHooks {
  /** The body of `info` (both dialects). */
  info?: (body: Record<string, unknown>) => Record<string, unknown>;
  /** The certificates `certificates: chain` returns (signer, issuing CA, root). */
  chain?: (chain: Uint8Array[]) => Uint8Array[];
  /** Whether the key of a credential whose certificate expired is still reported enabled and valid. */
  keepsExpiredEnabled?: true;
  /** Who a CSC call without any Authorization header is made by (authType external). */
  caller?: { user: string; clientId: string };
  /** Whether credentials/info refuses certInfo (501). */
  refusesCertInfo?: true;
  /** An answer of the signing service (`route`: `POST /csc/v1/info`, `POST /oauth2/token`…) as the provider words it. */
  answer?: (route: string, response: SandboxResponse) => SandboxResponse;
  /** A request as the provider takes it, before routing: rewritten into what the sandbox serves, or answered at once. */
  request?: (request: SandboxRequest) => SandboxRequest | SandboxResponse;
  /** How long SADs live, in seconds (the specification sample's 300 when no quirk says). */
  sadLifetimeS?: number;
  /** Service tokens are revoked after this many calls (401 invalid_token). */
  tokenUses?: number;
  /** Where the RFC 8414 metadata of an `oauth2Issuer` is served: `appended` after the issuer's path, not inserted before it. */
  issuerMetadata?: 'appended';
}

interface Quirk extends QuirkHooks {
  description: string;
  /** Where the behaviour was recorded. */
  source: string;
}

export const QUIRKS = {
  external: {
    description:
      'info says authType ["external"] and names no OAuth server; calls come without a token and are the organization\'s (acme); a token is refused',
    source: 'certomancer-csc-dummy (pyHanko CI); CSC v1.0.4 §11.1 authType external',
    info: (body) => {
      const { oauth2: _oauth2, oauth2Issuer: _issuer, ...rest } = body;
      return {
        ...rest,
        authType: ['external'],
        methods: (body['methods'] as string[]).filter((method) => method !== 'auth/login'),
      };
    },
    caller: { user: SANDBOX_ORGANIZATION, clientId: SANDBOX_SEAL.clientId },
  },
  'chain-without-root': {
    description: 'certificates "chain" returns the signer and the issuing CA, not the root',
    source: 'SetaPDF-Signer-Addon-CSC 4837fa9, examples/ltv-demo.php (SSL.com)',
    chain: (chain) => chain.slice(0, -1),
  },
  'signer-only': {
    description: 'certificates "chain" returns only the signer\'s certificate',
    source: 'CSC v1.0.4 §11.5 (the default "single", as services that ignore the parameter answer)',
    chain: (chain) => chain.slice(0, 1),
  },
  'expired-enabled': {
    description: 'a credential whose certificate expired is still reported key/status enabled, cert/status valid',
    source: 'certomancer-csc-dummy (its testing-ca/signer1 credentials)',
    keepsExpiredEnabled: true,
  },
  'no-cert-info': {
    description: 'credentials/info with certInfo true answers HTTP 501 Not Implemented',
    source: 'certomancer-csc-dummy csc_dummy_server.py credentials_info ("TODO implement certInfo")',
    refusesCertInfo: true,
  },
  'html-errors': {
    description: 'error answers are an HTML page (text/html), not {error, error_description}',
    source: 'SSLcom/esigner-codesign issue 40 (CodeSignTool: "Unexpected character (<) at position 0")',
    answer: (_route, response) =>
      response.status < 400
        ? response
        : {
            status: response.status,
            headers: { 'content-type': 'text/html; charset=utf-8' },
            body: `<!DOCTYPE html>\n<html><head><title>${response.status} Error</title></head><body><h1>Request rejected</h1></body></html>`,
          },
  },
  'error-with-200': {
    description: 'errors of the CSC methods come with HTTP 200 and the {error, error_description} body',
    source: 'a public C# client of Ascertia ADSS (Viettel MobileCA) reads error from every answer (inferred)',
    answer: (route, response) =>
      response.status >= 400 && route.includes(' /csc/') ? { ...response, status: 200 } : response,
  },
  'no-expires-in': {
    description: 'token answers omit expires_in',
    source: 'a-sit-plus/valera SigningService.kt getTokenFromAuthCode() ("currently missing expires_in")',
    answer: (route, response) =>
      route.endsWith(' /oauth2/token') ? withJson(response, ({ expires_in: _gone, ...rest }) => rest) : response,
  },
  'empty-authorization-details': {
    description: 'token answers carry authorization_details present but empty',
    source: 'a-sit-plus/valera SigningService.kt getTokenFromAuthCode() ("authorizationDetails are set but empty")',
    answer: (route, response) =>
      route.endsWith(' /oauth2/token')
        ? withJson(response, (body) => ({ ...body, authorization_details: [] }))
        : response,
  },
  'list-without-infos': {
    description: 'v2 credentials/list returns the ids but no credentialInfos, though asked for them',
    source: 'a-sit-plus/valera commit 75d4d68e, PR 221 (Namirial)',
    answer: (route, response) =>
      route.endsWith(' /csc/v2/credentials/list')
        ? withJson(response, ({ credentialInfos: _gone, ...rest }) => rest)
        : response,
  },
  'oauth2-authorize-url': {
    description: 'info.oauth2 is the full …/oauth2/authorize URL instead of the base URI',
    source: 'SetaPDF-Signer-Addon-CSC src/Client.php getOauth2Info() (Entrust, A-Trust, SSL.com set)',
    info: (body) =>
      typeof body['oauth2'] === 'string' ? { ...body, oauth2: `${body['oauth2']}/oauth2/authorize` } : body,
  },
  'unknown-auth-mode': {
    description: 'credentials/info says authMode (v2: auth/mode) oauth2token, a value of CSC 1.0.3.0',
    source: 'vincent-vega/csctester authorize_test (Time4Mind); CSC 1.0.3.0 OpenAPI',
    answer: (route, response) =>
      route.endsWith('/credentials/info')
        ? withJson(response, (body) =>
            body['auth']
              ? { ...body, auth: { ...(body['auth'] as object), mode: 'oauth2token' } }
              : { ...body, authMode: 'oauth2token' },
          )
        : response,
  },
  'oauth-elsewhere': {
    description:
      'the OAuth server is not under the API base and info names none: /oauth2/* answers 404, the server is at {base}/login/oauth2/*',
    source:
      'jsign ESignerSigningService.java (SSL.com: login.ssl.com); valera QtspConfig ATRUST (OAuth under /csc/v1 of a v2 API)',
    info: ({ oauth2: _oauth2, oauth2Issuer: _issuer, ...rest }) => rest,
    request: (request) => {
      if (request.path.startsWith('/oauth2/'))
        return json(404, { error: 'not_found', error_description: `no such endpoint: ${request.path}` });
      return request.path.startsWith('/login/oauth2/')
        ? { ...request, path: request.path.slice('/login'.length) }
        : request;
    },
  },
  'json-token-request': {
    description: 'the token endpoint takes a JSON body only; a form is refused with 400',
    source:
      'SetaPDF-Signer-Addon-CSC examples/generate-token.php; jsign RESTClient.java (SSL.com); eideasy/eid-sample-app CscApiController.php',
    request: (request) => {
      if (!isTokenRequest(request)) return request;
      const body = jsonBody(request);
      if (!(request.headers['content-type'] ?? '').startsWith('application/json') || !body)
        return json(400, { error: 'invalid_request', error_description: 'The request body must be a JSON object.' });
      const form = new URLSearchParams(
        Object.entries(body).map(([name, value]): [string, string] => [name, String(value)]),
      );
      return {
        ...request,
        headers: { ...request.headers, 'content-type': 'application/x-www-form-urlencoded' },
        body: Buffer.from(form.toString()),
      };
    },
  },
  'client-auth-body': {
    description:
      'the token endpoint refuses HTTP Basic client authentication and reads client_id and client_secret from the body',
    source:
      'jsign getAccessToken (SSL.com); eideasy/eid-sample-app CscApiController.php (client_secret posted in the body)',
    request: (request) => {
      if (!isTokenRequest(request)) return request;
      if (request.headers['authorization'])
        return json(401, {
          error: 'invalid_client',
          error_description: 'Client authentication with HTTP Basic is not supported; send client_secret in the body.',
        });
      const form = new URLSearchParams(request.body.toString('utf8'));
      const [id, secret] = [form.get('client_id'), form.get('client_secret')];
      if (!id || secret === null)
        return json(401, {
          error: 'invalid_client',
          error_description: 'client_id and client_secret are required in the body.',
        });
      return {
        ...request,
        headers: { ...request.headers, authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` },
      };
    },
  },
  'password-grant': {
    description:
      "the token endpoint grants scope service to the password grant (the organization's user, client_id alone) and refuses client_credentials",
    source:
      'jsign ESignerSigningService.java getAccessToken (SSL.com eSigner: grant_type=password); tiddlyinstall web/sign-services.js',
    request: (request) => {
      if (!isTokenRequest(request)) return request;
      const form = new URLSearchParams(request.body.toString('utf8'));
      const grant = form.get('grant_type');
      if (grant === 'client_credentials')
        return json(400, {
          error: 'unsupported_grant_type',
          error_description: 'Only grant_type=password and authorization_code are supported.',
        });
      if (grant !== 'password') return request;
      const known =
        form.get('client_id') === SANDBOX_SEAL.clientId &&
        form.get('username') === SANDBOX_SEAL.username &&
        sameText(form.get('password') ?? '', SANDBOX_SEAL.password);
      if (!known)
        return json(400, { error: 'invalid_grant', error_description: 'The user name or password is wrong.' });
      // The organization's user signs in: served as the organization's client, whatever client authentication came.
      const served = new URLSearchParams({
        grant_type: 'client_credentials',
        scope: 'service',
        client_id: SANDBOX_SEAL.clientId,
      });
      const basic = Buffer.from(`${SANDBOX_SEAL.clientId}:${SANDBOX_SEAL.clientSecret}`).toString('base64');
      return {
        ...request,
        headers: {
          ...request.headers,
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${basic}`,
        },
        body: Buffer.from(served.toString()),
      };
    },
  },
  'base64-authorize-hash': {
    description:
      "the authorization URL's hash (v1) or hashes (v2) must be standard base64, padded; base64url is refused",
    source:
      'SetaPDF-Signer-Addon-CSC examples/async-demo.php (Entrust, A-Trust, SSL.com set); eideasy/eid-sample-app CscApiController.php',
    request: (request) => {
      const name = request.query.has('hashes') ? 'hashes' : 'hash';
      const text = request.query.get(name);
      if (request.method !== 'GET' || request.path !== '/oauth2/authorize' || text === null) return request;
      const hashes = text.split(',');
      if (hashes.some((hash) => !/^[A-Za-z0-9+/]+={1,2}$/.test(hash)))
        return html(
          400,
          '<!DOCTYPE html><html><body><h1>Invalid parameter hash: standard base64 expected</h1></body></html>',
        );
      const query = new URLSearchParams(request.query);
      query.set(name, hashes.map((hash) => Buffer.from(hash, 'base64').toString('base64url')).join(','));
      return { ...request, query };
    },
  },
  'v0-paths': {
    description: 'the API is CSC "v0": /csc/v0/… with the v1.0.4 field names; /csc/v1/… answers 404',
    source:
      'jsign ESignerSigningService.java (SSL.com cs.ssl.com/csc/v0); vincent-vega/csctester (Time4Mind, GlobalSign, Transsped)',
    info: (body) => (body['specs'] === '1.0.4.0' ? { ...body, specs: '0.1.7.9' } : body),
    request: (request) => {
      if (request.path.startsWith('/csc/v1/'))
        return json(404, { error: 'not_found', error_description: `no such endpoint: ${request.path}` });
      return request.path.startsWith('/csc/v0/')
        ? { ...request, path: `/csc/v1/${request.path.slice('/csc/v0/'.length)}` }
        : request;
    },
  },
  'account-token': {
    description:
      'the authorization server is restricted: /oauth2/authorize needs a valid account_token (§8.3.1: HS256 keyed by SHA-256 of the client secret, azp the client, iat within 10 minutes)',
    source: 'CSC v1.0.4 §8.3.1; developer.zealid.com authorize (mandatory); vidua.nl account-tokens (Cleverbase)',
    request: (request) => {
      if (request.method !== 'GET' || request.path !== '/oauth2/authorize') return request;
      const why = accountTokenFault(request.query.get('account_token'), request.query.get('client_id'));
      return why ? html(403, `<!DOCTYPE html><html><body><h1>access_denied</h1><p>${why}</p></body></html>`) : request;
    },
  },
  'client-data-filter': {
    description: 'credentials/list answers an empty list unless clientData is "EVCS" (not an error)',
    source:
      'jsign aliases() (clientData "EVCS"); tiddlyinstall web/sign-services.js ("found on the sandbox, 2026-09-20", SSL.com)',
    request: (request) => {
      if (!/^\/csc\/v[0-2]\/credentials\/list$/.test(request.path) || jsonBody(request)?.['clientData'] === 'EVCS')
        return request;
      return json(
        200,
        request.path.startsWith('/csc/v2/') ? { credentialIDs: [], credentialInfos: [] } : { credentialIDs: [] },
      );
    },
  },
  'api-key': {
    description:
      "every API and token call needs the header x-api-key with the sandbox's API key (SANDBOX_API_KEY); without it, 401 (the browser pages need none)",
    source: 'dev.digicert.com content-trust-api (DigiCert Document Trust Manager: x-api-key)',
    request: (request) =>
      request.path.startsWith('/oauth2/authorize') || sameText(request.headers['x-api-key'] ?? '', SANDBOX_API_KEY)
        ? request
        : json(401, {
            error: 'invalid_request',
            error_description: 'A valid API key is required in the x-api-key header.',
          }),
  },
  'short-sad': {
    description: 'SADs (credentials/authorize, extendTransaction, v2 credential tokens) live 5 s: expiresIn 5',
    source:
      'CSC v1.0.4 §11.7 (extendTransaction "when signature operations take longer than allowed by the expiresIn value"); Time4Mind csctester extend_test; DigiCert DTM',
    sadLifetimeS: 5,
  },
  'revokes-tokens': {
    description: 'a service token is revoked after 3 calls: the next answers 401 invalid_token',
    source: 'RFC 6750 §3.1 (invalid_token: "revoked"); CSC v1.0.4 §11.3 auth/revoke',
    tokenUses: 3,
  },
  'lowercase-token-type': {
    description:
      'token answers say token_type "bearer" ("sad" for v1 credential tokens), and calls must use the scheme "Bearer" exactly',
    source:
      'CSC v1.0.4 §8.3.2 token_type SAD; a-sit-plus/valera SigningService.kt builds "${tokenType} ${accessToken}"',
    answer: (route, response) =>
      / \/oauth2\/token$| \/csc\/v\d\/auth\/login$/.test(route)
        ? withJson(response, (body) => ({ ...body, token_type: String(body['token_type']).toLowerCase() }))
        : response,
    request: (request) => {
      const scheme = /^(\S+)\s/.exec(request.headers['authorization'] ?? '')?.[1];
      return request.path.startsWith('/csc/') && scheme !== undefined && scheme !== 'Bearer' && scheme !== 'Basic'
        ? json(401, { error: 'invalid_token', error_description: `Unknown authorization scheme ${scheme}` })
        : request;
    },
  },
  'issuer-metadata-appended': {
    description:
      'v2 info names its OAuth server only by oauth2Issuer, whose RFC 8414 metadata is at {issuer}/.well-known/oauth-authorization-server (appended), not path-inserted',
    source:
      'eu-digital-identity-wallet eudi-lib-jvm-rqes-kt DefaultAuthorizationServerMetadataResolver.kt ("CommonDeviation")',
    info: (body) =>
      String(body['specs']).startsWith('2') && typeof body['oauth2'] === 'string' ? withoutOauth2(body) : body,
    issuerMetadata: 'appended',
  },
  'issuer-only': {
    description:
      'v2 info names its OAuth server only by oauth2Issuer (RFC 8414 metadata, path-inserted), with no oauth2 base URI',
    source: 'CSC v2.0.0.2 §11.1 (oauth2Issuer); RFC 8414 §3.1',
    info: (body) =>
      String(body['specs']).startsWith('2') && typeof body['oauth2'] === 'string' ? withoutOauth2(body) : body,
  },
  'odd-credential-ids': {
    description: `credential IDs hold "/", "+" and a space (each sandbox ID X is shown as ${JSON.stringify(oddCredentialID('X'))})`,
    source:
      'certomancer-csc-dummy README (testing-ca/signer1); jsign docs (SSL.com UUIDs); CSC v1.0.4 §11.4 (credentialID: String)',
    answer: (_route, response) =>
      withJson(response, (body) => mapCredentialIDs(body, oddCredentialID) as Record<string, unknown>),
    request: (request) => {
      const body = jsonBody(request);
      const query = new URLSearchParams(request.query);
      const id = query.get('credentialID');
      if (id !== null) query.set('credentialID', plainCredentialID(id));
      const details = query.get('authorization_details');
      const parsed = details === null ? undefined : parsedJson(details);
      if (parsed !== undefined)
        query.set('authorization_details', JSON.stringify(mapCredentialIDs(parsed, plainCredentialID)));
      return {
        ...request,
        query,
        ...(body ? { body: Buffer.from(JSON.stringify(mapCredentialIDs(body, plainCredentialID))) } : {}),
      };
    },
  },
  'leading-zero-pin': {
    description: `the seals' PIN is ${LEADING_ZERO_PIN} (format N, a leading zero); a PIN that is not a JSON string is refused`,
    source:
      'CSC v1.0.4 §11.6 (PIN: String) and §11.5 (PIN format "N"): a numeric PIN, whose leading zero a JSON number would lose',
    request: (request) => {
      const body = request.path.endsWith('/credentials/authorize') ? jsonBody(request) : undefined;
      if (!body) return request;
      // The sandbox's seals check their own PIN: the quirk's PIN stands for it, and the old one no longer opens them.
      const own = (pin: unknown) =>
        pin === LEADING_ZERO_PIN ? SANDBOX_SEAL.pin : pin === SANDBOX_SEAL.pin ? 'not-the-pin' : pin;
      const authData = Array.isArray(body['authData'])
        ? body['authData'].map((item: Record<string, unknown>) =>
            item?.['id'] === 'PIN' ? { ...item, value: own(item['value']) } : item,
          )
        : body['authData'];
      const read = {
        ...body,
        ...(body['PIN'] === undefined ? {} : { PIN: own(body['PIN']) }),
        ...(authData === undefined ? {} : { authData }),
      };
      return { ...request, body: Buffer.from(JSON.stringify(read)) };
    },
  },
  // The trusted lists under /trust (src/sandbox/trust-lists.ts read these names; the signing service ignores them).
  'tl-expired': {
    description: 'the TEST national list ZZ is past its next update (issued 60 days ago, next update 30 days ago)',
    source: 'ETSI TS 119 612 §5.3.14 NextUpdate; TS 119 615 (an expired list gives no current status)',
  },
  'tl-broken-signature': {
    description: 'the TEST national list ZZ has a byte changed after it was signed',
    source: 'ETSI TS 119 612 §5.7 (the list signature)',
  },
  'tl-unreachable': {
    description: 'the TEST LOTL points ZZ to an address that refuses connections',
    source: 'national lists down or moved (the LOTL keeps pointing to the old address)',
  },
  'tl-withdrawn-service': {
    description: 'the TEST list ZZ says the issuing CA was withdrawn an hour ago (granted before)',
    source: 'ETSI TS 119 612 §5.5.4 ServiceStatus withdrawn, with ServiceHistory',
  },
  // The PKI's OCSP responder and CRLs under /pki (src/sandbox/pki-routes.ts reads this name).
  'sha1-revocation': {
    description: 'the OCSP responder and the CRLs sign with SHA-1 (sha1WithRSAEncryption)',
    source:
      'older CAs and responders; ETSI TS 119 312 no longer accepts SHA-1 for signatures (esign verify: weak, exit 12)',
  },
  'lotl-pivot': {
    description:
      'the TEST LOTL is signed by a rotated key; the pivot LOTL it names, signed by the announced key, hands over to it',
    source: 'ETSI TS 119 612 Annex D (LOTL signing certificate rotation, pivot LOTLs)',
  },
} satisfies Record<string, Quirk>;

function isTokenRequest(request: SandboxRequest): boolean {
  return request.method === 'POST' && request.path === '/oauth2/token';
}

function sameText(a: string, b: string): boolean {
  const [left, right] = [Buffer.from(a), Buffer.from(b)];
  return left.length === right.length && timingSafeEqual(left, right);
}

/** What is wrong with an account_token (§8.3.1), or undefined when it is valid for this client. */
function accountTokenFault(token: string | null, clientId: string | null): string | undefined {
  if (!token) return 'account_token is required';
  const secret = [SANDBOX_SECRETS, { clientId: SANDBOX_SEAL.clientId, clientSecret: SANDBOX_SEAL.clientSecret }].find(
    (client) => client.clientId === clientId,
  )?.clientSecret;
  const [header, payload, signature] = token.split('.');
  if (!secret || !header || !payload || !signature) return 'account_token is malformed';
  const key = createHash('sha256').update(secret).digest();
  if (!sameText(signature, createHmac('sha256', key).update(`${header}.${payload}`).digest('base64url')))
    return 'account_token signature is invalid';
  const parsed = [header, payload].map((part) => {
    try {
      return JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;
    } catch {
      return {};
    }
  }) as [Record<string, unknown>, Record<string, unknown>];
  const [head, claims] = parsed;
  if (head['alg'] !== 'HS256' || head['typ'] !== 'JWT') return 'account_token header must be {typ: JWT, alg: HS256}';
  if (typeof claims['sub'] !== 'string' || typeof claims['jti'] !== 'string' || claims['azp'] !== clientId)
    return 'account_token needs sub, jti and azp (the client_id)';
  if (typeof claims['iat'] !== 'number' || Math.abs(Date.now() / 1000 - claims['iat']) > 600)
    return 'account_token is too old';
  return undefined;
}

/** JSON text parsed; undefined when it is not JSON (the service refuses it as it is). */
function parsedJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function withoutOauth2(body: Record<string, unknown>): Record<string, unknown> {
  const { oauth2, ...rest } = body;
  return { ...rest, oauth2Issuer: String(oauth2) };
}

export function oddCredentialID(id: string): string {
  return `${ODD_PREFIX}${id}${ODD_SUFFIX}`;
}
/** The sandbox's own ID of an odd one; anything else (the plain ID, a wrong one) made unknown, for the service to refuse. */
function plainCredentialID(id: string): string {
  return id.startsWith(ODD_PREFIX) && id.endsWith(ODD_SUFFIX)
    ? id.slice(ODD_PREFIX.length, -ODD_SUFFIX.length)
    : `unknown:${id}`;
}

/** `credentialID` members and `credentialIDs` arrays, wherever they are in a JSON value, mapped. */
function mapCredentialIDs(value: unknown, map: (id: string) => string): unknown {
  if (Array.isArray(value)) return value.map((item) => mapCredentialIDs(item, map));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      key,
      key === 'credentialID' && typeof item === 'string'
        ? map(item)
        : key === 'credentialIDs' && Array.isArray(item)
          ? item.map((id) => (typeof id === 'string' ? map(id) : id))
          : mapCredentialIDs(item, map),
    ]),
  );
}

/** A JSON answer with its body changed; any other answer as it is. */
function withJson(
  response: SandboxResponse,
  change: (body: Record<string, unknown>) => Record<string, unknown>,
): SandboxResponse {
  const body = response.body;
  if (
    response.status !== 200 ||
    body === null ||
    typeof body !== 'object' ||
    Array.isArray(body) ||
    body instanceof Uint8Array
  )
    return response;
  return { ...response, body: change(body as Record<string, unknown>) };
}

export type QuirkName = keyof typeof QUIRKS;
export const QUIRK_NAMES = Object.keys(QUIRKS) as QuirkName[];
/** The quirks of the TEST trusted lists (src/sandbox/trust-lists.ts): the signing service is the same under them. */
export const TRUST_LIST_QUIRKS: readonly QuirkName[] = [
  'tl-expired',
  'tl-broken-signature',
  'tl-unreachable',
  'tl-withdrawn-service',
  'lotl-pivot',
];

/** The quirks of the sandbox PKI's OCSP responder and CRLs (src/sandbox/pki-routes.ts): the signing service is the same under them. */
export const PKI_QUIRKS: readonly QuirkName[] = ['sha1-revocation'];

export function isQuirkName(name: string): name is QuirkName {
  return Object.hasOwn(QUIRKS, name);
}

/** The quirks switched on in one sandbox; both dialects of the signing service read the same set. */
export class SandboxQuirks {
  private readonly on = new Set<QuirkName>();

  constructor(names: readonly QuirkName[] = []) {
    this.set(names);
  }

  /** Switches on exactly these quirks. */
  set(names: readonly QuirkName[]): void {
    this.on.clear();
    for (const name of names) this.on.add(name);
  }

  list(): QuirkName[] {
    return [...this.on];
  }

  /** In the order of QUIRKS, so that a request is rewritten the same way whatever order they were named in. */
  private hooks(): Quirk[] {
    return QUIRK_NAMES.filter((name) => this.on.has(name)).map((name) => QUIRKS[name] as Quirk);
  }

  /** A request as the quirks switched on take it: rewritten for the sandbox's routes, or answered at once. */
  request(request: SandboxRequest): SandboxRequest | SandboxResponse {
    let bent: SandboxRequest = request;
    for (const quirk of this.hooks()) {
      const next = quirk.request?.(bent) ?? bent;
      if ('status' in next) return next;
      bent = next;
    }
    return bent;
  }

  info(body: Record<string, unknown>): Record<string, unknown> {
    return this.hooks().reduce((answer, quirk) => quirk.info?.(answer) ?? answer, body);
  }

  chain(chain: Uint8Array[]): Uint8Array[] {
    return this.hooks().reduce((answer, quirk) => quirk.chain?.(answer) ?? answer, chain);
  }

  get keepsExpiredEnabled(): boolean {
    return this.hooks().some((quirk) => quirk.keepsExpiredEnabled);
  }

  /** An answer of the signing service as the quirks switched on word it. */
  answer(route: string, response: SandboxResponse): SandboxResponse {
    return this.hooks().reduce((answer, quirk) => quirk.answer?.(route, answer) ?? answer, response);
  }

  get refusesCertInfo(): boolean {
    return this.hooks().some((quirk) => quirk.refusesCertInfo);
  }

  get sadLifetimeS(): number | undefined {
    return this.hooks().find((quirk) => quirk.sadLifetimeS)?.sadLifetimeS;
  }

  get tokenUses(): number | undefined {
    return this.hooks().find((quirk) => quirk.tokenUses)?.tokenUses;
  }

  get issuerMetadata(): 'appended' | undefined {
    return this.hooks().find((quirk) => quirk.issuerMetadata)?.issuerMetadata;
  }

  get caller(): { user: string; clientId: string } | undefined {
    return this.hooks().find((quirk) => quirk.caller)?.caller;
  }
}
