/**
 * Whether an incremental update changed what the pages show: the pages in page tree order, each
 * with its effective /Contents, /Resources, /MediaBox, /CropBox, /Rotate, /Group and /UserUnit
 * (inherited ones from its ancestors) and every object those reach. /Annots is left out, as
 * annotations and form filling are allowed after signing.
 *
 * First the objects the pages reach are listed, following references and reading a stream's
 * dictionary without its data. An update that redefines none of them in a way that matters (a
 * DSS, a document timestamp, an annotation) changed nothing, and the list still holds for the
 * next update. Otherwise the pages are compared one by one, reading stream data only where the two
 * sides differ. Either way each object is read once per walk: the file is never held in memory.
 */
import { bytesEqual } from '../../cms/parse.js';
import { parseWindowed } from '../../pdf/byte-source.js';
import { isPagesNode, type PdfDocument } from '../../pdf/document.js';
import { PdfDict, PdfRef, PdfStream, PdfString } from '../../pdf/objects.js';
import type { PdfObject } from '../../pdf/objects.js';

const INHERITED = ['Resources', 'MediaBox', 'CropBox', 'Rotate'];
const COMPARED = ['Contents', ...INHERITED, 'Group', 'UserUnit'];
/** What a page tree node and a page are compared by; any other object is compared whole. */
const TREE_NODE_KEYS = ['Type', 'Kids', ...INHERITED];
const PAGE_KEYS = ['Type', ...COMPARED];
const MAX_TREE_DEPTH = 64;

/** A document as it was after one revision. */
export interface RevisionDocument {
  doc: PdfDocument;
  revision: number;
}

/** Objects the pages reach: page tree nodes and pages (`node`), and what they draw with (`other`). */
type Reached = Map<number, 'node' | 'other'>;

/** Compares the pages across consecutive revisions, keeping what the pages reach between calls. */
export class PageContentComparison {
  private reached: { revision: number; objects: Reached } | undefined;

  /**
   * Describes how the pages of `after` differ from those of `before`, where `after` is `before`
   * plus updates that define or free the objects `redefined`. Empty when they show the same.
   */
  async changes(before: RevisionDocument, after: RevisionDocument, redefined: Iterable<number>): Promise<string[]> {
    const changed = new Set(redefined);
    // An object kept in an object stream that was redefined is read from the new stream.
    for (const [num, entry] of after.doc.xref.entries)
      if (entry.kind === 'compressed' && changed.has(entry.stream)) changed.add(num);
    try {
      const reached =
        this.reached?.revision === before.revision ? this.reached.objects : await reachedByPages(before.doc);
      this.reached = undefined;
      if (await keepsReached(before.doc, after.doc, changed, reached)) {
        this.reached = { revision: after.revision, objects: reached };
        return [];
      }
      return await comparePages(before.doc, after.doc, changed);
    } catch (error) {
      // What cannot be read cannot be shown to be what was signed.
      return [`the pages could not be compared (${error instanceof Error ? error.message : String(error)})`];
    }
  }
}

/** Every object the pages of `doc` reach, dangling references included (an update could define them). */
async function reachedByPages(doc: PdfDocument): Promise<Reached> {
  const reached: Reached = new Map();
  const root = (await doc.catalog()).dict.get('Pages');
  const work: Array<[PdfRef, 'node' | 'other']> = root instanceof PdfRef ? [[root, 'node']] : [];
  const reach = (value: PdfObject | undefined): void => {
    for (const ref of referencesIn(value)) work.push([ref, 'other']);
  };
  for (let next = work.pop(); next; next = work.pop()) {
    const [ref, role] = next;
    const known = reached.get(ref.num);
    if (known === role || known === 'other') continue;
    // An object reached both as a node and otherwise is compared whole.
    reached.set(ref.num, known ? 'other' : role);
    const value = await withoutData(doc, ref);
    const node = !known && role === 'node' ? asDict(value) : undefined;
    if (!node) reach(value);
    else if (!isPagesNode(node)) for (const key of COMPARED) reach(node.get(key));
    else {
      for (const key of INHERITED) reach(node.get(key));
      let kids = node.get('Kids');
      if (kids instanceof PdfRef) {
        reached.set(kids.num, 'other');
        kids = await withoutData(doc, kids);
      }
      if (Array.isArray(kids)) for (const kid of kids) if (kid instanceof PdfRef) work.push([kid, 'node']);
    }
  }
  return reached;
}

