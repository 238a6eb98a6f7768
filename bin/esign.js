#!/usr/bin/env node
// The CLI is one CommonJS bundle (see scripts/bundle.mjs).
import module from 'node:module';
// Node 22.1+ keeps compiled code between runs (about a third of start-up); a no-op on Node 20.
// (A V8 code cache through node:vm was tried on Node 20: its functions then lose dynamic import().)
module.enableCompileCache?.();
// Stack traces (printed only with --verbose) then name the TypeScript sources, not bundle lines.
if (process.argv.includes('--verbose') || process.argv.includes('-v')) process.setSourceMapsEnabled(true);
const require = module.createRequire(import.meta.url);
await require('../dist/cli/esign.cjs').start();
