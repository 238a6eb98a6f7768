import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC_DIR = join(import.meta.dirname, '..');

/** Every source under src/ (tests aside), as a path from src/ with forward slashes. */
function sources(): string[] {
  return readdirSync(SRC_DIR, { recursive: true, encoding: 'utf8' })
    .map((path) => path.split('\\').join('/'))
    .filter((path) => /\.ts$/.test(path) && !/\.test\.ts$/.test(path) && !path.endsWith('.d.ts'));
}

/**
 * The files a source imports, statically or with import(), types included: `import … from`,
 * `import type … from`, `export … from`, `export type … from`, bare `import '…'` and `import('…')`.
 * Only relative specifiers: a package is never part of a circle of ours.
 */
export function importsOf(
  path: string,
  source = readFileSync(join(SRC_DIR, path), 'utf8'),
): { target: string; typeOnly: boolean }[] {
  const found: { target: string; typeOnly: boolean }[] = [];
  const add = (specifier: string, typeOnly: boolean) => {
    if (!specifier.startsWith('.')) return;
    const target = relative(SRC_DIR, join(SRC_DIR, dirname(path), specifier.replace(/\.js$/, '.ts')))
      .split('\\')
      .join('/');
    found.push({ target, typeOnly });
  };
  for (const match of source.matchAll(/^[ \t]*(import|export)\s+(type\s+)?([^;]*?)\s+from\s+'([^']+)'/gms)) {
    const names = match[3]!;
    // `import { type A, type B } from` is type-only too: every named binding marked `type`.
    const allTypes =
      /^\{[^}]*\}$/s.test(names.trim()) &&
      names
        .replace(/[{}\s]/g, '')
        .split(',')
        .filter(Boolean)
        .every((name) => name.startsWith('type'));
    add(match[4]!, Boolean(match[2]) || allTypes);
  }
  for (const match of source.matchAll(/^[ \t]*import\s+'([^']+)'/gm)) add(match[1]!, false);
  for (const match of source.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g)) add(match[1]!, false);
  return found;
}

/** The strongly connected components of more than one file (or a file importing itself): Tarjan's algorithm. */
export function circles(graph: Map<string, Set<string>>): string[][] {
  let index = 0;
  const indexes = new Map<string, number>();
  const lowLinks = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    indexes.set(node, index);
    lowLinks.set(node, index++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indexes.has(next)) {
        visit(next);
        lowLinks.set(node, Math.min(lowLinks.get(node)!, lowLinks.get(next)!));
      } else if (onStack.has(next)) lowLinks.set(node, Math.min(lowLinks.get(node)!, indexes.get(next)!));
    }
    if (lowLinks.get(node) !== indexes.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || graph.get(node)?.has(node)) found.push(component.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!indexes.has(node)) visit(node);
  return found;
}

function graphOf(files: readonly string[], withTypes: boolean): Map<string, Set<string>> {
  const known = new Set(files);
  return new Map(
    files.map((file) => [
      file,
      new Set(
        importsOf(file)
          .filter((edge) => (withTypes || !edge.typeOnly) && known.has(edge.target))
          .map((edge) => edge.target),
      ),
    ]),
  );
}

describe('import circles', () => {
  const files = sources();

  it('finds the sources and their imports', () => {
    expect(files).toContain('cli/sign-run.ts');
    expect(graphOf(files, true).get('cli/main.ts')?.size).toBeGreaterThan(0);
  });

  it('reads every form of import', () => {
    const edges = importsOf(
      'core/x.ts',
      [
        "import { a } from './a.js';",
        "import type { B } from './b.js';",
        "import { type C, type D } from './c.js';",
        "import { type E, f } from './e.js';",
        "export { g } from './g.js';",
        "export type { H } from '../h.js';",
        "export * from './i.js';",
        "import './j.js';",
        "const k = await import('./k.js');",
        "import {\n  l,\n  type M,\n} from './l.js';",
        "import { z } from 'node:zlib';",
      ].join('\n'),
    );
    expect(edges).toEqual([
      { target: 'core/a.ts', typeOnly: false },
      { target: 'core/b.ts', typeOnly: true },
      { target: 'core/c.ts', typeOnly: true },
      { target: 'core/e.ts', typeOnly: false },
      { target: 'core/g.ts', typeOnly: false },
      { target: 'h.ts', typeOnly: true },
      { target: 'core/i.ts', typeOnly: false },
      { target: 'core/l.ts', typeOnly: false },
      { target: 'core/j.ts', typeOnly: false },
      { target: 'core/k.ts', typeOnly: false },
    ]);
  });

  it('tells a circle from a chain', () => {
    const graph = new Map([
      ['a', new Set(['b'])],
      ['b', new Set(['c'])],
      ['c', new Set(['a'])],
      ['d', new Set(['a'])],
    ]);
    expect(circles(graph)).toEqual([['a', 'b', 'c']]);
    graph.get('c')!.delete('a');
    expect(circles(graph)).toEqual([]);
  });

  it('src/ has no import circle at run time', () => {
    expect(circles(graphOf(files, false))).toEqual([]);
  });

  it('src/ has no import circle counting type-only imports', () => {
    expect(circles(graphOf(files, true))).toEqual([]);
  });
});

/** The form folder a source is in (`core/forms/asic-e/…` → `asic-e`), `shared` and the registry aside. */
function formOf(path: string): string | undefined {
  const match = /^(?:core|io)\/forms\/([^/]+)\//.exec(path);
  return match && match[1] !== 'shared' ? match[1] : undefined;
}

describe('signature forms', () => {
  const files = sources();

  it('a form never imports another form’s folder (what two forms share is in forms/shared)', () => {
    const crossings = files.flatMap((file) => {
      const form = formOf(file);
      if (!form) return [];
      return importsOf(file)
        .map((edge) => edge.target)
        .filter((target) => formOf(target) !== undefined && formOf(target) !== form)
        .map((target) => `${file} → ${target}`);
    });
    expect(files.filter((file) => formOf(file) === 'xades').length).toBeGreaterThan(0);
    expect(crossings).toEqual([]);
  });
});
