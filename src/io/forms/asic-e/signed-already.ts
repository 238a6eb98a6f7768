/** `--skip-existing` for an ASiC-E: the container already holds the signer's signature over exactly these files. */
import { createHash, X509Certificate } from 'node:crypto';
import { ASIC_E_MIMETYPE, checkMimetype } from '../../../core/forms/shared/asic-container-rules.js';
import { parseManifest } from '../../../core/forms/asic-e/manifest.js';
import { containerDocuments } from '../../../core/forms/shared/recognize.js';
import { isEsignError } from '../../../core/errors.js';
import { signedOverBytes, type ExistingSignature } from '../../../core/forms/shared/signed-already.js';
import { FileByteSource } from '../../file-source.js';
import { openContainer } from '../../zip-container.js';
import { summarize } from '../../../core/verify/chain.js';
import type { SignedFile } from '../shared/asic-writer.js';

/**
 * `--skip-existing`: whether the container at `output` already holds a signature by `signer` over
 * exactly these files as they are now (its manifest names each with the digest it has, the
 * container's copies hash to those digests, and it holds no other document), as the batch skips an
 * output only when it is a valid signature over its input by the same certificate.
 */
export async function signedAlready(
  output: string,
  files: SignedFile[],
  signer: Uint8Array,
): Promise<ExistingSignature> {
  let source: FileByteSource | undefined;
  let container: Awaited<ReturnType<typeof openContainer>> | undefined;
  try {
    source = await FileByteSource.open(output);
    checkMimetype(await source.read(0, 30 + 8 + 64), ASIC_E_MIMETYPE);
    container = await openContainer(source);
    const names = new Set(container.entries.map((entry) => entry.name));
    const documents = containerDocuments([...names]);
    const wanted = new Map(files.map((file) => [file.name, file]));
    if (documents.length !== wanted.size || documents.some((name) => !wanted.has(name)))
      return { signed: false, reason: 'it holds other files' };
    let reason = 'no manifest names these files';
    const sameCopies = async (): Promise<ExistingSignature> => {
      for (const file of files) {
        const hash = createHash(file.digest);
        for await (const chunk of container!.read(file.name)) hash.update(chunk);
        if (!Buffer.from(hash.digest()).equals(file.digestValue))
          return { signed: false, reason: `its copy of ${file.name} is not the file as it is now` };
      }
      return { signed: true };
    };
    // XAdES (signaturesN.xml): a signature by this signer, intact, covering exactly these files.
    const { xadesSignatureFiles, verifyContainerXades } = await import('../shared/xades-container.js');
    const wantedSigner = new X509Certificate(signer);
    for (const name of xadesSignatureFiles(names)) {
      const results = await verifyContainerXades(container, output, name, { trustAnchors: [], now: new Date() });
      const mine = results.find(
        ({ report, covered }) =>
          report.integrity.valid &&
          report.signatureValue.valid &&
          report.signer?.serialNumber === summarize(wantedSigner).serialNumber &&
          report.signer.issuer === summarize(wantedSigner).issuer &&
          covered.length === wanted.size &&
          covered.every((covers) => wanted.has(covers)),
      );
      if (mine) return await sameCopies();
      reason = 'no intact XAdES signature by this signer over these files';
    }
    for (const name of [...names].filter((entry) => /^META-INF\/ASiCManifest[^/]*\.xml$/i.test(entry))) {
      const bytes = await container.readWhole(name);
      const manifest = parseManifest(bytes, name);
      const same =
        manifest.references.length === wanted.size &&
        manifest.references.every((reference) => {
          const file = wanted.get(reference.name);
          return file?.digest === reference.digest && Buffer.from(file.digestValue).equals(reference.digestValue);
        });
      if (!same || !names.has(manifest.signature)) continue;
      const check = signedOverBytes(await container.readWhole(manifest.signature, 1024 * 1024), signer, bytes);
      if (!check.signed) {
        reason = check.reason;
        continue;
      }
      return await sameCopies();
    }
    return { signed: false, reason };
  } catch (error) {
    return { signed: false, reason: isEsignError(error) ? error.message : String(error) };
  } finally {
    container?.close();
    await source?.close();
  }
}
