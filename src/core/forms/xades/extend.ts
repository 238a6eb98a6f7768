/**
 * `esign extend` of XAdES (EN 319 132-1): raises each signature of an XML document (enveloped, as
 * `--format xades` writes it or as others do, the signature anywhere; or a container's
 * `signatures*.xml`) to B-LT or B-LTA, by adding to its UnsignedSignatureProperties only:
 * - B-B → B-T first: a SignatureTimeStamp over the exclusive-c14n SignatureValue (§5.3);
 * - B-T → B-LT: CertificateValues and RevocationValues of the signer's chain and of its signature
 *   timestamp's TSA chain (those the signature does not hold yet);
 * - B-LTA: then an ArchiveTimeStamp (xadesv141, §5.5.2) over what §5.5.2.2 lists;
 * - on a B-LTA signature (a refresh): a TimeStampValidationData (§5.5.1) with the validation data of
 *   the last archive timestamp's TSA chain, then a new ArchiveTimeStamp over it all.
 *
 * Every byte outside the inserted elements stays as it was (the document's encoding, its prolog,
 * the SignedInfo, SignatureValue and SignedProperties): the new elements are ASCII and go in as
 * bytes before the end tag of UnsignedSignatureProperties (made when missing), each declaring the
 * namespaces it uses, whatever prefixes the signature's writer chose. Each signature is checked
 * before (an XML file esign cannot verify is refused) and after (no signature broken by another's
 * extension, as when one covers another).
 */
import { createHash, X509Certificate } from 'node:crypto';
import type { DigestName } from '../../cms/algorithms.js';
import { EsignError } from '../../errors.js';
import type { ExtendDependencies, LongTermLevel } from '../../ltv/extend.js';
import { collectValidationData, RevocationCache, tokenTarget } from '../../ltv/validation-data.js';
import type { ChainTarget, RevocationCheck } from '../../ltv/validation-data.js';
import { itemDigest as hex } from '../../ltv/item-digest.js';
import { summarize } from '../../verify/chain.js';
import { childrenNamed, descendants, textOf } from '../../xml/dom.js';
import { NS, TRANSFORM } from '../../xml/namespaces.js';
import { xadesRefused, xmlRules } from '../../xml/refusal.js';
import { MAX_XML_DOCUMENT_BYTES, parseSecureXml } from '../../xml/secure-parse.js';
import type { XmlDocument, XmlElement } from '../../xml/types/xml-libs.js';
import { canonicalization, xmlSignatureScheme, type Canonicalization } from '../shared/xades/read-algorithms.js';
import { canonicalize } from '../shared/xades/read-c14n.js';
import {
  idIndex,
  keyInfoCertificates,
  readSignature,
  topSignatures,
  type ReadSignature,
} from '../shared/xades/read.js';
import { timeStampValidationDataXml, unsignedPropertiesXml, type UnsignedValues } from '../shared/xades/signature.js';
import {
  archiveInput,
  encapsulated,
  isNamed,
  unsignedProperties,
  verifyXadesXml,
  type XadesInput,
} from '../shared/xades/verify.js';

/** What extending one XML document's signatures made. */
export interface XadesExtension {
  /** The document with the properties added. */
  bytes: Uint8Array;
  signatures: number;
  added: { certs: number; ocsps: number; crls: number };
  /** genTime of the last archive timestamp added (B-LTA). */
  archiveTimestamp?: Date;
  checks: RevocationCheck[];
  warnings: string[];
}

/**
 * Extends every signature of `input` to `level`. `now` is the time the signatures are checked at
 * (their integrity and signature value only: trust is `esign verify`'s).
 */
