/**
 * `esign extend` of an XML document's XAdES signatures: read whole (at most 50 MB, as verification
 * reads it), extended by `extendXadesXml`, and written whole into the output the caller commits
 * (the XML grows inside, so nothing can be appended). Loaded only for XML work.
 */
import { createHash } from 'node:crypto';
import { EsignError } from '../../../core/errors.js';
import type { FormExtension } from '../../../core/forms/form.js';
import { MAX_XML_DOCUMENT_BYTES } from '../../../core/xml/secure-parse.js';
import { rewritten } from '../shared/xades-extend.js';

export const xmlExtension: FormExtension = {
  async extend(source, _copy, level, dependencies) {
    if (source.size > MAX_XML_DOCUMENT_BYTES)
      throw new EsignError(
        'XML_TOO_LARGE',
        `${source.path}: ${source.size} bytes, above the limit of ${MAX_XML_DOCUMENT_BYTES} for an XML signature`,
        { hint: 'XML over 50 MB is signed in an ASiC-E (--format asice), where it is hashed as bytes.' },
      );
    const bytes = await source.read(0, source.size);
    const { extendXadesXml } = await import('../../../core/forms/xades/extend.js');
    const extended = await extendXadesXml(
      { name: source.path, bytes },
      level,
      dependencies,
      dependencies.now ?? new Date(),
    );
    return rewritten(extended, async (output) => {
      if (!(await source.unchanged()))
        throw new EsignError('INPUT_UNREADABLE', `${source.path} changed while it was being extended.`, {
          hint: 'Run esign extend again once nothing else writes to it.',
        });
      await output.write(extended.bytes);
      return { bytes: extended.bytes.length, sha256: createHash('sha256').update(extended.bytes).digest('hex') };
    });
  },
};
