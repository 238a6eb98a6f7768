/**
 * Ports: the one-method interfaces through which the pure core reaches the outside world. The
 * adapters in `src/io/` implement them over HTTP, files and the terminal; tests implement them
 * over bytes in memory or the in-process sandbox.
 */
import type { DigestName, SignatureScheme } from './cms/algorithms.js';

import type { AuthFactor, CredentialAuthMode, OtpFactor } from './csc/shapes.js';

/** Time, injected so that tests and the sandbox can move it. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** Random-access reads over a document, so that signing never holds a whole file in memory. */
export interface ByteSource {
  readonly size: number;
  /** Reads exactly `length` bytes at `offset` (fewer only at the end of the source). */
  read(offset: number, length: number): Promise<Uint8Array>;
}

/** A signing certificate and its chain, as `credentials/info` reports them (DER, signer first). */
export interface SigningCredential {
  credentialID: string;
  certificates: Uint8Array[];
  keyLengthBits: number;
  /** Hashes one approval (SAD) covers: at most 50, fewer when the service or the profile says. */
  signaturesPerApproval: number;
  /** The `signAlgo` sent with the hashes: one of the credential's key/algo. */
  signAlgorithm: string;
  /** How each batch's SAD is obtained: a browser approval (oauth2code) or credentials/authorize. */
  authMode: CredentialAuthMode;
  /** Explicit credentials: the PIN and the OTP asked for. */
  pin?: AuthFactor;
  otp?: OtpFactor;
  /** `signAlgoParams` (base64 DER RSASSA-PSS-params), for RSASSA-PSS. */
  signAlgorithmParams?: string;
  /** How it signs: the scheme and the digest used throughout (byte range, signed attributes, timestamp). */
  scheme: SignatureScheme;
}

/**
 * Signs hashes (of the credential's scheme's digest) remotely: one authorization step (SAD) for the
 * whole batch of at most 50 hashes, then one signHash call. Returns the signature values, each
 * checked against the certificate (ECDSA as DER), in the order of `hashes`.
 */
export interface RemoteSigner {
  signHashes(credential: SigningCredential, hashes: Uint8Array[]): Promise<Uint8Array[]>;
}

/** Obtains an RFC 3161 TimeStampToken (DER ContentInfo) for a message imprint (SHA-256 unless `digest` says otherwise). */
export interface TimestampAuthority {
  timestamp(imprint: Uint8Array, digest?: DigestName): Promise<TimestampResult>;
}

export interface TimestampResult {
  /** DER of the whole TimeStampResp as received (for `.tsr` files). */
  response: Uint8Array;
  /** DER of the TimeStampToken (a CMS ContentInfo), for CMS unsigned attributes and DocTimeStamps. */
  token: Uint8Array;
  genTime: Date;
  serialNumber: string;
  /** The token's certificates, the TSA's first, when the client has read them (so nothing parses the token again). */
  certificates?: Uint8Array[];
}

/** Opens a URL in the user's browser (or runs `--browser CMD`). */
export interface BrowserLauncher {
  open(url: string): Promise<void>;
}
