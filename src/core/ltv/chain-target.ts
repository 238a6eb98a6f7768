/** A certificate whose chain must be validated, the certificates found beside it, and when it was used. */
export interface ChainTarget {
  role: 'signer' | 'tsa';
  leaf: Uint8Array;
  pool: Uint8Array[];
  /** The time the certificate was relied on (the signature's timestamp, or the token's genTime). */
  usedAt: Date | undefined;
}
