/**
 * What an ASiC container (ETSI EN 319 162-1) must be, and what esign refuses to read from a ZIP,
 * as pure checks over the entries' metadata: the ZIP library reads the structure, this decides.
 * A container esign reads never holds an unsafe name, two entries of one name, an encrypted entry,
 * or more than it could have been compressed from (a ZIP bomb).
 */
import { EsignError } from '../../errors.js';
import { withValidationResult } from '../../qualification/names.js';
import type { SignatureReport, SignatureStatus } from '../../verify/types.js';

import { ASIC_E_MIMETYPE, containerEvidence, containerTypeByLayout } from './recognize.js';

export { ASIC_E_MIMETYPE, ASIC_S_MIMETYPE } from './recognize.js';

/** The metadata of one entry, as the central directory gives it. */
export interface ContainerEntry {
  name: string;
  compressedSize: number;
  uncompressedSize: number;
  /** 0 stored, 8 deflated. */
  compressionMethod: number;
  encrypted: boolean;
}

export interface ContainerLimits {
  /** The sum of the entries' uncompressed sizes. */
  maxTotalBytes: number;
  maxEntries: number;
  /** Uncompressed over compressed size, for an entry of more than `ratioFloorBytes`. */
  maxRatio: number;
  ratioFloorBytes: number;
}

/** Deflate reaches about 1:1000 on the most repetitive data; documents stay far below 1:100. */
export const DEFAULT_LIMITS: ContainerLimits = {
  maxTotalBytes: 64 * 1024 ** 3,
  maxEntries: 100_000,
  maxRatio: 200,
  ratioFloorBytes: 1024 * 1024,
};

/** Why a name is not one a container may hold (a path outside it, or one read differently elsewhere), or undefined. */
export function unsafeName(name: string): string | undefined {
  if (name.length === 0) return 'an empty name';
  if (name.includes('\\')) return 'a backslash';
  if (name.startsWith('/')) return 'an absolute path';
  if (/^[a-zA-Z]:/.test(name)) return 'a drive letter';
  if (name.split('/').some((part) => part === '..')) return 'a ".." component';
  if (name.split('/').some((part) => part === '.')) return 'a "." component';
  if (name.includes('\0')) return 'a NUL character';
  return undefined;
}

/** Refuses a container whose entries esign will not read; throws a one-line CONTAINER_INVALID. */
export function checkEntries(entries: readonly ContainerEntry[], limits: ContainerLimits = DEFAULT_LIMITS): void {
  if (entries.length > limits.maxEntries)
    throw invalid(`it has ${entries.length} entries, more than the ${limits.maxEntries} esign reads`);
  const seen = new Set<string>();
  let total = 0;
  for (const entry of entries) {
    const reason = unsafeName(entry.name);
    if (reason) throw invalid(`the entry name ${JSON.stringify(entry.name)} has ${reason}`);
    // Names differing only in case are one file on Windows and macOS.
    const key = entry.name.normalize('NFC').toLowerCase();
    if (seen.has(key)) throw invalid(`it holds two entries named ${JSON.stringify(entry.name)}`);
    seen.add(key);
    if (entry.encrypted) throw invalid(`the entry ${entry.name} is encrypted`);
    if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8)
      throw invalid(
        `the entry ${entry.name} uses compression method ${entry.compressionMethod} (only stored and deflate)`,
      );
    if (
      entry.uncompressedSize > limits.ratioFloorBytes &&
      entry.uncompressedSize > entry.compressedSize * limits.maxRatio
    )
      throw invalid(
        `the entry ${entry.name} would expand ${Math.round(entry.uncompressedSize / Math.max(1, entry.compressedSize))} times (a ZIP bomb?)`,
      );
    total += entry.uncompressedSize;
    if (total > limits.maxTotalBytes)
      throw invalid(`its entries would expand to more than ${limits.maxTotalBytes / 1024 ** 3} GiB (a ZIP bomb?)`);
  }
}

/**
 * The ASiC rule for `mimetype` (EN 319 162-1 §A.1): the first entry, stored, with no extra field,
 * so that its name and content sit at fixed offsets. `localHeader` is the file's first 38 bytes
 * and more; `expected` the container type its name promises.
 */
