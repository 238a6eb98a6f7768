/**
 * The offline OTP of explicit credentials: a TOTP (RFC 6238) from ESIGN_TOTP_SECRET, given as a
 * base32 secret or an `otpauth://totp/…` URI (its digits, period and algorithm count; otherwise 6
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
      hint: `Set ${TOTP_VARIABLE} to the base32 secret of the seal's authenticator, or to its otpauth://totp/… URI.`,
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
    const base32 = trimmed.replace(/[\s-]/g, '').replace(/=+$/, '').toUpperCase();
    if (base32.length < 16 || !/^[A-Z2-7]+$/.test(base32)) throw invalid('not a base32 secret of at least 80 bits');
    totp = new TOTP({ secret: Secret.fromBase32(base32), digits: 6, period: 30, algorithm: 'SHA1' });
  }
  if (totp.secret.bytes.length < 10) throw invalid('the secret is shorter than 80 bits');
  return {
    period: totp.period,
    stepAt: (atMs) => Math.floor(atMs / 1000 / totp.period),
    codeFor: (step) => totp.generate({ timestamp: step * totp.period * 1000 }),
  };
}
