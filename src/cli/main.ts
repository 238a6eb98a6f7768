/**
 * The esign entry point and its only error boundary: every failure becomes one line on stderr
 * (or a JSON error with --json) and a documented exit code; stack traces only with --verbose.
 */
import { ExitCode } from '../core/errors.js';
import { removePendingTempFilesSync } from '../io/pending-temp-files.js';
import { exitHooks } from './exit-hooks.js';
import { renderError } from './render-error.js';
import { version } from './version.js';

export async function main(argv: string[]): Promise<number> {
  const args = argv.slice(2);
  const wantsJson = args.includes('--json');
  const verbose = args.includes('--verbose') || args.includes('-v');
  // The one call scripts make in a loop: answer it without loading the command framework.
  if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
    process.stdout.write(version() + '\n');
    return ExitCode.ok;
  }
  try {
    const { buildProgram } = await import('./program.js');
    const program = await buildProgram(args);
    await program.parseAsync(argv);
    return Number(process.exitCode ?? 0);
  } catch (error) {
    if (isCommanderError(error)) {
      if (
        error.code === 'commander.helpDisplayed' ||
        error.code === 'commander.version' ||
        error.code === 'commander.help'
      )
        return ExitCode.ok;
      return ExitCode.usage;
    }
    const rendered = renderError(error);
    if (wantsJson) process.stdout.write(JSON.stringify(rendered.json) + '\n');
    process.stderr.write(rendered.line + '\n');
    if (verbose) process.stderr.write(rendered.trace + '\n');
    return rendered.exitCode;
  }
}

function isCommanderError(error: unknown): error is { code: string; exitCode: number } {
  return (
    typeof (error as { code?: unknown })?.code === 'string' && (error as { code: string }).code.startsWith('commander.')
  );
}

/** Removes what is half-written, runs the exit hooks, and exits at once. */
function exitNow(code: number, line?: string): never {
  removePendingTempFilesSync();
  for (const hook of exitHooks) hook();
  if (line) process.stderr.write(line);
  process.exit(code);
}

/** What bin/esign.cjs runs: signal handlers first, then the command. */
export async function start(): Promise<void> {
  process.once('SIGINT', () =>
    exitNow(ExitCode.interrupted, '\nesign: interrupted (SIGINT); no output was left half-written.\n'),
  );
  process.once('SIGTERM', () =>
    exitNow(ExitCode.terminated, '\nesign: interrupted (SIGTERM); no output was left half-written.\n'),
  );
  // A reader that stops early (`esign … | head -1`): end quietly, as a Unix tool ends on SIGPIPE.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') exitNow(ExitCode.brokenPipe);
      throw error;
    });
  }
  process.exitCode = await main(process.argv);
}
