/**
 * Holds every `--json` output the tests capture to its command's JSON Schema (docs/schemas/): what
 * a pipeline relies on is checked on every run, not only where a test looks at a field.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import { commandNameIn } from '../../src/cli/command-name.js';

const SCHEMA_DIR = fileURLToPath(new URL('../../docs/schemas/', import.meta.url));

let validators: Map<string, ValidateFunction> | undefined;

/** One compiled validator per command, by the file name (sign.schema.json → sign). */
function loadValidators(): Map<string, ValidateFunction> {
  const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
  const files = readdirSync(SCHEMA_DIR).filter((name) => name.endsWith('.schema.json'));
  for (const file of files) ajv.addSchema(JSON.parse(readFileSync(`${SCHEMA_DIR}${file}`, 'utf8')) as object);
  return new Map(
    files.map((file) => [
      file.replace('.schema.json', ''),
      ajv.getSchema(`urn:esign:schemas:${file.replace('.schema.json', '')}`)!,
    ]),
  );
}

export interface SchemaCheck {
  command: string;
  /** JSON values checked (one per stdout line). */
  checked: number;
  problems: string[];
}

/** Checks each stdout line of a `--json` run against its command's schema; undefined when the run had no --json or no command. */
export function checkJsonOutput(args: readonly string[], stdout: string): SchemaCheck | undefined {
  if (!args.includes('--json')) return undefined;
  const command = commandNameIn(args);
  if (!command || args.includes('--help') || args.includes('-h')) return undefined;
  validators ??= loadValidators();
  const validate = validators.get(command);
  if (!validate) return { command, checked: 0, problems: [`no schema docs/schemas/${command}.schema.json`] };
  const problems: string[] = [];
  const lines = stdout.split('\n').filter((line) => line.trim() !== '');
  for (const line of lines) {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      problems.push(`not JSON: ${line.slice(0, 200)}`);
      continue;
    }
    if (!validate(value)) problems.push(`${line.slice(0, 300)}\n  ${describe(validate)}`);
  }
  return { command, checked: lines.length, problems };
}

/** The errors of the branch that came closest (the anyOf branch with the fewest errors). */
function describe(validate: ValidateFunction): string {
  const errors = validate.errors ?? [];
  return errors
    .filter((error) => error.keyword !== 'anyOf')
    .slice(0, 8)
    .map((error) => `${error.instancePath || '/'} ${error.message ?? ''} (${error.schemaPath})`)
    .join('\n  ');
}
