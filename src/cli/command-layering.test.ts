import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const COMMANDS_DIR = join(import.meta.dirname, 'commands');

/** Every module specifier a file imports, statically or with import(). */
function importsOf(file: string): string[] {
  const source = readFileSync(join(COMMANDS_DIR, file), 'utf8');
  return [...source.matchAll(/(?:from\s+|import\()\s*'([^']+)'/g)].map((match) => match[1]!);
}

describe('command layering', () => {
  const files = readdirSync(COMMANDS_DIR).filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'));

  it('finds the command files', () => {
    expect(files).toContain('sign.ts');
    expect(files.length).toBeGreaterThanOrEqual(12);
  });

  it.each(files)('%s depends only downward: not on program.ts nor on another command', (file) => {
    for (const specifier of importsOf(file)) {
      expect(specifier, `${file} imports ${specifier}`).not.toMatch(/^\.\.\/program\.js$/);
      expect(specifier, `${file} imports ${specifier}`).not.toMatch(/^\.\/[^/]+\.js$/);
    }
  });
});
