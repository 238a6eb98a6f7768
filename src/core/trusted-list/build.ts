/**
 * Writes and signs trusted lists (TS 119 612 v2 subset): the sandbox publishes its TEST lists with
 * this, and tests make lists to attack. The signature is what a real scheme operator makes: enveloped,
 * one Reference with URI "" (enveloped-signature + exclusive c14n), the signer's certificate in KeyInfo.
 */
import { X509Certificate, type KeyObject } from 'node:crypto';
import { SignedXml } from 'xml-crypto';
import type { CriteriaList, Qualification, TrustedListPointer } from './model.js';
import { LOTL_TYPE, TEST_LIST_RULES_URI } from './parse.js';

export interface ListDescription {
  territory: string;
  operator: string;
  sequenceNumber: number;
  issueDate: Date;
  nextUpdate: Date;
  /** Marks a sandbox TEST list (SchemeTypeCommunityRules). */
  test?: boolean;
  /** LOTL: the lists it points to, and the pivot LOTL addresses. */
  pointers?: TrustedListPointer[];
  pivots?: string[];
  providers?: ProviderDescription[];
}

export interface ProviderDescription {
  name: string;
  tradeNames?: string[];
  services: ServiceDescription[];
}

export interface ServiceDescription {
  name: string;
  type: string;
  /** DER, base64. */
  certificates: string[];
  /** Current status first, then older ones. */
  history: Array<{
    /** This entry's own ServiceTypeIdentifier (history instances only; the service's by default). */
    type?: string;
    status: string;
    from: Date;
    additionalServiceInformation?: string[];
    qualifications?: Qualification[];
  }>;
}

const NATIONAL_TYPE = 'http://uri.etsi.org/TrstSvc/TrustedList/TSLType/EUgeneric';
/** The MRA schema's namespace, where QcStatementSet is defined (DSS reads it from there). */
const MRA = 'http://ec.europa.eu/tools/lotl/mra/schema/v2#';

export function trustedListXml(list: ListDescription): string {
  const isLotl = (list.pointers ?? []).length > 0 || list.territory === 'EU';
  const rules = [
    isLotl
      ? 'http://uri.etsi.org/TrstSvc/TrustedList/schemerules/EUlistofthelists'
      : 'http://uri.etsi.org/TrstSvc/TrustedList/schemerules/EUcommon',
    ...(list.test ? [TEST_LIST_RULES_URI] : []),
  ];
  return (
    '<?xml version="1.0" encoding="UTF-8"?>' +
    `<tsl:TrustServiceStatusList xmlns:tsl="http://uri.etsi.org/02231/v2#" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" Id="tsl-${esc(list.territory)}" TSLTag="http://uri.etsi.org/19612/TSLTag">` +
    '<tsl:SchemeInformation>' +
    '<tsl:TSLVersionIdentifier>5</tsl:TSLVersionIdentifier>' +
    `<tsl:TSLSequenceNumber>${list.sequenceNumber}</tsl:TSLSequenceNumber>` +
    `<tsl:TSLType>${isLotl ? LOTL_TYPE : NATIONAL_TYPE}</tsl:TSLType>` +
    `<tsl:SchemeOperatorName>${name(list.operator)}</tsl:SchemeOperatorName>` +
    (list.pivots?.length
      ? `<tsl:SchemeInformationURI>${list.pivots.map((uri) => `<tsl:URI xml:lang="en">${esc(uri)}</tsl:URI>`).join('')}</tsl:SchemeInformationURI>`
      : '') +
    `<tsl:SchemeTypeCommunityRules>${rules.map((uri) => `<tsl:URI xml:lang="en">${esc(uri)}</tsl:URI>`).join('')}</tsl:SchemeTypeCommunityRules>` +
    `<tsl:SchemeTerritory>${esc(list.territory)}</tsl:SchemeTerritory>` +
    (list.pointers?.length
      ? `<tsl:PointersToOtherTSL>${list.pointers.map(pointerXml).join('')}</tsl:PointersToOtherTSL>`
      : '') +
    `<tsl:ListIssueDateTime>${xmlDate(list.issueDate)}</tsl:ListIssueDateTime>` +
    `<tsl:NextUpdate><tsl:dateTime>${xmlDate(list.nextUpdate)}</tsl:dateTime></tsl:NextUpdate>` +
    '</tsl:SchemeInformation>' +
    (list.providers?.length
      ? `<tsl:TrustServiceProviderList>${list.providers.map(providerXml).join('')}</tsl:TrustServiceProviderList>`
      : '') +
    '</tsl:TrustServiceStatusList>'
  );
}

