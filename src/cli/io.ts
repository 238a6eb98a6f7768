/**
 * The terminal: results to stdout (human text, or one JSON value per result with --json), notices
 * and progress to stderr, colour only when wanted, spinners only on a TTY.
 */
import { isatty } from 'node:tty';
import { defaultExport } from '../io/default-export.js';
import { SCHEMA_VERSION } from './schema-version.js';

export interface IoOptions {
  json: boolean;
  quiet: boolean;
  verbose: boolean;
  color: boolean;
  stdout?: NodeJS.WriteStream;
  stderr?: NodeJS.WriteStream;
  stdin?: NodeJS.ReadStream;
}

export interface Spinner {
  update(text: string): void;
  succeed(text?: string): void;
  fail(text?: string): void;
  stop(): void;
  /** Clears the spinner's line while `write` prints, then draws it again (a line written under it would be overdrawn). */
  print(write: () => void): void;
  /** Stops drawing until `resume` (while another step prints lines of its own). */
  pause(): void;
  resume(): void;
}

const SILENT_SPINNER: Spinner = {
  update() {},
  succeed() {},
  fail() {},
  stop() {},
  print: (write) => write(),
  pause() {},
  resume() {},
};

export class Io {
  readonly json: boolean;
  readonly quiet: boolean;
  readonly verbose: boolean;
  readonly color: boolean;
  private readonly stdout: NodeJS.WriteStream;
  private readonly stderr: NodeJS.WriteStream;
  private readonly stdinOption: NodeJS.ReadStream | undefined;

  constructor(options: IoOptions) {
    this.json = options.json;
    this.quiet = options.quiet;
    this.verbose = options.verbose;
    this.color = options.color;
    this.stdout = options.stdout ?? process.stdout;
    this.stderr = options.stderr ?? process.stderr;
    this.stdinOption = options.stdin;
  }

  /** Taken only when needed: process.stdin sets up a stream (about 1 ms) that most runs never read. */
  get stdin(): NodeJS.ReadStream {
    return this.stdinOption ?? process.stdin;
  }

  get stdoutIsTTY(): boolean {
    return Boolean(this.stdout.isTTY);
  }

  get stderrIsTTY(): boolean {
    return Boolean(this.stderr.isTTY);
  }

  /** Interactive prompts are allowed only with a TTY on both ends and outside CI. */
  get canPrompt(): boolean {
    const stdinIsTTY = this.stdinOption ? Boolean(this.stdinOption.isTTY) : isatty(0);
    return stdinIsTTY && this.stderrIsTTY && !process.env['CI'];
  }

  /** A result: the human text, or the JSON value with --json (one line per value). */
  result(data: object, human: () => string): void {
    if (this.json || !this.quiet) this.essential(data, human);
  }

  /** A result a person must act on (a URL to open): like `result`, but printed even with --quiet. */
  essential(data: object, human: () => string): void {
    this.stdout.write((this.json ? JSON.stringify({ schemaVersion: SCHEMA_VERSION, ...data }) : human()) + '\n');
  }

  /** Plain output that is the point of the command (e.g. a path); printed even with --quiet. */
  print(text: string): void {
    this.stdout.write(text + '\n');
  }

  /** A notice on stderr, silenced by --quiet. */
  info(text: string): void {
    if (!this.quiet) this.stderr.write(text + '\n');
  }

  warn(text: string): void {
    this.stderr.write(this.paint('33', 'warning: ') + text + '\n');
  }

  error(text: string): void {
    this.stderr.write(text + '\n');
  }

  debug(text: string): void {
    if (this.verbose) this.stderr.write(this.paint('2', `· ${text}`) + '\n');
  }

  paint(code: string, text: string): string {
    return this.color ? `\u001b[${code}m${text}\u001b[0m` : text;
  }

  bold(text: string): string {
    return this.paint('1', text);
  }

  /** A spinner on a TTY; silent (no output at all) off a TTY, with --quiet or --json, or on a terminal of no width. */
  async spinner(text: string): Promise<Spinner> {
    // A terminal that reports no width (a pseudo-terminal nobody sized) would make ora clear lines without end.
    if (!this.stderrIsTTY || this.quiet || this.json || !(this.stderr.columns > 0)) return SILENT_SPINNER;
    const ora = defaultExport(await import('ora'));
    const spinner = ora({ text, stream: this.stderr, color: 'cyan', isEnabled: true }).start();
    return {
      update: (next) => void (spinner.text = next),
      succeed: (done) => void spinner.succeed(done),
      fail: (failed) => void spinner.fail(failed),
      stop: () => void spinner.stop(),
      print: (write) => {
        if (!spinner.isSpinning) return write();
        spinner.clear();
        write();
        spinner.render();
      },
      pause: () => void spinner.stop(),
      resume: () => void spinner.start(),
    };
  }

  /** Reads one line from stdin (a pasted redirect URL); only meaningful on a TTY. */
  readLine(signal: AbortSignal): Promise<string> {
    return new Promise((resolve, reject) => {
      let buffer = '';
      const onData = (chunk: Buffer | string) => {
        buffer += chunk.toString();
        const newline = buffer.indexOf('\n');
        if (newline >= 0) {
          done();
          resolve(buffer.slice(0, newline));
        }
      };
      const done = () => {
        this.stdin.off('data', onData);
        this.stdin.pause();
      };
      signal.addEventListener(
        'abort',
        () => {
          done();
          reject(new Error('aborted'));
        },
        { once: true },
      );
      this.stdin.on('data', onData);
      this.stdin.resume();
    });
  }
}

/** Renders rows as an aligned table with a header row. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/** Whether colour is wanted: --no-color and NO_COLOR switch it off; it is on only on a TTY. */
export function wantsColor(flag: boolean | undefined, env: NodeJS.ProcessEnv, isTTY: boolean): boolean {
  if (flag === false) return false;
  if (env['NO_COLOR'] !== undefined && env['NO_COLOR'] !== '') return false;
  if (env['FORCE_COLOR'] !== undefined && env['FORCE_COLOR'] !== '0') return true;
  return isTTY && env['TERM'] !== 'dumb';
}
