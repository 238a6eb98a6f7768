import type { SandboxClock } from './clock.js';
import type { SandboxPki } from './pki.js';
import type { SandboxQuirks } from './signing/quirks.js';

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

/**
 * The sandbox's organization account (`acme`): what a CI job needs to seal without a browser.
 * `esign sandbox start --json` prints it as `seal`, exactly these fields.
 */
export interface SandboxSeal {
  /** A client allowed the client_credentials grant; it signs in as the organization. */
  clientId: string;
  clientSecret: string;
  /** The auth/login user of the organization. */
  username: string;
  password: string;
  /** Explicit: PIN and an offline OTP (TOTP), SCAL 2. */
  credentialID: string;
  /** One PIN for all three seals. */
  pin: string;
  /** The TOTP secret (base32) of credentialID's authenticator. */
  totpSecret: string;
  /** Explicit: PIN and an online OTP the service "sends" (shown in its log and on its outbox page). */
  onlineOtpCredentialID: string;
  /** Explicit: PIN only, SCAL 1, multisign 1000: the seal for bulk signing. */
  pinOnlyCredentialID: string;
}

export const SANDBOX_SEAL: SandboxSeal = {
  clientId: 'acme-ci',
  clientSecret: 'sandbox-ci-secret',
  username: 'acme-signer',
  password: 'sandbox-password',
  credentialID: 'acme-seal-totp',
  pin: '246810',
  totpSecret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP',
  onlineOtpCredentialID: 'acme-seal-otp',
  pinOnlyCredentialID: 'acme-seal-bulk',
};

/** The API key the signing service wants in x-api-key under the api-key quirk (DigiCert's way). */
export const SANDBOX_API_KEY = 'sandbox-api-key-5f2c';

/** The organization that owns the seals, as the signing service knows it. */
export const SANDBOX_ORGANIZATION = 'acme';
/** An implicit credential of the organization: the service authorizes it by its own means. */
export const SANDBOX_IMPLICIT_CREDENTIAL = 'acme-seal-implicit';

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
