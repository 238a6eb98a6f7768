import type { Command } from 'commander';
import { EsignError, ExitCode, exitCodeFor, type EsignErrorCode } from '../../core/errors.js';
import type { TrustedListIndex } from '../../core/qualification/list-index.js';
import { isExpired, type TrustedListState } from '../../core/trusted-list/state.js';
import type { ListOutcome } from '../../io/trusted-list-update.js';
import { trustListSources } from '../trusted-lists.js';
import type { CommandModule } from '../command.js';
import type { Context } from '../context.js';
import { table } from '../io.js';

export const defineCommand: CommandModule['defineCommand'] = (program: Command, run) => {
  const trust = program
    .command('trust')
    .summary('fetch and inspect the EU trusted lists (qualified trust services)')
    .description(
      'The EU List of Trusted Lists (LOTL) and the national lists it points to, each checked against its XML signature and kept in the cache dir. docs/trust.md explains them.',
    )
    .addHelpText(
      'after',
      "\nExamples:\n  esign trust update                      the LOTL and every national list (lotlUrl, trustListTerritories)\n  esign trust update --territories BE,EE  the LOTL and only the lists of Belgium and Estonia\n  esign trust status --json               state, dates and service counts of each list\n  esign trust show BE                     Belgium's trust services\n  esign trust import eu-lotl.xml BE.xml   lists downloaded elsewhere, checked as if fetched\n  esign trust add acme-ca URL --signer signer.pem   a list outside the LOTL (never EU-qualified)\n\nExit codes: 0 all verified, 10 some failed (each named), 9 the LOTL or every list failed its checks, 7 not a list (a web page, a DTD), 6 the LOTL's server refused it, 5 the LOTL could not be fetched, 3 show: not cached.",
    );
  trust
    .command('update')
    .summary('fetch the LOTL and every national list it points to')
    .description(
      'Fetch the LOTL (setting lotlUrl / ESIGN_LOTL_URL), check it against the LOTL signing certificates esign ships (following pivots on key rotation), then every national list it points to (--territories, else the setting trustListTerritories, limits them), each checked against the certificates the LOTL gives. A list that fails keeps its previous verified copy. Exit 0 when all were verified, 10 when some failed.',
    )
    .option(
      '--territories <codes>',
      'fetch only these national lists, comma-separated territory codes (e.g. BE,EE); overrides the setting trustListTerritories',
    )
    .action((options: { territories?: string }, command: Command) =>
      run(command, (ctx) => update(ctx, options.territories)),
    );
  trust
    .command('status')
    .summary('show each cached list: sequence, dates and state')
    .action((_options: unknown, command: Command) => run(command, status));
  trust
    .command('show')
    .summary("list a territory's trust services")
    .argument('<territory>', 'two-letter territory code, e.g. BE (EU: the pointers of the LOTL)')
    .action((territory: string, _options: unknown, command: Command) => run(command, (ctx) => show(ctx, territory)));
  trust
    .command('add')
    .summary('add a trusted list the LOTL does not point to, with its own signing certificate')
    .description(
      "Fetch a TS 119 612 trusted list outside the EU LOTL (a third country's, or an organisation's own) from URL, check its XML signature against the certificates of --signer, and cache it under NAME with the others: esign trust update updates it, status and show list it. Verdicts reached through it always name it and are never EU-qualified (sign --require refuses them) unless the LOTL points to the same address. Exit 0 when it was verified; else the list's error (docs/trust.md).",
    )
    .argument('<name>', 'its name in the cache and in verdicts: lower case letters, digits and -, e.g. acme-ca')
    .argument('<url>', "the list's address (http:// is accepted: the list is signed)")
    .requiredOption('--signer <file>', 'PEM file with the certificate(s) whose key signs the list')
    .action((name: string, url: string, options: { signer: string }, command: Command) =>
      run(command, (ctx) => add(ctx, name, url, options.signer)),
    );
  trust
    .command('import')
    .summary('check and cache lists downloaded elsewhere (machines without internet)')
    .argument('<file...>', 'LOTL and national list XML files, in any order')
    .action((files: string[], _options: unknown, command: Command) => run(command, (ctx) => importFiles(ctx, files)));
};

async function update(ctx: Context, territoriesText: string | undefined): Promise<void> {
  const flagged = territoriesText === undefined ? undefined : await territoriesFrom(territoriesText);
  const { sources, lotlUrl, territories: configured } = await trustListSources(ctx);
  const territories = flagged ?? configured;
  const { updateTrustedLists } = await import('../../io/trusted-list-update.js');
  const spinner = await ctx.io.spinner(`Fetching the LOTL from ${lotlUrl}`);
  let outcomes: ListOutcome[];
  try {
    outcomes = await updateTrustedLists(sources, {
      lotlUrl,
      ...(territories ? { territories } : {}),
      onProgress: (done, total) => spinner.update(`Trusted lists: ${done}/${total}`),
    });
  } finally {
    spinner.stop();
  }
  report(ctx, outcomes);
}

