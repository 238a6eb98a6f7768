/**
 * Reads a trusted list (ETSI TS 119 612 v2) into the compact TrustedListSnapshot. It is given only the
 * canonical signed content that verifyTrustedListXml returned, so every value comes from the covered
 * document. Elements are matched by namespace and local name, as direct children, never by search.
 */
import { EsignError } from '../errors.js';
import type { XmlElement } from '../xml/types/xml-libs.js';
import type {
  CriteriaList,
  QcStatementCriterion,
  Qualification,
  ServiceIdentity,
  ServiceStatusPeriod,
  TrustService,
  TrustedListPointer,
  TrustedListSnapshot,
} from './model.js';
import { parseCheckedXml, verifyTrustedListXml, type VerifiedTrustedListXml } from './xml-signature.js';

const TSL = 'http://uri.etsi.org/02231/v2#';
const ADDITIONAL = 'http://uri.etsi.org/02231/v2/additionaltypes#';
const ECC = 'http://uri.etsi.org/TrstSvc/SvcInfoExt/eSigDir-1999-93-EC-TrustedList/#';
const XADES = 'http://uri.etsi.org/01903/v1.3.2#';
const XML_NS = 'http://www.w3.org/XML/1998/namespace';

export const LOTL_TYPE = 'http://uri.etsi.org/TrstSvc/TrustedList/TSLType/EUlistofthelists';
/** A SchemeTypeCommunityRules URI that marks the sandbox's TEST lists (docs/trust.md). */
export const TEST_LIST_RULES_URI = 'urn:esign:sandbox:test-list';

/** Checks a list's signature against `trustedCertificates` and reads what it covers. */
export function readTrustedList(
  bytes: Uint8Array,
  trustedCertificates: readonly string[],
  source: string,
  name = source,
): TrustedListSnapshot {
  const verified = verifyTrustedListXml(bytes, trustedCertificates, name);
  return snapshotOf(verified, source, name);
}

export function snapshotOf(verified: VerifiedTrustedListXml, source: string, name: string): TrustedListSnapshot {
  const root = parseCheckedXml(verified.signedXml, name).documentElement!;
  const read = new Reader(name);
  const info = read.one(root, TSL, 'SchemeInformation');
  const type = read.text(read.one(info, TSL, 'TSLType'));
  const territory = read.text(read.one(info, TSL, 'SchemeTerritory'));
  const isLotl = type === LOTL_TYPE || /EUlistofthelists$/.test(type);
  const sequence = Number(read.text(read.one(info, TSL, 'TSLSequenceNumber')));
  if (!Number.isSafeInteger(sequence) || sequence < 0) read.fail('TSLSequenceNumber is not a number');
  const nextUpdate = read.optional(info, TSL, 'NextUpdate');
  const nextUpdateTime = nextUpdate ? read.optional(nextUpdate, TSL, 'dateTime') : undefined;
  const rules = read.children(read.optional(info, TSL, 'SchemeTypeCommunityRules'), TSL, 'URI').map(read.text);
  const schemeUris = read.children(read.optional(info, TSL, 'SchemeInformationURI'), TSL, 'URI').map(read.text);
  return {
    territory: isLotl ? 'EU' : territory,
    isLotl,
    type,
    sequenceNumber: sequence,
    issueDate: read.date(read.one(info, TSL, 'ListIssueDateTime')),
    nextUpdate: nextUpdateTime ? read.date(nextUpdateTime) : null,
    operator: read.name(read.one(info, TSL, 'SchemeOperatorName')),
    source,
    test: rules.includes(TEST_LIST_RULES_URI),
    sha256: verified.sha256,
    signerCertificate: verified.signerCertificate,
    pointers: isLotl ? pointersOf(read, info) : [],
    pivots: isLotl ? schemeUris.filter((uri) => /\.xml$/i.test(uri)) : [],
    services: isLotl ? [] : servicesOf(read, root),
  };
}

function pointersOf(read: Reader, info: XmlElement): TrustedListPointer[] {
  const pointers: TrustedListPointer[] = [];
  for (const pointer of read.children(read.optional(info, TSL, 'PointersToOtherTSL'), TSL, 'OtherTSLPointer')) {
    const other = read.children(read.optional(pointer, TSL, 'AdditionalInformation'), TSL, 'OtherInformation');
    const value = (ns: string, localName: string) => {
      for (const entry of other) {
        const found = read.optional(entry, ns, localName);
        if (found) return read.text(found);
      }
      return '';
    };
    const certificates = read
      .children(read.optional(pointer, TSL, 'ServiceDigitalIdentities'), TSL, 'ServiceDigitalIdentity')
      .flatMap((identity) => read.children(identity, TSL, 'DigitalId'))
      .flatMap((id) => read.children(id, TSL, 'X509Certificate'))
      .map((cert) => read.text(cert).replace(/\s+/g, ''));
    const mimeType = value(ADDITIONAL, 'MimeType');
    // The LOTL points to each list twice, as XML and as PDF: esign reads the XML one.
    if (mimeType && !/xml/i.test(mimeType)) continue;
    pointers.push({
      territory: value(TSL, 'SchemeTerritory'),
      location: read.text(read.one(pointer, TSL, 'TSLLocation')),
      mimeType,
      signingCertificates: [...new Set(certificates)],
    });
  }
  return pointers;
}

