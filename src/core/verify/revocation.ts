/**
 * Revocation data as a PAdES DSS holds it: OCSP responses (RFC 6960 OCSPResponse, or a bare
 * BasicOCSPResponse) and CRLs (RFC 5280). Each is parsed, its signature checked (OCSP: by the
 * issuer or a responder it delegated to; CRL: by the issuer), then asked about one certificate.
 */
import { createHash } from 'node:crypto';
import type { X509Certificate } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { HASH_NAME_BY_OID } from '../cms/oids.js';
import { verifySignature } from '../cms/verify-signer.js';
import { certificate, issuedBy, normalizeSerial, oneLine } from './chain.js';
import type { RevocationResult } from './types.js';

const OID_OCSP_BASIC = '1.3.6.1.5.5.7.48.1.1';
const OID_OCSP_NOCHECK = '1.3.6.1.5.5.7.48.1.5';
const OID_OCSP_SIGNING = '1.3.6.1.5.5.7.3.9';

interface OcspEntry {
  serial: string;
  hashName: string;
  issuerNameHash: Uint8Array;
  issuerKeyHash: Uint8Array;
  status: 'good' | 'revoked' | 'unknown';
  revokedAt: Date | undefined;
}

export interface ParsedOcsp {
  der: Uint8Array;
  producedAt: Date;
  entries: OcspEntry[];
  tbs: Uint8Array;
  signatureAlgorithm: string;
  signature: Uint8Array;
  certs: Uint8Array[];
}

export interface ParsedCrl {
  der: Uint8Array;
  issuer: Uint8Array;
  thisUpdate: Date;
  revoked: Map<string, Date>;
  tbs: Uint8Array;
  signatureAlgorithm: string;
  signature: Uint8Array;
}

/** Reads an OCSPResponse or a BasicOCSPResponse; undefined when it is neither. */
export function parseOcsp(der: Uint8Array): ParsedOcsp | undefined {
  try {
    let basic: pkijs.BasicOCSPResponse;
    try {
      const outer = pkijs.OCSPResponse.fromBER(der);
      if (!outer.responseBytes || outer.responseBytes.responseType !== OID_OCSP_BASIC) return undefined;
      basic = pkijs.BasicOCSPResponse.fromBER(outer.responseBytes.response.valueBlock.valueHexView);
    } catch {
      basic = pkijs.BasicOCSPResponse.fromBER(der);
    }
    const data = basic.tbsResponseData;
    return {
      der,
      producedAt: data.producedAt,
      entries: data.responses.map((single) => {
        const status = single.certStatus as asn1js.BaseBlock;
        const tag = status.idBlock.tagNumber;
        let revokedAt: Date | undefined;
        if (tag === 1 && status instanceof asn1js.Constructed) {
          const time = status.valueBlock.value[0];
          if (time instanceof asn1js.GeneralizedTime) revokedAt = time.toDate();
        }
        return {
          serial: normalizeSerial(Buffer.from(single.certID.serialNumber.valueBlock.valueHexView).toString('hex')),
          hashName: HASH_NAME_BY_OID[single.certID.hashAlgorithm.algorithmId] ?? (single.certID.hashAlgorithm.algorithmId === '1.3.14.3.2.26' ? 'sha1' : 'unknown'),
          issuerNameHash: new Uint8Array(single.certID.issuerNameHash.valueBlock.valueHexView),
          issuerKeyHash: new Uint8Array(single.certID.issuerKeyHash.valueBlock.valueHexView),
          status: tag === 0 ? 'good' : tag === 1 ? 'revoked' : 'unknown',
          revokedAt,
        };
      }),
      tbs: new Uint8Array(data.tbsView),
      signatureAlgorithm: basic.signatureAlgorithm.algorithmId,
      signature: new Uint8Array(basic.signature.valueBlock.valueHexView),
      certs: (basic.certs ?? []).map((cert) => new Uint8Array(cert.toSchema().toBER(false))),
    };
  } catch {
    return undefined;
  }
}

/** Reads a DER CRL; undefined when it is not one. */
export function parseCrl(der: Uint8Array): ParsedCrl | undefined {
  try {
    const crl = pkijs.CertificateRevocationList.fromBER(der);
    const revoked = new Map<string, Date>();
    for (const entry of crl.revokedCertificates ?? []) {
      revoked.set(normalizeSerial(Buffer.from(entry.userCertificate.valueBlock.valueHexView).toString('hex')), entry.revocationDate.value);
    }
    return {
      der,
      issuer: new Uint8Array(crl.issuer.toSchema().toBER(false)),
      thisUpdate: crl.thisUpdate.value,
      revoked,
      tbs: new Uint8Array(crl.tbsView),
      signatureAlgorithm: crl.signatureAlgorithm.algorithmId,
      signature: new Uint8Array(crl.signatureValue.valueBlock.valueHexView),
    };
  } catch {
    return undefined;
  }
}

