import { createServer, type Server } from 'node:http';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Socket } from 'node:net';
import { EsignError } from '../core/errors.js';
import type { BrowserLauncher } from '../core/ports.js';
import { assertSecureUrl } from './http.js';

/** How the receiver talks to the person at the terminal (stderr lines, an optional pasted URL). */
export interface ReceiverTerminal {
  /** Prints a line the user needs to go on (the URL to open, what to paste), even with --quiet. */
  say(line: string): void;
  /** Prints a progress notice (stderr), which --quiet silences. */
  note(line: string): void;
  /** Reads one pasted line when stdin is a TTY; undefined when pasting is not possible. */
  readLine?: (signal: AbortSignal) => Promise<string>;
}

export interface AuthorizeInBrowserOptions {
  /** Builds the authorization URL for the redirect URI the receiver listens on and the state. */
  buildAuthorizeUrl(redirectUri: string, state: string): string;
  /** The profile's redirect URI; port 0 picks a free port (RFC 8252 §7.3). */
  redirectUri: string;
  browser: BrowserLauncher;
  /** Do not launch anything: print the URL (and accept a pasted redirect URL on a TTY). */
  noBrowser?: boolean;
  /** The browser is a command or esign itself (--browser, --auto-approve): no URL for a person to copy. */
  browserIsScripted?: boolean;
  /**
   * The error for a step nobody can finish here (the system browser failed to open and there is
   * no terminal to paste into): the step ends at once with it instead of waiting for the time-out.
   */
  nobodyCanFinish?: (why: string) => EsignError;
  /** Set when it is known before trying that nobody can finish the step here: thrown once the URL is checked. */
  nobodyHere?: EsignError;
  timeoutMs: number;
  /** Names the step in messages, e.g. "approval of 3 signatures". */
  purpose: string;
  terminal: ReceiverTerminal;
  signal?: AbortSignal;
}

export interface AuthorizationResponse {
  code: string;
  state: string;
  /** The redirect URI actually used (with the chosen port): the token request must repeat it. */
  redirectUri: string;
}

/** A promise that never settles: a wait that has nothing more to say. */
const NEVER = new Promise<never>(() => undefined);

