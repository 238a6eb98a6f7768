/**
 * The composition root: turns global options, environment and the stored profile into the objects
 * commands use. The only place that reads ESIGN_* variables and decides which services to talk to.
 */
import { readFile, stat, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { EsignError } from '../core/errors.js';
import { systemClock, type BrowserLauncher, type Clock } from '../core/ports.js';
import {
  checkSettingConflicts,
  parseSecretsFile,
  PROFILE_KEYS,
  resolveSettings,
  type ProfileKey,
  type ProfileSettings,
  type ServiceAuthSetting,
  type ValueSource,
} from '../core/profile.js';
import { createBrowserLauncher, followRedirectsBrowser, systemBrowserUnavailable } from '../io/browser.js';
import { ConfigStore } from '../io/config-store.js';
import { getFollowingRedirects, HttpClient } from '../io/http.js';
import { authorizeInBrowser, type AuthorizationResponse } from '../io/loopback.js';
import { configDir, sandboxDataDir } from '../io/paths.js';
import { TokenStore } from '../io/token-store.js';
import { loadTransport, type SettingNames, type Transport } from '../io/transport.js';
import type { Io } from './io.js';

export const SANDBOX_PROFILE = 'sandbox';
/** The sandbox with its CSC API v2 signing service: every command on the other dialect. */
export const SANDBOX_V2_PROFILE = 'sandbox-v2';
export const SANDBOX_PROFILES: readonly string[] = [SANDBOX_PROFILE, SANDBOX_V2_PROFILE];
/** The profile made from ESIGN_* variables alone, with no file on disk. */
export const ENV_PROFILE = 'env';
/** Names that `esign config init` may not take. */
export const BUILT_IN_PROFILES: readonly string[] = [...SANDBOX_PROFILES, ENV_PROFILE];
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
  /** serviceAuth basic: the auth/login user (ESIGN_SIGNING_USERNAME, ESIGN_SIGNING_PASSWORD). */
  signingUsername?: string;
  signingPassword?: string;
  /** The signing service's API key (ESIGN_API_KEY), sent in the apiKeyHeader header. */
  apiKey?: string;
}

/** A running sandbox a profile points at (embedded in this process, or `esign sandbox start`). */
export interface SandboxRuntime {
  urls: {
    signing: string;
    signingV2?: string;
    identity: string;
    identityLegacy: string;
    storage: string;
    tsaEndpoint: string;
    pki: string;
    base: string;
    s3?: string;
    lotl?: string;
  };
  /** The sandbox root: trust anchor of its signatures and, over TLS, of its server certificate. */
  rootPemPath: string;
  /** The certificate (DER, base64) that signs the sandbox's TEST LOTL: the sandbox profile's shipped LOTL signer. */
  lotlSignerCertificate?: string;
  embedded: boolean;
}

export interface ResolvedProfile {
  name: string;
  choice: ProfileChoice;
  isSandbox: boolean;
  settings: ProfileSettings;
  sources: Partial<Record<ProfileKey, ValueSource>>;
  secrets: Secrets;
  sandbox?: SandboxRuntime;
  /** Proxy, trusted roots and client certificate for every call this profile makes. */
  transport: Transport;
}

export interface AuthorizeRequest {
  buildAuthorizeUrl(redirectUri: string, state: string): string;
  purpose: string;
  /** Whether the split flow (sign --prepare/--complete) can stand in for this step; not for the identity sign-in. */
  splitFlow?: boolean;
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
  /** Checks the profile choice and every ESIGN_* value without starting anything; profile() does it first. */
  checkProfile(): Promise<CheckedProfile>;
  /** The active profile; on the sandbox profile, starts or finds the sandbox. */
  profile(options?: { storage?: boolean }): Promise<ResolvedProfile>;
  /** A setting that must be present, or a CONFIG_MISSING error naming how to set it. */
  require<K extends ProfileKey>(profile: ResolvedProfile, key: K): NonNullable<ProfileSettings[K]>;
  /** For a signing run: fails at once (exit 4, naming the ways that work) when nobody can finish a browser step here. */
  assertBrowserStepPossible(purpose: string, options?: { approval?: boolean }): Promise<void>;
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
  let checkedPromise: Promise<CheckedProfile> | undefined;
  const http = new HttpClient({
    userAgent: 'esign/0.1',
    timeoutMs: httpTimeoutMs(env),
    trace: globals.verbose ? (line) => io.debug(line) : undefined,
    transport: async () => (await ctx.profile()).transport,
  });

