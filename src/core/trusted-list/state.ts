import type { TrustedListCacheEntry, TrustedListSnapshot } from './model.js';

/** verified: usable as current; expired: past its next update (gives no current status); failed: never verified. */
export type TrustedListState = 'verified' | 'expired' | 'failed';

/** Whether a list is past its next update at `now` (a closed list, with none, never is). */
export function isExpired(list: Pick<TrustedListSnapshot, 'nextUpdate'>, now: Date): boolean {
  return list.nextUpdate !== null && Date.parse(list.nextUpdate) < now.getTime();
}

export function stateOf(entry: TrustedListCacheEntry, now: Date): TrustedListState {
  if (!entry.snapshot) return 'failed';
  return isExpired(entry.snapshot, now) ? 'expired' : 'verified';
}
