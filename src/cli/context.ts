/**
 * The composition root: turns global options, environment and the stored profile into the objects
 * commands use. The only place that reads ESIGN_* variables and decides which services to talk to.
 */
import { readFile, stat, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { EsignError } from '../core/errors.js';
import { systemClock, type BrowserLauncher, type Clock } from '../core/ports.js';
import { parseSecretsFile, resolveSettings, type ProfileKey, type ProfileSettings, type ValueSource } from '../core/profile.js';
import { createBrowserLauncher, followRedirectsBrowser } from '../io/browser.js';
import { ConfigStore } from '../io/config-store.js';
import { getFollowingRedirects, HttpClient } from '../io/http.js';
import { authorizeInBrowser, type AuthorizationResponse } from '../io/loopback.js';
import { configDir, sandboxDataDir } from '../io/paths.js';
import { TokenStore } from '../io/token-store.js';
import type { Io } from './io.js';

export const SANDBOX_PROFILE = 'sandbox';
export const DEFAULT_REDIRECT_URI = 'http://127.0.0.1:8765/callback';
export const DEFAULT_BROWSER_TIMEOUT_S = 300;

export interface GlobalOptions {
  profile?: string;
  json: boolean;
  quiet: boolean;
  verbose: boolean;
  color: boolean;
  /** Seconds to wait for a browser step. */
  timeout?: number;
  /** A command to open URLs with; `false` with --no-browser. */
  browser?: string | false;
  autoApprove?: boolean;
}

export interface Secrets {
  clientSecret?: string;
  tsaPassword?: string;
}

/** A running sandbox a profile points at (embedded in this process, or `esign sandbox start`). */
export interface SandboxRuntime {
  urls: { signing: string; identity: string; identityLegacy: string; storage: string; tsaEndpoint: string; pki: string; base: string; s3?: string };
  rootPemPath: string;
  embedded: boolean;
}

export interface ResolvedProfile {
  name: string;
  isSandbox: boolean;
  settings: ProfileSettings;
  sources: Partial<Record<ProfileKey, ValueSource>>;
  secrets: Secrets;
  sandbox?: SandboxRuntime;
}

export interface AuthorizeRequest {
  buildAuthorizeUrl(redirectUri: string, state: string): string;
  purpose: string;
  redirectUri?: string;
}

export interface Context {
  io: Io;
  clock: Clock;
  env: NodeJS.ProcessEnv;
  globals: GlobalOptions;
  configDir: string;
  http: HttpClient;
  tokens: TokenStore;
  signal: AbortSignal;
  config(): Promise<ConfigStore>;
  /** The name of the active profile, without resolving it (no sandbox started, nothing checked). */
  profileName(): Promise<string>;
  /** The active profile; on the sandbox profile, starts or finds the sandbox. */
  profile(options?: { storage?: boolean }): Promise<ResolvedProfile>;
  /** A setting that must be present, or a CONFIG_MISSING error naming how to set it. */
  require<K extends ProfileKey>(profile: ResolvedProfile, key: K): NonNullable<ProfileSettings[K]>;
  /** One browser step through the loopback receiver. */
  authorize(request: AuthorizeRequest): Promise<AuthorizationResponse>;
  /** Whether a browser step can happen in this run: a terminal, a --browser command, or --auto-approve. */
  canAuthorizeHere(): boolean;
  /** Registers work to run when the command ends (closing an embedded sandbox). */
  onClose(close: () => Promise<void>): void;
  close(): Promise<void>;
}

export interface ContextOverrides {
  env?: NodeJS.ProcessEnv;
  clock?: Clock;
  browser?: BrowserLauncher;
  signal?: AbortSignal;
}

export function createContext(io: Io, globals: GlobalOptions, overrides: ContextOverrides = {}): Context {
  const env = overrides.env ?? process.env;
  const dir = configDir(env);
  const closers: Array<() => Promise<void>> = [];
  let configPromise: Promise<ConfigStore> | undefined;
  let profilePromise: Promise<ResolvedProfile> | undefined;
  const http = new HttpClient({ userAgent: 'esign/0.1', timeoutMs: httpTimeoutMs(env), trace: globals.verbose ? (line) => io.debug(line) : undefined });

  const browserCommand = typeof globals.browser === 'string' ? globals.browser : env['ESIGN_BROWSER'];
  const browserIsScripted = () => overrides.browser !== undefined || Boolean(globals.autoApprove) || browserCommand !== undefined;

  const ctx: Context = {
    io,
    clock: overrides.clock ?? systemClock,
    env,
    globals,
    configDir: dir,
    http,
    tokens: new TokenStore(dir),
    signal: overrides.signal ?? new AbortController().signal,
    config: () => (configPromise ??= ConfigStore.open(dir)),
    async profileName() {
      return chooseProfileName(ctx, await ctx.config());
    },
    profile(options = {}) {
      profilePromise ??= resolveProfile(ctx, options);
      return profilePromise;
    },
    require(profile, key) {
      const value = profile.settings[key];
      if (value === undefined || value === '' || (Array.isArray(value) && value.length === 0)) {
        throw new EsignError('CONFIG_MISSING', `The profile ${JSON.stringify(profile.name)} has no ${key}.`, {
          hint: `Set it with \`esign config set ${key} VALUE\` (or the ESIGN_* variable, see esign config --help).`,
        });
      }
      return value as NonNullable<ProfileSettings[typeof key]>;
    },
    canAuthorizeHere() {
      return io.canPrompt || browserIsScripted();
    },
    async authorize(request) {
      const profile = await ctx.profile();
      const scripted = browserIsScripted();
      const browser = overrides.browser ?? (globals.autoApprove ? followRedirectsBrowser : createBrowserLauncher(browserCommand, env));
      return authorizeInBrowser({
        buildAuthorizeUrl: request.buildAuthorizeUrl,
        redirectUri: request.redirectUri ?? profile.settings.redirectUri ?? DEFAULT_REDIRECT_URI,
        browser,
        noBrowser: globals.browser === false,
        browserIsScripted: scripted,
        unattended: Boolean(env['CI']) && !io.canPrompt,
        timeoutMs: (globals.timeout ?? DEFAULT_BROWSER_TIMEOUT_S) * 1000,
        purpose: request.purpose,
        terminal: { say: (line) => io.error(line), note: (line) => io.info(line), readLine: io.canPrompt ? (signal) => io.readLine(signal) : undefined },
        signal: ctx.signal,
      });
    },
    onClose(close) {
      closers.push(close);
    },
    async close() {
      await Promise.allSettled(closers.splice(0).reverse().map((close) => close()));
    },
  };
  return ctx;
}

/** ESIGN_HTTP_TIMEOUT_MS: the per-call HTTP time-out (default 30 s); tests shorten it to provoke time-outs. */
function httpTimeoutMs(env: NodeJS.ProcessEnv): number | undefined {
  const value = Number(env['ESIGN_HTTP_TIMEOUT_MS']);
  return Number.isInteger(value) && value > 0 ? value : undefined;
}

/** --profile, else ESIGN_PROFILE, else the current profile, else the sandbox. */
function chooseProfileName(ctx: Context, config: ConfigStore): string {
  return ctx.globals.profile ?? ctx.env['ESIGN_PROFILE'] ?? config.currentProfile ?? SANDBOX_PROFILE;
}

async function resolveProfile(ctx: Context, options: { storage?: boolean }): Promise<ResolvedProfile> {
  const config = await ctx.config();
  const name = chooseProfileName(ctx, config);
  const stored = config.profile(name);
  const isSandbox = name === SANDBOX_PROFILE;
  if (!stored && !isSandbox) {
    throw new EsignError('CONFIG_UNKNOWN_PROFILE', `There is no profile named ${JSON.stringify(name)}.`, {
      hint: `Create it with \`esign config init ${name}\`, or list profiles with \`esign config list\`.`,
    });
  }
  if (ctx.globals.autoApprove && !isSandbox) {
    throw new EsignError('USAGE', '--auto-approve works only on the sandbox profile.', { hint: 'Approve the request in the browser instead.' });
  }
  const sandbox = isSandbox ? await findOrStartSandbox(ctx, options) : undefined;
  const defaults: ProfileSettings = sandbox
    ? {
        signingBaseUrl: sandbox.urls.signing,
        identityBaseUrl: sandbox.urls.identity,
        identityLegacyBaseUrl: sandbox.urls.identityLegacy,
        storageAuthUrl: sandbox.urls.storage,
        tsaUrls: [sandbox.urls.tsaEndpoint],
        clientId: 'esign-cli',
        redirectUri: 'http://127.0.0.1:0/callback',
        tsaUsername: 'esign',
        trustAnchors: [sandbox.rootPemPath],
        credential: 'alice-rsa2048',
        lang: 'en',
        region: 'us-east-1',
      }
    : { redirectUri: DEFAULT_REDIRECT_URI, lang: 'en', region: 'us-east-1' };
  // On the sandbox the service URLs follow the running sandbox, whatever the environment says.
  const env = sandbox ? withoutServiceUrls(ctx.env) : ctx.env;
  const { settings, sources } = resolveSettings({ env, stored, defaults });
  const secrets = sandbox ? await sandboxSecrets() : await readSecrets(ctx.env, settings.secretsFile);
  // Not silenced by --quiet: nobody should mistake a TEST signature for a real one.
  if (isSandbox) ctx.io.error(ctx.io.paint('33', 'esign: sandbox profile — signatures made here are TEST signatures with no legal effect.'));
  return { name, isSandbox, settings, sources, secrets, sandbox };
}

function withoutServiceUrls(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const copy = { ...env };
  for (const key of ['ESIGN_SIGNING_URL', 'ESIGN_IDENTITY_URL', 'ESIGN_IDENTITY_LEGACY_URL', 'ESIGN_STORAGE_URL', 'ESIGN_TSA_URL']) delete copy[key];
  return copy;
}

async function sandboxSecrets(): Promise<Secrets> {
  const { SANDBOX_SECRETS } = await import('../sandbox/deps.js');
  return { clientSecret: SANDBOX_SECRETS.clientSecret, tsaPassword: SANDBOX_SECRETS.tsaPassword };
}

/** Secrets from ESIGN_CLIENT_SECRET / ESIGN_TSA_PASSWORD, else from a secrets file of mode 0600. */
export async function readSecrets(env: NodeJS.ProcessEnv, secretsFile: string | undefined): Promise<Secrets> {
  const fromFile: Record<string, string> = {};
  if (secretsFile) {
    let info;
    try {
      info = await stat(secretsFile);
    } catch (error) {
      throw new EsignError('CONFIG_INVALID', `The secrets file ${secretsFile} cannot be read.`, { hint: 'Check the secretsFile setting.', cause: error });
    }
    if (process.platform !== 'win32' && (info.mode & 0o077) !== 0) {
      throw new EsignError('CONFIG_SECRET_FILE_MODE', `The secrets file ${secretsFile} is readable by other users (mode ${(info.mode & 0o777).toString(8)}).`, {
        hint: `Restrict it: chmod 600 ${secretsFile}`,
      });
    }
    Object.assign(fromFile, parseSecretsFile(await readFile(secretsFile, 'utf8')));
  }
  return {
    clientSecret: env['ESIGN_CLIENT_SECRET'] || fromFile['CLIENT_SECRET'],
    tsaPassword: env['ESIGN_TSA_PASSWORD'] || fromFile['TSA_PASSWORD'],
  };
}

const RUNTIME_FILE = 'runtime.json';

/** Uses a sandbox started by `esign sandbox start` when it answers; otherwise starts one in-process. */
async function findOrStartSandbox(ctx: Context, options: { storage?: boolean }): Promise<SandboxRuntime> {
  const dataDir = sandboxDataDir(ctx.env);
  const running = await readRuntime(dataDir);
  if (running && (await answers(running.urls.base))) {
    if (ctx.globals.autoApprove && running.autoApprove === false) {
      throw new EsignError('USAGE', `The running sandbox (${running.urls.base}) was started without --auto-approve, so it waits for approval in the browser.`, {
        hint: 'Approve in the browser without --auto-approve, or restart the sandbox with `esign --auto-approve sandbox start`.',
      });
    }
    return { ...running, embedded: false };
  }
  const { startSandbox } = await import('../sandbox/index.js');
  const sandbox = await startSandbox({ dataDir, autoApprove: ctx.globals.autoApprove ?? false, s3: options.storage ?? false });
  ctx.onClose(() => sandbox.close());
  const rootPemPath = await writeRootPem(dataDir, sandbox.pki.rootPem);
  ctx.io.debug(`started an embedded sandbox at ${sandbox.urls.base}`);
  return { urls: sandbox.urls, rootPemPath, embedded: true };
}

export async function writeRootPem(dataDir: string, pem: string): Promise<string> {
  const path = join(dataDir, 'root.pem');
  await mkdir(dataDir, { recursive: true });
  await writeFile(path, pem);
  return path;
}

/** What `esign sandbox start` publishes in runtime.json for the commands that use it. */
interface PublishedSandbox extends Omit<SandboxRuntime, 'embedded'> {
  pid: number;
  /** Whether browser steps are approved at once; absent for a sandbox that tests publish. */
  autoApprove?: boolean;
}

/** Announces a running sandbox in `dataDir`; returns the file written. */
export async function writeRuntime(dataDir: string, runtime: PublishedSandbox): Promise<string> {
  await mkdir(dataDir, { recursive: true });
  const path = join(dataDir, RUNTIME_FILE);
  await writeFile(path, JSON.stringify(runtime, null, 2) + '\n');
  return path;
}

async function readRuntime(dataDir: string): Promise<PublishedSandbox | undefined> {
  try {
    const runtime = JSON.parse(await readFile(join(dataDir, RUNTIME_FILE), 'utf8')) as PublishedSandbox;
    process.kill(runtime.pid, 0);
    return runtime;
  } catch {
    return undefined;
  }
}

async function answers(base: string): Promise<boolean> {
  try {
    const response = await getFollowingRedirects(`${base}/_sandbox/health`, 1000, 0);
    return response.status === 200;
  } catch {
    return false;
  }
}