  const browserCommand = typeof globals.browser === 'string' ? globals.browser : env['ESIGN_BROWSER'];
  const browserIsScripted = () =>
    overrides.browser !== undefined || Boolean(globals.autoApprove) || browserCommand !== undefined;
  /** Wait only where a person can finish a browser step: a terminal, a browser that opens, a command. */
  const whyNobodyCanFinish = (): string | undefined => {
    if (browserIsScripted() || globals.browser === false || io.canPrompt) return undefined;
    if (env['CI']) return 'this is a CI run without a terminal';
    return systemBrowserUnavailable(env)
      ? 'no graphical display (DISPLAY and WAYLAND_DISPLAY are unset) and no terminal'
      : undefined;
  };

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
      return chooseProfile(ctx, await ctx.config()).name;
    },
    profile(options = {}) {
      profilePromise ??= resolveProfile(ctx, options);
      return profilePromise;
    },
    require(profile, key) {
      const value = profile.settings[key];
      if (value === undefined || value === '' || (Array.isArray(value) && value.length === 0))
        throw missingSetting(profile.name, key);
      return value as NonNullable<ProfileSettings[typeof key]>;
    },
    canAuthorizeHere() {
      return io.canPrompt || browserIsScripted();
    },
    checkProfile() {
      checkedPromise ??= checkProfile(ctx);
      return checkedPromise;
    },
    async assertBrowserStepPossible(purpose, options = {}) {
      const { isSandbox, stored } = await ctx.checkProfile();
      // A seal's run signs in without a browser; whether its credential needs one is asked once it is known.
      if (!options.approval && serviceAuthOf(ctx.env, stored) !== 'browser') return;
      const why = whyNobodyCanFinish();
      if (why) throw nobodyCanFinish(purpose, why, { onSandbox: isSandbox, splitFlow: true });
    },
    async authorize(request) {
      const profile = await ctx.profile();
      const scripted = browserIsScripted();
      const stuck = (why: string) =>
        nobodyCanFinish(request.purpose, why, { onSandbox: profile.isSandbox, splitFlow: request.splitFlow ?? true });
      const why = whyNobodyCanFinish();
      const browser =
        overrides.browser ??
        (globals.autoApprove ? followRedirectsBrowser(profile.transport) : createBrowserLauncher(browserCommand, env));
      return authorizeInBrowser({
        buildAuthorizeUrl: request.buildAuthorizeUrl,
        redirectUri: request.redirectUri ?? profile.settings.redirectUri ?? DEFAULT_REDIRECT_URI,
        browser,
        noBrowser: globals.browser === false,
        browserIsScripted: scripted,
        nobodyCanFinish: io.canPrompt ? undefined : stuck,
        nobodyHere: why ? stuck(why) : undefined,
        timeoutMs: (globals.timeout ?? DEFAULT_BROWSER_TIMEOUT_S) * 1000,
        purpose: request.purpose,
        terminal: {
          say: (line) => io.error(line),
          note: (line) => io.info(line),
          readLine: io.canPrompt ? (signal) => io.readLine(signal) : undefined,
        },
        signal: ctx.signal,
      });
    },
    onClose(close) {
      closers.push(close);
    },
    async close() {
      await Promise.allSettled(
        closers
          .splice(0)
          .reverse()
          .map((close) => close()),
      );
    },
  };
  return ctx;
}

/** A browser step that nobody can finish in this run, with every way that works here. */
export function nobodyCanFinish(
  purpose: string,
  why: string,
  where: { onSandbox: boolean; splitFlow: boolean },
): EsignError {
  const ways = [
    ...(where.onSandbox ? ['--auto-approve (sandbox only)'] : []),
    '--browser CMD (a command that opens the URL)',
    '--no-browser from a terminal (then paste the address the browser was sent to)',
    ...(where.splitFlow
      ? [
          'the split flow (esign sign --prepare --state FILE …, approve anywhere, esign sign --complete --state FILE --redirect-url URL)',
        ]
      : []),
  ];
  return new EsignError(
    'AUTH_BROWSER_FAILED',
    `The ${purpose} needs a person at a browser, and nobody can finish it here (${why}).`,
    {
      hint: `Ways that work here: ${ways.join('; ')}.`,
    },
  );
}

