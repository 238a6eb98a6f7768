/** Walking a parsed document by namespace and local name, never by search over the whole tree. */
import type { XmlElement, XmlNode } from './types/xml-libs.js';

export function isElement(node: XmlNode | null | undefined): node is XmlElement {
  return node?.nodeType === 1;
}

export function childElements(parent: XmlNode): XmlElement[] {
  const out: XmlElement[] = [];
  for (let node = parent.firstChild; node; node = node.nextSibling) if (isElement(node)) out.push(node);
  return out;
}

/** The children of `parent` named `localName` in `ns`. */
export function childrenNamed(parent: XmlNode | undefined, ns: string, localName: string): XmlElement[] {
  return parent ? childElements(parent).filter((e) => e.namespaceURI === ns && e.localName === localName) : [];
}

/** Every element under `root` (itself included), in document order. */
export function descendants(root: XmlElement): XmlElement[] {
  const out: XmlElement[] = [];
  const stack: XmlElement[] = [root];
  while (stack.length > 0) {
    const element = stack.pop()!;
    out.push(element);
    const children = childElements(element);
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return out;
}

/** Whether `node` is `ancestor` or lies under it. */
export function isWithin(node: XmlNode, ancestor: XmlNode): boolean {
  for (let current: XmlNode | null = node; current; current = current.parentNode) if (current === ancestor) return true;
  return false;
}

export function textOf(element: XmlElement | undefined): string {
  return (element?.textContent ?? '').trim();
}

/** The value of the attribute `name` (no namespace), or undefined when the element has none (xmldom's getAttribute gives ""). */
export function attribute(element: XmlElement | undefined, name: string): string | undefined {
  if (!element) return undefined;
  for (let i = 0; i < element.attributes.length; i++) {
    const candidate = element.attributes[i]!;
    if (candidate.name === name) return candidate.value;
  }
  return undefined;
}