export async function extendXadesXml(
  input: XadesInput,
  level: LongTermLevel,
  deps: ExtendDependencies,
  now: Date,
): Promise<XadesExtension> {
  if (level === 'B-LTA' && !deps.tsa)
    throw new EsignError('TSA_NOT_CONFIGURED', 'Level B-LTA needs a timestamping service for the archive timestamp.', {
      hint: 'Set tsaUrls, or use --level B-LT.',
    });
  const before = await verifyXadesXml(input, { trustAnchors: [], now });
  if (before.length === 0)
    throw notExtendable(
      input.name,
      'it has no XML signature to extend',
      'Sign it first: esign sign --format xades --level B-LTA FILE.',
    );
  for (const { report } of before)
    if (!report.integrity.valid || !report.signatureValue.valid)
      throw notExtendable(
        input.name,
        `signature ${report.index} does not verify (${report.integrity.reason ?? report.signatureValue.reason ?? 'broken'}), so esign does not extend it`,
        'See what changed with esign verify; ask the signer for the file as signed.',
      );

  const cache = deps.cache ?? new RevocationCache(deps.fetcher);
  const result: XadesExtension = {
    bytes: input.bytes,
    signatures: before.length,
    added: { certs: 0, ocsps: 0, crls: 0 },
    checks: [],
    warnings: [],
  };
  for (let index = 0; index < before.length; index++) {
    const { report } = before[index]!;
    const counterSigners = (report.counterSignatures ?? []).map((counter) => counter.signer);
    await extendOne(input, result, index, level, deps, cache, report.signer, counterSigners);
  }

  const after = await verifyXadesXml({ ...input, bytes: result.bytes }, { trustAnchors: [], now });
  for (const { report } of after)
    if (!report.integrity.valid || !report.signatureValue.valid)
      throw notExtendable(
        input.name,
        `extending would break signature ${report.index} (${report.integrity.reason ?? report.signatureValue.reason ?? 'broken'}): it covers another signature's unsigned properties`,
        'Such a file can only be extended by its signers, signature by signature; keep it as it is.',
      );
  return result;
}

interface Parsed {
  doc: XmlDocument;
  signature: ReadSignature;
  unsigned: XmlElement[];
  ids: Set<string>;
}

function parse(input: XadesInput, bytes: Uint8Array, index: number): Parsed {
  const doc = parseSecureXml(bytes, xmlRules(input.name, input.maxBytes ?? MAX_XML_DOCUMENT_BYTES));
  const ids = idIndex(doc, input.name);
  const element = topSignatures(doc)[index];
  if (!element) throw new EsignError('INTERNAL', `Signature ${index + 1} went missing while extending ${input.name}.`);
  const signature = readSignature(element, doc, ids, input.name, input.resolve);
  if (!signature.qualifyingProperties || signature.qualifyingProperties.namespaceURI !== NS.xades)
    throw xadesRefused(
      input.name,
      `signature ${index + 1} is not XAdES 1.3.2 (no QualifyingProperties in ${NS.xades}), which esign extends`,
    );
  return { doc, signature, unsigned: unsignedProperties(signature), ids: new Set(ids.keys()) };
}