/** A setting the command needs and the profile lacks; on the env profile, the variable to set. */
export function missingSetting(profileName: string, key: ProfileKey): EsignError {
  const variable = PROFILE_KEYS[key].env;
  if (profileName === ENV_PROFILE) {
    return new EsignError('CONFIG_MISSING', `The env profile (made from ESIGN_* variables) has no ${key}.`, {
      hint: `Set ${variable}.`,
    });
  }
  return new EsignError('CONFIG_MISSING', `The profile ${JSON.stringify(profileName)} has no ${key}.`, {
    hint: `Set it with \`esign config set ${key} VALUE\` (or ${variable}).`,
  });
}

/** The sign-in to the signing service as the environment and the stored profile say, before the profile is resolved. */
function serviceAuthOf(env: NodeJS.ProcessEnv, stored: ProfileSettings | undefined): ServiceAuthSetting {
  return resolveSettings({ env, stored }).settings.serviceAuth ?? 'browser';
}

/** ESIGN_HTTP_TIMEOUT_MS: the per-call HTTP time-out (default 30 s); tests shorten it to provoke time-outs. */
function httpTimeoutMs(env: NodeJS.ProcessEnv): number | undefined {
  const value = Number(env['ESIGN_HTTP_TIMEOUT_MS']);
  return Number.isInteger(value) && value > 0 ? value : undefined;
}

/** Where the active profile's name came from; errors name it so the user knows what to change. */
export type ProfileChoiceSource = 'flag' | 'ESIGN_PROFILE' | 'current' | 'environment' | 'default';

export interface ProfileChoice {
  name: string;
  from: ProfileChoiceSource;
}

const CHOICE_WORDS: Record<ProfileChoiceSource, string> = {
  flag: '--profile',
  ESIGN_PROFILE: 'ESIGN_PROFILE',
  current: 'the current profile (esign config use)',
  environment: 'ESIGN_* service variables',
  default: 'no profile configured',
};

/** The service URL settings: any of them in the environment makes a run with no profile chosen an env-profile run. */
export const SERVICE_URL_KEYS = [
  'signingBaseUrl',
  'identityBaseUrl',
  'identityLegacyBaseUrl',
  'storageAuthUrl',
  'tsaUrls',
] as const satisfies readonly ProfileKey[];

/** Variables that only make sense for a real service: set without any service URL, they are a mistake. */
const REAL_SERVICE_VARIABLES = [
  'ESIGN_CLIENT_ID',
  'ESIGN_CLIENT_SECRET',
  'ESIGN_TSA_USERNAME',
  'ESIGN_TSA_PASSWORD',
  'ESIGN_SECRETS_FILE',
  'ESIGN_SIGNING_USERNAME',
  'ESIGN_SIGNING_PASSWORD',
  'ESIGN_API_KEY',
];

/** The service URL variables set (non-empty) in the environment. */
export function serviceUrlVariables(env: NodeJS.ProcessEnv): string[] {
  return SERVICE_URL_KEYS.map((key) => PROFILE_KEYS[key].env).filter((variable) => Boolean(env[variable]));
}

/**
 * --profile, else ESIGN_PROFILE, else the current profile; with none of them, the env profile when
 * the environment names a service (as gh, cosign and the AWS CLI are configured), else the sandbox.
 */
function chooseProfile(ctx: Context, config: ConfigStore): ProfileChoice {
  if (ctx.globals.profile !== undefined) return { name: ctx.globals.profile, from: 'flag' };
  const fromEnv = ctx.env['ESIGN_PROFILE'];
  if (fromEnv) return { name: fromEnv, from: 'ESIGN_PROFILE' };
  if (config.currentProfile) return { name: config.currentProfile, from: 'current' };
  if (serviceUrlVariables(ctx.env).length > 0) return { name: ENV_PROFILE, from: 'environment' };
  return { name: SANDBOX_PROFILE, from: 'default' };
}

interface CheckedProfile {
  choice: ProfileChoice;
  stored: ProfileSettings | undefined;
  isSandbox: boolean;
}

/**
 * Everything about the profile that can be wrong, checked without side effects (no sandbox
 * started, nothing written): its name, the service variables beside it, every ESIGN_* value.
 */
