/**
 * The sandbox PKI's public endpoints under `/pki`: the root and issuing CA certificates, a CRL of
 * the issuing CA listing the revoked signer, and an OCSP responder (RFC 6960) for the signers,
 * answering as real ones do: POST (application/ocsp-request; not GET, see the route), application/ocsp-response, the nonce echoed when asked, `unknown`
 * for certificates it did not issue, thisUpdate/nextUpdate, signed by a delegated responder
 * certificate with id-pkix-ocsp-nocheck; CRLs with nextUpdate, a CRL number and the authority key
 * identifier. The quirk `sha1-revocation` signs both with SHA-1.
 */
import { createHash, createPublicKey, sign } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import type { SandboxDeps } from './deps.js';
import type { Router, SandboxResponse } from './http.js';
import { certificateTime, parseSubject, sha256WithRsa, signTbs } from './pki.js';
import type { SandboxPki } from './pki.js';

const OID_CRL_NUMBER = '2.5.29.20';
const OID_AUTHORITY_KEY_IDENTIFIER = '2.5.29.35';
const OID_SUBJECT_KEY_IDENTIFIER = '2.5.29.14';
const OID_CRL_REASON = '2.5.29.21';
const OID_OCSP_BASIC = '1.3.6.1.5.5.7.48.1.1';
const OID_OCSP_NONCE = '1.3.6.1.5.5.7.48.1.2';
const HASH_BY_OID: Record<string, string> = {
  '1.3.14.3.2.26': 'sha1',
  '2.16.840.1.101.3.4.2.1': 'sha256',
  '2.16.840.1.101.3.4.2.2': 'sha384',
  '2.16.840.1.101.3.4.2.3': 'sha512',
};
const CRL_VALIDITY_MS = 7 * 86_400_000;
const OCSP_VALIDITY_MS = 86_400_000;

/** OCSPResponseStatus (RFC 6960 §4.2.1). */
const OcspStatus = { successful: 0, malformedRequest: 1, internalError: 2, unauthorized: 6 } as const;

export function mountPki(router: Router, deps: SandboxDeps): void {
  const { pki, clock } = deps;
  router.get('/root.pem', () => ({
    status: 200,
    headers: { 'content-type': 'application/x-pem-file' },
    body: pki.rootPem,
  }));
  router.get('/root.crt', () => der('application/pkix-cert', pki.root.certificate));
  router.get('/issuing.crt', () => der('application/pkix-cert', pki.issuingCa.certificate));
  const hash = (): RevocationHash => (deps.quirks.list().includes('sha1-revocation') ? 'sha1' : 'sha256');
  router.get('/issuing.crl', () => der('application/pkix-crl', buildCrl(pki, clock.now(), 'issuing', hash())));
  router.get('/root.crl', () => der('application/pkix-crl', buildCrl(pki, clock.now(), 'root', hash())));
  router.post('/ocsp', (request) =>
    request.headers['content-type']?.split(';')[0]?.trim().toLowerCase() === 'application/ocsp-request'
      ? ocsp(pki, request.body, clock.now(), hash())
      : der('application/ocsp-response', ocspError(OcspStatus.malformedRequest)),
  );
  // POST only (RFC 6960 A.1 also has GET): NSS (pdfsig) asks by GET, and with a GET answer it calls
  // the certificate of the second of two signatures in a PDF "Unknown issue"; a 404 it ignores.
  router.get('/ocsp', () => der('application/ocsp-response', ocspError(OcspStatus.malformedRequest)));
}

/** What the responder and the CRLs sign with: SHA-256, or SHA-1 under the quirk `sha1-revocation`. */
export type RevocationHash = 'sha256' | 'sha1';

function rsaWith(hash: RevocationHash): pkijs.AlgorithmIdentifier {
  return hash === 'sha1'
    ? new pkijs.AlgorithmIdentifier({ algorithmId: '1.2.840.113549.1.1.5', algorithmParams: new asn1js.Null() })
    : sha256WithRsa();
}

function der(contentType: string, body: Uint8Array): SandboxResponse {
  return { status: 200, headers: { 'content-type': contentType }, body };
}

