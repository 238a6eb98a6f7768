/**
 * OCSP (RFC 6960) for long-term validation: a one-certificate OCSPRequest with a SHA-1 CertID
 * (what responders expect), and the checks a response must pass before it goes into the DSS:
 * status successful, a SingleResponse for exactly our CertID, and a signature by the issuer or by
 * a responder certificate the issuer delegated with id-kp-OCSPSigning.
 */
import { createHash, verify } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { readCertificate } from '../cms/certificate.js';
import { derNull, objectIdentifier, octetString, sequence } from '../cms/der.js';
import { EsignError } from '../errors.js';
import { bytesEqual } from '../cms/parse.js';
import { OID_KP_OCSP_SIGNING, certificateFacts, displayName, isIssuedBy, normalizeSerial } from './certificates.js';
import type { CertificateFacts } from './certificates.js';
import { signatureHashName } from './signature-algorithms.js';

const OID_SHA1 = '1.3.14.3.2.26';
const OID_OCSP_BASIC = '1.3.6.1.5.5.7.48.1.1';
const RESPONSE_STATUS = [
  'successful',
  'malformedRequest',
  'internalError',
  'tryLater',
  '(unused)',
  'sigRequired',
  'unauthorized',
];

export type OcspCertStatus = { kind: 'good' } | { kind: 'revoked'; revokedAt: Date } | { kind: 'unknown' };

export interface CheckedOcspResponse {
  der: Uint8Array;
  status: OcspCertStatus;
  producedAt: Date;
  thisUpdate: Date;
  nextUpdate: Date | undefined;
  /** The certificate that signed the response (the issuer or its delegated responder). */
  responder: Uint8Array;
  /** Certificates the response carries. */
  certificates: Uint8Array[];
}

function issuerKeyBits(issuer: CertificateFacts): Uint8Array {
  const parsed = pkijs.Certificate.fromBER(issuer.der);
  return parsed.subjectPublicKeyInfo.subjectPublicKey.valueBlock.valueHexView;
}

/** The CertID hashes for `hashName` (sha1 unless a response used another). */
function certIdHashes(issuer: CertificateFacts, hashName: string): { nameHash: Buffer; keyHash: Buffer } {
  const issuerSubject = readCertificate(issuer.der).subject;
  return {
    nameHash: createHash(hashName).update(issuerSubject).digest(),
    keyHash: createHash(hashName).update(issuerKeyBits(issuer)).digest(),
  };
}

/** DER OCSPRequest for `certificate` issued by `issuer`: one Request, SHA-1 CertID, no extensions. */
export function buildOcspRequest(certificate: CertificateFacts, issuer: CertificateFacts): Uint8Array {
  const { nameHash, keyHash } = certIdHashes(issuer, 'sha1');
  const certId = sequence(
    sequence(objectIdentifier(OID_SHA1), derNull),
    octetString(nameHash),
    octetString(keyHash),
    readCertificate(certificate.der).serialNumberDer,
  );
  const request = sequence(certId);
  const tbsRequest = sequence(sequence(request));
  return sequence(tbsRequest);
}

function bad(url: string | undefined, reason: string): EsignError {
  return new EsignError(
    'REVOCATION_BAD_RESPONSE',
    `The OCSP response${url ? ` from ${url}` : ''} cannot be used: ${reason}.`,
    {
      hint: 'The OCSP responder answered with something esign cannot trust; try again later or ask the CA.',
      details: url ? { url } : undefined,
    },
  );
}