async function checkProfile(ctx: Context): Promise<CheckedProfile> {
  const config = await ctx.config();
  const choice = chooseProfile(ctx, config);
  const stored = config.profile(choice.name);
  const isSandbox = SANDBOX_PROFILES.includes(choice.name);
  const serviceVariables = serviceUrlVariables(ctx.env);
  if (!stored && !isSandbox && choice.name !== ENV_PROFILE) throw unknownProfile(choice, serviceVariables);
  if (isSandbox && serviceVariables.length > 0) {
    // A pipeline that names its services must never sign with the sandbox's TEST keys by accident.
    throw new EsignError(
      'CONFIG_INVALID',
      `${serviceVariables.join(', ')} ${serviceVariables.length === 1 ? 'is' : 'are'} set, but the sandbox profile (chosen by ${CHOICE_WORDS[choice.from]}) only talks to its own emulators.`,
      {
        hint: `Unset ${serviceVariables.join(' and ')} to use the sandbox, or drop the sandbox choice to run on the env profile made from ESIGN_* variables.`,
      },
    );
  }
  const meantForAService = REAL_SERVICE_VARIABLES.filter((variable) => Boolean(ctx.env[variable]));
  if (choice.from === 'default' && meantForAService.length > 0) {
    // Credentials for a real service with no service named: a misspelt or missing URL variable would
    // otherwise sign on the sandbox, with its TEST keys, and exit 0.
    throw new EsignError(
      'CONFIG_MISSING',
      `${meantForAService.join(', ')} ${meantForAService.length === 1 ? 'is' : 'are'} set, but no service URL is: esign would sign on its sandbox (TEST signatures).`,
      {
        hint: 'Set ESIGN_SIGNING_URL (and ESIGN_TSA_URL, …) for your service, or choose the sandbox explicitly with --profile sandbox.',
      },
    );
  }
  if (ctx.globals.autoApprove && !isSandbox) {
    throw new EsignError('USAGE', '--auto-approve works only on the sandbox profile.', {
      hint: 'Approve the request in the browser instead.',
    });
  }
  resolveSettings({ env: ctx.env }); // throws on a malformed ESIGN_* value, naming the variable
  if (ctx.env['ESIGN_TOTP_SECRET']) (await import('../core/csc/totp.js')).parseTotpSecret(ctx.env['ESIGN_TOTP_SECRET']);
  return { choice, stored, isSandbox };
}

async function resolveProfile(ctx: Context, options: { storage?: boolean }): Promise<ResolvedProfile> {
  const { choice, stored, isSandbox } = await ctx.checkProfile();
  const { name } = choice;
  const sandbox = isSandbox ? await findOrStartSandbox(ctx, options) : undefined;
  // On the sandbox a sign-in without a browser is the organization's: its client and its bulk seal.
  const sealRun = sandbox !== undefined && serviceAuthOf(ctx.env, stored) !== 'browser';
  const seal = sealRun ? (await import('../sandbox/deps.js')).SANDBOX_SEAL : undefined;
  const defaults: ProfileSettings = sandbox
    ? {
        ...(name === SANDBOX_V2_PROFILE
          ? { signingBaseUrl: sandbox.urls.signingV2 ?? `${sandbox.urls.base}/signing-v2`, cscVersion: '2' as const }
          : { signingBaseUrl: sandbox.urls.signing, cscVersion: '1' as const }),
        identityBaseUrl: sandbox.urls.identity,
        identityLegacyBaseUrl: sandbox.urls.identityLegacy,
        storageAuthUrl: sandbox.urls.storage,
        tsaUrls: [sandbox.urls.tsaEndpoint],
        clientId: 'esign-cli',
        redirectUri: 'http://127.0.0.1:0/callback',
        tsaUsername: 'esign',
        trustAnchors: await sandboxTrustAnchors(sandbox.rootPemPath, sandboxDataDir(ctx.env)),
        ...(sandbox.urls.lotl ? { lotlUrl: sandbox.urls.lotl } : {}),
        credential: 'alice-rsa2048',
        lang: 'en',
        region: 'us-east-1',
        ...(sandbox.urls.base.startsWith('https:') ? { caFile: sandbox.rootPemPath } : {}),
        ...(seal ? { clientId: seal.clientId, credential: seal.pinOnlyCredentialID } : {}),
      }
    : { redirectUri: DEFAULT_REDIRECT_URI, lang: 'en', region: 'us-east-1' };
  const { settings, sources } = resolveSettings({ env: ctx.env, stored, defaults });
  const secrets = sandbox ? await sandboxSecrets(ctx.env, sealRun) : await readSecrets(ctx.env, settings.secretsFile);
  checkSettingConflicts(
    settings,
    {
      clientSecret: Boolean(secrets.clientSecret),
      apiKey: Boolean(secrets.apiKey),
      signingUsername: Boolean(secrets.signingUsername),
      signingPassword: Boolean(secrets.signingPassword),
    },
    (key) => (sources[key] === 'profile' ? `the ${key} setting` : PROFILE_KEYS[key].env),
  );
  const transport = await loadTransport(settings, ctx.env, transportSettingNames(sources));
  if (ctx.globals.verbose) ctx.io.debug(describeProfile(choice, sources));
  // Not silenced by --quiet: nobody should mistake a TEST signature for a real one.
  if (isSandbox)
    ctx.io.error(
      ctx.io.paint('33', 'esign: sandbox profile — signatures made here are TEST signatures with no legal effect.'),
    );
  return { name, choice, isSandbox, settings, sources, secrets, sandbox, transport };
}

