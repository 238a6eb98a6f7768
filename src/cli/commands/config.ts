import type { Command } from 'commander';
import { EsignError } from '../../core/errors.js';
import { isProfileKey, PROFILE_KEYS, type ProfileKey } from '../../core/profile.js';
import { PROVIDER_IDS, PROVIDER_PRESETS, type ProviderPreset } from '../../core/provider-presets.js';
import {
  BUILT_IN_PROFILES,
  ENV_PROFILE,
  SANDBOX_PROFILES,
  SERVICE_URL_KEYS,
  settingOrigin,
  type Context,
  type ResolvedProfile,
} from '../context.js';
import { table } from '../io.js';
import type { CommandModule } from '../command.js';

export const defineCommand: CommandModule['defineCommand'] = (program: Command, run) => {
  const keys = Object.entries(PROFILE_KEYS)
    .map(([key, spec]) => `  ${key.padEnd(22)} ${spec.env.padEnd(28)} ${spec.description}`)
    .join('\n');
  const config = program
    .command('config')
    .summary('manage profiles and settings')
    .description('Manage profiles. Values resolve as: flag > ESIGN_* variable > profile > default.')
    .addHelpText(
      'after',
      `\nSettings (key, environment variable, meaning):\n${keys}\n\nSecrets are never settings: ESIGN_CLIENT_SECRET, ESIGN_TSA_PASSWORD, ESIGN_SIGNING_USERNAME/ESIGN_SIGNING_PASSWORD\n(serviceAuth password or basic), ESIGN_API_KEY (with apiKeyHeader), ESIGN_TOTP_SECRET (base32, base64, otpauth://;\nforce the form with a base32: or base64: prefix), or a secretsFile of mode 0600 with CLIENT_SECRET=…, TSA_PASSWORD=…,\nSIGNING_USERNAME=…, SIGNING_PASSWORD=… and API_KEY=… lines (the client key's passphrase: ESIGN_CLIENT_KEY_PASSPHRASE only).\nSettings that contradict each other (serviceAuth password without a user, apiKeyHeader without ESIGN_API_KEY,\naccountToken without accountId…) are refused before any request.\nESIGN_CONFIG_DIR moves the config dir. Network: HTTPS_PROXY, HTTP_PROXY and NO_PROXY (either case; credentials\nin the proxy URL are never printed; loopback is never proxied); NODE_EXTRA_CA_CERTS works beside caFile (docs/network.md).`,
    );

  config
    .command('init [name]')
    .description("create a profile and make it the current one (--provider fills in a provider's public settings)")
    .option('--set <key=value...>', 'initial settings, e.g. --set signingBaseUrl=https://…')
    .option('--provider <id>', 'start from a provider preset (docs/providers.md); `--provider list` lists them')
    .action((name: string | undefined, options: { set?: string[]; provider?: string }, command: Command) =>
      run(command, async (ctx) => {
        if (options.provider === 'list') return listPresets(ctx);
        if (name === undefined)
          throw new EsignError('USAGE', 'esign config init needs a profile name.', {
            hint: 'esign config init NAME [--provider ID] [--set key=value…]',
          });
        if (BUILT_IN_PROFILES.includes(name))
          throw new EsignError('USAGE', `The ${name} profile is built in.`, { hint: 'Pick another name.' });
        const preset = options.provider === undefined ? undefined : presetOf(options.provider);
        const store = await ctx.config();
        store.createProfile(name, {});
        for (const [key, { value }] of Object.entries(preset?.settings ?? {})) store.set(name, key, value);
        for (const pair of options.set ?? []) {
          const at = pair.indexOf('=');
          if (at <= 0) throw new EsignError('USAGE', `--set expects key=value, got ${JSON.stringify(pair)}.`);
          store.set(name, pair.slice(0, at), pair.slice(at + 1));
        }
        store.use(name);
        const filled = Object.keys(preset?.settings ?? {});
        ctx.io.result(
          {
            profile: name,
            current: true,
            path: store.path,
            ...(preset ? { provider: options.provider, settings: filled, notes: preset.notes } : {}),
          },
          () =>
            [
              `Created profile ${name} (now current) in ${store.path}.`,
              ...(preset ? [`From the ${preset.name} preset: ${filled.join(', ')}.`, preset.notes] : []),
            ].join('\n'),
        );
      }),
    );

  config
    .command('set <key> <value>')
    .description('set a setting in the profile (--profile, else the current one)')
    .action((key: string, value: string, _options: unknown, command: Command) =>
      run(command, async (ctx) => {
        const name = await targetProfile(ctx, key);
        const stored = (await ctx.config()).set(name, key, value);
        ctx.io.result({ profile: name, key, value: stored }, () => `${name}: ${key} = ${JSON.stringify(stored)}`);
      }),
    );

  config
    .command('unset <key>')
    .description('remove a setting from the profile')
    .action((key: string, _options: unknown, command: Command) =>
      run(command, async (ctx) => {
        const name = await targetProfile(ctx, key);
        (await ctx.config()).unset(name, key);
        ctx.io.result({ profile: name, key, removed: true }, () => `${name}: ${key} removed`);
      }),
    );

  config
    .command('get <key>')
    .description('print the effective value of a setting and where it comes from')
    .action((key: string, _options: unknown, command: Command) =>
      run(command, async (ctx) => {
        if (!isProfileKey(key))
          throw new EsignError('CONFIG_UNKNOWN_KEY', `Unknown setting ${JSON.stringify(key)}.`, {
            hint: `Known settings: ${Object.keys(PROFILE_KEYS).join(', ')}.`,
          });
        const profile = await ctx.profile();
        const value = profile.settings[key];
        ctx.io.result({ profile: profile.name, key, value: value ?? null, source: profile.sources[key] ?? null }, () =>
          value === undefined ? `(not set)` : `${Array.isArray(value) ? value.join(',') : String(value)}`,
        );
      }),
    );

  config
    .command('list')
    .description('show the profiles and the effective settings of the active one')
    .action((_options: unknown, command: Command) =>
      run(command, async (ctx) => {
        const store = await ctx.config();
        const profile = await ctx.profile();
        const names = [...new Set([...BUILT_IN_PROFILES, ...store.profileNames()])];
        const rows = (Object.keys(PROFILE_KEYS) as ProfileKey[]).map((key) => {
          const value = profile.settings[key];
          return [
            key,
            value === undefined ? '' : Array.isArray(value) ? value.join(',') : String(value),
            settingOrigin(key, profile.sources[key]),
          ];
        });
        const secrets = {
          clientSecret: profile.secrets.clientSecret ? 'set' : 'not set',
          tsaPassword: profile.secrets.tsaPassword ? 'set' : 'not set',
        };
        const chosenBy = profile.choice.from;
        ctx.io.result(
          {
            profile: profile.name,
            chosenBy,
            profiles: names,
            current: store.currentProfile ?? null,
            settings: profile.settings,
            sources: profile.sources,
            secrets,
          },
          () =>
            [
              `Profiles: ${names.map((name) => (name === profile.name ? `${name} (active)` : name)).join(', ')}`,
              `Active: ${profile.name}, ${ACTIVE_BECAUSE[chosenBy]}`,
              '',
              table(['setting', 'value', 'from'], rows),
              '',
              `client secret: ${secrets.clientSecret} · TSA password: ${secrets.tsaPassword}`,
            ].join('\n'),
        );
      }),
    );

  config
    .command('use <profile>')
    .description('make a profile the current one')
    .action((name: string, _options: unknown, command: Command) =>
      run(command, async (ctx) => {
        const store = await ctx.config();
        if (!BUILT_IN_PROFILES.includes(name) && !store.hasProfile(name)) {
          throw new EsignError('CONFIG_UNKNOWN_PROFILE', `There is no profile named ${JSON.stringify(name)}.`, {
            hint: `Create it with \`esign config init ${name}\`.`,
          });
        }
        store.use(name);
        ctx.io.result({ current: name }, () => `Current profile: ${name}`);
      }),
    );

  config
    .command('path')
    .description('print where the configuration file lives')
    .action((_options: unknown, command: Command) =>
      run(command, async (ctx) => {
        const store = await ctx.config();
        ctx.io.result({ path: store.path, dir: ctx.configDir }, () => store.path);
      }),
    );
};

