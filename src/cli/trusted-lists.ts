import type { Qualification } from '../core/qualification/determine.js';
import type { TrustedListCacheEntry } from '../core/trusted-list/model.js';
import type { Context } from './context.js';
import type { TrustListSources } from '../io/trusted-list-update.js';

/** Where `esign trust update` and `import` get and keep lists for this profile (the sandbox's TEST lists apart). */
export async function trustListSources(
  ctx: Context,
): Promise<{ sources: TrustListSources; lotlUrl: string; territories?: string[] }> {
  const [profile, { TrustedListCache }, { DEFAULT_LOTL_URL }] = await Promise.all([
    ctx.profile(),
    import('../io/trusted-list-cache.js'),
    import('../io/trusted-list-update.js'),
  ]);
  return {
    sources: {
      http: ctx.http,
      cache: TrustedListCache.at(ctx.env, { sandbox: profile.isSandbox }),
      now: () => ctx.clock.now(),
      acceptTestLists: profile.isSandbox,
      // The sandbox profile ships its TEST LOTL's signer as esign ships the Official Journal's.
      ...(profile.sandbox?.lotlSignerCertificate ? { lotlSigners: [profile.sandbox.lotlSignerCertificate] } : {}),
    },
    lotlUrl: profile.settings.lotlUrl ?? DEFAULT_LOTL_URL,
    ...(profile.settings.trustListTerritories ? { territories: profile.settings.trustListTerritories } : {}),
  };
}

/**
 * The verified trusted lists in the cache that this profile may use, or undefined when there are
 * none. A sandbox TEST list counts only on a sandbox profile, whose lists are kept apart. With
 * `fetchSandboxLists`, a sandbox profile whose cache holds nothing yet (not even a failed list) fetches its sandbox's TEST
 * lists first (a loopback call), so `esign verify` on the sandbox qualifies with no setup.
 */
export function usableTrustedLists(
  ctx: Context,
  options: { fetchSandboxLists?: boolean } = {},
): Promise<TrustedListCacheEntry[] | undefined> {
  // Read once a run: a sign asks for the TSA anchors, the chain's issuers and the qualification.
  const key = options.fetchSandboxLists === true;
  const memo = readOnce.get(ctx) ?? new Map<boolean, Promise<TrustedListCacheEntry[] | undefined>>();
  readOnce.set(ctx, memo);
  let lists = memo.get(key);
  if (!lists) memo.set(key, (lists = readUsableTrustedLists(ctx, key)));
  return lists;
}

const readOnce = new WeakMap<Context, Map<boolean, Promise<TrustedListCacheEntry[] | undefined>>>();

async function readUsableTrustedLists(
  ctx: Context,
  fetchFromSandbox: boolean,
): Promise<TrustedListCacheEntry[] | undefined> {
  const { isSandbox } = await ctx.checkProfile();
  const { TrustedListCache } = await import('../io/trusted-list-cache.js');
  const cache = TrustedListCache.at(ctx.env, { sandbox: isSandbox });
  // From the lists' indexes: a list itself is read only when a chain at hand may lead to its services.
  let cached = await cache.indexed();
  if (isSandbox && fetchFromSandbox && cached.length === 0) {
    await fetchSandboxLists(ctx);
    cached = await cache.indexed();
  }
  const usable = cached.filter(({ index }) => index.verified && (isSandbox || !index.test));
  if (!usable.some(({ index }) => !index.isLotl)) return undefined;
  const { withTrustListPolicy } = await import('../core/qualification/policy.js');
  const profile = await ctx.profile();
  return withTrustListPolicy(
    usable.map(({ entry }) => entry),
    profile.settings.trustListPolicy ?? 'default',
  );
}