function servicesOf(read: Reader, root: XmlElement): TrustService[] {
  const services: TrustService[] = [];
  const providers = read.children(read.optional(root, TSL, 'TrustServiceProviderList'), TSL, 'TrustServiceProvider');
  for (const provider of providers) {
    const tspInfo = read.one(provider, TSL, 'TSPInformation');
    const providerName = read.name(read.one(tspInfo, TSL, 'TSPName'));
    const tradeNames = read.children(read.optional(tspInfo, TSL, 'TSPTradeName'), TSL, 'Name').map(read.text);
    for (const service of read.children(read.optional(provider, TSL, 'TSPServices'), TSL, 'TSPService')) {
      const current = read.one(service, TSL, 'ServiceInformation');
      // In document order, as TS 119 612 §5.6 writes it and DSS reads it: each entry ends where the one before it starts.
      const type = read.text(read.one(current, TSL, 'ServiceTypeIdentifier'));
      const history = read
        .children(read.optional(service, TSL, 'ServiceHistory'), TSL, 'ServiceHistoryInstance')
        .map((instance) => periodOf(read, instance, type));
      services.push({
        provider: providerName,
        providerTradeNames: tradeNames,
        name: read.name(read.one(current, TSL, 'ServiceName')),
        type,
        identity: identityOf(read, read.one(current, TSL, 'ServiceDigitalIdentity')),
        history: [periodOf(read, current, type), ...history],
      });
    }
  }
  return services;
}

function identityOf(read: Reader, identity: XmlElement): ServiceIdentity {
  const ids = read.children(identity, TSL, 'DigitalId');
  const values = (localName: string) => ids.flatMap((id) => read.children(id, TSL, localName)).map(read.text);
  return {
    certificates: values('X509Certificate').map((cert) => cert.replace(/\s+/g, '')),
    subjectNames: values('X509SubjectName'),
    subjectKeyIdentifiers: values('X509SKI').map((ski) => Buffer.from(ski, 'base64').toString('hex')),
  };
}

function periodOf(read: Reader, info: XmlElement, serviceType: string): ServiceStatusPeriod {
  const typeElement = read.optional(info, TSL, 'ServiceTypeIdentifier');
  const type = typeElement ? read.text(typeElement) : serviceType;
  const period: ServiceStatusPeriod = {
    ...(type !== serviceType ? { type } : {}),
    status: read.text(read.one(info, TSL, 'ServiceStatus')),
    from: read.date(read.one(info, TSL, 'StatusStartingTime')),
    additionalServiceInformation: [],
    qualifications: [],
  };
  for (const extension of read.children(read.optional(info, TSL, 'ServiceInformationExtensions'), TSL, 'Extension')) {
    for (const additional of read.children(extension, TSL, 'AdditionalServiceInformation')) {
      period.additionalServiceInformation.push(read.text(read.one(additional, TSL, 'URI')));
    }
    for (const qualifications of read.children(extension, ECC, 'Qualifications')) {
      for (const element of read.children(qualifications, ECC, 'QualificationElement')) {
        period.qualifications.push(qualificationOf(read, element));
      }
    }
    const expired = read.optional(extension, TSL, 'ExpiredCertsRevocationInfo');
    if (expired) period.expiredCertsRevocationInfo = read.date(expired);
  }
  return period;
}

function qualificationOf(read: Reader, element: XmlElement): Qualification {
  return {
    qualifiers: read
      .children(read.one(element, ECC, 'Qualifiers'), ECC, 'Qualifier')
      .map((qualifier) => qualifier.getAttribute('uri') ?? ''),
    criteria: criteriaOf(read, read.one(element, ECC, 'CriteriaList')),
  };
}