/** The territories --territories names (checked as the setting trustListTerritories is). */
async function territoriesFrom(text: string): Promise<string[]> {
  const { parseSettingValue } = await import('../../core/profile.js');
  let territories: string[];
  try {
    territories = parseSettingValue('trustListTerritories', text) as string[];
  } catch (error) {
    throw new EsignError(
      'USAGE',
      `--territories: ${(error as Error).message.replace(/^Invalid value for \w+: /, '')}`,
      {
        hint: 'Give two-letter territory codes separated by commas, e.g. --territories BE,EE.',
      },
    );
  }
  if (territories.length === 0)
    throw new EsignError('USAGE', '--territories names no territory.', {
      hint: 'Give two-letter territory codes separated by commas, e.g. --territories BE,EE; leave it out for every list.',
    });
  return territories;
}

async function add(ctx: Context, name: string, url: string, signerFile: string): Promise<void> {
  if (!/^[a-z][a-z0-9-]{2,39}$/.test(name))
    throw new EsignError('USAGE', `Not a list name: ${JSON.stringify(name)}.`, {
      hint: "Give 3 to 40 lower-case letters, digits or -, starting with a letter (e.g. acme-ca); territory codes are for the LOTL's lists.",
    });
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    parsed = new URL('invalid:');
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    throw new EsignError('USAGE', `Not an http(s) address: ${JSON.stringify(url)}.`, {
      hint: "Give the list's address, e.g. https://example.org/tsl.xml.",
    });
  const { readFile } = await import('node:fs/promises');
  let pem: string;
  try {
    pem = await readFile(signerFile, 'utf8');
  } catch (cause) {
    throw new EsignError('INPUT_NOT_FOUND', `${signerFile}: cannot read the file`, { hint: 'Check the path.', cause });
  }
  const { X509Certificate } = await import('node:crypto');
  const signerCertificates = [...pem.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g)].flatMap(
    ([block]) => {
      try {
        return [new X509Certificate(block).raw.toString('base64')];
      } catch {
        return [];
      }
    },
  );
  if (signerCertificates.length === 0)
    throw new EsignError('INPUT_UNREADABLE', `${signerFile}: no PEM certificate in it`, {
      hint: "Give the list's signing certificate as PEM (-----BEGIN CERTIFICATE-----).",
    });
  const { sources } = await trustListSources(ctx);
  const { addTrustedList } = await import('../../io/trusted-list-update.js');
  report(ctx, [await addTrustedList(sources, { name, url: parsed.toString(), signerCertificates })]);
}

async function importFiles(ctx: Context, paths: string[]): Promise<void> {
  const { sources } = await trustListSources(ctx);
  const [{ importTrustedLists }, { readFile }] = await Promise.all([
    import('../../io/trusted-list-update.js'),
    import('node:fs/promises'),
  ]);
  const files = [];
  for (const path of paths) {
    try {
      files.push({ path, bytes: await readFile(path) });
    } catch (cause) {
      throw new EsignError('INPUT_NOT_FOUND', `${path}: cannot read the file`, {
        hint: 'Check the path.',
        cause,
      });
    }
  }
  report(ctx, await importTrustedLists(sources, files));
}

function report(ctx: Context, outcomes: ListOutcome[]): void {
  const failed = outcomes.filter((outcome) => outcome.state === 'failed');
  ctx.io.result({ lists: outcomes }, () =>
    [
      table(
        ['List', 'State', 'Sequence', 'Source'],
        outcomes.map((o) => [
          o.territory,
          o.state,
          o.sequenceNumber === undefined ? '' : String(o.sequenceNumber),
          o.source,
        ]),
      ),
      `${outcomes.length - failed.length} of ${outcomes.length} lists verified.`,
    ].join('\n'),
  );
  for (const outcome of failed) ctx.io.error(`error: ${outcome.reason}`);
  if (failed.length === 0) return;
  const lotlFailed = failed.some((outcome) => outcome.territory === 'EU');
  const first = failed.find((outcome) => outcome.territory === 'EU') ?? failed[0]!;
  process.exitCode =
    lotlFailed || failed.length === outcomes.length
      ? exitCodeFor((first.code ?? 'INTERNAL') as EsignErrorCode)
      : ExitCode.partial;
}

async function cacheFor(ctx: Context) {
  const profile = await ctx.profile();
  const { TrustedListCache } = await import('../../io/trusted-list-cache.js');
  return TrustedListCache.at(ctx.env, { sandbox: profile.isSandbox });
}

