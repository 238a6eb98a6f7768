import { EsignError, ExitCode, type EsignErrorCode } from '../core/errors.js';
import { SCHEMA_VERSION } from './schema-version.js';

export interface RenderedError {
  /** One line for stderr: what failed and why, then what to do. */
  line: string;
  exitCode: number;
  json: {
    schemaVersion: number;
    error: {
      code: EsignErrorCode;
      message: string;
      hint?: string;
      exitCode: number;
      details?: Record<string, unknown>;
    };
  };
  /** The stack and causes, for --verbose only. */
  trace: string;
}

/** Renders any thrown value; unknown errors become INTERNAL with a request to report them. */
export function renderError(error: unknown): RenderedError {
  const esignError =
    error instanceof EsignError
      ? error
      : new EsignError(
          'INTERNAL',
          `Unexpected internal error: ${oneLine((error as Error)?.message ?? String(error))}.`,
          {
            hint: 'Run again with --verbose and report the output (it contains no secrets).',
            cause: error,
            exitCode: ExitCode.internal,
          },
        );
  const hint = esignError.hint ? ` ${oneLine(esignError.hint)}` : '';
  return {
    line: `esign: ${oneLine(esignError.message)}${hint}`,
    exitCode: esignError.exitCode,
    json: {
      schemaVersion: SCHEMA_VERSION,
      error: {
        code: esignError.code,
        message: esignError.message,
        ...(esignError.hint ? { hint: esignError.hint } : {}),
        exitCode: esignError.exitCode,
        ...(esignError.details ? { details: esignError.details } : {}),
      },
    },
    trace: traceOf(esignError),
  };
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

function traceOf(error: unknown): string {
  const lines: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current && depth < 8; depth++) {
    lines.push(
      depth === 0
        ? String((current as Error).stack ?? current)
        : `caused by: ${String((current as Error).stack ?? current)}`,
    );
    current = (current as { cause?: unknown }).cause;
  }
  return lines.join('\n');
}