function presetOf(id: string): ProviderPreset {
  const preset = PROVIDER_PRESETS[id];
  if (!preset)
    throw new EsignError('USAGE', `There is no provider preset ${JSON.stringify(id)}.`, {
      hint: `Known presets: ${PROVIDER_IDS.join(', ')} (esign config init --provider list).`,
    });
  return preset;
}

/** `esign config init --provider list`: each preset, what it sets, and the sandbox quirks that emulate it. */
function listPresets(ctx: Context): void {
  const presets = PROVIDER_IDS.map((id) => {
    const preset = PROVIDER_PRESETS[id]!;
    const settings = Object.fromEntries(Object.entries(preset.settings).map(([key, { value }]) => [key, value]));
    return { id, name: preset.name, settings, emulatedBy: preset.emulatedBy };
  });
  ctx.io.result({ presets }, () =>
    table(
      ['preset', 'provider', 'settings'],
      presets.map((preset) => [
        preset.id,
        preset.name,
        Object.entries(preset.settings)
          .map(([key, value]) => `${key}=${value}`)
          .join(' '),
      ]),
    ),
  );
}

const ACTIVE_BECAUSE: Record<ResolvedProfile['choice']['from'], string> = {
  flag: 'chosen by --profile',
  ESIGN_PROFILE: 'chosen by ESIGN_PROFILE',
  current: 'the current profile',
  environment: 'made from ESIGN_* variables (no profile chosen; the environment names a service)',
  default: 'the built-in default (no profile configured)',
};

/**
 * The profile that `config set/unset` change: the active one. The env profile lives in the
 * environment only, and the sandbox's services are its own emulators.
 */
async function targetProfile(ctx: Context, key: string): Promise<string> {
  const name = await ctx.profileName();
  if (name === ENV_PROFILE) {
    throw new EsignError('USAGE', 'The env profile is made from ESIGN_* variables and has no file to change.', {
      hint: `Set ${isProfileKey(key) ? PROFILE_KEYS[key].env : 'its ESIGN_* variable'} instead, or create a profile with \`esign config init NAME\`.`,
    });
  }
  if (SANDBOX_PROFILES.includes(name) && (SERVICE_URL_KEYS as readonly string[]).includes(key)) {
    throw new EsignError('USAGE', `The sandbox profile's ${key} is its own emulator's.`, {
      hint: `Create a profile for another service: \`esign config init NAME --set ${key}=URL\`.`,
    });
  }
  return name;
}
