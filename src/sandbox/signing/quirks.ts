/**
 * Sandbox quirks: how real CSC services differ from the specification text
 * (`csc-provider-behaviours.md`), switched on by name (`esign sandbox start --quirk NAME`,
 * `POST /_sandbox/quirks`). Off, the signing sandbox follows the text to the letter. Each quirk is
 * one small function on one point of the service: its `info`, the chain it returns, the status it
 * reports, who calls without a token.
 */
import { SANDBOX_ORGANIZATION, SANDBOX_SEAL } from '../deps.js';
import type { SandboxResponse } from '../http.js';

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
}

interface Quirk extends QuirkHooks {
  description: string;
  /** Where the behaviour was recorded. */
  source: string;
}

export const QUIRKS = {
  external: {
    description: 'info says authType ["external"] and names no OAuth server; calls come without a token and are the organization\'s (acme); a token is refused',
    source: 'certomancer-csc-dummy (pyHanko CI); CSC v1.0.4 §11.1 authType external',
    info: (body) => {
      const { oauth2: _oauth2, oauth2Issuer: _issuer, ...rest } = body;
      return { ...rest, authType: ['external'], methods: (body['methods'] as string[]).filter((method) => method !== 'auth/login') };
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
      response.status < 400 ? response : { status: response.status, headers: { 'content-type': 'text/html; charset=utf-8' }, body: `<!DOCTYPE html>\n<html><head><title>${response.status} Error</title></head><body><h1>Request rejected</h1></body></html>` },
  },
  'error-with-200': {
    description: 'errors of the CSC methods come with HTTP 200 and the {error, error_description} body',
    source: 'a public C# client of Ascertia ADSS (Viettel MobileCA) reads error from every answer (inferred)',
    answer: (route, response) => (response.status >= 400 && route.includes(' /csc/') ? { ...response, status: 200 } : response),
  },
  'no-expires-in': {
    description: 'token answers omit expires_in',
    source: 'a-sit-plus/valera SigningService.kt getTokenFromAuthCode() ("currently missing expires_in")',
    answer: (route, response) => (route.endsWith(' /oauth2/token') ? withJson(response, ({ expires_in: _gone, ...rest }) => rest) : response),
  },
  'empty-authorization-details': {
    description: 'token answers carry authorization_details present but empty',
    source: 'a-sit-plus/valera SigningService.kt getTokenFromAuthCode() ("authorizationDetails are set but empty")',
    answer: (route, response) => (route.endsWith(' /oauth2/token') ? withJson(response, (body) => ({ ...body, authorization_details: [] })) : response),
  },
  'list-without-infos': {
    description: 'v2 credentials/list returns the ids but no credentialInfos, though asked for them',
    source: 'a-sit-plus/valera commit 75d4d68e, PR 221 (Namirial)',
    answer: (route, response) => (route.endsWith(' /csc/v2/credentials/list') ? withJson(response, ({ credentialInfos: _gone, ...rest }) => rest) : response),
  },
  'oauth2-authorize-url': {
    description: 'info.oauth2 is the full …/oauth2/authorize URL instead of the base URI',
    source: 'SetaPDF-Signer-Addon-CSC src/Client.php getOauth2Info() (Entrust, A-Trust, SSL.com set)',
    info: (body) => (typeof body['oauth2'] === 'string' ? { ...body, oauth2: `${body['oauth2']}/oauth2/authorize` } : body),
  },
  'unknown-auth-mode': {
    description: 'credentials/info says authMode (v2: auth/mode) oauth2token, a value of CSC 1.0.3.0',
    source: 'vincent-vega/csctester authorize_test (Time4Mind); CSC 1.0.3.0 OpenAPI',
    answer: (route, response) =>
      route.endsWith('/credentials/info')
        ? withJson(response, (body) => (body['auth'] ? { ...body, auth: { ...(body['auth'] as object), mode: 'oauth2token' } } : { ...body, authMode: 'oauth2token' }))
        : response,
  },
} satisfies Record<string, Quirk>;

/** A JSON answer with its body changed; any other answer as it is. */
function withJson(response: SandboxResponse, change: (body: Record<string, unknown>) => Record<string, unknown>): SandboxResponse {
  const body = response.body;
  if (response.status !== 200 || body === null || typeof body !== 'object' || Array.isArray(body) || body instanceof Uint8Array) return response;
  return { ...response, body: change(body as Record<string, unknown>) };
}

export type QuirkName = keyof typeof QUIRKS;
export const QUIRK_NAMES = Object.keys(QUIRKS) as QuirkName[];

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

  private hooks(): Quirk[] {
    return [...this.on].map((name) => QUIRKS[name] as Quirk);
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

  get caller(): { user: string; clientId: string } | undefined {
    return this.hooks().find((quirk) => quirk.caller)?.caller;
  }
}
