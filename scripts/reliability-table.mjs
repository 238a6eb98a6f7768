#!/usr/bin/env node
/* global process, console, URL */
// Turns test/artifacts/fault-matrix.json (written by test/integration/faults.test.ts) into the
// Markdown table of docs/reliability.md, between the <!-- matrix:begin --> and <!-- matrix:end -->
// markers. Usage: node scripts/reliability-table.mjs [--check]
import { readFile, writeFile } from 'node:fs/promises';

const root = new URL('..', import.meta.url);
const matrix = JSON.parse(await readFile(new URL('test/artifacts/fault-matrix.json', root), 'utf8'));
const doc = new URL('docs/reliability.md', root);
const escape = (text) => String(text).replace(/\|/g, '\\|');
const lines = [
  `${matrix.cases.length} cases, ${matrix.cases.filter((row) => row.pass).length} pass (HTTP time-out ${matrix.timeoutMs} ms in the time-out cases).`,
  '',
  '| call | fault | exit | error code | tries (max) | input untouched | left behind | message | pass |',
  '|---|---|---|---|---|---|---|---|---|',
  ...matrix.cases.map((row) =>
    [
      row.call,
      row.fault,
      row.exitCode,
      row.errorCode ?? '',
      `${row.tries} (${row.maxTries})`,
      row.inputUntouched ? 'yes' : 'NO',
      row.leftovers.length ? row.leftovers.join(', ') : 'nothing',
      escape(row.message.replace(/^esign: /, '')),
      row.pass ? '✓' : '✗',
    ]
      .map((cell) => ` ${escape(cell)} `)
      .join('|')
      .replace(/^/, '|')
      .replace(/$/, '|'),
  ),
];
const text = await readFile(doc, 'utf8');
const begin = '<!-- matrix:begin -->';
const end = '<!-- matrix:end -->';
const updated = text.replace(new RegExp(`${begin}[\\s\\S]*${end}`), `${begin}\n${lines.join('\n')}\n${end}`);
if (process.argv.includes('--check')) {
  if (updated !== text) {
    console.error('docs/reliability.md is out of date: run node scripts/reliability-table.mjs');
    process.exit(1);
  }
} else {
  await writeFile(doc, updated);
}
