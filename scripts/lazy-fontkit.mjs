// An esbuild plugin for @pdf-lib/fontkit's ES build: the Unicode tables, the Indic and Universal
// shaping engines' data and Brotli's dictionary are decompressed when first used, not when the
// module loads. fontkit does all of that at load (about 150 ms of CPU, more than the rest of a
// visible signature), though Latin, Greek and Cyrillic text needs none of it and only WOFF2 needs
// Brotli. Each edit must match the fontkit text exactly once: another fontkit version fails the
// build here rather than loading eagerly, or wrongly, unnoticed.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

/** [what, exact text in fontkit.es.js, replacement] */
const EDITS = [
  [
    'a lazy UnicodeTrie',
    'var log2 = Math.log2 || function (n) {',
    [
      'function nativeInflate(base64) {',
      "  return new Uint8Array(require('node:zlib').inflateSync(require('node:buffer').Buffer.from(base64, 'base64')));",
      '}',
      'function lazyTrie(load) {',
      '  var trie;',
      '  return { get: function (codePoint) { return (trie || (trie = new unicodeTrie(load()))).get(codePoint); } };',
      '}',
      'var log2 = Math.log2 || function (n) {',
    ].join('\n'),
  ],
  [
    'unicode-properties data inflated natively',
    'var data = JSON.parse(String.fromCharCode.apply(String, pako.inflate(base64Arraybuffer_2(base64DeflatedData))));',
    'var data = JSON.parse(String.fromCharCode.apply(String, nativeInflate(base64DeflatedData)));',
  ],
  [
    'unicode-properties trie',
    'var trieData = pako.inflate(base64Arraybuffer_2(base64DeflatedTrie));\nvar trie = new unicodeTrie(trieData);',
    'var trie = lazyTrie(function () { return nativeInflate(base64DeflatedTrie); });',
  ],
  [
    'Arabic shaping trie',
    'var trieData$1 = pako.inflate(base64Arraybuffer_2(base64DeflatedTrie$1));\nvar trie$1 = new unicodeTrie(trieData$1);',
    'var trie$1 = lazyTrie(function () { return nativeInflate(base64DeflatedTrie$1); });',
  ],
  [
    'Indic shaping data',
    'var indicMachine = JSON.parse(String.fromCharCode.apply(String, pako.inflate(base64Arraybuffer_2(base64DeflatedIndicMachine))));\nvar useData = JSON.parse(String.fromCharCode.apply(String, pako.inflate(base64Arraybuffer_2(base64DeflatedUseData))));\nvar trieData$2 = pako.inflate(base64Arraybuffer_2(base64DeflatedTrie$2));\nvar decompositions = useData.decompositions;\nvar trie$2 = new unicodeTrie(trieData$2);\nvar stateMachine = new dfa(indicMachine);',
    'var decompositions, trie$2, stateMachine;\nfunction loadIndicData() {\n  if (stateMachine) return;\n  decompositions = JSON.parse(String.fromCharCode.apply(String, pako.inflate(base64Arraybuffer_2(base64DeflatedUseData)))).decompositions;\n  trie$2 = new unicodeTrie(pako.inflate(base64Arraybuffer_2(base64DeflatedTrie$2)));\n  stateMachine = new dfa(JSON.parse(String.fromCharCode.apply(String, pako.inflate(base64Arraybuffer_2(base64DeflatedIndicMachine)))));\n}',
  ],
  [
    'Indic shaper entry',
    '  IndicShaper.planFeatures = function planFeatures(plan) {\n',
    '  IndicShaper.planFeatures = function planFeatures(plan) {\n    loadIndicData();\n',
  ],
  [
    'Universal shaping data',
    'var useData$1 = JSON.parse(String.fromCharCode.apply(String, pako.inflate(base64Arraybuffer_2(base64DeflatedUseData))));\nvar trieData$3 = pako.inflate(base64Arraybuffer_2(base64DeflatedTrie$3));\nvar categories = useData$1.categories,\n    decompositions$1 = useData$1.decompositions;\nvar trie$3 = new unicodeTrie(trieData$3);\nvar stateMachine$1 = new dfa(useData$1);',
    'var categories, decompositions$1, trie$3, stateMachine$1;\nfunction loadUseData() {\n  if (stateMachine$1) return;\n  var useData$1 = JSON.parse(String.fromCharCode.apply(String, pako.inflate(base64Arraybuffer_2(base64DeflatedUseData))));\n  categories = useData$1.categories;\n  decompositions$1 = useData$1.decompositions;\n  trie$3 = new unicodeTrie(pako.inflate(base64Arraybuffer_2(base64DeflatedTrie$3)));\n  stateMachine$1 = new dfa(useData$1);\n}',
  ],
  [
    'Universal shaper entry',
    '  UniversalShaper.planFeatures = function planFeatures(plan) {\n',
    '  UniversalShaper.planFeatures = function planFeatures(plan) {\n    loadUseData();\n',
  ],
  [
    'the Unicode tables inflated natively',
    '      data = inflate(data, new Uint8Array(uncompressedLength));\n      data = inflate(data, new Uint8Array(uncompressedLength));',
    "      var zlib = require('node:zlib');\n      data = new Uint8Array(zlib.inflateRawSync(zlib.inflateRawSync(data)));",
  ],
  [
    'the font bytes not copied one by one',
    '    var buffer = new buffer_1.from(uint8ArrayFontData);',
    '    var buffer = uint8ArrayFontData instanceof Uint8Array ? buffer_1.from(uint8ArrayFontData.buffer, uint8ArrayFontData.byteOffset, uint8ArrayFontData.byteLength) : buffer_1.from(uint8ArrayFontData);',
  ],
  [
    "the browser shim of process.nextTick on setImmediate (its setTimeout waits a millisecond or more per tick: 40 ms of a font subset's 64 chunks)",
    '  if (queue.length === 1 && !draining) {\n    runTimeout(drainQueue);\n  }\n} // v8 likes predictible objects',
    '  if (queue.length === 1 && !draining) {\n    setImmediate(drainQueue);\n  }\n} // v8 likes predictible objects',
  ],
  ['Brotli dictionary at load', '\ndictionary.init(BrotliDecompressBuffer);\n', '\n'],
  [
    'Brotli dictionary on first use',
    'function BrotliDecompress(input, output) {\n',
    'var dictionaryLoading = false;\nfunction BrotliDecompress(input, output) {\n  if (!dictionary.dictionary && !dictionaryLoading) {\n    dictionaryLoading = true;\n    dictionary.init(BrotliDecompressBuffer);\n  }\n',
  ],
];

export function lazyFontkitText(text) {
  for (const [what, from, to] of EDITS) {
    const first = text.indexOf(from);
    if (first < 0 || text.indexOf(from, first + 1) >= 0)
      throw new Error(
        `lazy-fontkit: "${what}" is not exactly once in @pdf-lib/fontkit (another version?); update scripts/lazy-fontkit.mjs`,
      );
    text = text.replace(from, () => to);
  }
  return text;
}

/** Resolves @pdf-lib/fontkit to its ES build (its `main` is a UMD build), edited as above. */
export const lazyFontkit = {
  name: 'lazy-fontkit',
  setup(build) {
    const file = fileURLToPath(import.meta.resolve('@pdf-lib/fontkit/dist/fontkit.es.js'));
    build.onResolve({ filter: /^@pdf-lib\/fontkit$/ }, () => ({ path: file }));
    build.onLoad({ filter: /[\\/]fontkit\.es\.js$/ }, async ({ path }) => ({
      contents: lazyFontkitText(await readFile(path, 'utf8')),
      loader: 'js',
    }));
  },
};
