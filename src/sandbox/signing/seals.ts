/**
 * The organization account's credentials that are not approved in a browser (CSC v1.0.4 §8.2:
 * explicit and implicit authorization) and how the service checks what `credentials/authorize`
 * brings: PINs counted (three wrong in a row lock the credential), a TOTP accepted within ±1 time
 * step and never twice, an online OTP single-use and expiring. One SealAuthority serves both
 * dialects, as one credential store would.
 */
import { randomInt } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { SANDBOX_IMPLICIT_CREDENTIAL, SANDBOX_SEAL } from '../deps.js';
import { SigningServiceError } from './service-error.js';
import { timingSafeEqualText } from '../secrets.js';

export interface SealPolicy {
  authMode: 'explicit' | 'implicit';
  pin: boolean;
  otp?: 'offline' | 'online';
  scal: '1' | '2';
  multisign: number;
}

export const SEAL_POLICIES: Readonly<Record<string, SealPolicy>> = {
  [SANDBOX_SEAL.credentialID]: { authMode: 'explicit', pin: true, otp: 'offline', scal: '2', multisign: 50 },
  [SANDBOX_SEAL.onlineOtpCredentialID]: { authMode: 'explicit', pin: true, otp: 'online', scal: '2', multisign: 50 },
  [SANDBOX_SEAL.pinOnlyCredentialID]: { authMode: 'explicit', pin: true, scal: '1', multisign: 1000 },
  [SANDBOX_IMPLICIT_CREDENTIAL]: { authMode: 'implicit', pin: false, scal: '2', multisign: 50 },
};

export const PIN_ATTEMPTS = 3;
export const ONLINE_OTP_LIFETIME_S = 300;
const OTP_LABELS = {
  offline: {
    label: 'Authenticator code',
    description: "The 6-digit code of the seal's authenticator app (TOTP)",
    id: 'acme-totp',
    provider: 'esign sandbox authenticator',
  },
  online: {
    label: 'SMS code',
    description: 'sent by SMS to +31 6 ••• ••• 42 (in the sandbox: its log and its OTP outbox page)',
    id: 'acme-sms',
    provider: 'esign sandbox SMS',
  },
} as const;

/** What credentials/info says of a seal's PIN and OTP (v1 objects; v2 builds its `auth` from the same). */
export function sealAuthInfo(policy: SealPolicy) {
  return {
    PIN: policy.pin
      ? { presence: 'true', format: 'N', label: 'Seal PIN', description: 'The PIN of the organization seal' }
      : { presence: 'false' },
    OTP: policy.otp
      ? { presence: 'true', type: policy.otp, format: 'N', ...OTP_LABELS[policy.otp] }
      : { presence: 'false' },
  };
}

/** v2 §11.5 `auth`: mode, expression and objects. An offline OTP names its generator. */
export function sealAuthV2(policy: SealPolicy) {
  if (policy.authMode === 'implicit') return { mode: 'implicit' as const };
  const objects = [
    ...(policy.pin
      ? [
          {
            type: 'Password',
            id: 'PIN',
            format: 'N',
            label: 'Seal PIN',
            description: 'The PIN of the organization seal',
          },
        ]
      : []),
    ...(policy.otp
      ? [
          {
            type: 'Password',
            id: 'OTP',
            format: 'N',
            label: OTP_LABELS[policy.otp].label,
            description: OTP_LABELS[policy.otp].description,
            ...(policy.otp === 'offline' ? { generator: 'totp' } : {}),
          },
        ]
      : []),
  ];
  return { mode: 'explicit' as const, expression: objects.map((object) => object.id).join(' AND '), objects };
}

export interface SentOtp {
  credentialID: string;
  code: string;
  sentAt: number;
}

