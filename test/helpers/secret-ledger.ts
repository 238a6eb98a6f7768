/**
 * The whole-suite secret scan (issue 9 item 4). Every secret an in-process sandbox hands out is
 * recorded where it leaves the HTTP server (token and SAD bodies, codes on redirects, S3
 * credentials), and everything a CLI run prints is kept; `secret-scan.global.ts` then searches all
 * of the suite's output for all of its secrets, and the temp dirs are searched for SADs before they
 * are removed. Both land in the folder named by ESIGN_TEST_LEDGER, one file per worker.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { SAD_LIFETIME_S } from '../../src/core/csc/shapes.js';
import { SANDBOX_API_KEY, SANDBOX_SEAL, SANDBOX_SECRETS } from '../../src/sandbox/deps.js';

export type SecretKind =
  | 'service token'
  | 'SAD'
  | 'identity access token'
  | 'ID token'
  | 'code'
  | 'storage secret'
  | 'configured secret'
  | 'account token';

/** What the sandboxes of this worker issued, value → kind. */
export const issuedSecrets = new Map<string, SecretKind>();
/** The query of every authorization request the sandboxes of this worker served. */
export const authorizeRequests: URLSearchParams[] = [];

/** Fixed secrets of the sandbox profile and of the tests' own profiles. */
const basic = (user: string, password: string) => Buffer.from(`${user}:${password}`).toString('base64');
export const CONFIGURED_SECRETS = [
  SANDBOX_SECRETS.clientSecret,
  SANDBOX_SECRETS.tsaPassword,
  basic(SANDBOX_SECRETS.clientId, SANDBOX_SECRETS.clientSecret),
  basic(SANDBOX_SECRETS.tsaUser, SANDBOX_SECRETS.tsaPassword),
  'remote-secret-value',
  // The sandbox organization's seal secrets: client secret, login password, PIN, TOTP secret.
  SANDBOX_SEAL.clientSecret,
  SANDBOX_SEAL.password,
  SANDBOX_SEAL.pin,
  SANDBOX_SEAL.totpSecret,
  basic(SANDBOX_SEAL.clientId, SANDBOX_SEAL.clientSecret),
  basic(SANDBOX_SEAL.username, SANDBOX_SEAL.password),
  // PDF passwords the encrypted-PDF interop tests give (the short 'user' and 'owner' are words in messages).
  's3cr3t-user',
  's3cr3t-owner',
  'guess-1234',
  'split-user-pw',
  // Transport secrets the TLS and proxy tests give: a client key's passphrase, proxy passwords.
  'client-key-passphrase-93',
  'proxy-pass-7x',
  'proxy-pass-41k',
  // Provider settings (issue 29): the API key the api-key quirk wants; the signing password is SANDBOX_SEAL.password above.
  SANDBOX_API_KEY,
];

const ledgerDir = process.env['ESIGN_TEST_LEDGER'];
const workerFile = (kind: 'secrets' | 'outputs' | 'schemas') =>
  join(ledgerDir ?? '', `${kind}-${process.pid}-${threadId}.jsonl`);
if (ledgerDir) mkdirSync(ledgerDir, { recursive: true });

function remember(value: string, kind: SecretKind): void {
  if (issuedSecrets.has(value)) return;
  issuedSecrets.set(value, kind);
  if (ledgerDir) appendFileSync(workerFile('secrets'), JSON.stringify({ value, kind }) + '\n');
}

/** Keeps what a CLI run printed, for the scan at the end of the suite. */
export function recordCliOutput(args: readonly string[], stdout: string, stderr: string): void {
  if (ledgerDir) appendFileSync(workerFile('outputs'), JSON.stringify({ args, text: `${stdout}\n${stderr}` }) + '\n');
}

/** A --json run checked against its schema, for the suite's summary line. */
export function recordSchemaCheck(check: { command: string; checked: number; problems: string[] }): void {
  if (ledgerDir)
    appendFileSync(
      workerFile('schemas'),
      JSON.stringify({ command: check.command, checked: check.checked, failed: check.problems.length }) + '\n',
    );
}

/**
 * A CSC v2 SAD is a Bearer token like the service token (v2 §8.3.3); the v2 sandbox's token
 * endpoint tells them apart only by lifetime, as the SAD lasts SAD_LIFETIME_S.
 */
const V2_SAD = new RegExp(`"token_type"\\s*:\\s*"Bearer".*"expires_in"\\s*:\\s*${SAD_LIFETIME_S}\\b`);

