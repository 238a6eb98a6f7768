/**
 * The few facts CMS and TSP need from an X.509 certificate, read from its DER without
 * re-encoding anything: issuer and serial number (IssuerAndSerialNumber, ESSCertIDv2), subject key
 * identifier (SignerIdentifier), and extensions with their criticality (the TSA's extended key usage).
 */
import {
  Asn1StructureError,
  booleanValue,
  decode,
  encoded,
  explicitInner,
  integerHex,
  isContext,
  octets,
  oid,
  sequenceItems,
} from './der.js';
import type { Block } from './der.js';
import { OID } from './oids.js';
import { memoByContent } from './content-memo.js';

export interface CertificateExtension {
  oid: string;
  critical: boolean;
  /** Content of extnValue: the DER of the extension's own value. */
  value: Uint8Array;
}

export interface CertificateInfo {
  der: Uint8Array;
  /** DER of the issuer Name. */
  issuer: Uint8Array;
  /** DER of the subject Name. */
  subject: Uint8Array;
  /** DER of the serialNumber INTEGER (whole TLV). */
  serialNumberDer: Uint8Array;
  /** Serial number as lower-case hex without leading zero bytes. */
  serialNumber: string;
  extensions: CertificateExtension[];
  subjectKeyIdentifier: Uint8Array | undefined;
}

/**
 * Reads a DER certificate; throws Asn1StructureError when it is not one. Remembered by content
 * (bounded): a batch meets the same few certificates in every timestamp token and signature.
 */
export function readCertificate(der: Uint8Array): CertificateInfo {
  const info = readRemembered(der);
  return info.der === der ? info : { ...info, der };
}
const readRemembered = memoByContent(readCertificateFields);

function readCertificateFields(der: Uint8Array): CertificateInfo {
  const [tbs] = sequenceItems(decode(der, 'certificate'), 'certificate');
  const fields = sequenceItems(tbs, 'tbsCertificate');
  const offset = isContext(fields[0], 0) ? 1 : 0;
  const serial = fields[offset];
  const issuer = fields[offset + 2];
  const subject = fields[offset + 4];
  if (serial === undefined || issuer === undefined || subject === undefined)
    throw new Asn1StructureError('tbsCertificate: too few fields');
  sequenceItems(issuer, 'issuer');
  sequenceItems(subject, 'subject');
  const extensionsBlock = fields.slice(offset + 6).find((field) => isContext(field, 3));
  const extensions = extensionsBlock
    ? sequenceItems(explicitInner(extensionsBlock, 3, 'extensions'), 'extensions').map(readExtension)
    : [];
  const ski = extensions.find((extension) => extension.oid === OID.subjectKeyIdentifier);
  return {
    der,
    issuer: encoded(issuer),
    subject: encoded(subject),
    serialNumberDer: encoded(serial),
    serialNumber: integerHex(serial, 'serialNumber'),
    extensions,
    subjectKeyIdentifier: ski ? octets(decode(ski.value, 'subjectKeyIdentifier'), 'subjectKeyIdentifier') : undefined,
  };
}

function readExtension(block: Block): CertificateExtension {
  const items = sequenceItems(block, 'extension');
  const critical = items.length === 3 ? booleanValue(items[1], 'extension critical') : false;
  return { oid: oid(items[0], 'extnID'), critical, value: octets(items[items.length - 1], 'extnValue') };
}