/** Random, URL-safe value for `state` (and usable for nonces). */
export function randomState(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * The loopback redirect receiver of RFC 8252: listens on 127.0.0.1 only, answers exactly the
 * redirect path once, checks `state`, and turns `error` on the redirect into an EsignError.
 */
export async function authorizeInBrowser(options: AuthorizeInBrowserOptions): Promise<AuthorizationResponse> {
  const wanted = new URL(options.redirectUri);
  // A provider that registers only https redirect URIs: the browser lands on its page, and the person pastes that address here.
  if (wanted.protocol === 'https:' && !/^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/.test(wanted.hostname))
    return authorizeByPastedAddress(options);
  // The receiver binds 127.0.0.1 only, so `localhost` (which resolves there) is kept as registered,
  // and an IPv6 literal, which it would never receive, is refused.
  if (wanted.protocol !== 'http:' || !['127.0.0.1', 'localhost'].includes(wanted.hostname)) {
    throw new EsignError(
      'CONFIG_INVALID',
      `The redirect URI ${options.redirectUri} is neither a loopback http:// URI on 127.0.0.1 nor an https:// page.`,
      {
        hint: 'Use http://127.0.0.1:PORT/PATH (RFC 8252), or the https:// redirect URI the provider registered; set it with `esign config set redirectUri …`.',
      },
    );
  }
  const state = randomState();
  const receiver = await startReceiver(Number(wanted.port || 0), wanted.pathname, state);
  const redirect = new URL(wanted);
  redirect.port = String(receiver.port);
  const redirectUri = redirect.href;
  const url = options.buildAuthorizeUrl(redirectUri, state);
  const abort = new AbortController();
  const cleanup = () => {
    abort.abort();
    receiver.close();
  };
  try {
    // The browser must not be sent to a plain-http page of a remote service (credentials, consent).
    assertSecureUrl(url, `authorization page (${options.purpose})`);
    if (options.nobodyHere) throw options.nobodyHere;
    const pasted = options.terminal.readLine;
    const waits: Promise<URLSearchParams>[] = [
      receiver.params,
      timeout(options.timeoutMs, options.purpose, abort.signal),
    ];
    if (options.signal) waits.push(aborted(options.signal, abort.signal));
    if (options.noBrowser) {
      options.terminal.say(`Open this URL in a browser to continue (${options.purpose}):`);
      options.terminal.say(url);
      if (pasted) {
        options.terminal.say('Then paste the address your browser was sent to, or wait here.');
        waits.push(pasted(abort.signal).then(parsePastedRedirect));
      }
    } else {
      options.terminal.note(`Opening your browser for the ${options.purpose}…`);
      // Raced with the redirect, the time-out and Ctrl-C rather than awaited: opening may take long.
      // A browser that opened only means the page is on its way; one that failed ends the step
      // when it is a command or esign itself, with no person behind it to fall back on.
      waits.push(
        options.browser.open(url).then(
          () => {
            if (!options.browserIsScripted) options.terminal.say(`If it does not open, visit: ${url}`);
            return NEVER;
          },
          (error: unknown) => {
            if (options.browserIsScripted) throw error;
            if (!pasted && options.nobodyCanFinish)
              throw options.nobodyCanFinish(`could not open a browser: ${(error as Error).message.replace(/\.$/, '')}`);
            options.terminal.say(`Could not open a browser (${(error as Error).message}). Open this URL yourself:`);
            options.terminal.say(url);
            return pasted ? pasted(abort.signal).then(parsePastedRedirect) : NEVER;
          },
        ),
      );
    }
    const params = await Promise.race(waits);
    return { ...checkRedirect(params, state, options.purpose), redirectUri };
  } finally {
    cleanup();
  }
}

/**
 * A redirect URI that is not loopback (an https page the provider registered): nothing listens
 * for it, so esign prints the URL, as --no-browser does, and reads the address the browser lands on.
 */
async function authorizeByPastedAddress(options: AuthorizeInBrowserOptions): Promise<AuthorizationResponse> {
  const state = randomState();
  const url = options.buildAuthorizeUrl(options.redirectUri, state);
  assertSecureUrl(url, `authorization page (${options.purpose})`);
  const pasted = options.terminal.readLine;
  if (!pasted) {
    throw (
      options.nobodyHere ??
      new EsignError(
        'AUTH_BROWSER_FAILED',
        `The redirect URI ${options.redirectUri} is not loopback, so the ${options.purpose} needs a terminal to paste the address the browser lands on.`,
        {
          hint: 'Run it from a terminal, or use the split flow (sign --prepare, then sign --complete --redirect-url …; docs/ci.md).',
        },
      )
    );
  }
  const abort = new AbortController();
  try {
    options.terminal.say(`Open this URL in a browser to continue (${options.purpose}):`);
    options.terminal.say(url);
    options.terminal.say(`Then paste the address your browser was sent to (it begins with ${options.redirectUri}).`);
    const waits = [
      pasted(abort.signal).then(parsePastedRedirect),
      timeout(options.timeoutMs, options.purpose, abort.signal),
    ];
    if (options.signal) waits.push(aborted(options.signal, abort.signal));
    const params = await Promise.race(waits);
    return { ...checkRedirect(params, state, options.purpose), redirectUri: options.redirectUri };
  } finally {
    abort.abort();
  }
}

/** Validates the redirect's query: state first, then error or code. */
export function checkRedirect(
  params: URLSearchParams,
  expectedState: string,
  purpose: string,
): { code: string; state: string } {
  const state = params.get('state') ?? '';
  if (!constantTimeEqual(state, expectedState)) {
    throw new EsignError(
      'AUTH_STATE_MISMATCH',
      `The redirect for the ${purpose} carried a state that esign did not send; it was ignored.`,
      {
        hint: 'Start again; if it repeats, something is tampering with the browser step.',
      },
    );
  }
  const error = params.get('error');
  if (error) throw redirectError(error, params.get('error_description'), purpose);
  const code = params.get('code');
  if (!code) {
    throw new EsignError(
      'AUTH_REDIRECT_INVALID',
      `The redirect for the ${purpose} carried neither a code nor an error.`,
      {
        hint: 'Start again; if it repeats, report it to the service operator.',
      },
    );
  }
  return { code, state };
}

/** Maps the `error` of an authorization redirect (RFC 6749 §4.1.2.1) to an EsignError. */
export function redirectError(error: string, description: string | null, purpose: string): EsignError {
  const said = description && description !== 'n/a' ? `: ${description}` : '';
  const details = { error, error_description: description ?? undefined };
  if (error === 'access_denied') {
    return new EsignError('AUTH_DENIED', `The ${purpose} was refused or did not complete (${error}${said}).`, {
      hint: 'Run the command again and approve the request in the browser.',
      details,
    });
  }
  if (error === 'server_error' || error === 'temporarily_unavailable') {
    return new EsignError(
      'AUTH_SERVER_ERROR',
      `The service reported a technical problem during the ${purpose} (${error}${said}).`,
      {
        hint: 'Try again in a moment.',
        details,
      },
    );
  }
  return new EsignError('AUTH_INVALID_REQUEST', `The service rejected the ${purpose} request (${error}${said}).`, {
    hint: 'Check the profile (client id, redirect URI) with `esign config list`.',
    details,
  });
}

function parsePastedRedirect(line: string): URLSearchParams {
  try {
    return new URL(line.trim()).searchParams;
  } catch {
    throw new EsignError('AUTH_REDIRECT_INVALID', 'The pasted text is not a URL.', {
      hint: 'Paste the whole address from the browser bar.',
    });
  }
}

export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function timeout(ms: number, purpose: string, signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new EsignError('AUTH_TIMEOUT', `Gave up waiting for the ${purpose} after ${Math.round(ms / 1000)} s.`, {
            hint: 'Run the command again and finish the browser step in time, or raise --timeout.',
          }),
        ),
      ms,
    );
    signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
  });
}

