/**
 * The default export of an ES module package loaded with `import()`. In the CommonJS bundle,
 * `import()` is a `require()` (scripts/bundle.mjs), and esbuild's Node interop makes `default` the
 * whole module namespace, whose own `default` is the export; unbundled (tests), it is the export.
 */
export function defaultExport<T extends (...args: never[]) => unknown>(imported: { default: T }): T {
  const value: unknown = imported.default;
  return (typeof value === 'function' ? value : (value as { default: T }).default) as T;
}
