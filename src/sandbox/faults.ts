/**
 * Fault injection for the sandbox: a test (or `POST /_sandbox/faults`) arms a fault for a route,
 * the host applies it to the next matching calls. Route ids read `service METHOD /path`, e.g.
 * `signing POST /csc/v1/signatures/signHash`; a trailing `*` matches a prefix.
 */
import type { ServerResponse } from 'node:http';

export type Fault =
  | { kind: 'status'; status: number; body?: string; headers?: Record<string, string> }
  | { kind: 'delay'; ms: number }
  | { kind: 'malformed'; body?: string; contentType?: string }
  | { kind: 'reset' }
  /** The real answer, its Content-Length whole, but the connection closed halfway through the body. */
  | { kind: 'truncated' };

export interface FaultRule {
  route: string;
  fault: Fault;
  /** How many calls it applies to; default 1. */
  times?: number;
}

interface ArmedRule {
  route: string;
  fault: Fault;
  remaining: number;
}

export class FaultInjector {
  private rules: ArmedRule[] = [];

  inject(rule: FaultRule): void {
    this.rules.push({ route: rule.route, fault: rule.fault, remaining: rule.times ?? 1 });
  }

  clear(): void {
    this.rules = [];
  }

  /** Takes the fault for a call to `routeId`, if one is armed. */
  take(routeId: string): Fault | undefined {
    const rule = this.rules.find((candidate) => matches(candidate.route, routeId) && candidate.remaining > 0);
    if (!rule) return undefined;
    rule.remaining -= 1;
    if (rule.remaining <= 0) this.rules = this.rules.filter((candidate) => candidate !== rule);
    return rule.fault;
  }
}

/** Makes `response` send half of its body and then close the connection (a download cut short). */
export function cutShort(response: ServerResponse): void {
  response.end = ((chunk?: unknown) => {
    const body = Buffer.isBuffer(chunk) ? chunk : Buffer.from(typeof chunk === 'string' ? chunk : '');
    response.write(body.subarray(0, Math.floor(body.length / 2)), () => response.socket?.destroy());
    return response;
  }) as ServerResponse['end'];
}

function matches(pattern: string, routeId: string): boolean {
  return pattern.endsWith('*') ? routeId.startsWith(pattern.slice(0, -1)) : pattern === routeId;
}

export function isFaultRule(value: unknown): value is FaultRule {
  if (value === null || typeof value !== 'object') return false;
  const rule = value as Record<string, unknown>;
  const fault = rule['fault'] as Record<string, unknown> | undefined;
  return (
    typeof rule['route'] === 'string' &&
    fault !== undefined &&
    typeof fault === 'object' &&
    typeof fault['kind'] === 'string'
  );
}
