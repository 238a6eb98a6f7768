/**
 * The commander root. Only the command being run is imported (with its options); the others are
 * listed by name and summary, so `esign --help` and `--version` load almost nothing.
 */
import { Command, Option } from 'commander';
import { positiveNumber, type CommandModule, type RunInContext } from './command.js';
import type { ContextOverrides, GlobalOptions } from './context.js';
import { commandNameIn } from './command-name.js';
import { wantsColor } from './io.js';
import { version } from './version.js';

interface CommandEntry {
  name: string;
  summary: string;
  load: () => Promise<CommandModule>;
  /** It reads the whole program (completion scripts): every command is defined, not only it. */
  readsEveryCommand?: boolean;
}

export const COMMANDS: CommandEntry[] = [
  {
    name: 'sign',
    summary: 'sign PDFs (PAdES) and other files (CAdES: detached .p7s, enveloping .p7m, ASiC-S, ASiC-E)',
    load: () => import('./commands/sign.js'),
  },
  {
    name: 'verify',
    summary: 'verify the signatures and timestamps in a PDF, a .p7s, a .p7m or an ASiC container',
    load: () => import('./commands/verify.js'),
  },
  {
    name: 'extend',
    summary: 'raise signed PDFs and XAdES to B-LT or B-LTA without signing again',
    load: () => import('./commands/extend.js'),
  },
  {
    name: 'timestamp',
    summary: 'get or check RFC 3161 timestamps (.tsr) for files',
    load: () => import('./commands/timestamp.js'),
  },
  {
    name: 'credentials',
    summary: 'list and choose signing credentials',
    load: () => import('./commands/credentials.js'),
  },
  { name: 'login', summary: 'sign in with the identity service', load: () => import('./commands/login.js') },
  { name: 'whoami', summary: 'show who you are signed in as', load: () => import('./commands/whoami.js') },
  { name: 'logout', summary: 'forget the identity session', load: () => import('./commands/logout.js') },
  { name: 'upload', summary: 'upload files to your storage bucket', load: () => import('./commands/upload.js') },
  {
    name: 'storage',
    summary: 'list, download and delete objects in your bucket',
    load: () => import('./commands/storage.js'),
  },
  {
    name: 'sandbox',
    summary: 'run the local emulators of all services (test signatures)',
    load: () => import('./commands/sandbox.js'),
  },
  {
    name: 'trust',
    summary: 'fetch and inspect the EU trusted lists (qualified trust services)',
    load: () => import('./commands/trust.js'),
  },
  { name: 'config', summary: 'manage profiles and settings', load: () => import('./commands/config.js') },
  {
    name: 'completion',
    summary: 'print a shell completion script (bash, zsh or fish)',
    load: () => import('./commands/completion.js'),
    readsEveryCommand: true,
  },
];

export async function buildProgram(args: string[], overrides: ContextOverrides = {}): Promise<Command> {
  const program = new Command('esign')
    .description(
      'Sign documents with a remote qualified-signature service (CSC API).\nWith no profile chosen: the env profile when ESIGN_* variables name a service\n(ESIGN_SIGNING_URL, …; docs/ci.md), else the built-in sandbox (TEST signatures).',
    )
    .version(version(), '-V, --version')
    .option(
      '--profile <name>',
      'profile to use (default: ESIGN_PROFILE, the current profile, else "env" when a service URL is in the environment, else "sandbox"; "sandbox-v2" is the sandbox on CSC API v2)',
    )
    .option('--json', 'print machine-readable JSON results on stdout')
    .option('-q, --quiet', 'print only results and errors')
    .option('-v, --verbose', 'print progress details and error traces (never secrets)')
    .option('--no-color', 'disable colour (also NO_COLOR)')
    .addOption(
      new Option('--timeout <seconds>', 'how long to wait for a browser step')
        .argParser(positiveNumber)
        .default(undefined, '300'),
    )
    .option('--browser <command>', 'open authorization URLs with this command (also ESIGN_BROWSER), e.g. "curl -sfL"')
    .option('--no-browser', 'print authorization URLs instead of opening a browser')
    .option('--auto-approve', '(sandbox only) approve browser steps automatically, for scripts and tests')
    // Before any subcommand exists, so that they inherit it: usage errors throw (exit 2 in main)
    // instead of commander calling process.exit(1) itself.
    .exitOverride()
    .showHelpAfterError('(run with --help for usage)')
    .configureHelp({ sortSubcommands: false })
    .addHelpText(
      'after',
      '\nExamples:\n  esign sign contract.pdf                 sign on the sandbox (opens the approval page)\n  esign sign --auto-approve samples/*.pdf sandbox: approve without a browser\n  esign verify contract-signed.pdf\n\nExit codes: see README.md "Exit codes" (0 ok, 2 usage, 3 config, 4 auth, 5 unavailable, 6 protocol, 7 input, 8 output, 9 verification, 10 partial, 11 credential, 12 weak algorithm in verify, 13 sign --require not met).',
    );

  const run: RunInContext = async (command, body) => {
    const globals = globalOptions(command);
    const [{ createContext }, { Io }] = await Promise.all([import('./context.js'), import('./io.js')]);
    const io = new Io({ json: globals.json, quiet: globals.quiet, verbose: globals.verbose, color: globals.color });
    const ctx = createContext(io, globals, overrides);
    try {
      await body(ctx);
    } finally {
      await ctx.close();
    }
  };

  const wanted = commandNameIn(args);
  const everyCommand = COMMANDS.some((entry) => entry.name === wanted && entry.readsEveryCommand);
  for (const entry of COMMANDS) {
    if (entry.name === wanted || everyCommand) (await entry.load()).defineCommand(program, run);
    else
      program
        .command(entry.name)
        .summary(entry.summary)
        .description(entry.summary)
        .allowUnknownOption()
        .allowExcessArguments()
        .helpOption(false);
  }
  return program;
}

export function globalOptions(command: Command): GlobalOptions {
  const options = command.optsWithGlobals() as Record<string, unknown>;
  return {
    profile: options['profile'] as string | undefined,
    json: Boolean(options['json']),
    quiet: Boolean(options['quiet']),
    verbose: Boolean(options['verbose']),
    color: wantsColor(options['color'] as boolean | undefined, process.env, Boolean(process.stderr.isTTY)),
    timeout: options['timeout'] as number | undefined,
    browser: options['browser'] as string | false | undefined,
    autoApprove: Boolean(options['autoApprove']),
  };
}
