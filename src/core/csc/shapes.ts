/** Constants, limits and shapes of the remote signing service (CSC API v1.0.4 as the service profiles it). */

export const CSC_HASH_ALGO_SHA256 = '2.16.840.1.101.3.4.2.1';
export const CSC_SIGN_ALGO_RSA = '1.2.840.113549.1.1.1';
/** The combined OID a CMS SignerInfo carries; never sent to the service. */
export const CMS_SHA256_WITH_RSA = '1.2.840.113549.1.1.11';

/** The signAlgo values that make a PKCS#1 v1.5 signature of a SHA-256 hash, in esign's order of preference. */
export const PKCS1_SHA256_SIGN_ALGOS = [CSC_SIGN_ALGO_RSA, CMS_SHA256_WITH_RSA] as const;

export const MAX_HASHES_PER_AUTHORIZATION = 50;
export const MAX_STATE_BYTES = 255;
export const SHA256_LENGTH = 32;
export const SERVICE_TOKEN_LIFETIME_S = 3600;
export const SAD_LIFETIME_S = 300;

export type CscScope = 'service' | 'credential';

export interface CredentialInfo {
  credentialID: string;
  status: 'enabled' | 'disabled';
  /** Key algorithm OIDs. */
  algorithms: string[];
  keyLengthBits: number;
  /** DER, signer first. */
  certificates: Uint8Array[];
  authMode: string;
  /** `cert/status` when the service sends it (CSC: valid, expired, revoked, suspended). */
  certificateStatus?: string;
  /** How many signatures one authorization may cover (`multisign`), when the service says. */
  multisign?: number;
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
