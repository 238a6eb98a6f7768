import type { SandboxClock } from './clock.js';
import type { SandboxPki } from './pki.js';

/** Fixed test credentials of the sandbox. They guard nothing real, but are never printed anyway. */
export interface SandboxSecrets {
  clientId: string;
  clientSecret: string;
  tsaUser: string;
  tsaPassword: string;
}

export const SANDBOX_SECRETS: SandboxSecrets = {
  clientId: 'esign-cli',
  clientSecret: 'sandbox-secret',
  tsaUser: 'esign',
  tsaPassword: 'sandbox-tsa',
};

export interface SandboxUrls {
  /** `http://127.0.0.1:PORT` */
  base: string;
  signing: string;
  /** The same signing service, speaking CSC API v2. */
  signingV2: string;
  identity: string;
  identityLegacy: string;
  storage: string;
  /** Base of the TSA service; the endpoint is `${tsa}/tss03`. */
  tsa: string;
  tsaEndpoint: string;
  pki: string;
  /** The S3-compatible endpoint, once the storage service started it. */
  s3?: string;
}

/** What an identity provider tells other sandbox services about one of its access tokens. */
export interface IdentityTokenInfo {
  active: boolean;
  sub?: string;
  client_id?: string;
  scope: string[];
  exp?: number;
}

/** Objects one sandbox service offers another (filled in as services mount). */
export interface SharedServices {
  introspectIdentityToken?: (token: string) => IdentityTokenInfo | undefined;
}

export interface SandboxDeps {
  pki: SandboxPki;
  clock: SandboxClock;
  dataDir: string;
  urls: SandboxUrls;
  secrets: SandboxSecrets;
  /** Approval pages redirect at once, approving as the default test user. */
  readonly autoApprove: boolean;
  shared: SharedServices;
}

/** A service mount may start something (the S3 server) and hand back how to stop it. */
export type CloseFn = () => Promise<void>;