/** How messages name each transport setting: its variable when it came from one, else the profile key. */
function transportSettingNames(sources: Partial<Record<ProfileKey, ValueSource>>): SettingNames {
  const name = (key: keyof SettingNames) => (sources[key] === 'profile' ? `the ${key} setting` : PROFILE_KEYS[key].env);
  return { caFile: name('caFile'), clientCert: name('clientCert'), clientKey: name('clientKey') };
}

function unknownProfile(choice: ProfileChoice, serviceVariables: string[]): EsignError {
  const fix =
    choice.from === 'ESIGN_PROFILE'
      ? `Unset ESIGN_PROFILE or create the profile with \`esign config init ${choice.name}\``
      : choice.from === 'current'
        ? `Choose another with \`esign config use NAME\` or create it with \`esign config init ${choice.name}\``
        : `Create it with \`esign config init ${choice.name}\``;
  const envProfile =
    serviceVariables.length > 0 && choice.from !== 'current'
      ? `, or drop ${CHOICE_WORDS[choice.from]} to run on the env profile made from ${serviceVariables.join(', ')}`
      : '';
  return new EsignError(
    'CONFIG_UNKNOWN_PROFILE',
    `There is no profile named ${JSON.stringify(choice.name)} (from ${CHOICE_WORDS[choice.from]}).`,
    {
      hint: `${fix}${envProfile}; \`esign config list\` lists the profiles.`,
    },
  );
}

/** The --verbose line: which profile, why, and where each setting came from. */
function describeProfile(choice: ProfileChoice, sources: Partial<Record<ProfileKey, ValueSource>>): string {
  const origins = (Object.keys(sources) as ProfileKey[]).map(
    (key) => `${key} from ${settingOrigin(key, sources[key])}`,
  );
  return `profile ${choice.name} (chosen by ${CHOICE_WORDS[choice.from]}): ${origins.join(', ') || 'no settings'}`;
}

/** Where a setting's value came from, in words a user can act on (the variable's name for env). */
export function settingOrigin(key: ProfileKey, source: ValueSource | undefined): string {
  if (source === 'env') return PROFILE_KEYS[key].env;
  return source ?? '';
}

/** The sandbox's own secrets; for a seal run, its organization client and login user unless the environment names others. */
async function sandboxSecrets(env: NodeJS.ProcessEnv, sealRun: boolean): Promise<Secrets> {
  const { SANDBOX_SECRETS, SANDBOX_SEAL } = await import('../sandbox/deps.js');
  if (!sealRun) return { clientSecret: SANDBOX_SECRETS.clientSecret, tsaPassword: SANDBOX_SECRETS.tsaPassword };
  return {
    clientSecret: SANDBOX_SEAL.clientSecret,
    tsaPassword: SANDBOX_SECRETS.tsaPassword,
    signingUsername: env['ESIGN_SIGNING_USERNAME'] || SANDBOX_SEAL.username,
    signingPassword: env['ESIGN_SIGNING_PASSWORD'] || SANDBOX_SEAL.password,
    ...(env['ESIGN_API_KEY'] ? { apiKey: env['ESIGN_API_KEY'] } : {}),
  };
}

