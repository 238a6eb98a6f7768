/**
 * The password of encrypted PDFs: from --password-file, ESIGN_PDF_PASSWORD, or typed at a terminal
 * (asked for with --password, or when a file turns out to need one). Never taken from argv, never
 * printed, never written to the split flow's state.
 */
import { readFile } from 'node:fs/promises';
import { EsignError, isEsignError, naming } from '../core/errors.js';
import type { Command } from 'commander';
import type { Context } from './context.js';

export interface PdfPasswordOptions {
  /** --password: ask on the terminal before opening the files. */
  password?: boolean;
  /** --password-file FILE ('-' for stdin): its first line. */
  passwordFile?: string;
}

/** Attempts at a terminal before giving up on a file, as sudo and Acrobat allow. */
const ATTEMPTS = 3;

export class PdfPasswords {
  /** The password that opened each file, for reading it again later in the run. */
  private readonly byInput = new Map<string, string>();

  private constructor(
    private given: string | undefined,
    private readonly ask: ((input: string) => Promise<string>) | undefined,
  ) {}

  static async from(options: PdfPasswordOptions, ctx: Context): Promise<PdfPasswords> {
    const ask = ctx.io.canPrompt ? (input: string) => promptFor(input) : undefined;
    if (options.passwordFile !== undefined)
      return new PdfPasswords(await readPasswordFile(options.passwordFile, ctx), ask);
    if (options.password) {
      if (!ask) {
        throw new EsignError('USAGE', '--password asks on a terminal, and there is none here.', {
          hint: 'Set ESIGN_PDF_PASSWORD or pass --password-file FILE (- for stdin) instead.',
        });
      }
      return new PdfPasswords(await promptFor('the PDFs'), ask);
    }
    return new PdfPasswords(ctx.env['ESIGN_PDF_PASSWORD'] || undefined, ask);
  }

  /** The password that opened `input`, or the one given, for opening it again. */
  for(input: string): string | undefined {
    return this.byInput.get(input) ?? this.given;
  }

  /**
   * Runs `open` with the password given; when the file needs another one and a person is at the
   * terminal, asks (up to three times). A password typed once is tried on the files after it.
   */
  async open<T>(input: string, open: (password: string | undefined) => Promise<T>): Promise<T> {
    let password = this.for(input);
    for (let attempt = 0; ; attempt++) {
      try {
        const result = await open(password);
        if (password !== undefined) this.byInput.set(input, password);
        return result;
      } catch (error) {
        const needsPassword =
          isEsignError(error) && (error.code === 'PDF_PASSWORD_REQUIRED' || error.code === 'PDF_PASSWORD_WRONG');
        if (!needsPassword || !this.ask || attempt >= ATTEMPTS) throw needsPassword ? naming(input, error) : error;
        const tried = password;
        const ask = this.ask;
        password = await this.oneAtATime(async () => {
          // A batch checks a few files at once: one prompt at a time, and a password typed for
          // another file meanwhile is tried before asking again.
          if (this.given !== undefined && this.given !== tried) return this.given;
          this.given = await ask(
            attempt > 0 || error.code === 'PDF_PASSWORD_WRONG' ? `${input} (the last one did not open it)` : input,
          );
          return this.given;
        });
      }
    }
  }

  private prompting: Promise<unknown> = Promise.resolve();

  private oneAtATime<T>(task: () => Promise<T>): Promise<T> {
    const run = this.prompting.then(task);
    this.prompting = run.catch(() => undefined);
    return run;
  }
}

async function promptFor(what: string): Promise<string> {
  const { password } = await import('@inquirer/prompts');
  return password({ message: `Password for ${what}:`, mask: true });
}

async function readPasswordFile(path: string, ctx: Context): Promise<string> {
  return readSecretLine(path, ctx, { what: 'password file', flag: '--password-file' });
}

/** The first line of a secret's file (`-`: standard input), as --password-file and --pin-file read it. */
export async function readSecretLine(
  path: string,
  ctx: Context,
  named: { what: string; flag: string },
): Promise<string> {
  let text: string;
  try {
    text = path === '-' ? await readStdin(ctx) : await readFile(path, 'utf8');
  } catch (error) {
    throw new EsignError(
      'USAGE',
      `Could not read the ${named.what} ${path} (${(error as NodeJS.ErrnoException).code ?? 'unreadable'}).`,
      {
        hint: `Check the path given to ${named.flag}.`,
      },
    );
  }
  return text.split(/\r?\n/, 1)[0] ?? '';
}

async function readStdin(ctx: Context): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.io.stdin) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** The two options of every command that opens PDFs. */
export function withPasswordOptions(command: Command): Command {
  return command
    .option(
      '--password',
      'ask on the terminal for the password of encrypted PDFs (user or owner); scripts set ESIGN_PDF_PASSWORD',
    )
    .option('--password-file <file>', 'the password of encrypted PDFs: the first line of FILE (- for stdin)');
}
