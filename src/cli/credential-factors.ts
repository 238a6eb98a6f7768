/**
 * The PIN and OTP of explicit credentials (organization seals, many personal credentials): the PIN
 * from ESIGN_CREDENTIAL_PIN, --pin-file or a masked prompt, asked once per run; the OTP computed
 * from ESIGN_TOTP_SECRET, or typed at a masked prompt (an online OTP after the service sent it).
 * Never taken from argv, never printed, never written to the split flow's state.
 */
import { EsignError } from '../core/errors.js';
import type { SigningCredential } from '../core/ports.js';
import type { TotpGenerator } from '../core/csc/totp.js';
import type { AuthorizationFactors } from '../io/csc-client.js';
import type { Context } from './context.js';
import { readSecretLine } from './pdf-password.js';

export const PIN_VARIABLE = 'ESIGN_CREDENTIAL_PIN';
// As totp.ts names it: that module (and the otpauth package) loads only when the variable is set.
const TOTP_VARIABLE = 'ESIGN_TOTP_SECRET';

export interface CredentialFactorOptions {
  /** --pin-file FILE ('-' for stdin): its first line. */
  pinFile?: string;
}

export async function authorizationFactors(
  options: CredentialFactorOptions,
  ctx: Context,
): Promise<AuthorizationFactors> {
  const pin =
    options.pinFile !== undefined
      ? await readSecretLine(options.pinFile, ctx, { what: 'PIN file', flag: '--pin-file' })
      : ctx.env[PIN_VARIABLE] || undefined;
  const secret = ctx.env[TOTP_VARIABLE];
  return new TerminalFactors(
    ctx,
    pin,
    secret ? (await import('../core/csc/totp.js')).parseTotpSecret(secret) : undefined,
  );
}

/** A factor is needed unless the credential marks it optional (then it is sent only when given). */
const required = (factor: { presence: string } | undefined): boolean => factor?.presence === 'true';

class TerminalFactors implements AuthorizationFactors {
  /** The last time step whose code was sent: a service takes each code once. */
  private lastStep: number | undefined;

  constructor(
    private readonly ctx: Context,
    private pinValue: string | undefined,
    private readonly totp: TotpGenerator | undefined,
  ) {}

  async ready(credential: SigningCredential): Promise<void> {
    const canPrompt = this.ctx.io.canPrompt;
    if (required(credential.pin) && this.pinValue === undefined) {
      if (!canPrompt) {
        throw missing(
          `The credential ${credential.credentialID} asks for a PIN, and none was given (and there is no terminal to ask at).`,
          `Set ${PIN_VARIABLE} or pass --pin-file FILE (- for stdin).`,
        );
      }
      this.pinValue = await masked(`${credential.pin?.label ?? 'PIN'} for ${credential.credentialID}:`);
    }
    const otp = credential.otp;
    if (!required(otp) || canPrompt) return;
    if (otp?.type === 'online') {
      throw missing(
        `The credential ${credential.credentialID} asks for a one-time password that the service sends for each authorization, and there is no terminal to type it at.`,
        'Run it at a terminal, or ask the provider for a seal with an authenticator (TOTP) or no OTP for unattended signing.',
      );
    }
    if (!this.totp) {
      throw missing(
        `The credential ${credential.credentialID} asks for a one-time password, and ${TOTP_VARIABLE} is not set (and there is no terminal to ask at).`,
        `Set ${TOTP_VARIABLE} to the seal's TOTP secret (base32 or otpauth:// URI).`,
      );
    }
  }

  async pin(credential: SigningCredential): Promise<string | undefined> {
    if (!credential.pin) return undefined;
    if (this.pinValue === undefined && required(credential.pin)) await this.ready(credential);
    return this.pinValue;
  }

  computesOtp(credential: SigningCredential): boolean {
    return credential.otp?.type === 'offline' && this.totp !== undefined;
  }

  async otp(credential: SigningCredential, again: boolean): Promise<string | undefined> {
    const otp = credential.otp;
    if (!otp) return undefined;
    if (otp.type === 'offline' && this.totp) return this.nextTotp(this.totp, again);
    if (!this.ctx.io.canPrompt) {
      if (!required(otp)) return undefined;
      await this.ready(credential); // throws, naming what to set
    }
    const source =
      otp.type === 'online'
        ? `sent by the signing service${otp.description ? ` (${otp.description})` : ''}`
        : `from ${otp.provider ?? otp.label ?? 'your authenticator'}`;
    return masked(`One-time password ${source}:`);
  }

  /** The code of a time step no earlier code of this run used; waits for the next step when needed. */
  private async nextTotp(totp: TotpGenerator, again: boolean): Promise<string> {
    const now = this.ctx.clock.now().getTime();
    let step = totp.stepAt(now);
    const used = Math.max(this.lastStep ?? -1, again ? step : -1);
    if (step <= used) {
      step = used + 1;
      const waitMs = step * totp.period * 1000 - now;
      this.ctx.io.info(
        `Waiting ${Math.ceil(waitMs / 1000)} s for the next one-time password (the signing service takes each code once)…`,
      );
      const { setTimeout: sleep } = await import('node:timers/promises');
      await sleep(waitMs, undefined, { signal: this.ctx.signal });
    }
    this.lastStep = step;
    return totp.codeFor(step);
  }
}

function missing(message: string, hint: string): EsignError {
  return new EsignError('AUTH_FACTOR_MISSING', message, { hint });
}

async function masked(message: string): Promise<string> {
  const { password } = await import('@inquirer/prompts');
  return password({ message, mask: true });
}
