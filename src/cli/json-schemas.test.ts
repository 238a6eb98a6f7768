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

  it('checks only --json runs that name a command', () => {
    expect(checkJsonOutput(['sign', 'a.pdf'], 'text')).toBeUndefined();
    expect(checkJsonOutput(['--json', '--version'], '0.1.0')).toBeUndefined();
  });
});
