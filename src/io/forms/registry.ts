/**
 * The signature forms esign knows, and the one place that chooses among them: from `--format`, a
 * file's extension and, for a file to verify, what was given with it. The shared pipelines (the
 * batch, the split flow, `--skip-existing`, `esign verify`, `esign extend`) ask here and then talk
 * to the form through `SignatureForm` (src/core/forms/form.ts); no other file outside a form's own
 * folders tests a form's name. Each form loads its heavy parts (the ZIP code, verification) only
 * when it uses them, so this table is cheap to load.
 */
import { extname } from 'node:path';
import type { DocumentKind } from '../../core/documents.js';
import { EsignError } from '../../core/errors.js';
import type { FormName, SignatureForm } from '../../core/forms/form.js';
import { asicE } from './asic-e/form.js';
import { asicS } from './asic-s/form.js';
import { cadesDetached } from './cades-detached/form.js';
import { cadesEnveloping } from './cades-enveloping/form.js';
import { pades } from './pades/form.js';
import { xades } from './xades/form.js';

/** Every form, by its `--format` name, in the order `--help` lists them. */
export const FORMS: Readonly<Record<FormName, SignatureForm>> = {
  pades,
  cades: cadesDetached,
  p7m: cadesEnveloping,
  asics: asicS,
  asice: asicE,
  xades,
};

/** The `--format` names. */
export const FORM_NAMES = Object.keys(FORMS) as FormName[];

const BY_KIND = new Map<DocumentKind, SignatureForm>(Object.values(FORMS).map((form) => [form.kind, form]));

/** The form of a job's kind (as a state file of the split flow records it). */
export function formOfKind(kind: DocumentKind): SignatureForm {
  const form = BY_KIND.get(kind);
  if (!form) throw new EsignError('INTERNAL', `No signature form makes ${JSON.stringify(kind)}.`);
  return form;
}

/**
 * The form a file is signed in, one output per input: the one `--format` names, else PAdES for a
 * PDF and a detached CAdES `.p7s` for any other file. A form of one output for many inputs is not
 * chosen here (`oneForManyForm`).
 */
export function formForSigning(path: string, format?: FormName): SignatureForm {
  const pdf = extname(path).toLowerCase() === '.pdf';
  if (format === 'pades' && !pdf)
    throw new EsignError('USAGE', `${path} is not a PDF, so it cannot get a PAdES signature.`, {
      hint: 'Leave out --format pades for other files (they get a .p7s), or use --format p7m.',
    });
  if (format && format !== 'pades') {
    const form = FORMS[format];
    if (form.declares.outputs === 'one-for-many')
      throw new EsignError('INTERNAL', 'An ASiC-E is one container, not a job per file.');
    return form;
  }
  return pdf ? pades : cadesDetached;
}

/**
 * The form of one output for many inputs this run signs in, if any: the one `--format` names, or
 * (without --format) the form of the one input given when it is such an output already, to add a
 * signature to (`esign sign bundle.asice`).
 */
export function oneForManyForm(inputs: readonly string[], format?: FormName): SignatureForm | undefined {
  const oneForMany = Object.values(FORMS).filter((form) => form.declares.outputs === 'one-for-many');
  if (format) return oneForMany.find((form) => form.name === format);
  return inputs.length === 1 ? oneForMany.find((form) => form.addsTo(inputs[0]!)) : undefined;
}

/**
 * The form `esign verify` reads a file as: a detached signature when it is given apart
 * (`--signature`: XAdES when it is XML, else CAdES), else by its extension (`.p7m`, `.asics`/`.scs`,
 * `.asice`/`.sce`/`.bdoc`, `.xml`/`.xsig`), else PAdES.
 */
export function formForVerifying(path: string, detachedSignature: boolean): SignatureForm {
  if (detachedSignature) return detachedByContent;
  if (/\.p7m$/i.test(path)) return cadesEnveloping;
  if (/\.(asics|scs)$/i.test(path)) return asicS;
  if (/\.(asice|sce|bdoc)$/i.test(path)) return asicE;
  if (/\.(xml|xsig)$/i.test(path)) return xades;
  return pades;
}

/** A detached signature read as what its content is: an XML signature (XAdES) or a CMS (CAdES). */
const detachedByContent: SignatureForm = {
  ...cadesDetached,
  verify: (input, options) => (looksLikeXml(input.signature) ? xades : cadesDetached).verify(input, options),
};

/** XML starts with `<` (after a byte-order mark and white space); a CMS with a DER SEQUENCE (0x30). */
function looksLikeXml(bytes: Uint8Array | undefined): boolean {
  if (!bytes) return false;
  // UTF-16 with its byte-order mark: `<` as two bytes after it.
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))
    return bytes[2] === 0x3c || bytes[3] === 0x3c;
  let at = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  while (at < bytes.length && (bytes[at] === 0x20 || bytes[at] === 0x09 || bytes[at] === 0x0a || bytes[at] === 0x0d))
    at++;
  return bytes[at] === 0x3c;
}

/** The form `esign extend` raises a file's signatures in: the one that keeps long-term data in the document. */
export function formForExtending(): SignatureForm & Required<Pick<SignatureForm, 'extension'>> {
  return pades as SignatureForm & Required<Pick<SignatureForm, 'extension'>>;
}

/** The form of the container a split flow's state keeps (`container`: one output for many inputs, made again at --complete). */
export function formOfPreparedContainer(): SignatureForm {
  return asicE;
}
