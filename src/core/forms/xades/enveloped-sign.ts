/**
 * Enveloped XAdES, prepared and completed: the document read whole (at most 50 MB), checked by the
 * secure parser, its enveloped-signature digest taken; once signed, the output written as the
 * input's bytes with the `ds:Signature` put before the root's end tag. Loaded only for XML work.
 */
import { createHash, type Hash } from 'node:crypto';
import {
  changedWhileSigning,
  type DocumentFiles,
  type DocumentSource,
  type PreparedDocument,
  type SignedValue,
  type SignJob,
  type SignOptions,
} from '../../documents.js';
import { EsignError } from '../../errors.js';
import type { SigningCredential } from '../../ports.js';
import type { XmlDocument } from '../../xml/types/xml-libs.js';
import type { LongTermWindow } from '../form.js';
import { ENVELOPED_SIGNATURE, EXC_C14N } from '../shared/xades/algorithms.js';
import { documentC14n } from '../shared/xades/c14n.js';
import { decodeDocument, MAX_ENVELOPED_BYTES, rootNameOf, signatureOffset, tooLargeToEnvelope } from './enveloped.js';
import { xmlRules } from '../../xml/refusal.js';
import { refuseDeclarations } from '../../xml/secure-parse.js';
import { mayNameDsig, parseInputXml } from './input-xml.js';
import { unsignedValuesOf } from '../shared/xades/unsigned.js';
import {
  draftSignature,
  signatureTimestampInput,
  signatureXml,
  toBeSignedOf,
  type XadesDraft,
} from '../shared/xades/signature.js';

const rootName = (doc: XmlDocument): string => doc.documentElement!.nodeName;

interface EnvelopedState {
  readonly draft: XadesDraft;
  /** Where the signature goes: the root's end tag. */
  readonly offset: number;
  /** SHA-256 of the input as signed, checked again when the output is written. */
  readonly inputSha256: string;
  /** The archive timestamp's hash, fed with the document's reference (B-LTA). */
  readonly references: Hash;
}

/** Reads a source whole (an XML document to sign enveloped, at most 50 MB: a larger one is refused on its size, unread). */
export async function readWhole(source: DocumentSource): Promise<Uint8Array> {
  if (source.size > MAX_ENVELOPED_BYTES) throw tooLargeToEnvelope(source.size, source.path);
  return source.read(0, source.size);
}

/**
 * What the check leaves for prepare: the document as it read it, decoded, so that prepare reads and
 * decodes it no second time (prepareInput hands it over only while the file is unchanged).
 */
export interface CheckedXml {
  readonly bytes: Uint8Array;
  readonly text: string;
  /** Set by prepare when it takes the document over: its bytes leave the budget. */
  taken?: boolean;
}

/**
 * How many bytes of checked documents may wait for their prepare at once (a batch's first window
 * holds up to 50 checked inputs): past it, a document is read again at prepare.
 */
export const CHECKED_XML_BUDGET = 64 * 1024 * 1024;
let checkedBytes = 0;

/**
 * Checks before approval, without building the document (a DOM of a large XML file costs seconds a
 * MB, and prepare builds it anyway): XML text in an encoding esign writes into, no DTD or entity,
 * a root end tag to sign before; one that names the XML-DSig namespace is parsed whole here to tell
 * whether it is signed already. Whether it is well-formed, prepare finds when it builds it. Returns
 * what it read, for prepare, while the budget allows.
 */
export async function checkEnveloped(source: DocumentSource): Promise<CheckedXml | undefined> {
  const bytes = await readWhole(source);
  const text = decodeDocument(bytes, source.path);
  refuseDeclarations(text, xmlRules(source.path).refuse);
  if (mayNameDsig(text)) parseInputXml(text, source.path);
  signatureOffset(bytes, rootNameOf(text), source.path);
  if (checkedBytes + bytes.length > CHECKED_XML_BUDGET) return undefined;
  checkedBytes += bytes.length;
  return { bytes, text };
}

/** The document as the check read it, taken over (and out of the budget), if it left it. */
function takeChecked(checked: CheckedXml | undefined): CheckedXml | undefined {
  if (!checked || checked.taken) return undefined;
  checked.taken = true;
  checkedBytes -= checked.bytes.length;
  return checked;
}

/**
 * Builds the signature over the document: `checked` (what the check read, handed over while the
 * file is unchanged since) or, without it, the file read here.
 */
export async function prepareEnveloped(
  job: SignJob,
  source: DocumentSource,
  credential: SigningCredential,
  options: SignOptions,
  checked?: CheckedXml,
): Promise<PreparedDocument> {
  const held = takeChecked(checked);
  const bytes = held?.bytes ?? (await readWhole(source));
  if (!held && !(await source.unchanged())) throw changedWhileSigning(source.path);
  const doc = parseInputXml(held?.text ?? decodeDocument(bytes, source.path), source.path);
  const offset = signatureOffset(bytes, rootName(doc), source.path);
  const digest = credential.scheme.digest;
  const canonical = documentC14n(doc);
  const references = createHash(digest).update(canonical, 'utf8');
  const draft = draftSignature({
    objects: [
      {
        uri: '',
        transforms: [ENVELOPED_SIGNATURE, EXC_C14N],
        digest: new Uint8Array(references.copy().digest()),
        mimeType: 'text/xml',
      },
    ],
    certificates: credential.certificates,
    scheme: credential.scheme,
    signingTime: options.signingTime,
    ...(options.signaturePolicy ? { policy: options.signaturePolicy } : {}),
  });
  const state: EnvelopedState = {
    draft,
    offset,
    inputSha256: createHash('sha256').update(bytes).digest('hex'),
    references,
  };
  return {
    job,
    toBeSigned: toBeSignedOf(draft),
    inputSize: bytes.length,
    timestampCovers: (signature) => signatureTimestampInput(draft, signature),
    state,
  };
}

export async function completeEnveloped(
  prepared: PreparedDocument,
  value: SignedValue,
  options: SignOptions,
  files: DocumentFiles,
  longTerm: LongTermWindow | undefined,
): Promise<{ bytes: number; sha256: string }> {
  const state = prepared.state as EnvelopedState | undefined;
  if (!state) throw new EsignError('INTERNAL', 'An enveloped XAdES was completed without being prepared.');
  const { job } = prepared;
  const values = await unsignedValuesOf(job.input, state.draft, async () => state.references.copy(), value, longTerm);
  const signature = Buffer.from(signatureXml(state.draft, value.signature, values), 'ascii');
  const source = await files.open(job.input);
  let bytes: Uint8Array;
  try {
    bytes = await source.read(0, source.size);
  } finally {
    await source.close();
  }
  if (bytes.length !== prepared.inputSize || createHash('sha256').update(bytes).digest('hex') !== state.inputSha256)
    throw changedWhileSigning(job.input);
  const head = bytes.subarray(0, state.offset);
  const tail = bytes.subarray(state.offset);
  const output = await files.createOutput(job.output, { overwrite: options.overwrite });
  prepared.output = output;
  try {
    await output.write(head);
    await output.commit([signature, tail]);
  } catch (error) {
    await output.abort();
    throw error;
  }
  const sha256 = createHash('sha256').update(head).update(signature).update(tail).digest('hex');
  return { bytes: head.length + signature.length + tail.length, sha256 };
}