async function extendOne(
  input: XadesInput,
  result: XadesExtension,
  index: number,
  level: LongTermLevel,
  deps: ExtendDependencies,
  cache: RevocationCache,
  signer: CertificateIdentity | undefined,
  /** The signer of each CounterSignature property, in order. */
  counterSigners: readonly (CertificateIdentity | undefined)[],
): Promise<void> {
  const label = `signature ${index + 1}`;
  let parsed = parse(input, result.bytes, index);
  const token = (property: XmlElement | undefined): Uint8Array | undefined => {
    const text = textOf(childrenNamed(property, NS.xades, 'EncapsulatedTimeStamp')[0]).replace(/\s+/g, '');
    return text ? new Uint8Array(Buffer.from(text, 'base64')) : undefined;
  };
  let signatureTimestamp = token(parsed.unsigned.find((p) => isNamed(p, 'SignatureTimeStamp')));
  if (!signatureTimestamp) {
    // B-B: first a SignatureTimeStamp (EN 319 132-1 §5.3), over the SignatureValue element, exclusive c14n.
    if (!deps.tsa)
      throw notExtendable(
        input.name,
        `${label} has no signature timestamp (it is B-B), and the profile has no timestamping service to add one`,
        'Set tsaUrls (esign config set tsaUrls URL), then extend it again.',
      );
    const digest = digestOf(parsed.signature);
    const canonical = canonicalize(
      { node: parsed.signature.signatureValue, excluded: [], comments: false },
      canonicalization(TRANSFORM.excC14n) as Canonicalization,
    );
    const stamp = await deps.tsa.timestamp(
      new Uint8Array(createHash(digest).update(canonical, 'utf8').digest()),
      digest,
    );
    const id = freshId(parsed.ids, `ts-${parsed.signature.id ?? `s${index + 1}`}`);
    result.bytes = appendUnsigned(
      result.bytes,
      parsed,
      unsignedPropertiesXml({ signatureTimestamp: stamp.token }, { signatureTimestamp: id, declare: true }),
    );
    signatureTimestamp = stamp.token;
    parsed = parse(input, result.bytes, index);
  }
  const { signature, unsigned } = parsed;
  const archives = unsigned.filter((p) => isNamed(p, 'ArchiveTimeStamp'));
  const held = (valueName: string, listName: string) =>
    unsigned.flatMap((property) => encapsulated(property, listName, valueName));
  const heldCerts = held('EncapsulatedX509Certificate', 'CertificateValues');
  const known = new Set(
    [
      ...heldCerts,
      ...held('EncapsulatedOCSPValue', 'RevocationValues'),
      ...held('EncapsulatedCRLValue', 'RevocationValues'),
    ].map(hex),
  );
  const candidates = [...keyInfoCertificates(signature.keyInfo), ...heldCerts];
  // A counter-signature's certificates are in its own ds:KeyInfo (EN 319 132-1 §5.2.7).
  const counterSignatures = unsigned
    .filter((p) => isNamed(p, 'CounterSignature'))
    .map((property) => {
      const inner = childrenNamed(property, NS.ds, 'Signature')[0];
      return keyInfoCertificates(childrenNamed(inner, NS.ds, 'KeyInfo')[0]);
    });
  const pool = [...candidates, ...counterSignatures.flat()];

  // The validation data: of the signer's and signature timestamp's chains (B-LT), or at a refresh of
  // the last archive timestamp's chain, which comes after it (TimeStampValidationData).
  const lastArchive = token(archives[archives.length - 1]);
  const targets: ChainTarget[] = [];
  if (lastArchive) targets.push(...tokenTarget(lastArchive));
  else {
    const leaf = certificateOf(candidates, signer);
    const stampTarget = tokenTarget(signatureTimestamp);
    if (leaf) targets.push({ role: 'signer', leaf, pool: candidates, usedAt: stampTarget[0]?.usedAt });
    targets.push(...stampTarget);
    // Each counter-signer's chain too: B-LT data lets every signature in the file be validated later.
    counterSignatures.forEach((certificates, position) => {
      const counterLeaf = certificateOf(certificates, counterSigners[position]);
      if (counterLeaf) targets.push({ role: 'signer', leaf: counterLeaf, pool, usedAt: undefined });
    });
  }
  // The profile's trust anchors complete a chain the signature leaves short (a KeyInfo without its root).
  const data = await collectValidationData(targets, deps.fetcher, [...pool, ...(deps.issuers ?? [])], cache);
  result.checks.push(...data.checks);
  for (const warning of data.warnings) if (!result.warnings.includes(warning)) result.warnings.push(warning);
  const fresh = (items: Uint8Array[]) => items.filter((item) => !known.has(hex(item)));
  const values: UnsignedValues = {
    certificateValues: fresh(data.certs),
    ocsps: fresh(data.ocsps),
    crls: fresh(data.crls),
  };
  const count = values.certificateValues!.length + values.ocsps!.length + values.crls!.length;
  const hasLongTermData = unsigned.some((p) => isNamed(p, 'CertificateValues') || isNamed(p, 'RevocationValues'));
  if (count > 0) {
    // Before any archive timestamp and any B-LT data: the B-LT properties themselves; after them, what
    // comes later goes in a TimeStampValidationData (EN 319 132-1 §5.5.1).
    const xml =
      archives.length === 0 && !hasLongTermData
        ? unsignedPropertiesXml(values, { declare: true })
        : timeStampValidationDataXml(values, freshId(parsed.ids, `tsvd-${signature.id ?? `s${index + 1}`}`));
    result.bytes = appendUnsigned(result.bytes, parsed, xml);
    result.added.certs += values.certificateValues!.length;
    result.added.ocsps += values.ocsps!.length;
    result.added.crls += values.crls!.length;
  }
  if (level !== 'B-LTA') return;

  // The archive timestamp over the signature as it now is (EN 319 132-1 §5.5.2.2).
  if (count > 0) parsed = parse(input, result.bytes, index);
  const digest = digestOf(parsed.signature);
  const hash = createHash(digest);
  await archiveInput(parsed.signature, parsed.unsigned, undefined)((chunk) => hash.update(chunk));
  const stamp = await deps.tsa!.timestamp(new Uint8Array(hash.digest()), digest);
  const id = freshId(parsed.ids, `ats-${parsed.signature.id ?? `s${index + 1}`}`);
  result.bytes = appendUnsigned(
    result.bytes,
    parsed,
    unsignedPropertiesXml({ archiveTimestamp: stamp.token }, { archiveTimestamp: id, declare: true }),
  );
  result.archiveTimestamp = stamp.genTime;
}