/** Whether the redefined objects leave the pages and what they reach as they were (so `reached` still holds). */
async function keepsReached(
  before: PdfDocument,
  after: PdfDocument,
  changed: ReadonlySet<number>,
  reached: Reached,
): Promise<boolean> {
  const same = (x: PdfObject | undefined, y: PdfObject | undefined): boolean =>
    sameShape(x ?? null, y ?? null, (p, q) => p instanceof PdfRef && q instanceof PdfRef && p.num === q.num);
  if (!same((await before.catalog()).dict.get('Pages'), (await after.catalog()).dict.get('Pages'))) return false;
  for (const num of changed) {
    const role = reached.get(num);
    if (role === undefined) continue;
    const ref = new PdfRef(num);
    const [x, y] = [await before.getObject(ref), await after.getObject(ref)];
    if (role === 'other') {
      if (!same(x, y)) return false;
      continue;
    }
    const [a, b] = [asDict(x), asDict(y)];
    if (!a || !b || isPagesNode(a) !== isPagesNode(b)) return false;
    if (!(isPagesNode(a) ? TREE_NODE_KEYS : PAGE_KEYS).every((key) => same(a.get(key), b.get(key)))) return false;
  }
  return true;
}

/** Compares the pages one by one; describes the first difference. */
async function comparePages(before: PdfDocument, after: PdfDocument, changed: ReadonlySet<number>): Promise<string[]> {
  const comparison = new DeepComparison(before, after, changed);
  const beforePages = pagesOf((await before.catalog()).dict.get('Pages'), comparison.readBefore);
  const afterPages = pagesOf((await after.catalog()).dict.get('Pages'), comparison.readAfter);
  for (let number = 1; ; number++) {
    const [was, now] = await Promise.all([beforePages.next(), afterPages.next()]);
    if (was.done || now.done)
      return was.done && now.done ? [] : [`page ${number} was ${was.done ? 'added' : 'removed'}`];
    const which =
      was.value.ref.num === now.value.ref.num
        ? `page ${number}`
        : `page ${number} (object ${now.value.ref.num}, was ${was.value.ref.num})`;
    for (const key of COMPARED) {
      if (!(await comparison.same(was.value.attributes.get(key), now.value.attributes.get(key))))
        return [`${which}: /${key} changed`];
    }
  }
}

interface Page {
  ref: PdfRef;
  /** The compared keys' effective values. */
  attributes: Map<string, PdfObject>;
}

type Read = (ref: PdfRef) => Promise<PdfObject>;

/** The pages under `node` in order, with their effective attributes. */
async function* pagesOf(
  node: PdfObject | undefined,
  read: Read,
  inherited = new Map<string, PdfObject>(),
  depth = 0,
  seen = new Set<number>(),
): AsyncGenerator<Page> {
  if (!(node instanceof PdfRef) || seen.has(node.num) || depth > MAX_TREE_DEPTH) return;
  seen.add(node.num);
  const dict = asDict(await read(node));
  if (!dict) return;
  const treeNode = isPagesNode(dict);
  const attributes = new Map(inherited);
  for (const key of treeNode ? INHERITED : COMPARED) {
    const value = dict.get(key);
    if (value !== undefined) attributes.set(key, value);
  }
  if (!treeNode) {
    yield { ref: node, attributes };
    return;
  }
  const kids = dict.get('Kids');
  const list = kids instanceof PdfRef ? await read(kids) : kids;
  for (const kid of Array.isArray(list) ? list : []) yield* pagesOf(kid, read, attributes, depth + 1, seen);
}

