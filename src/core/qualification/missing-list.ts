/**
 * N/A because a list is missing: where no trusted list is reached, the list that would decide is
 * the one of the country of the chain's issuers, when the LOTL points to it and it is not cached
 * (`esign trust update --territories BE,EE` fetched others).
 */
import type { X509Certificate } from 'node:crypto';
import type { TrustedListCacheEntry } from '../trusted-list/model.js';
import { indexOf } from './list-index.js';

/** ISO 3166 codes in certificates that the EU lists name otherwise. */
const TERRITORY_OF_COUNTRY: Readonly<Record<string, string>> = { GR: 'EL' };

export function missingTerritory(
  path: readonly X509Certificate[],
  lists: readonly TrustedListCacheEntry[],
): string | undefined {
  const lotl = lists.find((entry) => indexOf(entry).isLotl && indexOf(entry).verified)?.snapshot;
  if (!lotl) return undefined;
  const cached = new Set(
    lists.filter((entry) => !indexOf(entry).isLotl && indexOf(entry).verified).map((entry) => entry.territory),
  );
  const pointed = new Set(lotl.pointers.map((pointer) => pointer.territory));
  for (const certificate of path)
    for (const country of countriesOf(certificate.issuer)) {
      const territory = TERRITORY_OF_COUNTRY[country] ?? country;
      if (pointed.has(territory) && !cached.has(territory)) return territory;
    }
  return undefined;
}

/** Whether the verified LOTL among `lists` points to a list at `url` (an added list the LOTL names too is an EU one). */
export function lotlPointsTo(lists: readonly TrustedListCacheEntry[], url: string): boolean {
  const lotl = lists.find((entry) => indexOf(entry).isLotl && indexOf(entry).verified)?.snapshot;
  return lotl?.pointers.some((pointer) => pointer.location === url) ?? false;
}

function countriesOf(name: string): string[] {
  return [...name.matchAll(/^C=([A-Za-z]{2})$/gm)].map((match) => (match[1] as string).toUpperCase());
}
