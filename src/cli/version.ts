import { readFileSync } from 'node:fs';

/** The build, set by scripts/bundle.mjs (commit and date); absent when the sources run unbundled. */
declare const ESIGN_BUILD: string | undefined;

/** `0.1.0 (build 945be18a2c, 2026-11-25)`: the package version and the build it came from. */
export function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return `${pkg.version} (build ${typeof ESIGN_BUILD === 'string' ? ESIGN_BUILD : 'from source'})`;
}
