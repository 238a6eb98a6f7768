/** Global options that take a value: the word after them is not the command. */
const GLOBAL_OPTIONS_WITH_VALUE = new Set(['--profile', '--timeout', '--browser']);

/** The subcommand named in argv (skipping global options and their values), if any. */
export function commandNameIn(args: readonly string[]): string | undefined {
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] ?? '';
    if (arg === '--') return undefined;
    if (arg.startsWith('-')) {
      if (GLOBAL_OPTIONS_WITH_VALUE.has(arg)) index++;
      continue;
    }
    return arg === 'help' ? args[index + 1] : arg;
  }
  return undefined;
}