async function fetchSandboxLists(ctx: Context): Promise<void> {
  const { sources, lotlUrl } = await trustListSources(ctx);
  const { updateTrustedLists } = await import('../io/trusted-list-update.js');
  try {
    for (const outcome of await updateTrustedLists(sources, { lotlUrl }))
      if (outcome.state === 'failed') ctx.io.debug(`sandbox trusted list ${outcome.territory}: ${outcome.reason}`);
  } catch (error) {
    ctx.io.debug(`sandbox trusted lists not fetched: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** The certificates of the usable lists' qualified TSAs (TSA/QTST services), DER: anchors for the TSA's chain. */
export async function listedTsaCertificates(ctx: Context): Promise<Uint8Array[]> {
  const lists = await usableTrustedLists(ctx);
  const [{ SERVICE_TSA_QTST }, { indexOf }] = await Promise.all([
    import('../core/qualification/uris.js'),
    import('../core/qualification/list-index.js'),
  ]);
  // Only the lists whose index says they have a TSA/QTST service are read.
  return (lists ?? [])
    .filter((entry) => indexOf(entry).tsa)
    .flatMap((entry) =>
      (entry.snapshot?.services ?? [])
        .filter((service) => service.type === SERVICE_TSA_QTST)
        .flatMap((service) =>
          service.identity.certificates.map((base64) => new Uint8Array(Buffer.from(base64, 'base64'))),
        ),
    );
}

/** The usable lists' service certificates that may have issued the last of `certificates` (DER), to complete a short chain. */
export async function listedIssuersOf(ctx: Context, certificates: readonly Uint8Array[]): Promise<Uint8Array[]> {
  const last = certificates.at(-1);
  const lists = last ? await usableTrustedLists(ctx) : undefined;
  if (!last || !lists) return [];
  const { ServiceCertificateIndex } = await import('../core/qualification/service-index.js');
  const { X509Certificate } = await import('node:crypto');
  try {
    return ServiceCertificateIndex.of(lists)
      .issuersOf(new X509Certificate(last))
      .map((certificate) => new Uint8Array(certificate.raw));
  } catch {
    return []; // a certificate that does not parse: chain completion names it
  }
}

/** The qualification of a credential's certificate (signer first, then its chain) for a signature made at `at`. */
export type CredentialQualifier = (certificates: readonly Uint8Array[], at: Date) => Qualification | undefined;

/** Qualifies credentials against the usable lists; undefined when there are none. */
export async function credentialQualifier(ctx: Context): Promise<CredentialQualifier | undefined> {
  const lists = await usableTrustedLists(ctx);
  if (!lists) return undefined;
  const { qualifyCredential } = await import('../core/qualification/determine.js');
  return (certificates, at) => {
    try {
      // The chain the signing service sent is verified link by link before it is qualified.
      return qualifyCredential(certificates, { signingTime: at, validationTime: ctx.clock.now(), lists });
    } catch {
      return undefined; // a certificate that does not parse: the signing path names that itself
    }
  };
}

/** What `--require` (ESIGN_REQUIRE) asks of the signature a run makes. */
export type Requirement = 'qes' | 'qeseal' | 'qualified';

const SATISFIED_BY: Readonly<Record<Requirement, readonly string[]>> = {
  qes: ['QESig'],
  qeseal: ['QESeal'],
  qualified: ['QESig', 'QESeal'],
};

const REQUIREMENT_WORDS: Readonly<Record<Requirement, string>> = {
  qes: 'a qualified electronic signature (QESig)',
  qeseal: 'a qualified electronic seal (QESeal)',
  qualified: 'a qualified electronic signature or seal',
};

export async function requirementOf(value: string | undefined, from: string): Promise<Requirement | undefined> {
  if (value === undefined || value === '') return undefined;
  if (value in SATISFIED_BY) return value as Requirement;
  const { EsignError } = await import('../core/errors.js');
  throw new EsignError('USAGE', `${from} must be qes, qeseal or qualified, not ${JSON.stringify(value)}.`);
}

/** Refuses (exit 13) when the credential cannot give what `requirement` asks, or when no list can tell. */
export async function assertRequirement(
  requirement: Requirement,
  credentialID: string,
  qualification: Qualification | undefined,
): Promise<void> {
  const { EsignError } = await import('../core/errors.js');
  if (!qualification)
    throw new EsignError(
      'QUALIFICATION_UNKNOWN',
      `--require ${requirement}: no verified trusted list is cached, so esign cannot tell whether ${credentialID} makes ${REQUIREMENT_WORDS[requirement]}.`,
      { hint: 'Run `esign trust update` (or `esign trust import FILE…` offline), then sign again.' },
    );
  // Only the plain qualified names, from EU trusted lists: an Indeterminate, Not AdES or N/A one never satisfies it.
  if (SATISFIED_BY[requirement].includes(qualification.name) && qualification.euQualified !== false) return;
  if (qualification.euQualified === false) {
    const lists = [...new Set(qualification.services.flatMap((service) => (service.list ? [service.list] : [])))];
    throw new EsignError(
      'QUALIFICATION_NOT_MET',
      `--require ${requirement}: ${credentialID} would make ${qualification.name} only under the list ${lists.join(', ')}, which is not an EU trusted list, not ${REQUIREMENT_WORDS[requirement]}; nothing was signed.`,
      {
        hint: 'A list added with esign trust add is never EU-qualified; choose a credential an EU trusted list qualifies.',
        details: { required: requirement, qualification },
      },
    );
  }
  throw new EsignError(
    'QUALIFICATION_NOT_MET',
    `--require ${requirement}: ${credentialID} would make ${qualification.name}${qualification.reason ? ` (${qualification.reason})` : ''}, not ${REQUIREMENT_WORDS[requirement]}; nothing was signed.`,
    {
      hint: 'Choose a credential that gives it with --credential (`esign credentials list` shows each one’s qualification).',
      details: { required: requirement, qualification },
    },
  );
}
