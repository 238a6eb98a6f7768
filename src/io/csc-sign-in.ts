/**
 * How esign signs in to a CSC signing service: one port, one adapter per way (serviceAuth). The
 * client asks its strategy for a service token when none is cached; `external` has none, and the
 * calls then carry no Authorization header (the service is reached through a LAN, a VPN, a gateway).
 */
import { EsignError, isEsignError } from '../core/errors.js';
import {
  buildAuthLoginRequest,
  buildClientCredentialsTokenRequest,
  buildPasswordTokenRequest,
  type CscPathVersion,
  type TokenEndpoint,
} from '../core/csc/requests.js';
import { processServiceSignInResponse } from '../core/csc/responses.js';
import type { PreparedRequest, ServiceSignIn } from '../core/csc/shapes.js';
import type { ServiceAuthSetting } from '../core/profile.js';
import type { TokenStore } from './token-store.js';

/** One way of signing in to the signing service. */
export interface SignInStrategy {
  readonly setting: ServiceAuthSetting;
  /** Whether a person at a browser finishes it. */
  readonly needsBrowser: boolean;
  /** A new service token; undefined when the service takes calls without one. */
  signIn(): Promise<ServiceSignIn | undefined>;
}

/** What the adapters need of the client: its settings, its way to send a request, where tokens go. */
export interface SignInDeps {
  baseUrl: string;
  tokens: TokenStore;
  refreshTokenKey?: string;
  /** `basic` and `password`: the user's name and password. */
  login?: { username: string; password: string };
  /** The token endpoint and how to talk to it, once the service's info is read. */
  tokenEndpoint(): TokenEndpoint;
  /** The CSC version of the paths spoken (0 for /csc/v0/), once found out. */
  version(): Promise<CscPathVersion | 2>;
  /** The browser step of scope service (the client's, shared with approvals). */
  browserSignIn(): Promise<ServiceSignIn>;
  call<T>(
    request: PreparedRequest,
    retry: 'idempotent' | 'never',
    process: (status: number, body: Buffer) => T,
  ): Promise<T>;
}

export function signInStrategy(setting: ServiceAuthSetting, deps: SignInDeps): SignInStrategy {
  return STRATEGIES[setting](deps);
}

const STRATEGIES: Record<ServiceAuthSetting, (deps: SignInDeps) => SignInStrategy> = {
  browser: (deps) => ({ setting: 'browser', needsBrowser: true, signIn: () => deps.browserSignIn() }),
  'client-credentials': (deps) => ({
    setting: 'client-credentials',
    needsBrowser: false,
    signIn: () => clientCredentialsSignIn(deps),
  }),
  password: (deps) => ({ setting: 'password', needsBrowser: false, signIn: () => passwordSignIn(deps) }),
  basic: (deps) => ({ setting: 'basic', needsBrowser: false, signIn: () => loginSignIn(deps) }),
  external: () => ({ setting: 'external', needsBrowser: false, signIn: () => Promise.resolve(undefined) }),
};

/** The client's own credentials (RFC 6749 §4.4; CSC §8.3.3), for scope service. */
function clientCredentialsSignIn(deps: SignInDeps): Promise<ServiceSignIn> {
  const request = buildClientCredentialsTokenRequest(deps.tokenEndpoint());
  return deps.call(request, 'never', (status, body) =>
    processServiceSignInResponse(status, body, 'the client credentials token request'),
  );
}

/** The OAuth password grant (RFC 6749 §4.3), scope service: the user's name and password at the token endpoint. */
function passwordSignIn(deps: SignInDeps): Promise<ServiceSignIn> {
  // The settings' check refuses serviceAuth password without a user before any request.
  if (!deps.login)
    throw new EsignError(
      'CONFIG_MISSING',
      'The sign-in to the signing service is the password grant (serviceAuth password), and no user name and password are set.',
      { hint: 'Set ESIGN_SIGNING_USERNAME and ESIGN_SIGNING_PASSWORD.' },
    );
  const request = buildPasswordTokenRequest(deps.tokenEndpoint(), deps.login);
  return deps.call(request, 'never', (status, body) =>
    processServiceSignInResponse(status, body, 'the password grant token request'),
  );
}

/** auth/login: with the kept refresh token first; when that is refused, with the user's name and password. */
async function loginSignIn(deps: SignInDeps): Promise<ServiceSignIn> {
  const { login, refreshTokenKey, tokens } = deps;
  const version = await deps.version();
  const signIn = (credentials: { username: string; password: string } | { refreshToken: string }) =>
    deps.call(buildAuthLoginRequest(deps.baseUrl, version, credentials), 'never', (status, body) =>
      processServiceSignInResponse(status, body, 'auth/login'),
    );
  const kept = refreshTokenKey ? await tokens.get(refreshTokenKey) : undefined;
  let result: ServiceSignIn | undefined;
  if (kept) {
    try {
      result = await signIn({ refreshToken: kept.accessToken });
    } catch (error) {
      if (!isEsignError(error, 'AUTH_TOKEN_REJECTED')) throw error;
      await tokens.delete(refreshTokenKey!);
    }
  }
  if (!result) {
    if (!login) {
      throw new EsignError(
        'CONFIG_MISSING',
        'The sign-in to the signing service is auth/login (serviceAuth basic), and no user name and password are set.',
        {
          hint: 'Set ESIGN_SIGNING_USERNAME and ESIGN_SIGNING_PASSWORD.',
        },
      );
    }
    result = await signIn(login);
  }
  if (result.refreshToken && refreshTokenKey) {
    // Kept like the service token (0600, never printed); its lifetime is the service's to decide.
    await tokens.set(refreshTokenKey, {
      accessToken: result.refreshToken,
      tokenType: 'refresh',
      expiresAt: Number.MAX_SAFE_INTEGER,
    });
  }
  return result;
}