/**
 * A v2 CRL signed by its CA: the issuing CA's lists the revoked signer certificates; the root's
 * covers the certificates the root issued (issuing CA, TSA) and lists none.
 */
export function buildCrl(
  pki: SandboxPki,
  now: Date,
  ca: 'issuing' | 'root' = 'issuing',
  hash: RevocationHash = 'sha256',
): Uint8Array {
  const issuer = ca === 'root' ? pki.root : pki.issuingCa;
  const revocations = ca === 'root' ? [] : pki.revocations;
  const crl = new pkijs.CertificateRevocationList({
    version: 1,
    signature: rsaWith(hash),
    issuer: parseSubject(issuer.certificate),
    thisUpdate: certificateTime(new Date(now.getTime() - 60_000)),
    nextUpdate: certificateTime(new Date(now.getTime() + CRL_VALIDITY_MS)),
  });
  crl.signatureAlgorithm = rsaWith(hash);
  if (revocations.length > 0) {
    crl.revokedCertificates = revocations.map(
      (revocation) =>
        new pkijs.RevokedCertificate({
          userCertificate: new asn1js.Integer({ valueHex: Buffer.from(revocation.serialNumberHex, 'hex') }),
          revocationDate: certificateTime(revocation.revokedAt),
          crlEntryExtensions: new pkijs.Extensions({
            extensions: [
              // keyCompromise (1): the sandbox's "revoked" credential stands for a lost key.
              new pkijs.Extension({
                extnID: OID_CRL_REASON,
                extnValue: new asn1js.Enumerated({ value: 1 }).toBER(false),
              }),
            ],
          }),
        }),
    );
  }
  crl.crlExtensions = new pkijs.Extensions({
    extensions: [
      new pkijs.Extension({
        extnID: OID_AUTHORITY_KEY_IDENTIFIER,
        extnValue: authorityKeyIdentifier(issuer.certificate),
      }),
      new pkijs.Extension({
        extnID: OID_CRL_NUMBER,
        extnValue: new asn1js.Integer({ value: Math.floor(now.getTime() / 1000) }).toBER(false),
      }),
    ],
  });
  return signTbs(crl, issuer.privateKey, hash);
}

function authorityKeyIdentifier(issuerDer: Uint8Array): ArrayBuffer {
  const ski = pkijs.Certificate.fromBER(issuerDer).extensions?.find((e) => e.extnID === OID_SUBJECT_KEY_IDENTIFIER);
  const keyId = ski
    ? (asn1js.fromBER(ski.extnValue.valueBlock.valueHexView).result as asn1js.OctetString).valueBlock.valueHexView
    : new Uint8Array();
  return new pkijs.AuthorityKeyIdentifier({ keyIdentifier: new asn1js.OctetString({ valueHex: keyId }) })
    .toSchema()
    .toBER(false);
}

function ocsp(pki: SandboxPki, body: Uint8Array, now: Date, hash: RevocationHash): SandboxResponse {
  let response: Uint8Array;
  try {
    response = buildOcspResponse(pki, body, now, hash);
  } catch {
    response = ocspError(OcspStatus.malformedRequest);
  }
  return der('application/ocsp-response', response);
}

function ocspError(status: number): Uint8Array {
  return new Uint8Array(
    new pkijs.OCSPResponse({ responseStatus: new asn1js.Enumerated({ value: status }) }).toSchema().toBER(false),
  );
}

/**
 * Answers an OCSPRequest: good for the current signer certificates of the issuing CA, revoked for
 * the revoked one, unknown for a serial number of the issuing CA it did not issue; signed by the
 * delegated OCSP responder certificate. A request about no certificate of the issuing CA is
 * answered `unauthorized` (RFC 6960 §2.3: this responder is not authoritative for it).
 */