/** Secrets from ESIGN_CLIENT_SECRET / ESIGN_TSA_PASSWORD, else from a secrets file of mode 0600. */
export async function readSecrets(env: NodeJS.ProcessEnv, secretsFile: string | undefined): Promise<Secrets> {
  const fromFile: Record<string, string> = {};
  if (secretsFile) {
    let info;
    try {
      info = await stat(secretsFile);
    } catch (error) {
      throw new EsignError('CONFIG_INVALID', `The secrets file ${secretsFile} cannot be read.`, {
        hint: 'Check the secretsFile setting.',
        cause: error,
      });
    }
    if (process.platform !== 'win32' && (info.mode & 0o077) !== 0) {
      throw new EsignError(
        'CONFIG_SECRET_FILE_MODE',
        `The secrets file ${secretsFile} is readable by other users (mode ${(info.mode & 0o777).toString(8)}).`,
        {
          hint: `Restrict it: chmod 600 ${secretsFile}`,
        },
      );
    }
    Object.assign(fromFile, parseSecretsFile(await readFile(secretsFile, 'utf8')));
  }
  return {
    clientSecret: env['ESIGN_CLIENT_SECRET'] || fromFile['CLIENT_SECRET'],
    tsaPassword: env['ESIGN_TSA_PASSWORD'] || fromFile['TSA_PASSWORD'],
    signingUsername: env['ESIGN_SIGNING_USERNAME'] || fromFile['SIGNING_USERNAME'],
    signingPassword: env['ESIGN_SIGNING_PASSWORD'] || fromFile['SIGNING_PASSWORD'],
    apiKey: env['ESIGN_API_KEY'] || fromFile['API_KEY'],
  };
}

const RUNTIME_FILE = 'runtime.json';

/** Uses a sandbox started by `esign sandbox start` when it answers; otherwise starts one in-process. */
async function findOrStartSandbox(ctx: Context, options: { storage?: boolean }): Promise<SandboxRuntime> {
  const dataDir = sandboxDataDir(ctx.env);
  const running = await readRuntime(dataDir);
  if (running && (await answers(running.urls.base, running.rootPemPath, ctx.env))) {
    if (ctx.globals.autoApprove && running.autoApprove === false) {
      throw new EsignError(
        'USAGE',
        `The running sandbox (${running.urls.base}) was started without --auto-approve, so it waits for approval in the browser.`,
        {
          hint: 'Approve in the browser without --auto-approve, or restart the sandbox with `esign --auto-approve sandbox start`.',
        },
      );
    }
    return { ...running, embedded: false };
  }
  const { issuedForPort, startSandbox } = await import('../sandbox/index.js');
  const start = (port?: number) =>
    startSandbox({
      dataDir,
      autoApprove: ctx.globals.autoApprove ?? false,
      s3: options.storage ?? false,
      ...(port !== undefined ? { port } : {}),
    });
  // The port its PKI was issued for, so that the OCSP and CRL URLs in what it signed before answer
  // again (`esign verify` of a file an embedded sandbox signed); another when that one is taken.
  const port = await issuedForPort(dataDir);
  let sandbox;
  try {
    sandbox = await start(port);
  } catch (error) {
    if (port === undefined || (error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    ctx.io.debug(
      `port ${port} of the embedded sandbox is taken: it starts on another (its certificates are issued anew)`,
    );
    sandbox = await start();
  }
  ctx.onClose(() => sandbox.close());
  const rootPemPath = await writeRootPem(dataDir, sandbox.pki.rootPem);
  ctx.io.debug(`started an embedded sandbox at ${sandbox.urls.base}`);
  return { urls: sandbox.urls, rootPemPath, lotlSignerCertificate: sandbox.lotlSignerCertificate, embedded: true };
}

/**
 * The running sandbox's root, and the root its data dir keeps when that is another: documents the
 * data dir's own sandbox signed earlier still verify while a sandbox published from elsewhere runs.
 */
async function sandboxTrustAnchors(runningRoot: string, dataDir: string): Promise<string[]> {
  const ownRoot = join(dataDir, 'root.pem');
  if (ownRoot === runningRoot) return [runningRoot];
  const kept = await stat(ownRoot).then(
    () => true,
    () => false,
  );
  return kept ? [runningRoot, ownRoot] : [runningRoot];
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

async function answers(base: string, rootPemPath: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  try {
    const transport = await loadTransport(base.startsWith('https:') ? { caFile: rootPemPath } : {}, env);
    const response = await getFollowingRedirects(`${base}/_sandbox/health`, 1000, 0, transport);
    return response.status === 200;
  } catch {
    return false;
  }
}
