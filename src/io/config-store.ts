import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EsignError } from '../core/errors.js';
import {
  isProfileKey,
  parseSettingValue,
  PROFILE_KEYS,
  type ProfileKey,
  type ProfileSettings,
} from '../core/profile.js';

export interface StoredConfig {
  currentProfile?: string;
  profiles: Record<string, ProfileSettings>;
}

/**
 * A small JSON file with atomic writes. Not `conf`: it brings ajv and more, about 100 ms of
 * start-up for every command, to guard a file this module already validates.
 */
class JsonFile {
  store: StoredConfig;

  constructor(readonly path: string) {
    this.store = JsonFile.read(path);
  }

  private static read(path: string): StoredConfig {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} };
      throw error;
    }
    const parsed: unknown = JSON.parse(text);
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not a JSON object');
    const store = parsed as StoredConfig;
    if (store.profiles !== undefined && (typeof store.profiles !== 'object' || Array.isArray(store.profiles)))
      throw new Error('"profiles" is not an object');
    return { ...store, profiles: store.profiles ?? {} };
  }

  write(store: StoredConfig): void {
    mkdirSync(join(this.path, '..'), { recursive: true, mode: 0o700 });
    writeFileAtomicallySync(this.path, JSON.stringify(store, null, 2) + '\n');
    this.store = store;
  }
}

/** Profiles in `config.json` in the platform config dir (ESIGN_CONFIG_DIR overrides it). */
export class ConfigStore {
  private constructor(
    private readonly conf: JsonFile,
    readonly dir: string,
  ) {}

  static async open(dir: string): Promise<ConfigStore> {
    try {
      return new ConfigStore(new JsonFile(join(dir, 'config.json')), dir);
    } catch (error) {
      throw new EsignError('CONFIG_INVALID', `Could not read the esign configuration in ${join(dir, 'config.json')}.`, {
        hint: 'Fix or remove that file (esign config path shows where it is).',
        cause: error,
      });
    }
  }

  get path(): string {
    return this.conf.path;
  }

  get currentProfile(): string | undefined {
    return this.conf.store.currentProfile;
  }

  profileNames(): string[] {
    return Object.keys(this.conf.store.profiles ?? {});
  }

  profile(name: string): ProfileSettings | undefined {
    return this.conf.store.profiles?.[name];
  }

  hasProfile(name: string): boolean {
    return this.profile(name) !== undefined;
  }

  createProfile(name: string, settings: ProfileSettings): void {
    this.update((store) => {
      store.profiles[name] = { ...store.profiles[name], ...settings };
    });
  }

  use(name: string): void {
    this.update((store) => {
      store.currentProfile = name;
    });
  }

  set(profile: string, key: string, text: string): ProfileSettings[ProfileKey] {
    const checked = checkKey(key);
    const value = parseSettingValue(checked, text);
    this.update((store) => {
      store.profiles[profile] = { ...store.profiles[profile], [checked]: value };
    });
    return value;
  }

  unset(profile: string, key: string): void {
    const checked = checkKey(key);
    this.update((store) => {
      const settings = { ...store.profiles[profile] };
      delete settings[checked];
      store.profiles[profile] = settings;
    });
  }

  private update(change: (store: StoredConfig) => void): void {
    const store: StoredConfig = structuredClone(this.conf.store);
    store.profiles ??= {};
    change(store);
    this.conf.write(store);
  }
}

function checkKey(key: string): ProfileKey {
  if (!isProfileKey(key)) {
    throw new EsignError('CONFIG_UNKNOWN_KEY', `Unknown setting ${JSON.stringify(key)}.`, {
      hint: `Known settings: ${Object.keys(PROFILE_KEYS).join(', ')}.`,
    });
  }
  return key;
}

function writeFileAtomicallySync(path: string, text: string): void {
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, text, { mode: 0o600 });
  renameSync(temp, path);
}
