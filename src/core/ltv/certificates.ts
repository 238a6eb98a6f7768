/**
 * What long-term validation needs to know about a certificate: who issued it (checked by the
 * signature, not only by name), where its revocation status is published (AIA OCSP, CRL
 * distribution points), where its issuer can be fetched (AIA caIssuers), and whether it is an
 * OCSP responder that needs no status of its own (id-pkix-ocsp-nocheck).
 */
import { X509Certificate } from 'node:crypto';
import * as pkijs from 'pkijs';
import { issuedBy } from '../certificate-links.js';

const OID_CRL_DP = '2.5.29.31';
const OID_AIA = '1.3.6.1.5.5.7.1.1';
const OID_EKU = '2.5.29.37';
const OID_AD_OCSP = '1.3.6.1.5.5.7.48.1';
const OID_AD_CA_ISSUERS = '1.3.6.1.5.5.7.48.2';
const OID_OCSP_NOCHECK = '1.3.6.1.5.5.7.48.1.5';
export const OID_KP_OCSP_SIGNING = '1.3.6.1.5.5.7.3.9';
const GENERAL_NAME_URI = 6;

export interface CertificateFacts {
  der: Uint8Array;
  x509: X509Certificate;
  subject: string;
  serialNumber: string;
  ocspUrls: string[];
  crlUrls: string[];
  caIssuersUrls: string[];
  extendedKeyUsages: string[];
  ocspNoCheck: boolean;
  selfSigned: boolean;
}

const cache = new WeakMap<Uint8Array, CertificateFacts>();

/** Reads the facts of a DER certificate (memoized per byte array). */
export function certificateFacts(der: Uint8Array): CertificateFacts {
  const cached = cache.get(der);
  if (cached) return cached;
  const x509 = new X509Certificate(der);
  const parsed = pkijs.Certificate.fromBER(der);
  const extensions = parsed.extensions ?? [];
  const ocspUrls: string[] = [];
  const caIssuersUrls: string[] = [];
  const crlUrls: string[] = [];
  let extendedKeyUsages: string[] = [];
  for (const extension of extensions) {
    if (extension.extnID === OID_AIA && extension.parsedValue instanceof pkijs.InfoAccess) {
      for (const description of extension.parsedValue.accessDescriptions) {
        const url = uriOf(description.accessLocation);
        if (url === undefined) continue;
        if (description.accessMethod === OID_AD_OCSP) ocspUrls.push(url);
        else if (description.accessMethod === OID_AD_CA_ISSUERS) caIssuersUrls.push(url);
      }
    } else if (extension.extnID === OID_CRL_DP && extension.parsedValue instanceof pkijs.CRLDistributionPoints) {
      for (const point of extension.parsedValue.distributionPoints) {
        const names = Array.isArray(point.distributionPoint) ? point.distributionPoint : [];
        for (const generalName of names) {
          if (!(generalName instanceof pkijs.GeneralName)) continue;
          const url = uriOf(generalName);
          if (url !== undefined) crlUrls.push(url);
        }
      }
    } else if (extension.extnID === OID_EKU && extension.parsedValue instanceof pkijs.ExtKeyUsage) {
      extendedKeyUsages = extension.parsedValue.keyPurposes;
    }
  }
  const facts: CertificateFacts = {
    der,
    x509,
    subject: x509.subject.replace(/\n/g, ', '),
    serialNumber: normalizeSerial(x509.serialNumber),
    ocspUrls,
    crlUrls,
    caIssuersUrls,
    extendedKeyUsages,
    ocspNoCheck: extensions.some((extension) => extension.extnID === OID_OCSP_NOCHECK),
    selfSigned: x509.subject === x509.issuer && safeVerify(x509, x509),
  };
  cache.set(der, facts);
  return facts;
}

function uriOf(name: pkijs.GeneralName): string | undefined {
  return name.type === GENERAL_NAME_URI && typeof name.value === 'string' ? name.value : undefined;
}

/** Whether `issuer` issued `subject`: names chain and the signature verifies with the issuer's key. */
export function isIssuedBy(subject: CertificateFacts, issuer: CertificateFacts): boolean {
  return issuedBy(subject.x509, issuer.x509);
}

function safeVerify(subject: X509Certificate, issuer: X509Certificate): boolean {
  try {
    return subject.verify(issuer.publicKey);
  } catch {
    return false;
  }
}

/** A short name for messages: the subject's CN, else the whole subject. */
export function displayName(facts: CertificateFacts): string {
  return /(?:^|, )CN=([^,]+)/.exec(facts.subject)?.[1] ?? facts.subject;
}

/** A serial number as lower-case hex without leading zeros, for comparisons. */
export function normalizeSerial(hex: string): string {
  return hex.toLowerCase().replace(/^0+(?=.)/, '');
}