/** Equality of values before and after through references, each pair of objects checked once. */
class DeepComparison {
  /** Unchanged objects whose references have been (or are being) followed. */
  private readonly followed = new Set<number>();
  /** Pairs of objects (before, after) compared (or being compared). */
  private readonly pairs = new Set<string>();

  constructor(
    private readonly before: PdfDocument,
    private readonly after: PdfDocument,
    private readonly changed: ReadonlySet<number>,
  ) {}

  readonly readBefore: Read = (ref) => (this.changed.has(ref.num) ? this.before : this.after).getObject(ref);
  readonly readAfter: Read = (ref) => this.after.getObject(ref);

  /** Whether `a` (before) and `b` (after) are the same, with everything they reach. */
  async same(a: PdfObject | undefined, b: PdfObject | undefined): Promise<boolean> {
    const work: Array<[PdfObject, PdfObject]> = [[a ?? null, b ?? null]];
    const defer = (x: PdfObject, y: PdfObject): boolean => work.push([x, y]) > 0;
    for (let next = work.pop(); next; next = work.pop()) {
      let [x, y] = next;
      if (x instanceof PdfRef && y instanceof PdfRef) {
        if (x.num === y.num && !this.changed.has(x.num)) {
          // The same object on both sides: only what it refers to can differ.
          if (!this.followed.has(x.num)) {
            this.followed.add(x.num);
            for (const ref of referencesIn(await withoutData(this.after, x))) work.push([ref, ref]);
          }
          continue;
        }
        const key = `${x.num} ${y.num}`;
        if (this.pairs.has(key)) continue;
        this.pairs.add(key);
      }
      if (x instanceof PdfRef) x = await this.readBefore(x);
      if (y instanceof PdfRef) y = await this.readAfter(y);
      if (!sameShape(x, y, defer)) return false;
    }
    return true;
  }
}

/** Structural equality of two values; where either side holds a reference, `references` decides. */
function sameShape(x: PdfObject, y: PdfObject, references: (x: PdfObject, y: PdfObject) => boolean): boolean {
  if (x instanceof PdfRef || y instanceof PdfRef) return references(x, y);
  if (x instanceof PdfStream && y instanceof PdfStream)
    return bytesEqual(x.data, y.data) && sameShape(x.dict, y.dict, references);
  if (x instanceof PdfDict && y instanceof PdfDict) {
    return (
      x.entries.size === y.entries.size &&
      [...x.entries].every(([key, value]) => y.has(key) && sameShape(value, y.get(key) ?? null, references))
    );
  }
  if (Array.isArray(x) && Array.isArray(y))
    return x.length === y.length && x.every((item, i) => sameShape(item, y[i] ?? null, references));
  if (x instanceof PdfString && y instanceof PdfString) return bytesEqual(x.bytes, y.bytes);
  return x === y;
}

/** The object `ref` points to, a stream without its data (for the references it holds). */
async function withoutData(doc: PdfDocument, ref: PdfRef): Promise<PdfObject> {
  const entry = doc.xref.entries.get(ref.num);
  if (entry?.kind !== 'offset') return doc.getObject(ref);
  return parseWindowed(doc.source, entry.offset, (lexer) => {
    lexer.objectHeader();
    return lexer.parseObject();
  });
}

function referencesIn(value: PdfObject | undefined): PdfRef[] {
  if (value instanceof PdfRef) return [value];
  if (Array.isArray(value)) return value.flatMap(referencesIn);
  if (value instanceof PdfDict) return [...value.entries.values()].flatMap(referencesIn);
  if (value instanceof PdfStream) return referencesIn(value.dict);
  return [];
}

function asDict(value: PdfObject): PdfDict | undefined {
  if (value instanceof PdfStream) return value.dict;
  return value instanceof PdfDict ? value : undefined;
}
