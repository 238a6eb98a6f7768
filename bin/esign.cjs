#!/usr/bin/env node
const { join } = require('node:path');
const process = require('node:process');
const dist = join(__dirname, '../dist/cli');
// The bundle loads ES module packages with require(): unflagged from Node 20.19 and 22.12 on.
if (!process.features.require_module) {
  process.stderr.write(
    `esign: this Node (${process.version}) does not load ES modules with require(), which esign needs. Use Node 20.19+ or 22.12+ (and not --no-experimental-require-module).\n`,
  );
  process.exit(1);
}
let launcher;
try {
  launcher = require(join(dist, 'launch.cjs'));
  require('node:fs').accessSync(join(dist, 'esign.cjs'));
} catch (error) {
  if (error.code !== 'MODULE_NOT_FOUND' && error.code !== 'ENOENT') throw error;
  // A clone where the build did not run: one line saying how to build, no stack trace.
  process.stderr.write(
    `esign: this copy of esign is not built (${join(dist, launcher ? 'esign.cjs' : 'launch.cjs')} is missing). Run \`npm install\` (or \`npm run build\`) in ${join(__dirname, '..')}.\n`,
  );
  process.exit(1);
}
launcher.launch(join(dist, 'esign.cjs'));
