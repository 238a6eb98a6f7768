import { Option, type Command } from 'commander';
import { EsignError } from '../../core/errors.js';
import {
  completionScript,
  SHELLS,
  type CompletionNode,
  type CompletionOption,
  type Shell,
} from '../completion-scripts.js';
import { BUILT_IN_PROFILES, type Context } from '../context.js';
import type { CommandModule } from '../command.js';

export const defineCommand: CommandModule['defineCommand'] = (program: Command, run) => {
  program
    .command('completion')
    .summary('print a shell completion script (bash, zsh or fish)')
    .description('Print a completion script for commands, options and profile names.')
    .argument('[shell]', SHELLS.join(', '))
    .addOption(
      new Option(
        '--list-profiles',
        'print the profile names, one a line (the scripts complete --profile with it)',
      ).hideHelp(),
    )
    .addHelpText(
      'after',
      '\nLoad it:\n  bash   eval "$(esign completion bash)"                                  (in ~/.bashrc)\n  zsh    source <(esign completion zsh)                                   (in ~/.zshrc, after compinit)\n  fish   esign completion fish > ~/.config/fish/completions/esign.fish',
    )
    .action((shell: string | undefined, options: { listProfiles?: boolean }, command: Command) =>
      run(command, async (ctx) => {
        if (options.listProfiles) return listProfiles(ctx);
        const known = SHELLS.find((name) => name === shell);
        if (!known) {
          const what = shell === undefined ? 'Name a shell' : `Unknown shell ${JSON.stringify(shell)}`;
          throw new EsignError('USAGE', `${what}: esign completion knows ${SHELLS.join(', ')}.`, {
            hint: 'Run e.g. esign completion bash.',
          });
        }
        printScript(ctx, known, commandTree(program));
      }),
    );
};

function printScript(ctx: Context, shell: Shell, root: CompletionNode): void {
  const script = completionScript(shell, root);
  ctx.io.essential({ shell, script }, () => script.trimEnd());
}

async function listProfiles(ctx: Context): Promise<void> {
  const profiles = [...new Set([...BUILT_IN_PROFILES, ...(await ctx.config()).profileNames()])];
  ctx.io.essential({ profiles }, () => profiles.join('\n'));
}

/** The command tree as commander has it (every command is defined when `completion` runs). */
function commandTree(command: Command): CompletionNode {
  return {
    name: command.name(),
    description: command.summary() || command.description(),
    options: command.options.filter((option) => !option.hidden).map(describeOption),
    commands: command.commands.map(commandTree),
    profileArgument: command.registeredArguments[0]?.name() === 'profile',
  };
}

function describeOption(option: Command['options'][number]): CompletionOption {
  const flags = [option.short, option.long].filter((flag): flag is string => flag !== undefined);
  const takesValue = option.required || option.optional;
  const choices = option.argChoices ?? [];
  const value = !takesValue
    ? 'none'
    : option.attributeName() === 'profile'
      ? 'profile'
      : choices.length > 0
        ? 'choices'
        : 'any';
  return { flags, description: option.description, value, choices };
}
