/** The package version and build, set by scripts/bundle.mjs; absent when the sources run unbundled. */
declare const ESIGN_VERSION: string | undefined;
declare const ESIGN_BUILD: string | undefined;

/**
 * `0.1.0 (build 945be18a2c, 2026-11-25)`: the package version and the build it came from. Both are
 * written into the bundle when it is built, so no file beside it is read (a single executable has
 * none); the unbundled sources say so.
 */
export function version(): string {
  if (typeof ESIGN_VERSION !== 'string') return '0.0.0-source (build from source)';
  return `${ESIGN_VERSION} (build ${typeof ESIGN_BUILD === 'string' ? ESIGN_BUILD : 'from source'})`;
}
