import type { Command } from 'commander';
import { EsignError } from '../../core/errors.js';
import type { CommandModule } from '../program.js';

/** A command that is planned but not built yet: it says so and exits non-zero, never pretends. */
export function notImplemented(name: string, summary: string, issue: number): CommandModule {
  return {
    defineCommand(program: Command) {
      program
        .command(name)
        .summary(summary)
        .description(`${summary}\n(not implemented yet: tracked in issue ${issue})`)
        .allowUnknownOption()
        .allowExcessArguments()
        .action(() => {
          throw new EsignError('NOT_IMPLEMENTED', `\`esign ${name}\` is not implemented yet (issue ${issue}).`, {
            hint: 'See CHANGELOG.md for what this version can do.',
          });
        });
    },
  };
}
