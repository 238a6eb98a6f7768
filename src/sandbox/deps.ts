import type { SandboxClock } from './clock.js';
import type { SandboxPki } from './pki.js';
import type { SandboxSecrets } from './accounts.js';
import type { SandboxQuirks } from './signing/quirks.js';

export * from './accounts.js';

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
  /** The TEST List of Trusted Lists (src/sandbox/trust-lists.ts). */
  lotl?: string;
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
  /** The certificate (DER, base64) that signs the TEST LOTL: what a sandbox profile ships as the LOTL signer. */
  lotlSignerCertificate?: string;
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
  /** How the signing service departs from the specification text, as switched on (none by default). */
  quirks: SandboxQuirks;
  /** Lines for the sandbox's log (`esign sandbox start` prints them): the OTPs it "sends". */
  log?: (line: string) => void;
  /** How many TEST national lists /trust publishes (ZZ, then XA, XB, … of real size; benchmarks). */
  trustLists?: number;
  /** Over TLS (sandbox start --tls): the server certificate the S3 gateway serves too. */
  tls?: { chainPem: string; keyPem: string };
  /** The host name in the sandbox's URLs, when not 127.0.0.1 (SandboxOptions.hostName). */
  hostName?: string;
}

/** A service mount may start something (the S3 server) and hand back how to stop it. */
export type CloseFn = () => Promise<void>;
