import type { Command } from 'commander';
import type { Context } from '../context.js';
import type { CommandModule } from '../command.js';

export const defineCommand: CommandModule['defineCommand'] = (program: Command, run) => {
  program
    .command('logout')
    .summary('forget the identity session')
    .description('Forget the identity session of the profile (access token and claims) from tokens.json.')
    .action((_options: unknown, command: Command) => run(command, logout));
};

async function logout(ctx: Context): Promise<void> {
  const profile = await ctx.profileName();
  const { identitySessionKey } = await import('../../io/identity-client.js');
  const removed = await ctx.tokens.delete(identitySessionKey(profile));
  ctx.io.result({ profile, signedOut: removed }, () =>
    removed
      ? `Signed out: the identity session of profile ${profile} is forgotten.`
      : `Not signed in on profile ${profile}; nothing to forget.`,
  );
}
