/**
 * PKCE (RFC 7636) with S256 only. The verifier comes from the caller (random bytes are an
 * adapter's business); this module derives and checks.
 */
import { createHash } from 'node:crypto';

const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

/** A verifier from 32+ random bytes: base64url without padding (43+ characters, RFC 7636 §4.1). */
export function verifierFromBytes(bytes: Uint8Array): string {
  if (bytes.length < 32) throw new RangeError('PKCE verifier needs at least 32 random bytes');
  return Buffer.from(bytes).toString('base64url');
}

export function isValidVerifier(verifier: string): boolean {
  return VERIFIER.test(verifier);
}

/** `code_challenge` for `code_challenge_method=S256`: BASE64URL(SHA256(ASCII(verifier))). */
export function codeChallengeS256(verifier: string): string {
  if (!isValidVerifier(verifier)) throw new RangeError('PKCE verifier must be 43 to 128 unreserved characters');
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}
