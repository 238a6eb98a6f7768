import { chmod, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeBytesAtomically } from './atomic-write.js';

export interface StoredToken {
  accessToken: string;
  tokenType: string;
  /** Epoch milliseconds. */
  expiresAt?: number;
  /** Anything else a flow needs to keep (ID token claims, scopes…). Never printed whole. */
  extra?: Record<string, unknown>;
}

/**
 * Tokens and sessions in `tokens.json` in the config dir, mode 0600, keyed `profile:purpose`.
 * SADs are never stored: they live only for the signHash call they were issued for.
 */
export class TokenStore {
  constructor(private readonly dir: string) {}

  get path(): string {
    return join(this.dir, 'tokens.json');
  }

  async get(key: string): Promise<StoredToken | undefined> {
    return (await this.readAll())[key];
  }

  async set(key: string, token: StoredToken): Promise<void> {
    const all = await this.readAll();
    all[key] = token;
    await this.writeAll(all);
  }

  async delete(key: string): Promise<boolean> {
    const all = await this.readAll();
    if (!(key in all)) return false;
    delete all[key];
    await this.writeAll(all);
    return true;
  }

  private async readAll(): Promise<Record<string, StoredToken>> {
    try {
      const parsed: unknown = JSON.parse(await readFile(this.path, 'utf8'));
      return parsed && typeof parsed === 'object' ? (parsed as Record<string, StoredToken>) : {};
    } catch {
      return {};
    }
  }

  private async writeAll(all: Record<string, StoredToken>): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await writeBytesAtomically(this.path, JSON.stringify(all, null, 2) + '\n', { overwrite: true, mode: 0o600 });
    await chmod(this.path, 0o600);
  }
}

/** True when the token is still valid for at least `marginMs`. */
export function isFresh(token: StoredToken | undefined, nowMs: number, marginMs = 60_000): token is StoredToken {
  return token !== undefined && (token.expiresAt === undefined || token.expiresAt - marginMs > nowMs);
}
