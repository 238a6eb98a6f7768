/** The JSON Schemas of docs/schemas hold what `--json` prints, and refuse what it must not print. */
import { describe, expect, it } from 'vitest';
import { checkJsonOutput } from '../../test/helpers/json-schemas.js';
import { COMMANDS } from './program.js';
import { renderError } from './render-error.js';
import { EsignError } from '../core/errors.js';

const signed = {
  schemaVersion: 2,
  input: 'a.pdf',
  output: 'a-signed.pdf',
  format: 'PAdES',
  credential: 'c',
  level: 'B-T',
  bytes: 10,
  sha256: 'a'.repeat(64),
  timestamp: '2026-11-24T20:17:04.163Z',
};

describe('docs/schemas', () => {
  it('has a schema for every command', () => {
    for (const { name } of COMMANDS) expect(checkJsonOutput(['--json', name], '')?.problems, name).toEqual([]);
  });

  it('accepts a signed-file line and an error, as the CLI prints them', () => {
    const error = renderError(
      new EsignError('INPUT_NOT_FOUND', 'a.pdf does not exist.', { hint: 'Check the file name.' }),
    ).json;
    expect(
      checkJsonOutput(['--json', 'sign', 'a.pdf'], `${JSON.stringify(signed)}\n${JSON.stringify(error)}\n`),
    ).toEqual({ command: 'sign', checked: 2, problems: [] });
  });

  it('refuses a line without schemaVersion, a missing field, a wrong type, and text that is not JSON', () => {
    const { schemaVersion: _omitted, ...unversioned } = signed;
    const { sha256: _missing, ...unhashed } = signed;
    for (const line of [
      JSON.stringify(unversioned),
      JSON.stringify(unhashed),
      JSON.stringify({ ...signed, bytes: '10' }),
      '✓ a.pdf → a-signed.pdf',
    ]) {
      expect(checkJsonOutput(['--json', 'sign', 'a.pdf'], line)!.problems, line).toHaveLength(1);
    }
  });

  it('accepts the lines of esign verify over several files (NDJSON): reports, an error with its file, the summary; refuses a summary of unknown outcomes', () => {
    const report = {
      schemaVersion: 2,
      file: 'a.pdf',
      kind: 'pdf',
      signatures: [],
      status: 'valid',
      code: 'VERIFY_NO_SIGNATURES',
      valid: false,
      checkedAt: '2026-11-24T20:17:04.163Z',
    };
    const error = {
      file: 'b.pdf',
      ...renderError(new EsignError('PDF_NOT_PDF', 'b.pdf is not a PDF.', { hint: 'Check the file.' })).json,
    };
    const summary = {
      schemaVersion: 2,
      summary: {
        files: 2,
        outcomes: { VERIFY_NO_SIGNATURES: 1, unreadable: 1 },
        failed: ['a.pdf', 'b.pdf'],
        exitCode: 7,
      },
    };
    const run = [report, error, summary].map((line) => JSON.stringify(line)).join('\n');
    expect(checkJsonOutput(['--json', 'verify', 'a.pdf', 'b.pdf'], `${run}\n`)).toEqual({
      command: 'verify',
      checked: 3,
      problems: [],
    });
    const odd = { ...summary, summary: { ...summary.summary, outcomes: { broken: 1 } } };
    expect(checkJsonOutput(['--json', 'verify', 'a.pdf', 'b.pdf'], JSON.stringify(odd))!.problems).toHaveLength(1);
  });

  it('checks only --json runs that name a command', () => {
    expect(checkJsonOutput(['sign', 'a.pdf'], 'text')).toBeUndefined();
    expect(checkJsonOutput(['--json', '--version'], '0.1.0')).toBeUndefined();
  });
});
