/**
 * Global setup of the integration and interop projects: gives the workers a ledger folder, and at
 * the end searches everything the suite's CLI runs printed for every secret its sandboxes issued
 * (and the fixed ones). A leak fails the run.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONFIGURED_SECRETS } from './secret-ledger.js';

const LEDGER = fileURLToPath(new URL('../artifacts/secret-ledger', import.meta.url));

export function setup(): void {
  // Both projects share one ledger per run; the first to start clears the last run's.
  if (process.env['ESIGN_TEST_LEDGER'] === LEDGER) return;
  rmSync(LEDGER, { recursive: true, force: true });
  mkdirSync(LEDGER, { recursive: true });
  process.env['ESIGN_TEST_LEDGER'] = LEDGER;
}

function readLines<T>(prefix: string): T[] {
  return readdirSync(LEDGER)
    .filter((name) => name.startsWith(prefix))
    .flatMap((name) =>
      readFileSync(join(LEDGER, name), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as T),
    );
}

export function teardown(): void {
  const secrets = [
    ...readLines<{ value: string; kind: string }>('secrets-'),
    ...CONFIGURED_SECRETS.map((value) => ({ value, kind: 'configured secret' })),
  ];
  const outputs = readLines<{ args: string[]; text: string }>('outputs-');
  const leaks = new Set<string>();
  for (const { args, text } of outputs)
    for (const { value, kind } of secrets)
      if (text.includes(value)) leaks.add(`${kind} in the output of esign ${args.join(' ')}`);
  console.log(`secret scan: ${outputs.length} CLI runs searched for ${secrets.length} secrets: ${leaks.size} leak(s)`);
  const schemaChecks = readLines<{ command: string; checked: number; failed: number }>('schemas-');
  const commands = [...new Set(schemaChecks.map((check) => check.command))].sort();
  const values = schemaChecks.reduce((sum, check) => sum + check.checked, 0);
  const failed = schemaChecks.reduce((sum, check) => sum + check.failed, 0);
  console.log(
    `json schemas: ${values} --json values from ${schemaChecks.length} runs checked against docs/schemas (${commands.join(', ') || 'none'}): ${failed} failed`,
  );
  if (leaks.size > 0) {
    // vitest reports an error thrown here but still exits 0, so the exit code is set as well.
    process.exitCode = 1;
    throw new Error(`secrets in esign's output:\n${[...leaks].join('\n')}`);
  }
}
