import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC_DIR = join(import.meta.dirname, '..');
const COMMANDS_DIR = join(import.meta.dirname, 'commands');

/** Every module specifier a file imports, statically or with import(). */
function importsOf(path: string): string[] {
  const source = readFileSync(path, 'utf8');
  return [...source.matchAll(/(?:from\s+|import\()\s*'([^']+)'/g)].map((match) => match[1]!);
}

describe('command layering', () => {
  const files = readdirSync(COMMANDS_DIR).filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'));

  it('finds the command files', () => {
    expect(files).toContain('sign.ts');
    expect(files.length).toBeGreaterThanOrEqual(12);
  });

  it.each(files)('%s depends only downward: not on program.ts nor on another command', (file) => {
    for (const specifier of importsOf(join(COMMANDS_DIR, file))) {
      expect(specifier, `${file} imports ${specifier}`).not.toMatch(/^\.\.\/program\.js$/);
      expect(specifier, `${file} imports ${specifier}`).not.toMatch(/^\.\/[^/]+\.js$/);
    }
  });
});

// The floors of src/, lowest first: each may import its own floor and those below, never one above.
const FLOORS = ['core', 'io', 'sandbox', 'cli'] as const;

/** The floor a source file under src/ lives on. */
function floorOf(pathFromSrc: string): number {
  return FLOORS.indexOf(pathFromSrc.split('/')[0] as (typeof FLOORS)[number]);
}

describe('floor layering', () => {
  const sources = readdirSync(SRC_DIR, { recursive: true, encoding: 'utf8' })
    .map((path) => path.split('\\').join('/'))
    .filter((path) => path.endsWith('.ts') && !path.endsWith('.test.ts') && floorOf(path) >= 0);

  it('finds sources on every floor', () => {
    for (const floor of FLOORS)
      expect(
        sources.some((path) => path.startsWith(`${floor}/`)),
        floor,
      ).toBe(true);
  });

  it.each(sources)('%s imports only its own floor and those below', (path) => {
    for (const specifier of importsOf(join(SRC_DIR, path)).filter((specifier) => specifier.startsWith('.'))) {
      const target = relative(SRC_DIR, join(SRC_DIR, path, '..', specifier))
        .split('\\')
        .join('/');
      const targetFloor = floorOf(target);
      expect(targetFloor, `${path} imports ${specifier}, outside src/`).toBeGreaterThanOrEqual(0);
      expect(
        targetFloor,
        `${path} imports ${specifier}: ${FLOORS[targetFloor]} is above ${FLOORS[floorOf(path)]}`,
      ).toBeLessThanOrEqual(floorOf(path));
    }
  });
});

/** The files a source loads before it runs: its static imports (type-only ones aside), followed through src/. */
function staticClosure(start: string): Set<string> {
  const seen = new Set<string>();
  const pending = [start];
  while (pending.length > 0) {
    const path = pending.pop()!;
    if (seen.has(path)) continue;
    seen.add(path);
    const source = readFileSync(join(SRC_DIR, path), 'utf8');
    for (const match of source.matchAll(/^(?:import|export)\s+(type\s+)?[^;]*?from\s+'(\.[^']+)'/gms)) {
      if (!match[1])
        pending.push(
          relative(SRC_DIR, join(SRC_DIR, path, '..', match[2]!.replace(/\.js$/, '.ts')))
            .split('\\')
            .join('/'),
        );
    }
  }
  return seen;
}

describe('what a plain sign loads', () => {
  it('sign-run.ts reaches verify (PDF verification, CMS checks, revocation) only through import(): most signs never need it', () => {
    const loaded = staticClosure('cli/sign-run.ts');
    expect(loaded.has('core/pdf/placeholder.ts')).toBe(true);
    expect(
      [...loaded].filter((path) => /^core\/(verify\/(cms-check|revocation)|forms\/pades\/verify)\.ts$/.test(path)),
    ).toEqual([]);
  });
});
