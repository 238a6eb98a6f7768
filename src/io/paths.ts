import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

/** The platform's config dir for esign, or ESIGN_CONFIG_DIR. */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env['ESIGN_CONFIG_DIR']) return env['ESIGN_CONFIG_DIR'];
  if (process.platform === 'win32') return join(env['APPDATA'] ?? join(homedir(), 'AppData', 'Roaming'), 'esign');
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Preferences', 'esign');
  return join(xdgBase(env, 'XDG_CONFIG_HOME', '.config'), 'esign');
}

/** Where the sandbox keeps its PKI and state: ESIGN_SANDBOX_DIR, else the platform's data dir. */
export function sandboxDataDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env['ESIGN_SANDBOX_DIR']) return env['ESIGN_SANDBOX_DIR'];
  if (env['ESIGN_CONFIG_DIR']) return join(env['ESIGN_CONFIG_DIR'], 'sandbox');
  if (process.platform === 'win32') return join(windowsLocalAppData(env), 'esign', 'sandbox');
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Application Support', 'esign', 'sandbox');
  return join(xdgBase(env, 'XDG_DATA_HOME', join('.local', 'share')), 'esign', 'sandbox');
}

/**
 * Where esign keeps what it can rebuild (the V8 code cache): ESIGN_CACHE_DIR, else inside
 * ESIGN_CONFIG_DIR when that is set (so a test's or CI job's esign stays in its own dir), else the
 * platform's cache dir.
 */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env['ESIGN_CACHE_DIR']) return env['ESIGN_CACHE_DIR'];
  if (env['ESIGN_CONFIG_DIR']) return join(env['ESIGN_CONFIG_DIR'], 'cache');
  if (process.platform === 'win32') return join(windowsLocalAppData(env), 'esign', 'cache');
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Caches', 'esign');
  return join(xdgBase(env, 'XDG_CACHE_HOME', '.cache'), 'esign');
}

/** An XDG base directory: the variable when it is an absolute path (the spec ignores any other value), else its default under home. */
function xdgBase(env: NodeJS.ProcessEnv, name: string, underHome: string): string {
  const value = env[name];
  return value && isAbsolute(value) ? value : join(homedir(), underHome);
}

function windowsLocalAppData(env: NodeJS.ProcessEnv): string {
  return env['LOCALAPPDATA'] ?? join(homedir(), 'AppData', 'Local');
}
