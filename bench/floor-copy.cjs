// The floor of signing one large file, for `npm run bench`: a bare Node script that only hashes
// the input while it copies it, then fsyncs the copy — the file work any signer must do, with none
// of esign's (no PDF, no CMS, no service). Usage: node bench/floor-copy.cjs INPUT OUTPUT
'use strict';
const process = require('node:process');
const { Buffer } = require('node:buffer');
const { createHash } = require('node:crypto');
const { closeSync, fsyncSync, openSync, readSync, writeSync } = require('node:fs');

const [input, output] = process.argv.slice(2);
if (!input || !output) {
  process.stderr.write('usage: node bench/floor-copy.cjs INPUT OUTPUT\n');
  process.exit(2);
}
const hash = createHash('sha256');
const from = openSync(input, 'r');
const to = openSync(output, 'w');
const buffer = Buffer.allocUnsafe(4 * 1024 * 1024);
for (let read; (read = readSync(from, buffer, 0, buffer.length, null)) > 0;) {
  hash.update(buffer.subarray(0, read));
  writeSync(to, buffer, 0, read);
}
fsyncSync(to);
closeSync(to);
closeSync(from);
hash.digest();
