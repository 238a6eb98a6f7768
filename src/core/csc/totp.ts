/**
 * The offline OTP of explicit credentials: a TOTP (RFC 6238) from ESIGN_TOTP_SECRET, given as a
 * base32 or base64 secret (some providers hand out base64) or an `otpauth://totp/…` URI (its digits, period and algorithm count; otherwise 6
 * digits, 30 s, SHA-1, as authenticator apps assume). The codes come from the otpauth package.
 */
import { Secret, TOTP, URI } from 'otpauth';
import { EsignError } from '../errors.js';

export interface TotpGenerator {
  /** Seconds per time step. */
  period: number;
  /** The time step `atMs` falls in. */
  stepAt(atMs: number): number;
  /** The code of time step `step`. */
  codeFor(step: number): string;
}

export const TOTP_VARIABLE = 'ESIGN_TOTP_SECRET';

/** Parses ESIGN_TOTP_SECRET; a malformed value is refused naming the variable, never quoting it. */
export function parseTotpSecret(text: string): TotpGenerator {
  const invalid = (why: string) =>
    new EsignError('CONFIG_INVALID', `Invalid ${TOTP_VARIABLE}: ${why}.`, {
      hint: `Set ${TOTP_VARIABLE} to the secret of the seal's authenticator (base32, or base64; force either with a base32: or base64: prefix), or to its otpauth://totp/… URI.`,
    });
  const trimmed = text.trim();
  let totp: TOTP;
  if (/^otpauth:/i.test(trimmed)) {
    let parsed: ReturnType<typeof URI.parse>;
    try {
      parsed = URI.parse(trimmed);
    } catch {
      throw invalid('not a valid otpauth:// URI');
    }
    if (!(parsed instanceof TOTP)) throw invalid('the otpauth:// URI is not of type totp');
    totp = parsed;
  } else {
    totp = new TOTP({ secret: totpSecretBytes(trimmed, invalid), digits: 6, period: 30, algorithm: 'SHA1' });
  }
  if (totp.secret.bytes.length < 10) throw invalid('the secret is shorter than 80 bits');
  return {
    period: totp.period,
    stepAt: (atMs) => Math.floor(atMs / 1000 / totp.period),
    codeFor: (step) => totp.generate({ timestamp: step * totp.period * 1000 }),
  };
}

/**
 * The secret's bytes: `base32:` or `base64:` says which; without a prefix, base32 when it can be
 * (one case, A–Z and 2–7, as authenticators show it), else base64 (or base64url) when it is that.
 */
function totpSecretBytes(text: string, invalid: (why: string) => EsignError): Secret {
  const prefixed = /^(base32|base64):(.*)$/is.exec(text);
  const form = prefixed?.[1]?.toLowerCase();
  const value = (prefixed?.[2] ?? text).replace(/\s/g, '');
  const base32 = value.replace(/-/g, '').replace(/=+$/, '');
  const oneCase = base32 === base32.toUpperCase() || base32 === base32.toLowerCase();
  if (form === 'base32' || (form === undefined && oneCase && /^[A-Z2-7]+$/i.test(base32))) {
    if (base32.length < 16 || !/^[A-Z2-7]+$/i.test(base32)) throw invalid('not a base32 secret of at least 80 bits');
    return Secret.fromBase32(base32.toUpperCase());
  }
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(value) || (value.includes('=') && value.length % 4 !== 0)) {
    throw invalid(form === 'base64' ? 'not a base64 secret' : 'neither a base32 nor a base64 secret');
  }
  const bytes = Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return new Secret({ buffer: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer });
}
