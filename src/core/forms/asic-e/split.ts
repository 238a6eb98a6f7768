/**
 * An ASiC-E through the split flow: `--prepare` keeps the manifest whose hash is approved, and
 * `--complete` makes the container again from the same inputs and refuses it, naming the files
 * that changed, when its manifest is not byte for byte the one prepared.
 */
import { EsignError } from '../../errors.js';
import { parseManifest } from './manifest.js';

/** Refuses a container made again at `--complete` whose manifest or signed attributes are not the ones approved. */
export function checkPreparedAgain(
  saved: Record<string, unknown>,
  now: { output: string; manifest: Uint8Array; toBeSignedHash: Uint8Array },
  approvedHash: string,
): void {
  const manifest = typeof saved['manifest'] === 'string' ? Buffer.from(saved['manifest'], 'base64') : undefined;
  if (!manifest || !manifest.equals(now.manifest))
    throw new EsignError(
      'STATE_FILE_INVALID',
      `${manifest ? changedFiles(manifest, now.manifest) : 'The container'} changed since --prepare: ${now.output} would not be the container approved.`,
      { hint: 'Run --prepare again and approve the new hash.' },
    );
  if (Buffer.from(now.toBeSignedHash).toString('base64') !== approvedHash)
    throw new EsignError('STATE_FILE_INVALID', `The signature of ${now.output} is not the one prepared.`, {
      hint: 'Run --prepare again (the credential or its certificate may have changed).',
    });
}

/** The files whose entries differ between two manifests (changed, added or gone), named. */
function changedFiles(before: Uint8Array, after: Uint8Array): string {
  const digests = (bytes: Uint8Array) =>
    new Map(
      parseManifest(bytes, 'the manifest').references.map((reference) => [
        reference.name,
        Buffer.from(reference.digestValue).toString('base64'),
      ]),
    );
  const [then, now] = [digests(before), digests(after)];
  const names = [...new Set([...then.keys(), ...now.keys()])].filter((name) => then.get(name) !== now.get(name));
  return names.length > 0 ? names.join(', ') : 'The container';
}
