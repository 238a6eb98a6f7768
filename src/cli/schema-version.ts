/**
 * The version of every `--json` output's shape (docs/schemas/*.schema.json). Adding a field keeps
 * it; removing, renaming or retyping one raises it, with a CHANGELOG entry.
 */
export const SCHEMA_VERSION = 2;