export interface RevocationMaterial {
  ocsps: ParsedOcsp[];
  crls: ParsedCrl[];
}

export function revocationMaterial(ocsps: readonly Uint8Array[], crls: readonly Uint8Array[]): RevocationMaterial {
  return {
    ocsps: ocsps.map(parseOcsp).filter((item): item is ParsedOcsp => item !== undefined),
    crls: crls.map(parseCrl).filter((item): item is ParsedCrl => item !== undefined),
  };
}

function hasExtension(cert: X509Certificate, oid: string): boolean {
  try {
    return (pkijs.Certificate.fromBER(cert.raw).extensions ?? []).some((extension) => extension.extnID === oid);
  } catch {
    return false;
  }
}

function allowsOcspSigning(cert: X509Certificate): boolean {
  try {
    const extension = (pkijs.Certificate.fromBER(cert.raw).extensions ?? []).find((candidate) => candidate.extnID === '2.5.29.37');
    const usage = extension?.parsedValue as pkijs.ExtKeyUsage | undefined;
    return usage?.keyPurposes.includes(OID_OCSP_SIGNING) ?? false;
  } catch {
    return false;
  }
}

function signedBy(tbs: Uint8Array, algorithm: string, signature: Uint8Array, signer: X509Certificate): boolean {
  return verifySignature(algorithm, 'sha256', tbs, signature, signer.publicKey);
}

/**
 * The revocation status of `cert` (issued by `issuer`) from the material: an OCSP answer signed by
 * the issuer or by a responder certificate the issuer delegated to wins over a CRL of the issuer.
 * `at` decides whether a revocation counts: a certificate revoked after `at` was good at `at`.
 */
export function revocationStatus(cert: X509Certificate, issuer: X509Certificate | undefined, material: RevocationMaterial, at: Date): RevocationResult {
  const subject = oneLine(cert.subject);
  if (hasExtension(cert, OID_OCSP_NOCHECK)) return { subject, status: 'good', source: 'ocsp-nocheck' };
  if (!issuer) return { subject, status: 'unknown', source: 'none' };
  const serial = normalizeSerial(cert.serialNumber);
  const issuerInfo = pkijs.Certificate.fromBER(issuer.raw);
  const issuerName = new Uint8Array(issuerInfo.subject.toSchema().toBER(false));
  const issuerKey = issuerInfo.subjectPublicKeyInfo.subjectPublicKey.valueBlock.valueHexView;
  const same = (a: Uint8Array, b: Uint8Array | Buffer): boolean => Buffer.from(a).equals(Buffer.from(b));
  const judge = (state: 'good' | 'revoked' | 'unknown', revokedAt: Date | undefined, source: RevocationResult['source'], issuedAt: Date): RevocationResult => {
    const base = { subject, source, issuedAt: issuedAt.toISOString(), ...(revokedAt ? { revokedAt: revokedAt.toISOString() } : {}) };
    if (state === 'revoked' && revokedAt && revokedAt.getTime() > at.getTime()) return { ...base, status: 'good' };
    return { ...base, status: state };
  };
  for (const ocsp of material.ocsps) {
    for (const entry of ocsp.entries) {
      if (entry.serial !== serial || entry.hashName === 'unknown') continue;
      const keyHash = createHash(entry.hashName).update(issuerKey).digest();
      const nameHash = createHash(entry.hashName).update(issuerName).digest();
      if (!same(entry.issuerKeyHash, keyHash) || !same(entry.issuerNameHash, nameHash)) continue;
      const responders = [issuer, ...ocsp.certs.map(certificate).filter((c): c is X509Certificate => c !== undefined && issuedBy(c, issuer) && allowsOcspSigning(c))];
      if (!responders.some((responder) => signedBy(ocsp.tbs, ocsp.signatureAlgorithm, ocsp.signature, responder))) continue;
      return judge(entry.status, entry.revokedAt, 'dss-ocsp', ocsp.producedAt);
    }
  }
  for (const crl of material.crls) {
    if (!same(crl.issuer, issuerName) || !signedBy(crl.tbs, crl.signatureAlgorithm, crl.signature, issuer)) continue;
    const revokedAt = crl.revoked.get(serial);
    return judge(revokedAt ? 'revoked' : 'good', revokedAt, 'dss-crl', crl.thisUpdate);
  }
  return { subject, status: 'unknown', source: 'none' };
}