export function checkMimetype(localHeader: Uint8Array, expected: string): void {
  const view = new DataView(localHeader.buffer, localHeader.byteOffset, localHeader.byteLength);
  if (localHeader.length < 30 || view.getUint32(0, true) !== 0x04034b50) throw invalid('it is not a ZIP file');
  const nameLength = view.getUint16(26, true);
  const name = new TextDecoder().decode(localHeader.subarray(30, 30 + nameLength));
  if (name !== 'mimetype') throw invalid('its first entry is not "mimetype"');
  if (view.getUint16(8, true) !== 0) throw invalid('its "mimetype" entry is compressed (it must be stored)');
  if (view.getUint16(28, true) !== 0) throw invalid('its "mimetype" entry has an extra field');
  const size = view.getUint32(18, true);
  const content = new TextDecoder().decode(localHeader.subarray(38, 38 + size));
  if (content !== expected)
    throw invalid(`its "mimetype" is ${JSON.stringify(content.slice(0, 80))}, not ${JSON.stringify(expected)}`);
}

/** What verification learns of a container's `mimetype` entry, wherever it lies. */
export interface MimetypeEntry {
  /** Whether its local header is the file's first. */
  first: boolean;
  /** 0 stored, 8 deflated. */
  compressionMethod: number;
  /** The length of its local header's extra field. */
  extraFieldLength: number;
  /** Its content, uncompressed. */
  content: string;
}

/**
 * The `mimetype` of a container someone else made, as DSS and libdigidocpp read it: its type must be
 * the one expected (trailing white space aside), while a layout that bends EN 319 162-1 A.1 (not the
 * first entry, compressed, an extra field, trailing white space or CR LF) is read, each bend
 * returned as a warning. A container with no `mimetype` at all is read as DSS reads it, by its
 * layout (`containerTypeByLayout`), when `names` holds a signature, timestamp or evidence record
 * under META-INF/ (a warning says so); a ZIP with none is refused: not a signed container. esign's
 * own containers keep the strict layout (`checkMimetype`).
 */
export function mimetypeLayout(
  mimetype: MimetypeEntry | undefined,
  expected: string,
  names: readonly string[] = [],
): string[] {
  if (mimetype === undefined) return missingMimetype(names, expected);
  const type = mimetype.content.replace(/\s+$/, '');
  if (type !== expected)
    throw invalid(`its "mimetype" is ${JSON.stringify(type.slice(0, 80))}, not ${JSON.stringify(expected)}`);
  const bends = [
    ...(mimetype.first ? [] : ['it is not the first entry']),
    ...(mimetype.compressionMethod !== 0 ? ['it is compressed'] : []),
    ...(mimetype.extraFieldLength !== 0 ? ['it has an extra field'] : []),
    ...(type !== mimetype.content
      ? [`it ends in white space (${JSON.stringify(mimetype.content.slice(type.length))})`]
      : []),
  ];
  return bends.map((bend) => `the container's "mimetype" bends EN 319 162-1 A.1, read anyway: ${bend}`);
}

function missingMimetype(names: readonly string[], expected: string): string[] {
  const evidence = containerEvidence(names);
  if (evidence.length === 0)
    throw new EsignError(
      'CONTAINER_INVALID',
      'Not a signed container: a ZIP with no "mimetype" entry and no signature, timestamp or evidence record under META-INF/.',
      { hint: 'Give the signed container (.asice, .asics, .bdoc, .sce), or sign this file: esign sign FILE.' },
    );
  const type = expected === ASIC_E_MIMETYPE ? 'ASiC-E' : 'ASiC-S';
  const { by } = containerTypeByLayout(names);
  return [
    `the container has no "mimetype" entry (EN 319 162-1 A.1), read as ${type} by ${by} (evidence: ${evidence.join(', ')})`,
  ];
}

export function invalid(reason: string): EsignError {
  return new EsignError('CONTAINER_INVALID', `Not a container esign reads: ${reason}.`, {
    hint: 'It may be damaged or crafted; ask the sender for the original container.',
  });
}

/**
 * A signature over a container that changed: a file it names is missing, or the container holds a
 * file no signature covers. That is a change to the container whatever the trust, so VERIFY_MODIFIED
 * wins over an unknown anchor; a signature already invalid stays so.
 */
export function markContainerModified(signature: SignatureReport): void {
  if (signature.status === 'invalid') return;
  Object.assign(signature, {
    status: 'modified',
    code: 'VERIFY_MODIFIED',
    indication: 'INDETERMINATE',
    subIndication: 'SIG_CONSTRAINTS_FAILURE',
    ...(signature.qualification
      ? { qualification: withValidationResult(signature.qualification, 'INDETERMINATE', 'SIG_CONSTRAINTS_FAILURE') }
      : {}),
  });
}

/** The container's status from its signatures': a changed container is `modified` before it is `untrusted`. */
export function containerStatus(worstOfSignatures: SignatureStatus, changed: boolean): SignatureStatus {
  return changed && worstOfSignatures === 'untrusted' ? 'modified' : worstOfSignatures;
}
