import type { XmlDocument } from './xml-libs.js';

export interface ErrorHandler {
  warning?: (message: string) => void;
  error?: (message: string) => void;
  fatalError?: (message: string) => void;
}

export declare class DOMParser {
  constructor(options?: { errorHandler?: ErrorHandler });
  parseFromString(source: string, mimeType: string): XmlDocument;
}
