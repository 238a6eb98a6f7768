/**
 * The sandbox's two CSC dialects, for suites that must hold on both: the built-in profile that
 * speaks each, and the ids under which the sandbox logs (and faults) its signing routes.
 */
import type { TestSandbox } from './sandbox.js';

export const SANDBOX_DIALECTS = [
  { name: 'CSC API v1.0.4', profile: 'sandbox', prefix: 'signing', csc: '/csc/v1' },
  { name: 'CSC API v2', profile: 'sandbox-v2', prefix: 'signing-v2', csc: '/csc/v2' },
] as const;

export type SandboxDialect = (typeof SANDBOX_DIALECTS)[number];

/** The sandbox's route id of a signing service path, e.g. `signing-v2 POST /csc/v2/signatures/signHash`. */
export function signingRoute(
  dialect: SandboxDialect,
  call: 'GET /oauth2/authorize' | 'POST signatures/signHash',
): string {
  const [method, path] = call.split(' ') as [string, string];
  return `${dialect.prefix} ${method} ${path.startsWith('/') ? path : `${dialect.csc}/${path}`}`;
}

/**
 * The test sandbox as the suite sees it on one dialect: the same servers, and CLI runs on the
 * dialect's profile (ESIGN_PROFILE). Read lazily: the sandbox starts in `beforeAll`.
 */
export function onDialect(started: () => TestSandbox, dialect: SandboxDialect): Pick<TestSandbox, 'env' | 'sandbox'> {
  return {
    get env() {
      return { ...started().env, ESIGN_PROFILE: dialect.profile };
    },
    get sandbox() {
      return started().sandbox;
    },
  };
}
