/**
 * HTTP routes of the sandbox identity service (seed 001). Under `/identity`: `/oauth2/authorize`
 * with its QR and PIN pages, `/oauth2/token`, `/.well-known/openid-configuration`, `/jwks`; under
 * `/identity-legacy`: `/userinfo` (the document keeps it on the legacy host only).
 *
 * Test switches (sandbox only): `POST /identity/_sandbox/switches` with `{case, times?}` makes the
 * next logins end in one of the document's error cases, `{idToken, times?}` spoils the next ID
 * token (or userinfo `sub`) for the client's negative tests; `DELETE` clears them. The same cases
 * are reachable in the pages through designated test users (`challenge-expired`, …).
 */
import type { SandboxDeps } from '../deps.js';
import {
  basicCredentials,
  bearerToken,
  formBody,
  html,
  json,
  jsonBody,
  redirect,
  type Router,
  type SandboxRequest,
  type SandboxResponse,
} from '../http.js';
import { pickLang, type PageLang } from '../pages.js';
import { challengePage, errorPage, gonePage, pinPage } from './pages.js';
import {
  ID_TOKEN_FAULTS,
  IdentityError,
  IdentityProvider,
  REGISTERED_REDIRECT_URI,
  type AuthorizationRequest,
  type IdTokenFault,
  type Process,
} from './provider.js';
import { CASES, isIdentityCase, type IdentityCase } from './users.js';
import { CLAIMS_BY_SCOPE, KNOWN_SCOPES, TOKEN_CLAIMS } from '../../core/oidc/claims.js';

/** A second registered client, so that tests can see pairwise subjects differ per client. */
export const SECOND_CLIENT = { clientId: 'sandbox-relying-party', clientSecret: 'sandbox-rp-secret' } as const;
const TOKEN_HEADERS = { 'cache-control': 'no-store', pragma: 'no-cache' };

const providers = new WeakMap<SandboxDeps, Promise<IdentityProvider>>();

/** The one provider of a sandbox, shared by the `/identity` and `/identity-legacy` mounts. */
export function identityProvider(deps: SandboxDeps): Promise<IdentityProvider> {
  let provider = providers.get(deps);
  if (!provider) {
    provider = IdentityProvider.open({
      dataDir: deps.dataDir,
      issuer: deps.urls.identity,
      clock: deps.clock,
      clients: [
        {
          clientId: deps.secrets.clientId,
          clientSecret: deps.secrets.clientSecret,
          redirectUris: [REGISTERED_REDIRECT_URI],
        },
        { ...SECOND_CLIENT, redirectUris: [REGISTERED_REDIRECT_URI] },
      ],
    });
    providers.set(deps, provider);
  }
  return provider;
}

function pageLang(params: URLSearchParams): PageLang {
  return pickLang(params.get('ui_locales'), pickLang(params.get('lang'), 'nl'));
}

