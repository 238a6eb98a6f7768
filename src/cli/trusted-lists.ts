import type { TrustedListCacheEntry } from '../core/trusted-list/model.js';
import type { Context } from './context.js';

/**
 * The verified trusted lists in the cache that this profile may use, or undefined when there are
 * none. A sandbox TEST list counts only on a sandbox profile.
 */
export async function usableTrustedLists(ctx: Context): Promise<TrustedListCacheEntry[] | undefined> {
  const { TrustedListCache } = await import('../io/trusted-list-cache.js');
  const entries = (await TrustedListCache.at(ctx.env).entries()).filter((entry) => entry.snapshot !== undefined);
  if (entries.length === 0) return undefined;
  const { isSandbox } = await ctx.checkProfile();
  const usable = isSandbox ? entries : entries.filter((entry) => !entry.snapshot?.test);
  return usable.some((entry) => entry.snapshot?.isLotl === false) ? usable : undefined;
}