function recordBody(text: string, path: string): void {
  const sad =
    /"token_type"\s*:\s*"SAD"/.test(text) || (path.startsWith('/signing-v2/oauth2/token') && V2_SAD.test(text));
  // credentials/authorize answers {SAD, expiresIn}.
  for (const match of text.matchAll(/"SAD"\s*:\s*"([^"]{8,})"/g)) remember(match[1]!, 'SAD');
  for (const match of text.matchAll(
    /"(access_token|id_token|refresh_token|secretAccessKey|sessionToken)"\s*:\s*"([^"]{8,})"/g,
  )) {
    const [, field, value] = match as unknown as [string, string, string];
    const kind: SecretKind =
      field === 'id_token'
        ? 'ID token'
        : field === 'access_token'
          ? sad
            ? 'SAD'
            : /"id_token"/.test(text)
              ? 'identity access token'
              : 'service token'
          : 'storage secret';
    remember(value, kind);
  }
}

function recordLocation(location: unknown): void {
  if (typeof location !== 'string') return;
  const code = /[?&]code=([^&#]+)/.exec(location)?.[1];
  if (code) remember(decodeURIComponent(code), 'code');
}

function chunkText(chunk: unknown): string {
  if (typeof chunk === 'string') return chunk;
  if (chunk instanceof Uint8Array && chunk.length < 1_000_000) return Buffer.from(chunk).toString('utf8');
  return '';
}

/** What the wrapped ServerResponse reports to: this module instance (a worker may load it again per file). */
interface Recorder {
  body(text: string, path: string): void;
  location(value: unknown): void;
  authorize(query: URLSearchParams): void;
}
const RECORDER = Symbol.for('esign.test.secretRecorder');
type WithRecorder = typeof globalThis & { [RECORDER]?: Recorder };

/** Wraps ServerResponse (once per process) so that every body and redirect a sandbox sends is recorded. */
export function recordSandboxResponses(): void {
  const holder = globalThis as WithRecorder;
  const wrapped = holder[RECORDER] !== undefined;
  holder[RECORDER] = {
    body: recordBody,
    location: recordLocation,
    authorize: (query) => {
      authorizeRequests.push(query);
      // An account_token (§8.3.1) esign built: never to be printed, as the secret that keys it.
      const accountToken = query.get('account_token');
      if (accountToken) remember(accountToken, 'account token');
    },
  };
  if (wrapped) return;
  const recorder = () => holder[RECORDER]!;
  const proto = ServerResponse.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
  const originalWrite = proto['write'] as (...args: unknown[]) => unknown;
  const originalEnd = proto['end'] as (...args: unknown[]) => unknown;
  const originalWriteHead = proto['writeHead'] as (...args: unknown[]) => unknown;
  const bodies = new WeakMap<object, string>();
  proto['write'] = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
    // Secrets travel in small JSON bodies; a streamed S3 object need not be kept.
    const sofar = bodies.get(this) ?? '';
    if (sofar.length < 256 * 1024) bodies.set(this, sofar + chunkText(chunk));
    return originalWrite.call(this, chunk, ...rest);
  };
  proto['end'] = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
    const url = new URL(this.req?.url ?? '/', 'http://127.0.0.1');
    recorder().body((bodies.get(this) ?? '') + (typeof chunk === 'function' ? '' : chunkText(chunk)), url.pathname);
    recorder().location(this.getHeader('location'));
    if (url.pathname.endsWith('/oauth2/authorize')) recorder().authorize(url.searchParams);
    return originalEnd.call(this, chunk, ...rest);
  };
  proto['writeHead'] = function (this: ServerResponse, ...args: unknown[]) {
    for (const arg of args) {
      if (arg && typeof arg === 'object' && !Array.isArray(arg))
        for (const [name, value] of Object.entries(arg))
          if (name.toLowerCase() === 'location') recorder().location(value);
      if (Array.isArray(arg))
        for (let i = 0; i + 1 < arg.length; i += 2)
          if (String(arg[i]).toLowerCase() === 'location') recorder().location(arg[i + 1]);
    }
    return originalWriteHead.apply(this, args);
  };
}

/** The SADs issued so far in this worker that appear in `bytes`. */
export function sadsIn(bytes: Buffer): string[] {
  const text = bytes.toString('latin1');
  return [...issuedSecrets].filter(([value, kind]) => kind === 'SAD' && text.includes(value)).map(([value]) => value);
}
