// One process's CPU time (user + system) for each step of a visible signature's font work, run by
// bench/visible.js: node bench/visible-phases.cjs truetype|fontkit BUNDLE FONT TEXT. With
// `truetype`, BUNDLE is esign's TrueType reader (src/core/pdf/truetype.ts), the path of text that
// needs no shaping; with `fontkit`, fontkit bundled as the CLI bundles it (scripts/lazy-fontkit.mjs),
// the path of text that needs shaping and of fonts the reader leaves alone. Prints JSON: { step: ms }.
const { Buffer } = require('node:buffer');
const { readFileSync } = require('node:fs');
const process = require('node:process');
const { deflateSync } = require('node:zlib'); // the CLI has it loaded before any appearance
const [mode, bundle, fontFile, text] = process.argv.slice(2);
const times = {};
let last = process.cpuUsage();
const step = (name) => {
  const used = process.cpuUsage(last);
  times[name] = (used.user + used.system) / 1000;
  last = process.cpuUsage();
};
const bytes = readFileSync(fontFile);
step('read font');
if (mode === 'truetype') {
  const { TrueTypeFont } = require(bundle);
  step('load reader');
  const font = TrueTypeFont.read(bytes);
  step('parse font');
  const ids = Array.from(text, (ch) => font.glyphId(ch.codePointAt(0)));
  for (const id of ids) font.advanceWidth(id);
  step('glyphs and widths');
  const { program } = font.subset(ids);
  step('subset');
  deflateSync(program);
  step('compress');
  process.stdout.write(JSON.stringify(times));
} else {
  const loaded = require(bundle);
  const fontkit = loaded.default ?? loaded;
  step('load fontkit');
  const font = fontkit.create(bytes);
  font.hasGlyphForCodePoint(0x20);
  step('parse font');
  const glyphs = font.glyphsForString(text);
  for (const glyph of glyphs) void glyph.advanceWidth;
  step('glyphs and widths');
  const subset = font.createSubset();
  for (const glyph of glyphs) subset.includeGlyph(glyph);
  const parts = [];
  subset
    .encodeStream()
    .on('data', (chunk) => parts.push(chunk))
    .on('end', () => {
      step('subset');
      deflateSync(Buffer.concat(parts));
      step('compress');
      process.stdout.write(JSON.stringify(times));
    });
}