export class SealAuthority {
  private readonly wrongPins = new Map<string, number>();
  private readonly wrongOtps = new Map<string, number>();
  private readonly lastTotpStep = new Map<string, number>();
  private readonly pendingOtps = new Map<string, { code: string; expiresAt: number }>();
  private readonly totp = new TOTP({
    secret: Secret.fromBase32(SANDBOX_SEAL.totpSecret),
    digits: 6,
    period: 30,
    algorithm: 'SHA1',
  });
  /** The codes "sent" by SMS, newest last, for the outbox page. */
  readonly outbox: SentOtp[] = [];

  constructor(private readonly log: (line: string) => void = () => undefined) {}

  /** Checks the PIN, then the OTP; a wrong one is counted and never authorizes anything. */
  check(credentialID: string, policy: SealPolicy, given: { pin?: string; otp?: string }, nowMs: number): void {
    if (policy.authMode === 'implicit') return;
    if ((this.wrongPins.get(credentialID) ?? 0) >= PIN_ATTEMPTS) throw invalid('invalid_request', 'PIN locked');
    if ((this.wrongOtps.get(credentialID) ?? 0) >= PIN_ATTEMPTS) throw invalid('invalid_request', 'OTP locked');
    if (policy.pin) {
      if (given.pin === undefined) throw invalid('invalid_request', 'Missing (or invalid type) string parameter PIN');
      if (!timingSafeEqualText(given.pin, SANDBOX_SEAL.pin)) {
        this.wrongPins.set(credentialID, (this.wrongPins.get(credentialID) ?? 0) + 1);
        throw invalid('invalid_pin', 'The PIN is invalid');
      }
      this.wrongPins.delete(credentialID);
    }
    if (!policy.otp) return;
    if (given.otp === undefined) throw invalid('invalid_request', 'Missing (or invalid type) string parameter OTP');
    const accepted =
      policy.otp === 'offline'
        ? this.takeTotp(credentialID, given.otp, nowMs)
        : this.takeOnlineOtp(credentialID, given.otp, nowMs);
    if (!accepted) {
      this.wrongOtps.set(credentialID, (this.wrongOtps.get(credentialID) ?? 0) + 1);
      throw invalid('invalid_otp', 'The OTP is invalid');
    }
    this.wrongOtps.delete(credentialID);
  }

  /** RFC 6238 §5.2: one step of drift either way; a step's code (or an earlier one) once only. */
  private takeTotp(credentialID: string, code: string, nowMs: number): boolean {
    const delta = this.totp.validate({ token: code, timestamp: nowMs, window: 1 });
    if (delta === null) return false;
    const step = Math.floor(nowMs / 1000 / this.totp.period) + delta;
    if (step <= (this.lastTotpStep.get(credentialID) ?? -1)) return false;
    this.lastTotpStep.set(credentialID, step);
    return true;
  }

  private takeOnlineOtp(credentialID: string, code: string, nowMs: number): boolean {
    const pending = this.pendingOtps.get(credentialID);
    if (!pending || pending.expiresAt <= nowMs || !timingSafeEqualText(code, pending.code)) return false;
    this.pendingOtps.delete(credentialID);
    return true;
  }

  /** credentials/sendOTP: a new code replaces the last; it is "delivered" to the log and the outbox page. */
  sendOtp(credentialID: string, policy: SealPolicy, nowMs: number): void {
    if (policy.otp !== 'online') throw invalid('invalid_request', 'Invalid parameter credentialID');
    if ((this.wrongOtps.get(credentialID) ?? 0) >= PIN_ATTEMPTS) throw invalid('invalid_request', 'OTP locked');
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    this.pendingOtps.set(credentialID, { code, expiresAt: nowMs + ONLINE_OTP_LIFETIME_S * 1000 });
    this.outbox.push({ credentialID, code, sentAt: nowMs });
    if (this.outbox.length > 20) this.outbox.shift();
    this.log(
      `sandbox signing service: OTP for ${credentialID} sent by "SMS": ${code} (valid ${ONLINE_OTP_LIFETIME_S / 60} minutes, once)`,
    );
  }
}

function invalid(error: string, description: string): SigningServiceError {
  return new SigningServiceError(400, error, description);
}
