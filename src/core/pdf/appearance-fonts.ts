/**
 * The fonts of an appearance, tried in order for each character: the --font files as given, then
 * esign's default font (loaded only when a character needs it). A line is drawn in runs, each in
 * the first font that has its characters; whitespace and combining marks stay in the run's font
 * where it has them. With one font (the default, or a font that has every character) a line is
 * one run, laid out as that font alone lays it out.
 */
import type { Bidi } from 'bidi-js';
import { EsignError } from '../errors.js';
import {
  capitalize,
  displayRuns,
  loadBidi,
  needsShaping,
  type AppearanceFont,
  type PlacedGlyph,
} from './appearance.js';

/** A run of a line drawn in one font: `font` is its place in the chain. */
export interface FontRun {
  font: number;
  text: string;
}

/** Characters that stay in the font of the run before them, when it has them: spaces, marks, joiners, variation selectors. */
const STAYS_IN_RUN = /[\s\p{M}]|\u200c|\u200d/u;
const KEPT_WIDTHS = 4096;

export class AppearanceFonts {
  private readonly loaded: AppearanceFont[];
  /** Character → the first font that has it (undefined: none). */
  private readonly first = new Map<number, number | undefined>();
  private readonly widths = new Map<string, number>();
  private bidi: Bidi | undefined;

  /** `fonts` in the order tried; `fallback` loads the last one, when a character none of them has needs it. */
  constructor(
    fonts: readonly AppearanceFont[],
    private fallback?: () => Promise<AppearanceFont>,
  ) {
    if (fonts.length === 0 && !fallback) throw new EsignError('INTERNAL', 'An appearance needs a font.');
    this.loaded = [...fonts];
  }

  /** The fonts loaded, in the order tried. */
  get fonts(): readonly AppearanceFont[] {
    return this.loaded;
  }

  /**
   * Loads what `text` needs, before any approval: the fallback font when a character none of the
   * others has asks for it, fontkit for each font whose runs need shaping (a font it cannot read is
   * refused now), and the bidirectional algorithm for lines of several fonts that need it.
   */
  async prepare(text: string): Promise<void> {
    if (this.fallback && (this.loaded.length === 0 || this.uncovered(text).length > 0)) {
      const fallback = this.fallback;
      this.fallback = undefined;
      this.loaded.push(await fallback());
      this.first.clear();
    }
    if (this.loaded.length === 1) return this.loaded[0]!.prepare(text);
    const texts = this.textsByFont(text.split('\n'));
    for (const [font, runs] of texts) await this.loaded[font]!.prepare(runs.join('\n'));
    if (needsShaping(text)) this.bidi ??= await loadBidi();
  }

  /** The characters of `text` (whitespace aside) no loaded font has a glyph for, each once, in order. */
  uncovered(text: string): string[] {
    return [...new Set(text)].filter((ch) => !/\s/u.test(ch) && this.fontFor(ch.codePointAt(0)!) === undefined);
  }

  /** Refuses `text` (after {@link prepare}) when no font has a glyph for one of its characters: never a `?` or an empty box. */
  assertCovers(text: string, what: string): void {
    const [first, ...more] = this.uncovered(text);
    if (first === undefined) return;
    const code = `U+${first.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
    const others = more.length > 0 ? ` (and ${more.length} other character${more.length > 1 ? 's' : ''})` : '';
    const labels = this.loaded.map((font) => font.label);
    const fonts =
      labels.length === 1
        ? capitalize(labels[0]!)
        : `${capitalize(labels.slice(0, -1).join(', '))} and ${labels.at(-1)}`;
    throw new EsignError(
      'USAGE',
      `${fonts} ${labels.length === 1 ? 'has' : 'have'} no glyph for "${first}" (${code}) in the ${what}${others}.`,
      {
        hint: 'Give a font that covers it with --font FILE (a TrueType, OpenType or WOFF file, e.g. a Noto font for that script); --font may be given more than once, each character drawn from the first font that has it.',
      },
    );
  }

  /** The runs of `line`, in reading order, each in the first font that has its characters. */
  runs(line: string): FontRun[] {
    if (this.loaded.length === 1) return [{ font: 0, text: line }];
    const runs: FontRun[] = [];
    for (const ch of line) {
      const codePoint = ch.codePointAt(0)!;
      const last = runs.at(-1);
      const font =
        last && STAYS_IN_RUN.test(ch) && this.loaded[last.font]!.hasGlyph(codePoint)
          ? last.font
          : (this.fontFor(codePoint) ?? last?.font ?? 0);
      if (last?.font === font) last.text += ch;
      else runs.push({ font, text: ch });
    }
    return runs.length > 0 ? runs : [{ font: 0, text: '' }];
  }

  /**
   * The glyphs of one line, run by run in display order. A line of several fonts that needs
   * shaping is reordered as a whole (UAX #9): each of its directional runs split by font, the
   * pieces of a right-to-left run drawn last to first.
   */
  place(line: string): { font: number; glyphs: PlacedGlyph[] }[] {
    const runs = this.runs(line);
    const font = (run: FontRun) => this.loaded[run.font]!;
    if (runs.length === 1) return [{ font: runs[0]!.font, glyphs: font(runs[0]!).place(line) }];
    if (!needsShaping(line)) return runs.map((run) => ({ font: run.font, glyphs: font(run).place(run.text) }));
    if (!this.bidi)
      throw new EsignError('INTERNAL', 'The appearance fonts were not prepared for text that needs shaping.');
    return displayRuns(line, this.bidi).flatMap(({ text, rtl }) => {
      const pieces = this.runs(text);
      if (rtl) pieces.reverse();
      return pieces.map((piece) => ({ font: piece.font, glyphs: font(piece).placeRun(piece.text, rtl) }));
    });
  }

  /** Width of `text` at a font size of 1: its runs' widths, each in its font. */
  width(text: string): number {
    if (this.loaded.length === 1) return this.loaded[0]!.width(text);
    let width = this.widths.get(text);
    if (width === undefined) {
      width = 0;
      for (const run of this.runs(text)) width += this.loaded[run.font]!.width(run.text);
      if (this.widths.size >= KEPT_WIDTHS) this.widths.clear();
      this.widths.set(text, width);
    }
    return width;
  }

  /** Makes ahead each font's subset of `lines` (see {@link AppearanceFont.prepareSubset}). */
  async prepareSubset(lines: readonly string[]): Promise<void> {
    if (this.loaded.length === 1) return this.loaded[0]!.prepareSubset(lines);
    for (const [font, runs] of this.textsByFont(lines)) await this.loaded[font]!.prepareSubset(runs);
  }

  /** The texts of `lines`' runs, by the font that draws them. */
  private textsByFont(lines: readonly string[]): Map<number, string[]> {
    const texts = new Map<number, string[]>();
    for (const line of lines)
      for (const run of this.runs(line)) {
        const list = texts.get(run.font);
        if (list) list.push(run.text);
        else texts.set(run.font, [run.text]);
      }
    return texts;
  }

  private fontFor(codePoint: number): number | undefined {
    if (this.first.has(codePoint)) return this.first.get(codePoint);
    const index = this.loaded.findIndex((font) => font.hasGlyph(codePoint));
    const found = index < 0 ? undefined : index;
    if (this.first.size >= KEPT_WIDTHS) this.first.clear();
    this.first.set(codePoint, found);
    return found;
  }
}
