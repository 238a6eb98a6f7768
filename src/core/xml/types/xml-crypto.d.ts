import type { XmlNode } from './xml-libs.js';

export interface SignatureAlgorithm {
  verifySignature(material: string, key: unknown, signatureValue: string): boolean;
  getSignature(signedInfo: string, privateKey: unknown): string;
  getAlgorithmName(): string;
}

export interface HashAlgorithm {
  getHash(xml: string): string;
  getAlgorithmName(): string;
}

export interface SignedXmlOptions {
  privateKey?: string;
  publicCert?: string;
  signatureAlgorithm?: string;
  canonicalizationAlgorithm?: string;
  getCertFromKeyInfo?: (keyInfo?: XmlNode | null) => string | null;
}

export declare class SignedXml {
  constructor(options?: SignedXmlOptions);
  SignatureAlgorithms: Record<string, new () => SignatureAlgorithm>;
  HashAlgorithms: Record<string, new () => HashAlgorithm>;
  loadSignature(signature: XmlNode | string): void;
  checkSignature(xml: string): boolean;
  getSignedReferences(): string[];
  addReference(reference: {
    xpath?: string;
    transforms: string[];
    digestAlgorithm: string;
    uri?: string;
    isEmptyUri?: boolean;
  }): void;
  computeSignature(xml: string, options?: { prefix?: string; location?: { reference: string; action: string } }): void;
  getSignedXml(): string;
}

export interface NamespacePrefix {
  prefix: string;
  namespaceURI: string;
}

export interface CanonicalizationOptions {
  defaultNs?: string;
  defaultNsForPrefix?: Record<string, string>;
  ancestorNamespaces?: NamespacePrefix[];
  inclusiveNamespacesPrefixList?: string[];
}

/** Canonical XML 1.0 (inclusive), without and with comments. */
export declare class C14nCanonicalization {
  process(node: XmlNode, options: CanonicalizationOptions): string;
  getAlgorithmName(): string;
}
export declare class C14nCanonicalizationWithComments extends C14nCanonicalization {}
/** Exclusive XML Canonicalization 1.0, without and with comments. */
export declare class ExclusiveCanonicalization {
  process(node: XmlNode, options: CanonicalizationOptions): string;
  getAlgorithmName(): string;
}
export declare class ExclusiveCanonicalizationWithComments extends ExclusiveCanonicalization {}