export async function mountIdentity(router: Router, deps: SandboxDeps): Promise<void> {
  const provider = await identityProvider(deps);
  deps.shared.introspectIdentityToken = (token) => provider.introspect(token);

  router.get('/.well-known/openid-configuration', () =>
    json(200, {
      issuer: provider.issuer,
      authorization_endpoint: `${deps.urls.identity}/oauth2/authorize`,
      token_endpoint: `${deps.urls.identity}/oauth2/token`,
      userinfo_endpoint: `${deps.urls.identityLegacy}/userinfo`,
      jwks_uri: `${deps.urls.identity}/jwks`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code'],
      subject_types_supported: ['pairwise'],
      id_token_signing_alg_values_supported: ['RS256'],
      token_endpoint_auth_methods_supported: ['client_secret_basic'],
      code_challenge_methods_supported: ['S256'],
      scopes_supported: [...KNOWN_SCOPES],
      claims_supported: [...TOKEN_CLAIMS, ...new Set(Object.values(CLAIMS_BY_SCOPE).flat())],
      ui_locales_supported: ['nl', 'en'],
    }),
  );

  router.get('/jwks', () => json(200, provider.jwks, { 'content-type': 'application/jwk-set+json' }));

  router.get('/oauth2/authorize', async (request) => {
    const lang = pageLang(request.query);
    const check = provider.checkAuthorizeRequest(request.query);
    if (check.kind === 'fatal') return html(400, errorPage(lang, check.description));
    if (check.kind === 'redirect-error')
      return redirectError(check.redirectUri, check.state, check.error, check.description);
    if (deps.autoApprove) {
      const outcome = provider.approveAtOnce(check.request);
      return outcome.kind === 'code'
        ? redirectCode(check.request, outcome.code)
        : redirectCase(check.request, outcome.errorCase);
    }
    return challengeFor(request, lang, provider.startProcess(check.request));
  });

  /** What the QR code encodes: the phone's view of the same challenge. */
  router.get('/oauth2/authorize/scan', (request) => {
    const lang = pageLang(request.query);
    const process = provider.process(request.query.get('process') ?? '');
    return process ? challengeFor(request, lang, process) : html(400, gonePage(lang));
  });

  async function challengeFor(request: SandboxRequest, lang: PageLang, process: Process): Promise<SandboxResponse> {
    const { default: QRCode } = await import('qrcode');
    const scanUrl = `${request.baseUrl}/oauth2/authorize/scan?process=${encodeURIComponent(process.id)}&ui_locales=${lang}`;
    const qrDataUrl = await QRCode.toDataURL(scanUrl, { width: 240, margin: 1 });
    const action = `${request.baseUrl}/oauth2/authorize/scan`;
    return html(
      200,
      challengePage({
        lang,
        action,
        process: process.id,
        clientId: process.request.clientId,
        qrDataUrl,
        expiresAt: process.challengeExpiresAt,
      }),
    );
  }

  router.post('/oauth2/authorize/scan', (request) => {
    const form = formBody(request);
    const lang = pickLang(form.get('lang'), 'nl');
    const process = provider.process(form.get('process') ?? '');
    if (!process) return html(400, gonePage(lang));
    if (form.get('action') === 'cancel') {
      provider.finish(process);
      return redirectCase(process.request, 'ConsentRejected');
    }
    try {
      const result = provider.scan(process, form.get('user') ?? '');
      if (result.kind === 'case') {
        provider.finish(process);
        return redirectCase(process.request, result.errorCase);
      }
    } catch (error) {
      if (error instanceof IdentityError) return html(400, errorPage(lang, error.description ?? error.error));
      throw error;
    }
    return html(200, pinFor(request, lang, process.id));
  });

  router.post('/oauth2/authorize/consent', (request) => {
    const form = formBody(request);
    const lang = pickLang(form.get('lang'), 'nl');
    const process = provider.process(form.get('process') ?? '');
    if (!process) return html(400, gonePage(lang));
    const decision = form.get('decision') === 'approve' ? 'approve' : 'refuse';
    if (decision === 'approve' && !/^\d{5}$/.test(form.get('pin') ?? ''))
      return html(200, pinFor(request, lang, process.id, true));
    try {
      const result = provider.consent(process, decision);
      provider.finish(process);
      return result.kind === 'code'
        ? redirectCode(process.request, result.code)
        : redirectCase(process.request, result.errorCase);
    } catch (error) {
      if (error instanceof IdentityError) return html(400, errorPage(lang, error.description ?? error.error));
      throw error;
    }
  });

  function pinFor(request: SandboxRequest, lang: PageLang, id: string, invalidPin = false): string {
    const process = provider.process(id);
    return pinPage({
      lang,
      action: `${request.baseUrl}/oauth2/authorize/consent`,
      process: id,
      clientId: process?.request.clientId ?? '',
      scopes: process?.request.scopes ?? [],
      user: process?.user?.id ?? '',
      expiresAt: process?.consentExpiresAt ?? 0,
      invalidPin,
    });
  }

  router.post('/oauth2/token', (request) => token(provider, request));

  router.post('/_sandbox/switches', (request) => {
    const body = jsonBody(request) ?? {};
    const times =
      typeof body['times'] === 'number' && Number.isInteger(body['times']) && body['times'] > 0 ? body['times'] : 1;
    const errorCase = body['case'];
    const idToken = body['idToken'];
    if (errorCase !== undefined) {
      if (!isIdentityCase(errorCase))
        return json(400, {
          error: 'invalid_request',
          error_description: `case must be one of ${Object.keys(CASES).join(', ')}`,
        });
      provider.armCase(errorCase, times);
    }
    if (idToken !== undefined) {
      if (!(ID_TOKEN_FAULTS as readonly unknown[]).includes(idToken))
        return json(400, {
          error: 'invalid_request',
          error_description: `idToken must be one of ${ID_TOKEN_FAULTS.join(', ')}`,
        });
      provider.armIdTokenFault(idToken as IdTokenFault, times);
    }
    return json(200, { ok: true });
  });

  router.post('/_sandbox/switches/clear', () => {
    provider.clearSwitches();
    return json(200, { ok: true });
  });
}

