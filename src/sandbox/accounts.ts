/** The sandbox's fixed accounts and secrets (shared by deps.ts and signing/quirks.ts). */
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
