import type { IncomingMessage, ServerResponse } from 'node:http';

/** A request as a sandbox handler sees it: already read, path relative to the service prefix. */
export interface SandboxRequest {
  method: string;
  /** Path after the service prefix, e.g. `/oauth2/token` for `/signing/oauth2/token`. */
  path: string;
  query: URLSearchParams;
  /** Header names in lower case. */
  headers: Record<string, string | undefined>;
  body: Buffer;
  /** Base URL of the service, e.g. `http://127.0.0.1:8799/signing`. */
  baseUrl: string;
}

export interface SandboxResponse {
  status: number;
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string as text (set content-type for HTML); bytes as they are. */
  body?: string | Uint8Array | object;
}

export type Handler = (request: SandboxRequest) => SandboxResponse | Promise<SandboxResponse>;

interface Route {
  method: string;
  path: string;
  handler: Handler;
}

/** The routes of one service, mounted by the host under `/${service}`. */
export class Router {
  readonly routes: Route[] = [];
  constructor(readonly service: string) {}

  get(path: string, handler: Handler): void {
    this.routes.push({ method: 'GET', path, handler });
  }

  post(path: string, handler: Handler): void {
    this.routes.push({ method: 'POST', path, handler });
  }

  find(method: string, path: string): Route | undefined {
    return this.routes.find(
      (route) => route.path === path && (route.method === method || (method === 'HEAD' && route.method === 'GET')),
    );
  }

  hasPath(path: string): boolean {
    return this.routes.some((route) => route.path === path);
  }
}

export function json(status: number, body: object, headers: Record<string, string> = {}): SandboxResponse {
  return { status, headers: { 'content-type': 'application/json;charset=UTF-8', ...headers }, body };
}

export function html(status: number, body: string, headers: Record<string, string> = {}): SandboxResponse {
  return { status, headers: { 'content-type': 'text/html; charset=utf-8', ...headers }, body };
}

export function redirect(location: string): SandboxResponse {
  return { status: 302, headers: { location, 'cache-control': 'no-store' }, body: '' };
}

/** RFC 9457 Problem Details. */
export function problem(status: number, title: string, detail: string, instance: string): SandboxResponse {
  return {
    status,
    headers: { 'content-type': 'application/problem+json' },
    body: { type: `https://esign.invalid/problems/${status}`, title, status, detail, instance },
  };
}

/** Parses an `application/x-www-form-urlencoded` body. */
export function formBody(request: SandboxRequest): URLSearchParams {
  return new URLSearchParams(request.body.toString('utf8'));
}

/** Parses a JSON object body, or returns undefined when it is not one. */
export function jsonBody(request: SandboxRequest): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(request.body.toString('utf8'));
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Decodes `Authorization: Basic …` into user and password, or undefined. */
export function basicCredentials(request: SandboxRequest): { user: string; password: string } | undefined {
  const header = request.headers['authorization'];
  const match = header ? /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header) : null;
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  const user = formDecode(decoded.slice(0, colon));
  const password = formDecode(decoded.slice(colon + 1));
  return user === undefined || password === undefined ? undefined : { user, password };
}

/** Undoes the form encoding RFC 6749 §2.3.1 applies to client credentials ('+' is a space); undefined if malformed. */
function formDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '));
  } catch {
    return undefined;
  }
}

/** The token of `Authorization: Bearer …`, or undefined. */
export function bearerToken(request: SandboxRequest): string | undefined {
  const header = request.headers['authorization'];
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1];
}

const MAX_BODY_BYTES = 64 * 1024 * 1024;

export async function readRequest(message: IncomingMessage, path: string, baseUrl: string): Promise<SandboxRequest> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of message) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Error('request body too large');
    chunks.push(chunk as Buffer);
  }
  const url = new URL(message.url ?? '/', 'http://127.0.0.1');
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(message.headers)) {
    headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return {
    method: message.method ?? 'GET',
    path,
    query: url.searchParams,
    headers,
    body: Buffer.concat(chunks),
    baseUrl,
  };
}

export function writeResponse(response: ServerResponse, result: SandboxResponse): void {
  const headers: Record<string, string> = { 'cache-control': 'no-store', ...result.headers };
  let body: Buffer;
  if (result.body === undefined) body = Buffer.alloc(0);
  else if (typeof result.body === 'string') body = Buffer.from(result.body, 'utf8');
  else if (result.body instanceof Uint8Array)
    body = Buffer.from(result.body.buffer, result.body.byteOffset, result.body.byteLength);
  else {
    body = Buffer.from(JSON.stringify(result.body), 'utf8');
    headers['content-type'] ??= 'application/json;charset=UTF-8';
  }
  headers['content-length'] = String(body.length);
  response.writeHead(result.status, headers);
  response.end(body);
}
