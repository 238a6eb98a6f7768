import { createHash } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { EsignError } from '../../core/errors.js';
import {
  CLAIM_LABELS,
  KNOWN_SCOPES,
  notSharedClaims,
  proofFileName,
  SCOPE_PROOF,
  type ProofItem,
} from '../../core/oidc/claims.js';
import { writeBytesAtomically } from '../../io/atomic-write.js';
import type { Context } from '../context.js';
import type { CommandModule } from '../command.js';

interface LoginOptions {
  scope: string[];
  lang?: 'en' | 'nl';
  saveProof?: string;
}

export const defineCommand: CommandModule['defineCommand'] = (program: Command, run) => {
  program
    .command('login')
    .summary('sign in with the identity service')
    .description(
      'Sign in with the identity service in the browser (QR code, then PIN) and keep the session ' +
        '(access token, expiry, validated claims) in tokens.json (mode 0600). Scope openid is always asked; ' +
        '--scope adds more. The session is what `esign upload` uses with scope com.vendor.storage.',
    )
    .option(
      '--scope <scope>',
      `scope to ask besides openid, repeatable (${KNOWN_SCOPES.filter((scope) => scope !== 'openid').join(', ')})`,
      collect,
      [],
    )
    .addOption(
      new Option('--lang <lang>', 'language of the login pages (default: the profile lang)').choices(['en', 'nl']),
    )
    .option(
      '--save-proof <dir>',
      'save the com.vendor.proof documents into DIR, with index.json (adds scope com.vendor.proof)',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  esign login --scope email --scope com.vendor.personal_info\n  esign login --scope com.vendor.storage        for esign upload\n  esign login --save-proof ./proof --lang nl',
    )
    .action((options: LoginOptions, command: Command) => run(command, (ctx) => login(ctx, options)));
};

function collect(value: string, previous: string[]): string[] {
  return [...previous, ...value.split(/[\s,]+/).filter(Boolean)];
}

async function login(ctx: Context, options: LoginOptions): Promise<void> {
  const scopes = [...options.scope];
  if (options.saveProof && !scopes.includes(SCOPE_PROOF)) scopes.push(SCOPE_PROOF);
  const unknown = scopes.find((scope) => !(KNOWN_SCOPES as readonly string[]).includes(scope));
  if (unknown)
    throw new EsignError('USAGE', `Unknown scope ${JSON.stringify(unknown)}.`, {
      hint: `Known scopes: ${KNOWN_SCOPES.join(', ')}.`,
    });

  const profile = await ctx.profile();
  const clientSecret = profile.secrets.clientSecret;
  if (!clientSecret) {
    throw new EsignError(
      'CONFIG_MISSING',
      `The profile ${JSON.stringify(profile.name)} has no client secret for the identity service.`,
      {
        hint: 'Set ESIGN_CLIENT_SECRET, or a secretsFile (mode 0600) with a CLIENT_SECRET= line.',
      },
    );
  }
  const { IdentityClient, identitySessionKey } = await import('../../io/identity-client.js');
  const client = new IdentityClient({
    baseUrl: ctx.require(profile, 'identityBaseUrl'),
    legacyBaseUrl: profile.settings.identityLegacyBaseUrl,
    clientId: ctx.require(profile, 'clientId'),
    clientSecret,
    clientSecretInBody: profile.settings.clientSecretInBody ?? false,
    issuer: profile.settings.identityIssuer,
    jwksUri: profile.settings.jwksUri,
    http: ctx.http,
    clock: ctx.clock,
    authorize: (request) => ctx.authorize({ ...request, splitFlow: false }),
  });
  const result = await client.login({ scopes, lang: options.lang ?? profile.settings.lang });
  await ctx.tokens.set(identitySessionKey(profile.name), result.session);

  const { extra } = result.session;
  let saved: SavedProof | undefined;
  if (options.saveProof)
    saved = await saveProof(resolve(options.saveProof), result.proof ?? [], {
      sub: extra.sub,
      issuer: extra.issuer,
      savedAt: new Date(extra.createdAt).toISOString(),
    });
  const notShared = notSharedClaims(extra.requestedScopes, result.userinfo);
  const expiresAt = new Date(result.session.expiresAt).toISOString();
  if (options.saveProof && !result.proof)
    ctx.io.warn('The identity service shared no proof documents (com.vendor.proof); nothing was saved.');

  ctx.io.result(
    {
      profile: profile.name,
      sub: extra.sub,
      issuer: extra.issuer,
      scope: extra.scope,
      requestedScopes: extra.requestedScopes,
      expiresAt,
      claims: extra.claims,
      notShared,
      proof: saved ? saved.items : (extra.proof ?? []),
      ...(saved ? { proofDir: saved.dir, proofIndex: saved.index } : {}),
      sessionFile: ctx.tokens.path,
    },
    () => {
      const name = [extra.claims['given_name'], extra.claims['com.vendor.last_name']]
        .filter((part) => typeof part === 'string')
        .join(' ');
      const lines = [
        `Signed in at the identity service as ${name ? `${name} (sub ${extra.sub})` : `sub ${extra.sub}`}.`,
        `Session valid until ${expiresAt}; kept in ${ctx.tokens.path}.`,
        `Granted scopes: ${extra.scope.join(' ')}`,
      ];
      if (notShared.length > 0)
        lines.push(`Not shared: ${notShared.map((claim) => CLAIM_LABELS[claim] ?? claim).join(', ')}`);
      if (saved)
        lines.push(
          `Saved ${saved.items.length} proof document${saved.items.length === 1 ? '' : 's'} to ${saved.dir} (index: ${saved.index}).`,
        );
      return lines.join('\n');
    },
  );
}

interface SavedProofItem {
  id: string;
  content_type: string;
  file: string;
  size: number;
  sha256: string;
}

interface SavedProof {
  dir: string;
  index: string;
  items: SavedProofItem[];
}

/**
 * Archives the proof items (seed §2: with identifier and content type): one file per item, named
 * by its id with an extension from its content type, plus `index.json` with id, content type,
 * size and SHA-256. An existing file with other content is never overwritten.
 */
async function saveProof(
  dir: string,
  proof: ProofItem[],
  about: { sub: string; issuer: string; savedAt: string },
): Promise<SavedProof> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const items: SavedProofItem[] = [];
  const used = new Set<string>();
  for (const item of proof) {
    let file = proofFileName(item.id, item.content_type);
    for (let suffix = 2; used.has(file); suffix++) file = proofFileName(`${item.id}-${suffix}`, item.content_type);
    used.add(file);
    const bytes = Buffer.from(item.base64_encoded_content, 'base64');
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const target = join(dir, file);
    const existing = await readFile(target).catch(() => undefined);
    if (existing === undefined) await writeBytesAtomically(target, bytes, { mode: 0o600 });
    else if (createHash('sha256').update(existing).digest('hex') !== sha256) {
      throw new EsignError(
        'OUTPUT_EXISTS',
        `${target} already exists with other content; esign does not overwrite archived proof.`,
        { hint: 'Choose another --save-proof directory.' },
      );
    }
    items.push({ id: item.id, content_type: item.content_type, file, size: bytes.length, sha256 });
  }
  const index = join(dir, 'index.json');
  await writeBytesAtomically(index, JSON.stringify({ ...about, items }, null, 2) + '\n', {
    overwrite: true,
    mode: 0o600,
  });
  return { dir, index, items };
}
