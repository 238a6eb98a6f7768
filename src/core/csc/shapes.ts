/** Constants, limits and shapes of the remote signing service (CSC API v1.0.4 as the service profiles it). */

export const CSC_HASH_ALGO_SHA256 = '2.16.840.1.101.3.4.2.1';
export const CSC_SIGN_ALGO_RSA = '1.2.840.113549.1.1.1';
/** The combined OID a CMS SignerInfo carries; never sent to the service. */
export const CMS_SHA256_WITH_RSA = '1.2.840.113549.1.1.11';

/** The signAlgo values that make a PKCS#1 v1.5 signature of a SHA-256 hash, in esign's order of preference. */
export const PKCS1_SHA256_SIGN_ALGOS = [CSC_SIGN_ALGO_RSA, CMS_SHA256_WITH_RSA] as const;

export const MAX_HASHES_PER_AUTHORIZATION = 50;
/**
 * Most hashes one `credentials/authorize` (explicit or implicit) and one signHash carry: a seal's
 * multisign can be far above the browser approval's 50, and one request of 1,000 hashes is ~50 KB.
 */
export const MAX_HASHES_PER_CREDENTIAL_AUTHORIZATION = 1000;
export const MAX_STATE_BYTES = 255;
export const SHA256_LENGTH = 32;
export const SERVICE_TOKEN_LIFETIME_S = 3600;
export const SAD_LIFETIME_S = 300;
/** v1.0.4 §11.6, §11.7: a SAD whose expiresIn is omitted lives 3600 s. */
export const SAD_DEFAULT_LIFETIME_S = 3600;

export type CscScope = 'service' | 'credential';

export interface CredentialInfo {
  credentialID: string;
  status: 'enabled' | 'disabled';
  /** Key algorithm OIDs. */
  algorithms: string[];
  keyLengthBits: number;
  /** DER, signer first. */
  certificates: Uint8Array[];
  authMode: CredentialAuthMode;
  /** Explicit credentials: the PIN and the OTP the service asks for (absent: not asked for). */
  pin?: AuthFactor;
  otp?: OtpFactor;
  /** `SCAL`: 2 links the SAD to the hashes (they must be sent with the authorization). */
  scal?: '1' | '2';
  /** `cert/status` when the service sends it (CSC: valid, expired, revoked, suspended). */
  certificateStatus?: string;
  /** How many signatures one authorization may cover (`multisign`), when the service says. */
  multisign?: number;
}

/** How the SAD is obtained (CSC v1.0.4 §8.2; v2 `auth/mode`). */
export type CredentialAuthMode = 'oauth2code' | 'explicit' | 'implicit';
export const CREDENTIAL_AUTH_MODES: readonly CredentialAuthMode[] = ['oauth2code', 'explicit', 'implicit'];

/** A PIN or OTP an explicit credential asks for, with the service's own words for it. */
export interface AuthFactor {
  /** `true`: required; `optional`: may be given. A factor that is `false` is left out. */
  presence: 'true' | 'optional';
  /** `N` numeric, `A` alphanumeric. */
  format?: 'A' | 'N';
  label?: string;
  description?: string;
}

export interface OtpFactor extends AuthFactor {
  /** `offline`: an authenticator (TOTP) makes it; `online`: the service sends it after credentials/sendOTP. */
  type: 'offline' | 'online';
  /** `OTP/ID` and `OTP/provider`: the device or application. */
  id?: string;
  provider?: string;
}

/** The answer of `credentials/authorize`. */
export interface CredentialAuthorization {
  sad: string;
  /** Seconds, when the service said. */
  expiresIn?: number;
}

/** The answer of `auth/login` or of a client_credentials token request. */
export interface ServiceSignIn {
  accessToken: string;
  expiresIn?: number;
  /** auth/login with rememberMe: the long-lived token that signs in again without the password. */
  refreshToken?: string;
}

export interface CredentialsPage {
  credentialIDs: string[];
  nextPageToken?: string;
}

export interface TokenResponse {
  accessToken: string;
  tokenType: 'Bearer' | 'SAD';
  /** Seconds, when the service said. */
  expiresIn?: number;
}

/** A prepared HTTP request: the adapter sends it as it is. */
export interface PreparedRequest {
  method: 'POST';
  url: string;
  headers: Record<string, string>;
  body: string;
}