async function status(ctx: Context): Promise<void> {
  // Each list's index holds what status shows: the lists themselves are not read.
  const indexes = (await (await cacheFor(ctx)).indexed())
    .map(({ index }) => index)
    .sort((a, b) => Number(b.territory === 'EU') - Number(a.territory === 'EU'));
  const now = ctx.clock.now();
  const lists = indexes.map((index) => ({
    territory: index.territory,
    state: stateOfIndex(index, now),
    sequenceNumber: index.sequenceNumber,
    issueDate: index.issueDate,
    nextUpdate: index.nextUpdate,
    verifiedAt: index.verifiedAt,
    test: index.test,
    ...(index.added ? { added: true } : {}),
    source: index.source,
    lastFailure: index.lastFailure,
    services: index.services,
  }));
  ctx.io.result({ lists }, () => {
    if (lists.length === 0) return 'No trusted lists cached: run esign trust update (or esign trust import FILE...).';
    return [
      table(
        ['List', 'Sequence', 'Issued', 'Next update', 'State'],
        lists.map((l) => [
          `${l.territory}${l.test ? ' (TEST)' : ''}${'added' in l ? ' (added, not on the LOTL)' : ''}`,
          l.sequenceNumber === null ? '' : String(l.sequenceNumber),
          l.issueDate ?? '',
          l.nextUpdate ?? 'closed',
          l.state === 'verified' || l.state === 'expired'
            ? `${l.state === 'expired' ? 'expired (past its next update)' : 'verified'}${l.lastFailure ? `; last update failed: ${l.lastFailure.reason}` : ''}`
            : `failed: ${l.lastFailure?.reason ?? 'never verified'}`,
        ]),
      ),
    ].join('\n');
  });
}

/** What stateOf (core/trusted-list/state.ts) says of the list, from its index. */
function stateOfIndex(index: TrustedListIndex, now: Date): TrustedListState {
  if (!index.verified) return 'failed';
  return isExpired(index, now) ? 'expired' : 'verified';
}

async function show(ctx: Context, territoryText: string): Promise<void> {
  // A territory code, or the name of a list added with esign trust add (lower case).
  const territory = /^[a-z][a-z0-9-]{2,39}$/.test(territoryText) ? territoryText : territoryText.toUpperCase();
  if (!/^(?:[A-Z]{2}|[a-z][a-z0-9-]{2,39})$/.test(territory)) {
    throw new EsignError('USAGE', `Not a territory code: ${JSON.stringify(territoryText)}.`, {
      hint: 'Give a two-letter code such as BE, EU for the LOTL, or the name of a list added with esign trust add.',
    });
  }
  const entry = await (await cacheFor(ctx)).read(territory);
  const list = entry?.snapshot;
  if (!list) {
    throw new EsignError('TRUST_LIST_NOT_CACHED', `No verified trusted list of ${territory} in the cache.`, {
      hint: entry?.lastFailure
        ? `Its last update failed: ${entry.lastFailure.reason}`
        : 'Run esign trust update (or esign trust import FILE...).',
    });
  }
  const services = list.services.map((service) => ({
    provider: service.provider,
    name: service.name,
    type: service.type,
    status: service.history[0]?.status ?? null,
    statusStarting: service.history[0]?.from ?? null,
    qualifiers: [...new Set(service.history[0]?.qualifications.flatMap((q) => q.qualifiers) ?? [])],
    additionalServiceInformation: service.history[0]?.additionalServiceInformation ?? [],
  }));
  const pointers = list.pointers.map((p) => ({ territory: p.territory, location: p.location }));
  ctx.io.result(
    {
      territory,
      sequenceNumber: list.sequenceNumber,
      issueDate: list.issueDate,
      nextUpdate: list.nextUpdate,
      operator: list.operator,
      test: list.test,
      services,
      pointers,
    },
    () => {
      const head = `${territory}${list.test ? ' (TEST)' : ''}: ${list.operator}, sequence ${list.sequenceNumber}, issued ${list.issueDate}`;
      if (list.isLotl) {
        return [
          head,
          table(
            ['Territory', 'Location'],
            pointers.map((p) => [p.territory, p.location]),
          ),
        ].join('\n');
      }
      const blocks = services.map((s) =>
        [
          `${s.provider}: ${s.name}`,
          `  type:       ${s.type}`,
          `  status:     ${s.status} since ${s.statusStarting}`,
          ...(s.qualifiers.length ? [`  qualifiers: ${s.qualifiers.join(' ')}`] : []),
        ].join('\n'),
      );
      return [head, `${services.length} services`, ...blocks].join('\n');
    },
  );
}
