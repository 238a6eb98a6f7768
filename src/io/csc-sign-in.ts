/**
 * How esign signs in to a CSC signing service: one port, one adapter per way (serviceAuth). The
 * client asks its strategy for a service token when none is cached; `external` has none, and the
 * calls then carry no Authorization header (the service is reached through a LAN, a VPN, a gateway).
 */
import { EsignError, isEsignError } from '../core/errors.js';
import { buildAuthLoginRequest, buildClientCredentialsTokenRequest } from '../core/csc/requests.js';
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
  clientId: string;
  clientSecret: string;
  clientSecretInBody: boolean;
  tokens: TokenStore;
  refreshTokenKey?: string;
  login?: { username: string; password: string };
  /** The token endpoint, once the service's info is read. */
  tokenUrl(): string;
  /** The CSC major version spoken, once found out. */
  version(): Promise<1 | 2>;
  /** The browser step of scope service (the client's, shared with approvals). */
  browserSignIn(): Promise<ServiceSignIn>;
  call<T>(request: PreparedRequest, retry: 'idempotent' | 'never', process: (status: number, body: Buffer) => T): Promise<T>;
}

export function signInStrategy(setting: ServiceAuthSetting, deps: SignInDeps): SignInStrategy {
  return STRATEGIES[setting](deps);
}

const STRATEGIES: Record<ServiceAuthSetting, (deps: SignInDeps) => SignInStrategy> = {
  browser: (deps) => ({ setting: 'browser', needsBrowser: true, signIn: () => deps.browserSignIn() }),
  'client-credentials': (deps) => ({ setting: 'client-credentials', needsBrowser: false, signIn: () => clientCredentialsSignIn(deps) }),
  basic: (deps) => ({ setting: 'basic', needsBrowser: false, signIn: () => loginSignIn(deps) }),
  external: () => ({ setting: 'external', needsBrowser: false, signIn: () => Promise.resolve(undefined) }),
};

/** The client's own credentials (RFC 6749 §4.4; CSC §8.3.3), for scope service. */
function clientCredentialsSignIn(deps: SignInDeps): Promise<ServiceSignIn> {
  const { clientId, clientSecret, clientSecretInBody } = deps;
  const request = buildClientCredentialsTokenRequest({ tokenUrl: deps.tokenUrl(), clientId, clientSecret, clientSecretInBody });
  return deps.call(request, 'never', (status, body) => processServiceSignInResponse(status, body, 'the client credentials token request'));
}

/** auth/login: with the kept refresh token first; when that is refused, with the user's name and password. */
async function loginSignIn(deps: SignInDeps): Promise<ServiceSignIn> {
  const { login, refreshTokenKey, tokens } = deps;
  const version = await deps.version();
  const signIn = (credentials: { username: string; password: string } | { refreshToken: string }) =>
    deps.call(buildAuthLoginRequest(deps.baseUrl, version, credentials), 'never', (status, body) => processServiceSignInResponse(status, body, 'auth/login'));
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
      throw new EsignError('CONFIG_MISSING', 'The sign-in to the signing service is auth/login (serviceAuth basic), and no user name and password are set.', {
        hint: 'Set ESIGN_SIGNING_USERNAME and ESIGN_SIGNING_PASSWORD.',
      });
    }
    result = await signIn(login);
  }
  if (result.refreshToken && refreshTokenKey) {
    // Kept like the service token (0600, never printed); its lifetime is the service's to decide.
    await tokens.set(refreshTokenKey, { accessToken: result.refreshToken, tokenType: 'refresh', expiresAt: Number.MAX_SAFE_INTEGER });
  }
  return result;
}
