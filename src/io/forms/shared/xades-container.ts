/** XAdES inside an ASiC container: each signatures file read by the shared XML rules, its references resolved to the container's entries. */
import {
  verifyXadesXml,
  type XadesInput,
  type XadesSignatureResult,
  type XadesVerifyOptions,
} from '../../../core/forms/shared/xades/verify.js';
import { MAX_XML_DOCUMENT_BYTES } from '../../../core/xml/secure-parse.js';
import type { OpenContainer } from '../../zip-container.js';

/** The XAdES signature files of an ASiC-E (EN 319 162-1 A.4: META-INF/ names containing "signatures"). */
export function xadesSignatureFiles(names: Iterable<string>): string[] {
  return [...names].filter((name) => /^META-INF\/[^/]*signatures[^/]*\.xml$/i.test(name)).sort();
}

/**
 * The signatures file `signatureFile` of a container as the XAdES reader takes it, named
 * `FILE: signatureFile`, each reference to an entry `resolvable` allows read from the container.
 */
export async function containerXadesInput(
  container: OpenContainer,
  file: string,
  signatureFile: string,
  resolvable: (name: string) => boolean,
): Promise<XadesInput> {
  const names = new Set(container.entries.map((entry) => entry.name));
  return {
    name: `${file}: ${signatureFile}`,
    bytes: await container.readWhole(signatureFile, MAX_XML_DOCUMENT_BYTES),
    resolve: (name) =>
      names.has(name) && resolvable(name)
        ? async (consume) => {
            for await (const chunk of container.read(name)) consume(chunk);
          }
        : undefined,
  };
}

/** Verifies the signatures of `signatureFile`, each reference naming an entry of the container. */
export async function verifyContainerXades(
  container: OpenContainer,
  file: string,
  signatureFile: string,
  options: XadesVerifyOptions,
): Promise<XadesSignatureResult[]> {
  const input = await containerXadesInput(container, file, signatureFile, (name) => name !== signatureFile);
  return verifyXadesXml(input, options);
}