/**
 * Rejects when the run's `signal` aborts (Ctrl-C) during this step; its listener goes when the step
 * ends (`stepDone`), or a batch of thousands of approvals would pile one up per step on the run's signal.
 */
function aborted(signal: AbortSignal, stepDone: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    const fail = () => reject(new EsignError('INTERRUPTED', 'Interrupted while waiting for the browser step.'));
    if (signal.aborted) return fail();
    signal.addEventListener('abort', fail, { once: true });
    stepDone.addEventListener('abort', () => signal.removeEventListener('abort', fail), { once: true });
  });
}

interface Receiver {
  port: number;
  params: Promise<URLSearchParams>;
  close(): void;
}

const DONE_PAGE = (ok: boolean) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>esign</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;color:#1d2330}</style></head>
<body><h1>${ok ? 'Done' : 'Not completed'}</h1><p>${
  ok
    ? 'esign received the answer. You can close this tab and return to the terminal.'
    : 'esign received an error. Return to the terminal for details.'
}</p></body></html>`;

function startReceiver(port: number, path: string, expectedState: string): Promise<Receiver> {
  const sockets = new Set<Socket>();
  let resolveParams!: (params: URLSearchParams) => void;
  const params = new Promise<URLSearchParams>((resolve) => (resolveParams = resolve));
  let answered = false;
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    if (request.method !== 'GET' || url.pathname !== path || answered) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('Not found');
      return;
    }
    answered = true;
    const ok =
      constantTimeEqual(url.searchParams.get('state') ?? '', expectedState) &&
      url.searchParams.has('code') &&
      !url.searchParams.has('error');
    response
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', connection: 'close' })
      .end(DONE_PAGE(ok));
    resolveParams(url.searchParams);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE'
          ? new EsignError(
              'AUTH_PORT_IN_USE',
              `Port ${port} on 127.0.0.1, needed for the browser redirect, is in use.`,
              {
                hint: 'Close the program using it, or register another redirect URI and set it with `esign config set redirectUri`.',
                cause: error,
              },
            )
          : error,
      );
    });
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const actual = typeof address === 'object' && address ? address.port : port;
      resolve({
        port: actual,
        params,
        close() {
          server.close();
          setTimeout(() => sockets.forEach((socket) => socket.destroy()), 100).unref();
        },
      });
    });
  });
}