/** Signs a list the way scheme operators do; `certificate` is DER base64 and goes in KeyInfo. */
export function signTrustedList(xml: string, privateKey: KeyObject, certificate: string): string {
  const keyType = privateKey.asymmetricKeyType;
  if (keyType !== 'rsa') throw new Error(`trusted lists are signed here with RSA keys, not ${keyType}`);
  const signer = new SignedXml({
    privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    publicCert: new X509Certificate(Buffer.from(certificate, 'base64')).toString(),
    signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
  });
  signer.addReference({
    xpath: '/*',
    transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'],
    digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
    isEmptyUri: true,
  });
  signer.computeSignature(xml, { prefix: 'ds', location: { reference: '/*', action: 'append' } });
  return signer.getSignedXml();
}

function pointerXml(pointer: TrustedListPointer): string {
  const identities = pointer.signingCertificates
    .map(
      (cert) =>
        `<tsl:ServiceDigitalIdentity><tsl:DigitalId><tsl:X509Certificate>${cert}</tsl:X509Certificate></tsl:DigitalId></tsl:ServiceDigitalIdentity>`,
    )
    .join('');
  return (
    '<tsl:OtherTSLPointer>' +
    `<tsl:ServiceDigitalIdentities>${identities}</tsl:ServiceDigitalIdentities>` +
    `<tsl:TSLLocation>${esc(pointer.location)}</tsl:TSLLocation>` +
    '<tsl:AdditionalInformation>' +
    `<tsl:OtherInformation><tsl:TSLType>${NATIONAL_TYPE}</tsl:TSLType></tsl:OtherInformation>` +
    `<tsl:OtherInformation><tsl:SchemeTerritory>${esc(pointer.territory)}</tsl:SchemeTerritory></tsl:OtherInformation>` +
    `<tsl:OtherInformation><ns3:MimeType xmlns:ns3="http://uri.etsi.org/02231/v2/additionaltypes#">${esc(pointer.mimeType)}</ns3:MimeType></tsl:OtherInformation>` +
    '</tsl:AdditionalInformation>' +
    '</tsl:OtherTSLPointer>'
  );
}

function providerXml(provider: ProviderDescription): string {
  return (
    '<tsl:TrustServiceProvider><tsl:TSPInformation>' +
    `<tsl:TSPName>${name(provider.name)}</tsl:TSPName>` +
    (provider.tradeNames?.length
      ? `<tsl:TSPTradeName>${provider.tradeNames.map(name).join('')}</tsl:TSPTradeName>`
      : '') +
    '</tsl:TSPInformation><tsl:TSPServices>' +
    provider.services.map(serviceXml).join('') +
    '</tsl:TSPServices></tsl:TrustServiceProvider>'
  );
}

function serviceXml(service: ServiceDescription): string {
  const [current, ...older] = service.history;
  if (!current) throw new Error(`service ${service.name} has no status`);
  const identity = `<tsl:ServiceDigitalIdentity>${service.certificates
    .map((cert) => `<tsl:DigitalId><tsl:X509Certificate>${cert}</tsl:X509Certificate></tsl:DigitalId>`)
    .join('')}</tsl:ServiceDigitalIdentity>`;
  const statusXml = (period: ServiceDescription['history'][number]) =>
    `<tsl:ServiceStatus>${esc(period.status)}</tsl:ServiceStatus>` +
    `<tsl:StatusStartingTime>${xmlDate(period.from)}</tsl:StatusStartingTime>` +
    extensionsXml(period);
  const history = older.length
    ? `<tsl:ServiceHistory>${older
        .map(
          (period) =>
            `<tsl:ServiceHistoryInstance><tsl:ServiceTypeIdentifier>${esc(period.type ?? service.type)}</tsl:ServiceTypeIdentifier>` +
            `<tsl:ServiceName>${name(service.name)}</tsl:ServiceName>${identity}${statusXml(period)}</tsl:ServiceHistoryInstance>`,
        )
        .join('')}</tsl:ServiceHistory>`
    : '';
  return (
    '<tsl:TSPService><tsl:ServiceInformation>' +
    `<tsl:ServiceTypeIdentifier>${esc(service.type)}</tsl:ServiceTypeIdentifier>` +
    `<tsl:ServiceName>${name(service.name)}</tsl:ServiceName>` +
    identity +
    statusXml(current) +
    '</tsl:ServiceInformation>' +
    history +
    '</tsl:TSPService>'
  );
}

