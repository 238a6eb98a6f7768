/**
 * What a sign batch keeps of its files once they are done: counts and the first failure, nothing
 * per file (a batch of 100,000 must not grow with them). Each file's line is printed as it
 * finishes; on a terminal a progress line shows files done out of total, the rate and an ETA.
 */
import { EsignError, isEsignError } from '../core/errors.js';
import type { SignJob } from '../core/sign-workflow.js';
import { batchExitCode } from './command.js';
import type { Context } from './context.js';
import type { Spinner } from './io.js';

export class BatchTally {
  private signedCount = 0;
  private skippedCount = 0;
  private failedCount = 0;
  private firstFailure: EsignError | undefined;
  private spinner: Spinner | undefined;
  // process.hrtime, not performance.now(): the first use of `performance` loads perf_hooks, a cost to every short run.
  private readonly started = process.hrtime.bigint();

  constructor(
    readonly total: number,
    private readonly ctx: Context,
  ) {}

  /** Starts the progress line (silent off a terminal, with --quiet or --json). */
  async showProgress(): Promise<Spinner> {
    this.spinner = await this.ctx.io.spinner(this.progressText());
    return this.spinner;
  }

  /** A job signed: one file, or the `files` of a job of several inputs. */
  signed(files = 1): void {
    this.signedCount += files;
    this.update();
  }

  /** A job already signed; a job of several inputs (one output, not a batch of files) adds no summary. */
  skipped(job: SignJob, credentialID: string): void {
    if (!job.inputs) this.skippedCount++;
    this.print(() =>
      this.ctx.io.result(
        { input: job.input, output: job.output, credential: credentialID, skipped: true },
        job.inputs
          ? () => `↷ ${job.output} already holds a signature by ${credentialID} over these files; skipped`
          : () => `↷ ${job.input}: ${job.output} is already signed by ${credentialID}; skipped`,
      ),
    );
    this.update();
  }

  failed(input: string, error: unknown): void {
    const failure = asEsignError(input, error);
    this.failedCount++;
    this.firstFailure ??= failure;
    this.print(() =>
      this.ctx.io.result(
        { input, error: { code: failure.code, message: failure.message, hint: failure.hint } },
        () => `✗ ${input}: ${failure.message}`,
      ),
    );
    this.update();
  }

  /** The summary: on stderr when something failed or was skipped, and the exit code of a partial batch. */
  finish(): void {
    const skipped = this.skippedCount > 0 ? `, ${this.skippedCount} skipped (already signed)` : '';
    if (this.failedCount > 0) {
      process.exitCode = batchExitCode(this.signedCount + this.skippedCount, [this.firstFailure!]);
      this.ctx.io.error(
        `esign: ${this.signedCount} of ${this.total} files signed${skipped}; ${this.failedCount} failed (see above).`,
      );
    } else if (this.skippedCount > 0) {
      this.ctx.io.info(`esign: ${this.signedCount} of ${this.total} files signed${skipped}.`);
    }
  }

  private print(write: () => void): void {
    if (this.spinner) this.spinner.print(write);
    else write();
  }

  private update(): void {
    this.spinner?.update(this.progressText());
  }

  private progressText(): string {
    const done = this.signedCount + this.skippedCount + this.failedCount;
    const seconds = Number(process.hrtime.bigint() - this.started) / 1e9;
    const rate = done / Math.max(seconds, 0.001);
    const parts = [`Signing: ${grouped(done)}/${grouped(this.total)} files`];
    if (this.skippedCount > 0) parts.push(`${grouped(this.skippedCount)} skipped`);
    if (this.failedCount > 0) parts.push(`${grouped(this.failedCount)} failed`);
    if (done > 0 && seconds >= 1)
      parts.push(`${rate.toFixed(rate < 10 ? 1 : 0)} files/s`, `ETA ${duration((this.total - done) / rate)}`);
    return parts.join(' · ');
  }
}

/** 12345 → "12,345". Not toLocaleString: its first call loads the ICU data, a tenth of a short run. */
export function grouped(count: number): string {
  return String(count).replace(/\B(?=(\d{3})+$)/g, ',');
}

/** 95 → "1m 35s"; 4000 → "1h 07m". */
export function duration(seconds: number): string {
  const whole = Math.max(0, Math.round(seconds));
  if (whole < 60) return `${whole}s`;
  if (whole < 3600) return `${Math.floor(whole / 60)}m ${String(whole % 60).padStart(2, '0')}s`;
  return `${Math.floor(whole / 3600)}h ${String(Math.floor((whole % 3600) / 60)).padStart(2, '0')}m`;
}

function asEsignError(input: string, error: unknown): EsignError {
  if (isEsignError(error)) return error;
  return new EsignError(
    'INTERNAL',
    `Unexpected error while signing ${input}: ${(error as Error)?.message ?? String(error)}.`,
    { cause: error },
  );
}
