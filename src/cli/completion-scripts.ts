/**
 * Shell completion scripts (bash, zsh, fish) written from a description of the command tree, which
 * `esign completion` takes from the commander program itself, so the scripts cannot drift from it.
 * Profile names are asked of esign when a word is completed (`esign completion --list-profiles`).
 */

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

export interface CompletionOption {
  /** `-o`, `--output`: the short form first, when there is one. */
  flags: string[];
  description: string;
  /** none: a flag; profile: a profile name; choices: one of `choices`; any: a word or a file. */
  value: 'none' | 'profile' | 'choices' | 'any';
  choices: string[];
}

export interface CompletionNode {
  name: string;
  description: string;
  options: CompletionOption[];
  commands: CompletionNode[];
  /** The first argument is a profile name (`config use <profile>`). */
  profileArgument: boolean;
}

/** Every node with the command words that lead to it: the root as [], `config use` as ['config', 'use']. */
function nodesByPath(root: CompletionNode, path: string[] = []): Array<[string[], CompletionNode]> {
  return [[path, root], ...root.commands.flatMap((child) => nodesByPath(child, [...path, child.name]))];
}

/** The completion script for `shell`. */
export function completionScript(shell: Shell, root: CompletionNode): string {
  if (shell === 'fish') return fishScript(root);
  const bash = bashScript(root);
  if (shell === 'bash') return bash;
  return [
    `# esign completion for zsh, through zsh's bash completion layer. Load it after compinit, e.g. in ~/.zshrc:`,
    `#   source <(esign completion zsh)`,
    `autoload -U +X bashcompinit && bashcompinit`,
    bash
      .split('\n')
      .filter((line) => !line.startsWith('# '))
      .join('\n'),
  ].join('\n');
}

const words = (list: readonly string[]): string => shellQuote(list.join(' '));
const shellQuote = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

