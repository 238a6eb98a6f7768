import type { Clock } from '../core/ports.js';

/** The sandbox's clock: real time plus an offset that tests move forward (SAD expiry, token expiry). */
export class SandboxClock implements Clock {
  private offsetMs = 0;

  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }

  advance(ms: number): void {
    this.offsetMs += ms;
  }

  reset(): void {
    this.offsetMs = 0;
  }
}
