/**
 * Counter-signed XAdES built at run time with esign's own XAdES writer: an enveloped signature of
 * a small XML document (or an ASiC-E's signatures0.xml over its files), and in its
 * UnsignedSignatureProperties a xades:CounterSignature (EN 319 132-1 §5.2.7) whose reference of
 * Type CountersignedSignature names the parent's ds:SignatureValue by its Id (exclusive c14n). Keys
 * and certificates are the caller's.
 */
import { createHash, sign, type KeyObject } from 'node:crypto';
import { ENVELOPED_SIGNATURE, EXC_C14N } from '../../src/core/forms/shared/xades/algorithms.js';
import { documentC14n } from '../../src/core/forms/shared/xades/c14n.js';
import { COUNTERSIGNED_SIGNATURE_TYPE } from '../../src/core/forms/shared/xades/read.js';
import {
  draftSignature,
  signatureTimestampInput,
  signatureXml,
  toBeSignedOf,
  type DataObject,
  type XadesDraft,
} from '../../src/core/forms/shared/xades/signature.js';
import { xmlRules } from '../../src/core/xml/refusal.js';
import { parseSecureXml } from '../../src/core/xml/secure-parse.js';

export const COUNTER_DOCUMENT = `<?xml version="1.0" encoding="UTF-8"?>
<inv:Invoice xmlns:inv="urn:example:invoice" Id="inv-1"><Seller>Acme</Seller><Total currency="EUR">21.00</Total></inv:Invoice>
`;

export interface CounterSigner {
  /** The signer's certificate first, then its chain (DER). */
  certificates: readonly Uint8Array[];
  privateKey: KeyObject;
}

export interface CounterSignedOptions {
  /** What the counter-signature's CountersignedSignature reference names; default the parent's SignatureValue. */
  counterUri?: (parentId: string) => string;
  /** Leave the Type off the counter-signature's reference. */
  untyped?: boolean;
  /** A SignatureTimeStamp on the counter-signature: the token over the canonical SignatureValue given. */
  counterTimestamp?: (signatureValue: Uint8Array) => Uint8Array;
}

/** The data object of an enveloped signature over the whole of `xml` (enveloped-signature, exclusive c14n). */
export function envelopedObject(xml: string): DataObject {
  const doc = parseSecureXml(xml, xmlRules('enveloped.xml'));
  return {
    uri: '',
    transforms: [ENVELOPED_SIGNATURE, EXC_C14N],
    digest: new Uint8Array(createHash('sha256').update(documentC14n(doc)).digest()),
    mimeType: 'text/xml',
  };
}

const scheme = { kind: 'rsa-pkcs1', digest: 'sha256' } as const;

/** An enveloped XAdES of COUNTER_DOCUMENT by `parent`, counter-signed by `counter`. */
export function counterSignedXml(
  parent: CounterSigner,
  counter: CounterSigner,
  options: CounterSignedOptions = {},
): string {
  const signature = counterSignedSignature([envelopedObject(COUNTER_DOCUMENT)], parent, counter, options);
  return COUNTER_DOCUMENT.replace('</inv:Invoice>', `${signature}</inv:Invoice>`);
}

/**
 * The `META-INF/signatures0.xml` of an ASiC-E holding `files` (name → bytes): one reference per
 * file, its entry name as URI (EN 319 162-1), by `parent`, counter-signed by `counter`.
 */
export function counterSignedAsicSignatures(
  files: Record<string, Uint8Array>,
  parent: CounterSigner,
  counter: CounterSigner,
): string {
  const objects = Object.entries(files).map(([name, bytes]): DataObject => ({
    uri: name,
    transforms: [],
    digest: new Uint8Array(createHash('sha256').update(bytes).digest()),
    mimeType: 'text/plain',
  }));
  return (
    '<?xml version="1.0" encoding="UTF-8" standalone="no"?>' +
    `<asic:XAdESSignatures xmlns:asic="http://uri.etsi.org/02918/v1.2.1#">${counterSignedSignature(objects, parent, counter)}</asic:XAdESSignatures>`
  );
}

/** The ds:Signature by `parent` over `objects`, a CounterSignature by `counter` in its unsigned properties. */
function counterSignedSignature(
  objects: DataObject[],
  parent: CounterSigner,
  counter: CounterSigner,
  options: CounterSignedOptions = {},
): string {
  const draft = draftSignature({
    objects,
    certificates: parent.certificates,
    scheme,
    signingTime: new Date('2026-01-01T00:00:00Z'),
  });
  const value = new Uint8Array(sign('sha256', toBeSignedOf(draft).der, parent.privateKey));
  // What the counter-signature covers: the parent's SignatureValue element in exclusive c14n.
  const uri = options.counterUri?.(draft.id) ?? `#value-${draft.id}`;
  const counterDraft = typed(
    draftSignature({
      objects: [
        {
          uri,
          transforms: [EXC_C14N],
          digest: new Uint8Array(createHash('sha256').update(signatureTimestampInput(draft, value)).digest()),
          mimeType: 'text/xml',
        },
      ],
      certificates: counter.certificates,
      scheme,
      signingTime: new Date('2026-01-02T00:00:00Z'),
    }),
    uri,
    !options.untyped,
  );
  const counterValue = new Uint8Array(sign('sha256', toBeSignedOf(counterDraft).der, counter.privateKey));
  const token = options.counterTimestamp?.(signatureTimestampInput(counterDraft, counterValue));
  const counterXml = signatureXml(counterDraft, counterValue, token ? { signatureTimestamp: token } : {});
  return signatureXml(draft, value).replace(
    '</xades:QualifyingProperties>',
    '<xades:UnsignedProperties><xades:UnsignedSignatureProperties><xades:CounterSignature>' +
      counterXml +
      '</xades:CounterSignature></xades:UnsignedSignatureProperties></xades:UnsignedProperties></xades:QualifyingProperties>',
  );
}

/**
 * The draft with Type="…#CountersignedSignature" on its reference to `uri`: in the SignedInfo as
 * written and in its exclusive c14n (attributes sorted: Id, Type, URI), so what is signed agrees.
 */
function typed(draft: XadesDraft, uri: string, add: boolean): XadesDraft {
  if (!add) return draft;
  const from = ` URI="${uri}"`;
  const to = ` Type="${COUNTERSIGNED_SIGNATURE_TYPE}" URI="${uri}"`;
  const canonical = Buffer.from(draft.canonicalSignedInfo).toString('utf8');
  if (!draft.signedInfo.includes(from) || !canonical.includes(from)) throw new Error('no reference to type');
  return {
    ...draft,
    signedInfo: draft.signedInfo.replace(from, to),
    canonicalSignedInfo: new Uint8Array(Buffer.from(canonical.replace(from, to), 'utf8')),
  };
}

/** The text of the n-th (0-based) ds:SignatureValue in `xml` replaced by `replacement` (base64). */
export function withSignatureValue(xml: string, n: number, replacement: (old: string) => string): string {
  let seen = -1;
  return xml.replace(/(<ds:SignatureValue[^>]*>)([^<]*)(<\/ds:SignatureValue>)/g, (all, open, text, close) => {
    seen += 1;
    return seen === n ? `${open}${replacement(text as string)}${close}` : all;
  });
}
