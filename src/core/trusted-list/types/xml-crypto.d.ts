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