/** Checks an OCSPResponse about `certificate`; throws REVOCATION_BAD_RESPONSE when it cannot be used. */
export function checkOcspResponse(
  der: Uint8Array,
  certificate: CertificateFacts,
  issuer: CertificateFacts,
  url?: string,
): CheckedOcspResponse {
  let response: pkijs.OCSPResponse;
  let basic: pkijs.BasicOCSPResponse;
  let tbsBytes: Uint8Array;
  try {
    response = pkijs.OCSPResponse.fromBER(der);
    const status = response.responseStatus.valueBlock.valueDec;
    if (status !== 0) throw bad(url, `the responder answered ${RESPONSE_STATUS[status] ?? `status ${status}`}`);
    if (!response.responseBytes || response.responseBytes.responseType !== OID_OCSP_BASIC)
      throw bad(url, 'it is not a basic OCSP response');
    const basicDer = response.responseBytes.response.valueBlock.valueHexView;
    basic = pkijs.BasicOCSPResponse.fromBER(basicDer);
    const decoded = asn1js.fromBER(basicDer);
    const tbs = (decoded.result as asn1js.Sequence).valueBlock.value[0];
    if (!tbs) throw bad(url, 'it has no tbsResponseData');
    tbsBytes = tbs.valueBeforeDecodeView;
  } catch (error) {
    if (error instanceof EsignError) throw error;
    throw bad(url, `it is not a valid OCSPResponse (${(error as Error).message})`);
  }
  const serial = normalizeSerial(readCertificate(certificate.der).serialNumber);
  const single = basic.tbsResponseData.responses.find((entry) => {
    const hashName =
      entry.certID.hashAlgorithm.algorithmId === OID_SHA1
        ? 'sha1'
        : hashNameOfDigest(entry.certID.hashAlgorithm.algorithmId);
    if (hashName === undefined) return false;
    const expected = certIdHashes(issuer, hashName);
    return (
      normalizeSerial(Buffer.from(entry.certID.serialNumber.valueBlock.valueHexView).toString('hex')) === serial &&
      expected.nameHash.equals(entry.certID.issuerNameHash.valueBlock.valueHexView) &&
      expected.keyHash.equals(entry.certID.issuerKeyHash.valueBlock.valueHexView)
    );
  });
  if (!single) throw bad(url, `it says nothing about ${displayName(certificate)} (serial ${serial})`);

  const certificates = (basic.certs ?? []).map((cert) => new Uint8Array(cert.toSchema().toBER(false)));
  const hashName = signatureHashName(basic.signatureAlgorithm.algorithmId);
  if (hashName === undefined)
    throw bad(url, `its signature algorithm ${basic.signatureAlgorithm.algorithmId} is not supported`);
  const signature = basic.signature.valueBlock.valueHexView;
  const candidates = [issuer, ...certificates.map((cert) => certificateFacts(cert))];
  const responder = candidates.find((candidate) => {
    const authorized =
      candidate === issuer ||
      bytesEqual(candidate.der, issuer.der) ||
      (isIssuedBy(candidate, issuer) && candidate.extendedKeyUsages.includes(OID_KP_OCSP_SIGNING));
    if (!authorized) return false;
    try {
      return verify(hashName, tbsBytes, candidate.x509.publicKey, signature);
    } catch {
      return false;
    }
  });
  if (!responder)
    throw bad(url, `it is not signed by ${displayName(issuer)} or a responder it authorized (id-kp-OCSPSigning)`);

  const tag = single.certStatus.idBlock.tagNumber;
  let status: OcspCertStatus;
  if (tag === 0) status = { kind: 'good' };
  else if (tag === 1) {
    const inner = (single.certStatus as asn1js.Constructed).valueBlock.value[0];
    status = { kind: 'revoked', revokedAt: inner instanceof asn1js.GeneralizedTime ? inner.toDate() : new Date(0) };
  } else status = { kind: 'unknown' };
  return {
    der,
    status,
    producedAt: basic.tbsResponseData.producedAt,
    thisUpdate: single.thisUpdate,
    nextUpdate: single.nextUpdate,
    responder: responder.der,
    certificates,
  };
}

function hashNameOfDigest(oid: string): string | undefined {
  return { '2.16.840.1.101.3.4.2.1': 'sha256', '2.16.840.1.101.3.4.2.2': 'sha384', '2.16.840.1.101.3.4.2.3': 'sha512' }[
    oid
  ];
}
