/**
 * Which trusted-list policy a set of cached lists is read under (the setting `trustListPolicy`):
 * `default` is DSS's default policy (a list past its next update is still used, with a warning on
 * the verdict), `strict` DSS's strict level (such a list is not used). Kept with the lists as
 * ServiceCertificateIndex keeps its index, so every verification that is handed the lists reads it.
 */
import type { TrustedListCacheEntry } from '../trusted-list/model.js';

export type TrustListPolicy = 'default' | 'strict';

const policies = new WeakMap<readonly TrustedListCacheEntry[], TrustListPolicy>();

export function withTrustListPolicy<T extends readonly TrustedListCacheEntry[]>(lists: T, policy: TrustListPolicy): T {
  policies.set(lists, policy);
  return lists;
}

export function trustListPolicyOf(lists: readonly TrustedListCacheEntry[]): TrustListPolicy {
  return policies.get(lists) ?? 'default';
}
