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
import { EsignError, isEsignError } from '../../core/errors.js';
import type { FormName, SignatureForm } from '../../core/forms/form.js';
import type { ByteSource } from '../../core/ports.js';
import {
  ASIC_E_MIMETYPE,
  ASIC_S_MIMETYPE,
  RECOGNIZE_BYTES,
  containerTypeByLayout,
  recognize,
} from '../../core/forms/shared/recognize.js';
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
 * The form `esign verify` reads a file as, from its content, never its name (`recognize`): a
 * detached CAdES when its signature is given apart (`--signature`); a PDF → PAdES; a CMS SignedData
 * → enveloping CAdES when it holds its content (`.p7m`, or named `.p7s`), else refused in one line
 * naming the content to pass with `--signature`; a ZIP → ASiC-E or ASiC-S by its `mimetype`, else
 * by its layout (`.asice`, `.bdoc`, `.sce`, `.asics`, `.scs` or no extension alike); XML → XAdES
 * (enveloped or enveloping; a detached XML signature is given with `--signature`). Anything else goes to PAdES, whose reader says it is not a PDF.
 */
export async function formForVerifying(
  input: { readonly file: string; readonly source: ByteSource },
  detachedSignature: boolean,
): Promise<SignatureForm> {
  if (detachedSignature) return detachedByContent;
  const head = await input.source.read(0, Math.min(RECOGNIZE_BYTES, input.source.size));
  const found = recognize(head);
  switch (found.kind) {
    case 'cms':
      if (found.enveloping) return cadesEnveloping;
      throw detachedAlone(input.file);
    case 'zip':
      return (await containerIsAsicE(input.source, found.mimetype)) ? asicE : asicS;
    case 'xml':
      return xades;
    default:
      return pades;
  }
}

function detachedAlone(file: string): EsignError {
  const content = /\.p7s$/i.test(file) ? file.slice(0, -4) : 'FILE';
  return new EsignError('USAGE', `${file} is a detached CAdES signature: it holds no content to check it against.`, {
    hint: `Name the file it signs and pass the signature with --signature: esign verify ${content} --signature ${file}`,
  });
}

/**
 * Whether a ZIP is an ASiC-E: its stored `mimetype` says so (`application/vnd.etsi.asic-e+zip`, as
 * a .bdoc's does) or says ASiC-S; without one first (DSS writes it last), its `mimetype` entry, else
 * its layout (`containerTypeByLayout`, as DSS decides it): a manifest or XAdES signatures, or more
 * than one document, make an ASiC-E.
 */
async function containerIsAsicE(source: ByteSource, mimetype: string | undefined): Promise<boolean> {
  const byType = (type: string | undefined) =>
    type === ASIC_E_MIMETYPE ? true : type === ASIC_S_MIMETYPE ? false : undefined;
  const first = byType(mimetype);
  if (first !== undefined) return first;
  const { openContainer } = await import('../zip-container.js');
  // A ZIP that does not open is read as an ASiC-S, whose reader then says what is wrong with it.
  const container = await openContainer(source).catch(() => undefined);
  if (!container) return false;
  try {
    const names = container.entries.map((entry) => entry.name);
    if (names.includes('mimetype')) {
      const type = new TextDecoder().decode(await container.readWhole('mimetype', 1024)).trim();
      const typed = byType(type);
      if (typed !== undefined) return typed;
    }
    return containerTypeByLayout(names).type === 'asic-e';
  } finally {
    container.close();
  }
}

/** A detached signature read as what its content is: an XML signature (XAdES) or a CMS (CAdES). */
const detachedByContent: SignatureForm = {
  ...cadesDetached,
  verify: (input, options) =>
    (input.signature && recognize(input.signature).kind === 'xml' ? xades : cadesDetached).verify(input, options),
};

/**
 * The form `esign extend` raises a file's signatures in, by its content as `esign verify` reads it
 * (a PDF, an XML document, an ASiC-E or ASiC-S container); a file of a form that cannot be extended
 * (a `.p7s`, a `.p7m`) is refused in one line.
 */
export async function formForExtending(input: {
  readonly file: string;
  readonly source: ByteSource;
}): Promise<SignatureForm & Required<Pick<SignatureForm, 'extension'>>> {
  // A detached CAdES alone is refused by verification as USAGE: here it is a form without extension.
  const form = await formForVerifying(input, false).catch((error: unknown) => {
    if (isEsignError(error) && error.code === 'USAGE') return cadesDetached;
    throw error;
  });
  if (!form.extension)
    throw new EsignError('USAGE', `${input.file} is a CAdES signature, which esign extend does not raise.`, {
      hint: 'esign extend raises PDFs, XAdES XML files and XAdES containers; sign a CAdES at --level B-LT or B-LTA when it is made.',
    });
  return form as SignatureForm & Required<Pick<SignatureForm, 'extension'>>;
}

/** The form of the container a split flow's state keeps (`container`: one output for many inputs, made again at --complete). */
export function formOfPreparedContainer(): SignatureForm {
  return asicE;
}