function bashScript(root: CompletionNode): string {
  const nodes = nodesByPath(root);
  const valueOptions = (node: CompletionNode) =>
    node.options.filter((option) => option.value !== 'none').flatMap((option) => option.flags);
  const nodeCases = nodes.map(([path, node]) =>
    [
      `    ${shellQuote(path.join(' '))})`,
      `      subcommands=${words(node.commands.map((child) => child.name))}`,
      `      options=${words(node.options.flatMap((option) => option.flags))}`,
      `      values=${words(valueOptions(node))}`,
      `      profile_argument=${node.profileArgument ? 1 : ''}`,
      `      ;;`,
    ].join('\n'),
  );
  const choiceCases = nodes.flatMap(([path, node]) =>
    node.options
      .filter((option) => option.value === 'choices' || option.value === 'profile')
      .map((option) => {
        // The root's (global) options take their values under any command path.
        const pattern = option.flags
          .map((flag) => (path.length === 0 ? `*${shellQuote(`|${flag}`)}` : shellQuote(`${path.join(' ')}|${flag}`)))
          .join(' | ');
        const reply = option.value === 'profile' ? '_esign_profiles' : `echo ${words(option.choices)}`;
        return `    ${pattern}) ${reply} ;;`;
      }),
  );
  return `# esign completion for bash: commands, options and profile names. Load it in ~/.bashrc:
#   eval "$(esign completion bash)"
# Written by \`esign completion bash\` from esign's own command definitions.

# Sets subcommands, options, values (the options that take a value) and profile_argument for a command path.
_esign_node() {
  case $1 in
${nodeCases.join('\n')}
    *) subcommands='' options='' values='' profile_argument='' ;;
  esac
}

# The words a value of option $2 under command path $1 can be, if it has a fixed set.
_esign_values() {
  case "$1|$2" in
${choiceCases.join('\n')}
  esac
}

_esign_profiles() {
  "\${_esign_program:-esign}" completion --list-profiles 2>/dev/null
}

# COMPREPLY: the words after $1 that start with $1 (compgen -W, without its glob and quote expansion).
_esign_reply() {
  local cur=$1 word
  shift
  COMPREPLY=()
  for word in "$@"; do [[ $word == "$cur"* ]] && COMPREPLY+=("$word"); done
}

_esign_has() {
  local word=$1 item
  shift
  for item in "$@"; do [[ $item == "$word" ]] && return 0; done
  return 1
}

_esign() {
  # zsh (bashcompinit): arrays from 0 and unquoted words split, as in bash.
  [[ -n \${ZSH_VERSION-} ]] && setopt localoptions ksharrays shwordsplit
  # (not "path": zsh ties it to PATH)
  local _esign_program=\${COMP_WORDS[0]} cur=\${COMP_WORDS[COMP_CWORD]} command='' word i expect_value='' positionals=0
  local subcommands options values profile_argument all_options all_values
  _esign_node ''
  all_options=$options all_values=$values
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=\${COMP_WORDS[i]}
    if [[ -n $expect_value ]]; then
      expect_value=''
    elif [[ $word == --*=* ]]; then
      :
    elif [[ $word == -* ]]; then
      # shellcheck disable=SC2086
      _esign_has "$word" $all_values && expect_value=1
    elif [[ $positionals == 0 ]] && _esign_has "$word" $subcommands; then
      command=\${command:+$command }$word
      _esign_node "$command"
      all_options="$all_options $options" all_values="$all_values $values"
    else
      positionals=$((positionals + 1))
    fi
  done
  COMPREPLY=()
  # shellcheck disable=SC2046,SC2086
  if [[ -n $expect_value ]]; then
    _esign_reply "$cur" $(_esign_values "$command" "\${COMP_WORDS[COMP_CWORD - 1]}")
  elif [[ $cur == -* ]]; then
    _esign_reply "$cur" $all_options --help
  elif [[ -n $subcommands && $positionals == 0 ]]; then
    _esign_reply "$cur" $subcommands
  elif [[ -n $profile_argument && $positionals == 0 ]]; then
    _esign_reply "$cur" $(_esign_profiles)
  fi
  return 0
}

complete -o default -F _esign esign
`;
}

function fishScript(root: CompletionNode): string {
  const quote = (text: string): string => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  const profiles = `'(esign completion --list-profiles 2>/dev/null)'`;
  const lines = [
    '# esign completion for fish: commands, options and profile names. Install it with:',
    '#   esign completion fish > ~/.config/fish/completions/esign.fish',
    "# Written by `esign completion fish` from esign's own command definitions.",
  ];
  for (const [path, node] of nodesByPath(root)) {
    const within = path.map((name) => `__fish_seen_subcommand_from ${name}`);
    const here = (extra: string[] = []) => {
      const conditions = [...within, ...extra];
      return conditions.length > 0 ? ` -n ${quote(conditions.join('; and '))}` : '';
    };
    const childNames = node.commands.map((child) => child.name).join(' ');
    for (const child of node.commands) {
      const notYet = path.length === 0 ? ['__fish_use_subcommand'] : [`not __fish_seen_subcommand_from ${childNames}`];
      lines.push(`complete -c esign${here(notYet)} -f -a ${quote(child.name)} -d ${quote(child.description)}`);
    }
    if (node.profileArgument) lines.push(`complete -c esign${here()} -f -a ${profiles}`);
    for (const option of node.options) {
      const flags = option.flags
        .map((flag) => (flag.startsWith('--') ? ` -l ${flag.slice(2)}` : ` -s ${flag.slice(1)}`))
        .join('');
      const value =
        option.value === 'profile'
          ? ` -x -a ${profiles}`
          : option.value === 'choices'
            ? ` -x -a ${quote(option.choices.join(' '))}`
            : option.value === 'any'
              ? ' -r'
              : '';
      lines.push(`complete -c esign${here()}${flags}${value} -d ${quote(option.description)}`);
    }
  }
  return lines.join('\n') + '\n';
}
