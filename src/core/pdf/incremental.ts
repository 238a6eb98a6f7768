/**
 * The generic incremental update: new and changed objects appended after the original bytes, with
 * a cross-reference section in the file's own style (classic table + trailer, or an xref stream)
 * whose `/Prev` points at the previous one. Original bytes are never rewritten.
 */
import type { PdfDocument } from './document.js';
import { ByteWriter, PdfRef, PdfStream, dict, name, writeObject } from './objects.js';
import type { PdfHexPlaceholder, PdfObject } from './objects.js';

/** More than the table, trailer and startxref of any update take, so that its offsets are known to fit. */
const TABLE_ROOM = 1_000_000;

/**
 * The serialized update and, for each placeholder in it, the absolute offset of its `<`. The bytes
 * are made when first read: a signature placeholder settles its ByteRange on lengths alone.
 */
export interface SerializedUpdate {
  readonly bytes: Uint8Array;
  length: number;
  placeholders: Map<PdfHexPlaceholder, number>;
}

/**
 * Collects the objects of one incremental update. `add` allocates a new object; `set` writes a
 * new version of an existing one (same number and generation); `serialize` may be called again
 * after changes, which is how the signature placeholder settles its ByteRange.
 */
export class IncrementalUpdate {
  private readonly objects = new Map<number, { ref: PdfRef; value: PdfObject }>();
  private nextNumber: number;
  private xrefStreamRef: PdfRef | undefined;

  constructor(readonly doc: PdfDocument) {
    doc.assertUpdatable();
    this.nextNumber = doc.nextObjectNumber;
  }

  /** Adds a new object and returns its reference. */
  add(value: PdfObject): PdfRef {
    const ref = new PdfRef(this.nextNumber++, 0);
    this.objects.set(ref.num, { ref, value });
    return ref;
  }

  /** Replaces an object: a new version of existing object `ref`, or the value of an added one. */
  set(ref: PdfRef, value: PdfObject): void {
    this.objects.set(ref.num, { ref: new PdfRef(ref.num, this.doc.generationOf(ref.num)), value });
  }

  /** The value this update holds for `ref`, if it adds or changes it. */
  pending(ref: PdfRef): PdfObject | undefined {
    return this.objects.get(ref.num)?.value;
  }

  /** The object as it will read after this update: the pending version or the document's. */
  async current(ref: PdfRef): Promise<PdfObject> {
    const pending = this.objects.get(ref.num);
    return pending ? pending.value : this.doc.getObject(ref);
  }

  /** Serializes the update as it would be appended at offset `doc.size`. */
  serialize(): SerializedUpdate {
    const base = this.doc.size;
    const w = new ByteWriter();
    if (!this.doc.endsWithEol) w.ascii('\n');
    const offsets = new Map<number, { gen: number; offset: number }>();
    const sorted = [...this.objects.values()].sort((a, b) => a.ref.num - b.ref.num);
    for (const { ref, value } of sorted) {
      offsets.set(ref.num, { gen: ref.gen, offset: base + w.length });
      w.ascii(`${ref.num} ${ref.gen} obj\n`);
      writeObject(w, this.doc.security ? this.doc.security.encryptObject(ref.num, ref.gen, value) : value);
      w.ascii('\nendobj\n');
    }
    // A classic table has exactly 10 digits per offset; an update past them needs an xref stream.
    const tableFits = base + w.length + TABLE_ROOM < 10_000_000_000;
    if (this.doc.xrefStyle === 'table' && tableFits) this.writeTable(w, base, offsets);
    else this.writeXrefStream(w, base, offsets);
    const placeholders = new Map<PdfHexPlaceholder, number>();
    for (const [placeholder, at] of w.placeholders) placeholders.set(placeholder, base + at);
    let bytes: Uint8Array | undefined;
    return {
      get bytes() {
        return (bytes ??= w.toBytes());
      },
      length: w.length,
      placeholders,
    };
  }

  private trailerEntries(size: number): Record<string, PdfObject | undefined> {
    const trailer = this.doc.trailer;
    return {
      Size: size,
      Root: trailer.get('Root'),
      Info: trailer.get('Info'),
      ID: trailer.get('ID'),
      Encrypt: trailer.get('Encrypt'),
      Prev: this.doc.startxref,
    };
  }

  private writeTable(w: ByteWriter, base: number, offsets: Map<number, { gen: number; offset: number }>): void {
    const xrefOffset = base + w.length;
    w.ascii('xref\n');
    for (const run of runs([...offsets.keys()])) {
      w.ascii(`${run.first} ${run.count}\n`);
      for (let num = run.first; num < run.first + run.count; num++) {
        const entry = offsets.get(num) as { gen: number; offset: number };
        w.ascii(`${String(entry.offset).padStart(10, '0')} ${String(entry.gen).padStart(5, '0')} n\r\n`);
      }
    }
    w.ascii('trailer\n');
    writeObject(w, dict(this.trailerEntries(this.nextNumber)));
    w.ascii(`\nstartxref\n${xrefOffset}\n%%EOF\n`);
  }

  private writeXrefStream(w: ByteWriter, base: number, offsets: Map<number, { gen: number; offset: number }>): void {
    this.xrefStreamRef ??= new PdfRef(this.nextNumber++, 0);
    const self = this.xrefStreamRef;
    const xrefOffset = base + w.length;
    const all = new Map(offsets).set(self.num, { gen: 0, offset: xrefOffset });
    const nums = [...all.keys()].sort((a, b) => a - b);
    const offsetWidth = byteWidth(Math.max(...[...all.values()].map((e) => e.offset)));
    const genWidth = byteWidth(Math.max(...[...all.values()].map((e) => e.gen)));
    const rowLength = 1 + offsetWidth + genWidth;
    const data = new Uint8Array(nums.length * rowLength);
    nums.forEach((num, row) => {
      const entry = all.get(num) as { gen: number; offset: number };
      data[row * rowLength] = 1;
      putUint(data, row * rowLength + 1, offsetWidth, entry.offset);
      putUint(data, row * rowLength + 1 + offsetWidth, genWidth, entry.gen);
    });
    const index = runs(nums).flatMap((run) => [run.first, run.count]);
    const stream = new PdfStream(
      dict({
        Type: name('XRef'),
        ...this.trailerEntries(this.nextNumber),
        Index: index,
        W: [1, offsetWidth, genWidth],
      }),
      data,
    );
    w.ascii(`${self.num} 0 obj\n`);
    writeObject(w, stream);
    w.ascii(`\nendobj\nstartxref\n${xrefOffset}\n%%EOF\n`);
  }
}

function runs(nums: number[]): Array<{ first: number; count: number }> {
  const out: Array<{ first: number; count: number }> = [];
  for (const num of [...nums].sort((a, b) => a - b)) {
    const last = out[out.length - 1];
    if (last && last.first + last.count === num) last.count++;
    else out.push({ first: num, count: 1 });
  }
  return out;
}

/** Bytes needed to hold `value` (at least 1). */
function byteWidth(value: number): number {
  let width = 1;
  while (value >= 256 ** width) width++;
  return width;
}

function putUint(target: Uint8Array, at: number, width: number, value: number): void {
  let rest = value;
  for (let i = width - 1; i >= 0; i--) {
    target[at + i] = rest % 256;
    rest = Math.floor(rest / 256);
  }
}