export async function mountIdentityLegacy(router: Router, deps: SandboxDeps): Promise<void> {
  const provider = await identityProvider(deps);
  router.get('/userinfo', (request) => {
    try {
      return json(200, provider.userinfo(bearerToken(request)));
    } catch (error) {
      if (!(error instanceof IdentityError)) throw error;
      const code = error.status === 403 ? 'insufficient_scope' : 'invalid_token';
      return json(
        error.status,
        { error: error.error, error_description: error.description },
        {
          'www-authenticate': `Bearer error="${code}", error_description="${error.description ?? ''}"`,
        },
      );
    }
  });
}

function redirectCode(request: AuthorizationRequest, code: string): SandboxResponse {
  const url = new URL(request.redirectUri);
  url.searchParams.set('code', code);
  url.searchParams.set('state', request.state);
  return redirect(url.toString());
}

function redirectCase(request: AuthorizationRequest, errorCase: IdentityCase): SandboxResponse {
  const spec = CASES[errorCase];
  return redirectError(request.redirectUri, request.state, spec.error, spec.description);
}

function redirectError(
  redirectUri: string,
  state: string | undefined,
  error: string,
  description: string | undefined,
): SandboxResponse {
  const url = new URL(redirectUri);
  url.searchParams.set('error', error);
  if (description !== undefined) url.searchParams.set('error_description', description);
  if (state !== undefined) url.searchParams.set('state', state);
  return redirect(url.toString());
}

function token(provider: IdentityProvider, request: SandboxRequest): SandboxResponse {
  const fail = (error: IdentityError): SandboxResponse =>
    json(
      error.status,
      { error: error.error, error_description: error.description },
      {
        ...TOKEN_HEADERS,
        ...(error.status === 401 ? { 'www-authenticate': 'Basic realm="esign sandbox identity service"' } : {}),
      },
    );
  if (!(request.headers['content-type'] ?? '').toLowerCase().startsWith('application/x-www-form-urlencoded')) {
    return fail(
      new IdentityError(400, 'invalid_request', 'The token request must be application/x-www-form-urlencoded.'),
    );
  }
  const basic = basicCredentials(request);
  if (!basic)
    return fail(new IdentityError(401, 'invalid_client', 'Client authentication with HTTP Basic is required.'));
  const client = provider.authenticateClient(basic.user, basic.password);
  if (!client) return fail(new IdentityError(401, 'invalid_client', 'Client authentication failed.'));
  const form = formBody(request);
  for (const name of new Set(form.keys())) {
    if (form.getAll(name).length > 1)
      return fail(new IdentityError(400, 'invalid_request', `The parameter ${name} is repeated.`));
  }
  const grantType = form.get('grant_type');
  if (!grantType) return fail(new IdentityError(400, 'invalid_request', 'The grant_type parameter is required.'));
  if (grantType !== 'authorization_code')
    return fail(new IdentityError(400, 'unsupported_grant_type', 'Only grant_type=authorization_code is supported.'));
  const clientId = form.get('client_id');
  if (!clientId) return fail(new IdentityError(400, 'invalid_request', 'The client_id parameter is required.'));
  if (clientId !== client.clientId)
    return fail(new IdentityError(401, 'invalid_client', 'The client_id differs from the authenticated client.'));
  // A sample request repeats the secret in the form: tolerated, but it must be the right one.
  const secretInBody = form.get('client_secret');
  if (secretInBody !== null && !provider.authenticateClient(clientId, secretInBody))
    return fail(new IdentityError(401, 'invalid_client', 'Client authentication failed.'));
  try {
    const grant = provider.exchangeCode(client, {
      code: form.get('code') ?? undefined,
      redirectUri: form.get('redirect_uri') ?? undefined,
      codeVerifier: form.get('code_verifier') ?? undefined,
    });
    return json(200, grant, TOKEN_HEADERS);
  } catch (error) {
    if (error instanceof IdentityError) return fail(error);
    throw error;
  }
}
