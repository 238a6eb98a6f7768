/**
 * The sandbox signing service speaking CSC API v2.0.0.2, under `/signing-v2`: the same users,
 * credentials and keys as `/signing`, with its own tokens. `/oauth2/*` as in v1 (the
 * authorization request of scope credential takes `hashes` + `hashAlgorithmOID`, or RFC 9396
 * `authorization_details`), and `/csc/v2/info`, `credentials/list`, `credentials/info`,
 * `signatures/signHash`.
 *
 * Errors are HTTP statuses with `{error, error_description}` as the v2 specification words them:
 * 400 `invalid_request` ("Invalid parameter SAD", "SAD expired", …), 401 `invalid_token`.
 */
import { OID } from '../../core/cms/oids.js';
import type { SandboxDeps } from '../deps.js';
import { bearerToken, json, type Router } from '../http.js';
import { CMS_SHA256_WITH_RSA, CSC_SIGN_ALGO_RSA } from '../../core/csc/shapes.js';
import {
  csc,
  cscCall,
  infoOptions,
  mountCredentialAuthorization,
  mountInfo,
  mountOAuth,
  optionalString,
  requiredString,
  signingService,
  standardBase64Hashes,
  type HashArrayWords,
} from './routes.js';
import { SigningServiceError } from './service.js';

export { V2_METHODS, V2_SPECS } from './routes.js';

export function mountSigningV2(router: Router, deps: SandboxDeps): void {
  const service = signingService(deps, 2);
  mountOAuth(router, deps, service);
  mountCredentialAuthorization(router, service, 2);
  mountAppendedOAuthMetadata(router, deps);

  mountInfo(router, deps, 2, {
    asynchronousOperationMode: false,
    signAlgorithms: {
      algos: [
        CSC_SIGN_ALGO_RSA,
        CMS_SHA256_WITH_RSA,
        OID.rsassaPss,
        OID.ecdsaWithSHA256,
        OID.ecdsaWithSHA384,
        OID.ecdsaWithSHA512,
      ],
    },
    // Required by §11.1 although they describe signDoc, which this service does not offer.
    signature_formats: { formats: ['C', 'P'], envelope_properties: [['Detached'], ['Certification', 'Revision']] },
    conformance_levels: ['Ades-B-B', 'Ades-B-T'],
  });

  router.post('/csc/v2/credentials/list', (request) =>
    csc(service, request, (body, holder) => {
      // With user-specific (oauth2code) authorization the token names the user.
      if (body['userID'] !== undefined && body['userID'] !== null) throw invalid('userID parameter MUST be null');
      optionalString(body['lang'], 'lang');
      optionalString(body['clientData'], 'clientData');
      return service.listCredentialsV2(holder.user, {
        credentialInfo: optionalBoolean(body['credentialInfo'], 'credentialInfo'),
        onlyValid: optionalBoolean(body['onlyValid'], 'onlyValid'),
        ...infoOptions(body, invalid),
      });
    }),
  );

  router.post('/csc/v2/credentials/info', (request) =>
    csc(service, request, (body, holder) => {
      const credentialID = v2String(body['credentialID'], 'credentialID');
      optionalString(body['lang'], 'lang');
      optionalString(body['clientData'], 'clientData');
      return service.credentialInfoV2(holder.user, credentialID, infoOptions(body, invalid));
    }),
  );

  router.post('/csc/v2/signatures/signHash', (request) =>
    cscCall(request, (body) => {
      const credentialID = v2String(body['credentialID'], 'credentialID');
      const sad = optionalString(body['SAD'], 'SAD');
      const hashes = standardBase64Hashes(body['hashes'], V2_HASH_WORDS);
      const hashAlgorithmOID = optionalString(body['hashAlgorithmOID'], 'hashAlgorithmOID');
      const signAlgo = v2String(body['signAlgo'], 'signAlgo');
      if (body['signAlgoParams'] !== undefined && typeof body['signAlgoParams'] !== 'string')
        throw invalid('Missing (or invalid type) string parameter signAlgoParams');
      const signAlgoParams = body['signAlgoParams'] as string | undefined;
      // Only synchronous signing (S) is offered: info says asynchronousOperationMode false.
      const operationMode = optionalString(body['operationMode'], 'operationMode');
      if (operationMode !== undefined && operationMode !== 'S') throw invalid('Invalid parameter operationMode');
      optionalString(body['clientData'], 'clientData');
      const signatures = service.signHashV2(bearerToken(request), {
        credentialID,
        ...(sad !== undefined ? { sad } : {}),
        hashes,
        ...(hashAlgorithmOID !== undefined ? { hashAlgorithmOID } : {}),
        signAlgo,
        ...(signAlgoParams !== undefined ? { signAlgoParams } : {}),
      });
      return { signatures };
    }),
  );
}

const V2_HASH_WORDS: HashArrayWords = {
  missing: 'Missing (or invalid type) array parameter hashes',
  empty: 'Empty hash array',
  encoding: 'Invalid Base64 hash string parameter',
  length: 'Invalid digest value length',
};

function invalid(description: string): SigningServiceError {
  return new SigningServiceError(400, 'invalid_request', description);
}

/** The v2 wording of a missing parameter: "Missing (or invalid type) string parameter credentialID". */
function v2String(value: unknown, name: string): string {
  if (typeof value !== 'string' || value === '') throw invalid(`Missing (or invalid type) string parameter ${name}`);
  return requiredString(value, name);
}

function optionalBoolean(value: unknown, name: string): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw invalid(`Invalid parameter ${name}: a boolean is expected`);
  return value;
}

/**
 * RFC 8414 §3: the v2 service's authorization server metadata at
 * `{origin}/.well-known/oauth-authorization-server/signing-v2`, for clients that find the OAuth
 * server by its issuer (`oauth2Issuer` in info) rather than a base URI (`oauth2`).
 */
export function mountOAuthMetadata(router: Router, deps: SandboxDeps): void {
  router.get('/oauth-authorization-server/signing-v2', () =>
    deps.quirks.issuerMetadata === 'appended' ? notFound() : oauthMetadata(deps),
  );
}

/** The quirk issuer-metadata-appended: the same metadata at `{issuer}/.well-known/oauth-authorization-server` only. */
export function mountAppendedOAuthMetadata(router: Router, deps: SandboxDeps): void {
  router.get('/.well-known/oauth-authorization-server', () =>
    deps.quirks.issuerMetadata === 'appended' ? oauthMetadata(deps) : notFound(),
  );
}

function notFound() {
  return json(404, { error: 'not_found', error_description: 'no such endpoint' });
}

function oauthMetadata(deps: SandboxDeps) {
  const issuer = deps.urls.signingV2;
  return json(200, {
    issuer,
    authorization_endpoint: `${issuer}/oauth2/authorize`,
    token_endpoint: `${issuer}/oauth2/token`,
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'client_credentials'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['client_secret_basic'],
    scopes_supported: ['service', 'credential'],
  });
}