function extensionsXml(period: ServiceDescription['history'][number]): string {
  const extensions = [
    ...(period.additionalServiceInformation ?? []).map(
      (uri) =>
        `<tsl:Extension Critical="false"><tsl:AdditionalServiceInformation><tsl:URI xml:lang="en">${esc(uri)}</tsl:URI></tsl:AdditionalServiceInformation></tsl:Extension>`,
    ),
    ...(period.qualifications?.length
      ? [
          '<tsl:Extension Critical="true"><ecc:Qualifications xmlns:ecc="http://uri.etsi.org/TrstSvc/SvcInfoExt/eSigDir-1999-93-EC-TrustedList/#">' +
            period.qualifications
              .map(
                (q) =>
                  `<ecc:QualificationElement><ecc:Qualifiers>${q.qualifiers
                    .map((uri) => `<ecc:Qualifier uri="${esc(uri)}"/>`)
                    .join('')}</ecc:Qualifiers>${criteriaXml(q.criteria)}</ecc:QualificationElement>`,
              )
              .join('') +
            '</ecc:Qualifications></tsl:Extension>',
        ]
      : []),
  ];
  return extensions.length
    ? `<tsl:ServiceInformationExtensions>${extensions.join('')}</tsl:ServiceInformationExtensions>`
    : '';
}

function criteriaXml(criteria: CriteriaList): string {
  const identifier = (oid: string) =>
    `<xades:Identifier xmlns:xades="http://uri.etsi.org/01903/v1.3.2#" Qualifier="OIDAsURN">urn:oid:${esc(oid)}</xades:Identifier>`;
  const other = [
    ...criteria.extendedKeyUsage.map(
      (set) =>
        `<ns3:ExtendedKeyUsage>${set.map((oid) => `<ns3:KeyPurposeId>${identifier(oid)}</ns3:KeyPurposeId>`).join('')}</ns3:ExtendedKeyUsage>`,
    ),
    ...criteria.subjectAttributes.map(
      (set) =>
        `<ns3:CertSubjectDNAttribute>${set.map((oid) => `<ns3:AttributeOID>${identifier(oid)}</ns3:AttributeOID>`).join('')}</ns3:CertSubjectDNAttribute>`,
    ),
    ...(criteria.qcStatementSets ?? []).map(
      (set) =>
        `<mra:QcStatementSet xmlns:mra="${MRA}">${set
          .map(
            (statement) =>
              `<mra:QcStatement><mra:QcStatementId>${identifier(statement.id)}</mra:QcStatementId>${
                statement.qcType
                  ? `<mra:QcStatementInfo><mra:QcType>${identifier(statement.qcType)}</mra:QcType></mra:QcStatementInfo>`
                  : statement.legislation
                    ? `<mra:QcStatementInfo><mra:QcCClegislation>${esc(statement.legislation)}</mra:QcCClegislation></mra:QcStatementInfo>`
                    : ''
              }</mra:QcStatement>`,
          )
          .join('')}</mra:QcStatementSet>`,
    ),
    // Criteria esign does not know, for the tests of lists that use them.
    ...(criteria.unsupported ?? []).map(
      (name) => `<x:${esc(name.replace(/^.*\//, ''))} xmlns:x="urn:esign:test:unknown-criterion"/>`,
    ),
  ];
  return (
    `<ecc:CriteriaList assert="${criteria.assert}">` +
    criteria.keyUsage
      .map(
        (usage) =>
          `<ecc:KeyUsage>${Object.entries(usage)
            .map(([bit, value]) => `<ecc:KeyUsageBit name="${esc(bit)}">${value}</ecc:KeyUsageBit>`)
            .join('')}</ecc:KeyUsage>`,
      )
      .join('') +
    criteria.policySets
      .map(
        (set) =>
          `<ecc:PolicySet>${set.map((oid) => `<ecc:PolicyIdentifier>${identifier(oid)}</ecc:PolicyIdentifier>`).join('')}</ecc:PolicySet>`,
      )
      .join('') +
    criteria.criteriaLists.map(criteriaXml).join('') +
    (other.length
      ? `<ecc:otherCriteriaList xmlns:ns3="http://uri.etsi.org/02231/v2/additionaltypes#">${other.join('')}</ecc:otherCriteriaList>`
      : '') +
    '</ecc:CriteriaList>'
  );
}

function name(text: string): string {
  return `<tsl:Name xml:lang="en">${esc(text)}</tsl:Name>`;
}

function xmlDate(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
