/** The names of an ASiC-E's XAdES entries: light, so that choosing a container's form loads no XML code. */

/** A XAdES signature entry of an ASiC-E: `META-INF/signatures.xml`, `signatures0.xml`, `signatures12.xml`… */
export const XADES_SIGNATURE_ENTRY = /^META-INF\/signatures(\d*)\.xml$/i;
export const ODF_MANIFEST = 'META-INF/manifest.xml';

/** Whether a container's META-INF entries hold XAdES signatures (and no CAdES one): a signature added to it is XAdES too. */
export function holdsXades(names: readonly string[]): boolean {
  return (
    names.some((name) => XADES_SIGNATURE_ENTRY.test(name)) &&
    !names.some((name) => /^META-INF\/signature\d*\.p7s$/i.test(name))
  );
}

/** The name of the next XAdES signature of a container: `signatures0.xml` first, then one more than the highest there. */
export function nextSignatureName(names: readonly string[]): string {
  const numbers = names.flatMap((name) => {
    const match = XADES_SIGNATURE_ENTRY.exec(name);
    return match ? [match[1] ? Number(match[1]) : 0] : [];
  });
  return `META-INF/signatures${numbers.length === 0 ? 0 : Math.max(...numbers) + 1}.xml`;
}
