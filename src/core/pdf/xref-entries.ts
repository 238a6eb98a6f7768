/**
 * One cross-reference section's entries, decoded only when asked for. A section lists every object
 * of the file (thousands for a long document) and signing looks up a handful: decoding them all,
 * one object each, was most of what opening a 2,000-page document cost.
 */
import type { XrefEntry } from './xref-entry.js';

/** A run of consecutive object numbers (a table's subsection, a stream's /Index pair). */
export interface XrefRun {
  first: number;
  count: number;
  /** The entry of object `first + k`, or undefined where the section defines none. */
  entry(k: number): XrefEntry | undefined;
}

export class XrefEntries implements ReadonlyMap<number, XrefEntry> {
  private readonly byFirst: XrefRun[];

  private constructor(private readonly runs: readonly XrefRun[]) {
    this.byFirst = [...runs].sort((a, b) => a.first - b.first);
  }

  /**
   * The runs as a map: lazily decoded when no object number is listed twice; otherwise decoded
   * into a Map in which the later listing wins, as a reader applying the entries in order has it.
   */
  static of(runs: readonly XrefRun[]): ReadonlyMap<number, XrefEntry> {
    const entries = new XrefEntries(runs);
    const sorted = entries.byFirst;
    if (
      !sorted.some((run, i) => i > 0 && run.first < (sorted[i - 1] as XrefRun).first + (sorted[i - 1] as XrefRun).count)
    )
      return entries;
    return new Map(entries);
  }

  get size(): number {
    let size = 0;
    for (const run of this.runs) for (let k = 0; k < run.count; k++) if (run.entry(k)) size++;
    return size;
  }

  get(num: number): XrefEntry | undefined {
    if (!Number.isInteger(num)) return undefined;
    const runs = this.byFirst;
    let low = 0;
    let high = runs.length - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const run = runs[middle] as XrefRun;
      if (num < run.first) high = middle - 1;
      else if (num >= run.first + run.count) low = middle + 1;
      else return run.entry(num - run.first);
    }
    return undefined;
  }

  has(num: number): boolean {
    return this.get(num) !== undefined;
  }

  /** The highest object number with an entry, or -1, decoding only from the end of each run. */
  highestNumber(): number {
    let highest = -1;
    for (const run of this.runs) {
      for (let k = run.count - 1; k >= 0 && run.first + k > highest; k--) {
        if (run.entry(k)) {
          highest = run.first + k;
          break;
        }
      }
    }
    return highest;
  }

  *entries(): MapIterator<[number, XrefEntry]> {
    for (const run of this.runs) {
      for (let k = 0; k < run.count; k++) {
        const entry = run.entry(k);
        if (entry) yield [run.first + k, entry];
      }
    }
  }

  *keys(): MapIterator<number> {
    for (const [num] of this.entries()) yield num;
  }

  *values(): MapIterator<XrefEntry> {
    for (const [, entry] of this.entries()) yield entry;
  }

  [Symbol.iterator](): MapIterator<[number, XrefEntry]> {
    return this.entries();
  }

  forEach(callback: (value: XrefEntry, key: number, map: ReadonlyMap<number, XrefEntry>) => void): void {
    for (const [num, entry] of this.entries()) callback(entry, num, this);
  }
}

/** The highest object number listed, or -1. */
export function highestObjectNumber(entries: ReadonlyMap<number, XrefEntry>): number {
  if (entries instanceof XrefEntries) return entries.highestNumber();
  let highest = -1;
  for (const num of entries.keys()) if (num > highest) highest = num;
  return highest;
}
