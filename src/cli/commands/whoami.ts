import type { Command } from 'commander';
import { EsignError } from '../../core/errors.js';
import { CLAIM_LABELS, notSharedClaims, requestedClaims } from '../../core/oidc/claims.js';
import type { Context } from '../context.js';
import { table } from '../io.js';
import type { CommandModule } from '../command.js';

export const defineCommand: CommandModule['defineCommand'] = (program: Command, run) => {
  program
    .command('whoami')
    .summary('show who you are signed in as')
    .description(
      'Show the identity session of the profile: subject, claims (requested but missing ones as "not shared"), scopes and expiry. Works offline.',
    )
    .action((_options: unknown, command: Command) => run(command, whoami));
};

async function whoami(ctx: Context): Promise<void> {
  const profile = await ctx.profileName();
  const { readIdentitySession } = await import('../../io/identity-client.js');
  const session = await readIdentitySession(ctx.tokens, profile);
  if (!session) {
    throw new EsignError(
      'AUTH_LOGIN_REQUIRED',
      `Not signed in at the identity service on profile ${JSON.stringify(profile)}.`,
      { hint: 'Run esign login.' },
    );
  }
  const { extra } = session;
  const expired = session.expiresAt <= ctx.clock.now().getTime();
  const notShared = notSharedClaims(extra.requestedScopes, {
    ...extra.claims,
    ...(extra.proof ? { 'com.vendor.proof': extra.proof } : {}),
  });
  const expiresAt = new Date(session.expiresAt).toISOString();
  const proof = extra.proof ?? [];
  ctx.io.result(
    {
      profile,
      signedIn: true,
      expired,
      expiresAt,
      sub: extra.sub,
      issuer: extra.issuer,
      scope: extra.scope,
      requestedScopes: extra.requestedScopes,
      authTime:
        typeof extra.idToken.auth_time === 'number' ? new Date(extra.idToken.auth_time * 1000).toISOString() : null,
      claims: extra.claims,
      notShared,
      proof,
    },
    () => {
      const rows: string[][] = [
        [CLAIM_LABELS['sub'] ?? 'sub', extra.sub],
        [CLAIM_LABELS['iss'] ?? 'iss', extra.issuer],
      ];
      if (typeof extra.idToken.auth_time === 'number')
        rows.push([CLAIM_LABELS['auth_time'] ?? 'auth_time', new Date(extra.idToken.auth_time * 1000).toISOString()]);
      for (const claim of requestedClaims(extra.requestedScopes)) {
        const label = CLAIM_LABELS[claim] ?? claim;
        if (claim === 'com.vendor.proof') {
          rows.push([
            label,
            proof.length
              ? proof.map((item) => `${item.id} (${item.content_type}, ${item.size} bytes)`).join('; ')
              : 'not shared',
          ]);
          continue;
        }
        rows.push([label, notShared.includes(claim) ? 'not shared' : display(extra.claims[claim])]);
      }
      return [
        `Profile ${profile}: signed in at the identity service.`,
        table(['Claim', 'Value'], rows),
        `Scopes: ${extra.scope.join(' ')}`,
        expired ? `Session expired at ${expiresAt}; run esign login.` : `Session valid until ${expiresAt}.`,
      ].join('\n');
    },
  );
  if (expired) ctx.io.warn(`The identity session expired at ${expiresAt}; run esign login.`);
}

function display(value: unknown): string {
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'string' || typeof value === 'number') return String(value);
  return JSON.stringify(value);
}
