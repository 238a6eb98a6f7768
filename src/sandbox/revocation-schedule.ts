/**
 * Revocations made while the sandbox runs: a credential's certificate revoked now, or once a route
 * has been served so many more times (say, after the first window of a batch has fetched its CRL).
 * Only the PKI learns of it (OCSP answers revoked, the CRL lists it); the signing service still
 * signs, as a real one does until its CA's news reaches it — what long-term validation must catch.
 */
import type { SandboxClock } from './clock.js';
import type { SandboxPki } from './pki.js';

export interface RevocationRule {
  credentialID: string;
  /** Revoke once `route` (a route id, `pki GET /issuing.crl`) has been served `calls` more times; else at once. */
  after?: { route: string; calls: number };
}

export class RevocationSchedule {
  private armed: Array<{ serialNumberHex: string; route: string; remaining: number }> = [];

  constructor(
    private readonly pki: SandboxPki,
    private readonly clock: SandboxClock,
  ) {}

  /** Arms a rule; false when the sandbox has no such credential. */
  arm(rule: RevocationRule): boolean {
    const credential = this.pki.credentials.find((candidate) => candidate.credentialID === rule.credentialID);
    if (!credential) return false;
    const { serialNumberHex } = credential.signer;
    if (rule.after && rule.after.calls > 0)
      this.armed.push({ serialNumberHex, route: rule.after.route, remaining: rule.after.calls });
    else this.revoke(serialNumberHex);
    return true;
  }

  /** Called after each call served. */
  served(routeId: string): void {
    for (const rule of this.armed)
      if (rule.route === routeId && --rule.remaining === 0) this.revoke(rule.serialNumberHex);
    this.armed = this.armed.filter((rule) => rule.remaining > 0);
  }

  private revoke(serialNumberHex: string): void {
    if (!this.pki.revocations.some((revocation) => revocation.serialNumberHex === serialNumberHex))
      this.pki.revocations.push({ serialNumberHex, revokedAt: this.clock.now() });
  }
}

export function isRevocationRule(value: unknown): value is RevocationRule {
  if (value === null || typeof value !== 'object') return false;
  const rule = value as Record<string, unknown>;
  const after = rule['after'] as Record<string, unknown> | undefined;
  return (
    typeof rule['credentialID'] === 'string' &&
    (after === undefined ||
      (typeof after === 'object' &&
        after !== null &&
        typeof after['route'] === 'string' &&
        typeof after['calls'] === 'number'))
  );
}
