import { EsignError } from '../core/errors.js';
import type { BrowserLauncher } from '../core/ports.js';
import { defaultExport } from './default-export.js';
import { getFollowingRedirects } from './http.js';
import type { Transport } from './transport.js';

/**
 * Why the system browser cannot be opened here, or undefined when it may be: xdg-open on a Linux
 * machine without a display "succeeds" and shows nothing, so that is known before trying.
 */
export function systemBrowserUnavailable(
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform = process.platform,
): string | undefined {
  if (platform === 'linux' && !env['DISPLAY'] && !env['WAYLAND_DISPLAY'] && !env['WSL_DISTRO_NAME'])
    return 'No graphical display here (DISPLAY and WAYLAND_DISPLAY are unset)';
  return undefined;
}

/** Opens URLs with the system browser (`open`), or with `--browser CMD` / ESIGN_BROWSER. */
export function createBrowserLauncher(
  command: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): BrowserLauncher {
  if (command) return new CommandBrowser(command);
  return {
    async open(url: string) {
      const unavailable = systemBrowserUnavailable(env);
      if (unavailable) throw new EsignError('AUTH_BROWSER_FAILED', `${unavailable}.`);
      const open = defaultExport(await import('open'));
      const child = await open(url, { wait: false });
      await new Promise<void>((resolve, reject) => {
        child.once('error', (error) =>
          reject(new EsignError('AUTH_BROWSER_FAILED', 'Could not open a web browser.', { cause: error })),
        );
        child.once('spawn', () => resolve());
        setTimeout(resolve, 500).unref();
      });
      child.unref();
    },
  };
}

/**
 * Runs a command with the URL as its last argument, e.g. `curl -sfL` in scripts and tests. Settles
 * when the command ends: a non-zero exit is a failed browser step (the caller races this with the
 * redirect, so a command that keeps running, like a browser window, blocks nothing).
 */
class CommandBrowser implements BrowserLauncher {
  constructor(private readonly command: string) {}

  async open(url: string): Promise<void> {
    const [program, ...args] = splitCommand(this.command);
    if (!program)
      throw new EsignError('USAGE', 'The --browser command is empty.', {
        hint: 'Pass a program, e.g. --browser "curl -sfL".',
      });
    // Loaded here, so that commands without a browser step do not load child_process (~3 ms).
    const { spawn } = await import('node:child_process');
    const child = spawn(program, [...args, url], { stdio: 'ignore' });
    return new Promise((resolve, reject) => {
      child.once('error', (error) =>
        reject(
          new EsignError('AUTH_BROWSER_FAILED', `Could not run the browser command ${JSON.stringify(program)}.`, {
            hint: 'Check --browser / ESIGN_BROWSER.',
            cause: error,
          }),
        ),
      );
      child.once('exit', (code, signal) => {
        if (code === 0) resolve();
        else
          reject(
            new EsignError(
              'AUTH_BROWSER_FAILED',
              `The browser command ${JSON.stringify(program)} failed (${signal ?? `exit ${code}`}) before the browser step was done.`,
              { hint: 'Check --browser / ESIGN_BROWSER and the service URL.' },
            ),
          );
      });
    });
  }
}

/** Splits a command line on spaces, keeping "double" or 'single' quoted parts together. */
export function splitCommand(command: string): string[] {
  const parts: string[] = [];
  for (const match of command.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g))
    parts.push(match[1] ?? match[2] ?? match[3] ?? '');
  return parts;
}

/**
 * The browser for `--auto-approve` on the sandbox: fetches the authorization URL and follows its
 * redirects to the loopback receiver, as `curl -sfL` would. An authorization page it cannot reach
 * fails the step at once.
 */
export const followRedirectsBrowser = (transport?: Transport): BrowserLauncher => ({
  async open(url: string) {
    let response;
    try {
      response = await getFollowingRedirects(url, 60_000, 10, transport);
    } catch (error) {
      if (error instanceof EsignError) throw error;
      const reason = (error as NodeJS.ErrnoException)?.code ?? (error as Error)?.message ?? String(error);
      throw new EsignError(
        'HTTP_UNREACHABLE',
        `Could not reach the authorization page at ${new URL(url).host} (${reason}).`,
        {
          hint: 'Check the service URL in your profile (esign config list); for the sandbox run `esign sandbox start`.',
          cause: error,
        },
      );
    }
    // As `curl -f`: an error page where the approval should have redirected ends the step.
    if (response.status >= 400) {
      throw new EsignError(
        'AUTH_SERVER_ERROR',
        `The authorization page at ${new URL(url).host} answered HTTP ${response.status}.`,
        {
          hint: 'Check the service URL and client id in your profile (esign config list).',
        },
      );
    }
  },
});