interface CertificateIdentity {
  serialNumber: string;
  issuer: string;
}

/** The certificate of `certificates` that `identity` names (a signer's, as its report gives it). */
function certificateOf(
  certificates: readonly Uint8Array[],
  identity: CertificateIdentity | undefined,
): Uint8Array | undefined {
  if (!identity) return undefined;
  return certificates.find((der) => {
    let summary: ReturnType<typeof summarize>;
    try {
      summary = summarize(new X509Certificate(der));
    } catch {
      return false; // a certificate node:crypto cannot read is not the signer's
    }
    return summary.serialNumber === identity.serialNumber && summary.issuer === identity.issuer;
  });
}

/** A file whose signatures esign does not extend (XADES_REFUSED, exit 7), with what to do. */
function notExtendable(file: string, reason: string, hint: string): EsignError {
  return new EsignError('XADES_REFUSED', `${file}: ${reason}`, { hint, details: { file } });
}

/** The signature's own digest where esign stamps with it (SHA-256, -384, -512), else SHA-256. */
function digestOf(signature: ReadSignature): DigestName {
  const named = xmlSignatureScheme(signature.signatureMethod)?.hash;
  return named === 'sha384' || named === 'sha512' ? named : 'sha256';
}

/** An Id no element of the document has: `base`, or `base-2`, `base-3`… */
function freshId(ids: Set<string>, base: string): string {
  let id = base;
  for (let n = 2; ids.has(id); n++) id = `${base}-${n}`;
  ids.add(id);
  return id;
}

/**
 * `bytes` with `xml` put as the last child of the signature's UnsignedSignatureProperties: before
 * its end tag; made (with UnsignedProperties when missing too) in the signature's own prefixes.
 */
