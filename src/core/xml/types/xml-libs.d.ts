/**
 * The parts of @xmldom/xmldom and xml-crypto that esign uses. Their own declarations pull the DOM
 * library into the whole program (`/// <reference lib="dom" />`), which changes Node's fetch and
 * BufferSource types everywhere; tsconfig.json maps both packages here instead.
 */
export interface XmlNode {
  readonly nodeType: number;
  readonly nodeName: string;
  readonly localName: string | null;
  readonly namespaceURI: string | null;
  readonly prefix: string | null;
  readonly firstChild: XmlNode | null;
  readonly nextSibling: XmlNode | null;
  readonly parentNode: XmlNode | null;
  readonly textContent: string | null;
  readonly ownerDocument: XmlDocument | null;
  readonly childNodes: ArrayLike<XmlNode>;
  removeChild(child: XmlNode): XmlNode;
  insertBefore(child: XmlNode, before: XmlNode | null): XmlNode;
}

export interface XmlAttribute extends XmlNode {
  readonly name: string;
  readonly value: string;
}

export interface XmlElement extends XmlNode {
  readonly attributes: ArrayLike<XmlAttribute>;
  getAttribute(name: string): string | null;
  getAttributeNS(namespace: string, localName: string): string | null;
  getElementsByTagNameNS(namespace: string, localName: string): ArrayLike<XmlElement>;
}

export interface XmlDocument extends XmlNode {
  readonly documentElement: XmlElement | null;
  getElementsByTagNameNS(namespace: string, localName: string): ArrayLike<XmlElement>;
}
