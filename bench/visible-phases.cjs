// One process's CPU time (user + system) for each step of a visible signature's font work, run by
// bench/visible.js with fontkit bundled as the CLI bundles it (scripts/lazy-fontkit.mjs):
// node bench/visible-phases.cjs FONTKIT_BUNDLE FONT TEXT. Prints JSON: { step: ms }.
const { readFileSync } = require('node:fs');
const process = require('node:process');
require('node:zlib'); // the CLI has it loaded before any appearance
const [bundle, fontFile, text] = process.argv.slice(2);
const times = {};
let last = process.cpuUsage();
const step = (name) => {
  const used = process.cpuUsage(last);
  times[name] = (used.user + used.system) / 1000;
  last = process.cpuUsage();
};
const loaded = require(bundle);
const fontkit = loaded.default ?? loaded;
step('load fontkit');
const font = fontkit.create(readFileSync(fontFile));
font.hasGlyphForCodePoint(0x20);
step('parse font');
const glyphs = font.glyphsForString(text);
for (const glyph of glyphs) void glyph.advanceWidth;
step('glyphs and widths');
const subset = font.createSubset();
for (const glyph of glyphs) subset.includeGlyph(glyph);
subset
  .encodeStream()
  .on('data', () => {})
  .on('end', () => {
    step('subset');
    process.stdout.write(JSON.stringify(times));
  });