function appendUnsigned(bytes: Uint8Array, parsed: Parsed, xml: string): Uint8Array {
  const spans = elementSpans(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('latin1'));
  const order = new Map(descendants(parsed.doc.documentElement!).map((element, i) => [element, i]));
  const span = (element: XmlElement): Span => {
    const found = spans[order.get(element) ?? -1];
    if (!found) throw new EsignError('INTERNAL', `esign lost track of <${element.nodeName}> in the document.`);
    return found;
  };
  const qualifying = parsed.signature.qualifyingProperties!;
  const prefix = qualifying.prefix ? `${qualifying.prefix}:` : '';
  const unsignedProperties = childrenNamed(qualifying, NS.xades, 'UnsignedProperties')[0];
  const signatureProperties = childrenNamed(unsignedProperties, NS.xades, 'UnsignedSignatureProperties')[0];
  if (signatureProperties)
    return insertInto(bytes, span(signatureProperties), signatureProperties.nodeName, xml, 'end');
  const wrapped = `<${prefix}UnsignedSignatureProperties>${xml}</${prefix}UnsignedSignatureProperties>`;
  if (unsignedProperties)
    return insertInto(bytes, span(unsignedProperties), unsignedProperties.nodeName, wrapped, 'start');
  return insertInto(
    bytes,
    span(qualifying),
    qualifying.nodeName,
    `<${prefix}UnsignedProperties>${wrapped}</${prefix}UnsignedProperties>`,
    'end',
  );
}

function insertInto(bytes: Uint8Array, span: Span, name: string, xml: string, where: 'start' | 'end'): Uint8Array {
  if (span.selfClosing) {
    // `<x/>` becomes `<x>…</x>`: only its closing `/>` is rewritten.
    return splice(bytes, span.openEnd - 2, span.openEnd, `>${xml}</${name}>`);
  }
  const at = where === 'start' ? span.openEnd : span.closeStart;
  return splice(bytes, at, at, xml);
}

function splice(bytes: Uint8Array, from: number, to: number, xml: string): Uint8Array {
  const inserted = Buffer.from(xml, 'ascii');
  const out = new Uint8Array(from + inserted.length + bytes.length - to);
  out.set(bytes.subarray(0, from), 0);
  out.set(inserted, from);
  out.set(bytes.subarray(to), from + inserted.length);
  return out;
}

/** Where an element's tags are in the document's bytes. */
export interface Span {
  /** Just past the start tag's `>`. */
  openEnd: number;
  /** The `<` of the end tag (for an empty-element tag, its `/`). */
  closeStart: number;
  selfClosing: boolean;
}

/**
 * The elements of a well-formed document (its bytes read as Latin-1, so that an index is a byte
 * offset: in any ASCII-compatible encoding, markup is ASCII), in document order of their start
 * tags, as a DOM lists them. Comments, CDATA sections, processing instructions and quoted attribute
 * values are stepped over.
 */
export function elementSpans(text: string): Span[] {
  const spans: Span[] = [];
  const open: Span[] = [];
  const past = (from: number, end: string): number => {
    const at = text.indexOf(end, from);
    if (at < 0) throw new EsignError('INTERNAL', `esign lost track of the document's markup (no ${end}).`);
    return at + end.length;
  };
  for (let i = text.indexOf('<'); i >= 0; i = text.indexOf('<', i)) {
    if (text.startsWith('<!--', i)) i = past(i + 4, '-->');
    else if (text.startsWith('<![CDATA[', i)) i = past(i + 9, ']]>');
    else if (text.startsWith('<?', i)) i = past(i + 2, '?>');
    else if (text.startsWith('<!', i)) i = past(i + 2, '>');
    else if (text[i + 1] === '/') {
      const span = open.pop();
      if (!span) throw new EsignError('INTERNAL', "esign lost track of the document's markup (an unopened end tag).");
      span.closeStart = i;
      i = past(i, '>');
    } else {
      let j = i + 1;
      for (let quote = ''; j < text.length; j++) {
        const c = text[j];
        if (quote) {
          if (c === quote) quote = '';
        } else if (c === '"' || c === "'") quote = c;
        else if (c === '>') break;
      }
      const selfClosing = text[j - 1] === '/';
      const span: Span = { openEnd: j + 1, closeStart: selfClosing ? j - 1 : -1, selfClosing };
      spans.push(span);
      if (!selfClosing) open.push(span);
      i = j + 1;
    }
  }
  return spans;
}