export function buildOcspResponse(
  pki: SandboxPki,
  requestDer: Uint8Array,
  now: Date,
  hash: RevocationHash = 'sha256',
): Uint8Array {
  const request = pkijs.OCSPRequest.fromBER(requestDer);
  const issuer = pkijs.Certificate.fromBER(pki.issuingCa.certificate);
  const issuerName = new Uint8Array(issuer.subject.toSchema().toBER(false));
  const issuerKey = issuer.subjectPublicKeyInfo.subjectPublicKey.valueBlock.valueHexView;
  const known = new Set([...pki.credentials.map((c) => c.signer.serialNumberHex), pki.ocspResponder.serialNumberHex]);
  const revoked = new Map(pki.revocations.map((r) => [r.serialNumberHex, r.revokedAt]));

  const ofIssuer = (certID: pkijs.CertID): boolean => {
    const hash = HASH_BY_OID[certID.hashAlgorithm.algorithmId];
    return (
      hash !== undefined &&
      Buffer.from(certID.issuerNameHash.valueBlock.valueHexView).equals(createHash(hash).update(issuerName).digest()) &&
      Buffer.from(certID.issuerKeyHash.valueBlock.valueHexView).equals(createHash(hash).update(issuerKey).digest())
    );
  };
  if (!request.tbsRequest.requestList.some((entry) => ofIssuer(entry.reqCert)))
    return ocspError(OcspStatus.unauthorized);
  const responses = request.tbsRequest.requestList.map((entry) => {
    const certID = entry.reqCert;
    const serial = Buffer.from(certID.serialNumber.valueBlock.valueHexView).toString('hex');
    const sameIssuer = ofIssuer(certID);
    let certStatus: asn1js.BaseBlock;
    const revokedAt = revoked.get(serial);
    if (sameIssuer && revokedAt) {
      certStatus = new asn1js.Constructed({
        idBlock: { tagClass: 3, tagNumber: 1 },
        value: [new asn1js.GeneralizedTime({ valueDate: wholeSeconds(revokedAt) })],
      });
    } else if (sameIssuer && known.has(serial)) {
      certStatus = new asn1js.Primitive({ idBlock: { tagClass: 3, tagNumber: 0 } });
    } else {
      certStatus = new asn1js.Primitive({ idBlock: { tagClass: 3, tagNumber: 2 } });
    }
    return new pkijs.SingleResponse({
      certID,
      certStatus,
      thisUpdate: wholeSeconds(new Date(now.getTime() - 60_000)),
      nextUpdate: wholeSeconds(new Date(now.getTime() + OCSP_VALIDITY_MS)),
    });
  });

  const responderKey = createPublicKey(pki.ocspResponder.privateKey).export({ type: 'spki', format: 'der' });
  const responderSpki = pkijs.PublicKeyInfo.fromBER(responderKey);
  const responderKeyHash = createHash('sha1').update(responderSpki.subjectPublicKey.valueBlock.valueHexView).digest();
  const nonce = request.tbsRequest.requestExtensions?.find((e) => e.extnID === OID_OCSP_NONCE);
  const data = new pkijs.ResponseData({
    responderID: new asn1js.OctetString({ valueHex: responderKeyHash }),
    producedAt: wholeSeconds(now),
    responses,
  });
  if (nonce)
    data.responseExtensions = [
      new pkijs.Extension({
        extnID: OID_OCSP_NONCE,
        extnValue: nonce.extnValue.valueBlock.valueHexView.slice().buffer,
      }),
    ];
  data.tbsView = new Uint8Array(data.toSchema(true).toBER(false));
  const basic = new pkijs.BasicOCSPResponse({
    tbsResponseData: data,
    signatureAlgorithm: rsaWith(hash),
    signature: new asn1js.BitString({ valueHex: sign(hash, data.tbsView, pki.ocspResponder.privateKey) }),
    certs: [pkijs.Certificate.fromBER(pki.ocspResponder.certificate)],
  });
  const response = new pkijs.OCSPResponse({
    responseStatus: new asn1js.Enumerated({ value: OcspStatus.successful }),
    responseBytes: new pkijs.ResponseBytes({
      responseType: OID_OCSP_BASIC,
      response: new asn1js.OctetString({ valueHex: basic.toSchema().toBER(false) }),
    }),
  });
  return new Uint8Array(response.toSchema().toBER(false));
}

function wholeSeconds(date: Date): Date {
  return new Date(Math.floor(date.getTime() / 1000) * 1000);
}