function criteriaOf(read: Reader, list: XmlElement): CriteriaList {
  const assert = list.getAttribute('assert') ?? 'all';
  if (assert !== 'all' && assert !== 'atLeastOne' && assert !== 'none') read.fail(`CriteriaList assert="${assert}"`);
  const other = read.optional(list, ECC, 'otherCriteriaList');
  const identifiers = (parent: XmlElement | undefined, setName: string, ns: string, itemName: string) =>
    read
      .children(parent, ns, setName)
      .map((set) => read.children(set, ns, itemName).map((item) => oidOf(read, read.one(item, XADES, 'Identifier'))));
  const qcStatementSets: QcStatementCriterion[][] = [];
  const unsupported: string[] = [];
  for (let node = other?.firstChild; node; node = node.nextSibling) {
    if (node.nodeType !== 1) continue;
    const element = node as XmlElement;
    if (
      element.namespaceURI === ADDITIONAL &&
      (element.localName === 'ExtendedKeyUsage' || element.localName === 'CertSubjectDNAttribute')
    )
      continue;
    if (element.localName === 'QcStatementSet') qcStatementSets.push(qcStatementSetOf(read, element));
    else unsupported.push(`otherCriteriaList/${element.localName}`);
  }
  return {
    assert,
    ...(qcStatementSets.length > 0 ? { qcStatementSets } : {}),
    ...(unsupported.length > 0 ? { unsupported } : {}),
    keyUsage: read
      .children(list, ECC, 'KeyUsage')
      .map((usage) =>
        Object.fromEntries(
          read
            .children(usage, ECC, 'KeyUsageBit')
            .map((bit) => [bit.getAttribute('name') ?? '', read.text(bit).toLowerCase() === 'true']),
        ),
      ),
    policySets: identifiers(list, 'PolicySet', ECC, 'PolicyIdentifier'),
    extendedKeyUsage: identifiers(other, 'ExtendedKeyUsage', ADDITIONAL, 'KeyPurposeId'),
    subjectAttributes: identifiers(other, 'CertSubjectDNAttribute', ADDITIONAL, 'AttributeOID'),
    criteriaLists: read.children(list, ECC, 'CriteriaList').map((nested) => criteriaOf(read, nested)),
  };
}

/** A QcStatementSet (the MRA schema's QcStatementListType): QcStatement { QcStatementId, QcStatementInfo { QcType | QcCClegislation }? }. */
function qcStatementSetOf(read: Reader, set: XmlElement): QcStatementCriterion[] {
  const ns = set.namespaceURI ?? '';
  return read.children(set, ns, 'QcStatement').map((statement) => {
    const id = oidOf(read, read.one(read.one(statement, ns, 'QcStatementId'), XADES, 'Identifier'));
    const info = read.optional(statement, ns, 'QcStatementInfo');
    const qcType = info ? read.optional(info, ns, 'QcType') : undefined;
    const legislation = info ? read.optional(info, ns, 'QcCClegislation') : undefined;
    return {
      id,
      ...(qcType ? { qcType: oidOf(read, read.one(qcType, XADES, 'Identifier')) } : {}),
      ...(legislation ? { legislation: read.text(legislation).toUpperCase() } : {}),
    };
  });
}

function oidOf(read: Reader, identifier: XmlElement): string {
  return read.text(identifier).replace(/^urn:oid:/i, '');
}

/** Child-element access that fails with one line naming the list. */
class Reader {
  constructor(readonly listName: string) {}

  fail(reason: string): never {
    throw new EsignError('TRUST_LIST_MALFORMED', `${this.listName}: ${reason}`, {
      hint: 'Fetch the list again from its official address (esign trust update).',
      details: { list: this.listName },
    });
  }

  children = (parent: XmlElement | undefined, ns: string, localName: string): XmlElement[] => {
    const out: XmlElement[] = [];
    for (let node = parent?.firstChild; node; node = node.nextSibling) {
      if (
        node.nodeType === 1 &&
        (node as XmlElement).localName === localName &&
        (node as XmlElement).namespaceURI === ns
      ) {
        out.push(node as XmlElement);
      }
    }
    return out;
  };

  optional(parent: XmlElement | undefined, ns: string, localName: string): XmlElement | undefined {
    return this.children(parent, ns, localName)[0];
  }

  one(parent: XmlElement, ns: string, localName: string): XmlElement {
    return this.optional(parent, ns, localName) ?? this.fail(`no ${localName} in ${parent.localName}`);
  }

  text = (element: XmlElement): string => (element.textContent ?? '').trim();

  date(element: XmlElement): string {
    const time = Date.parse(this.text(element));
    if (Number.isNaN(time)) this.fail(`${element.localName} is not a date: ${this.text(element).slice(0, 40)}`);
    return new Date(time).toISOString();
  }

  /** A multilingual name: the English one, else the first. */
  name(element: XmlElement): string {
    const names = this.children(element, TSL, 'Name');
    const english = names.find((n) => (n.getAttributeNS(XML_NS, 'lang') ?? '').toLowerCase() === 'en');
    const chosen = english ?? names[0];
    return chosen ? this.text(chosen) : this.fail(`no Name in ${element.localName}`);
  }
}
