/**
 * Revocation data as a PAdES DSS or a CMS signature holds it: OCSP responses (RFC 6960
 * OCSPResponse, or a bare BasicOCSPResponse) and CRLs (RFC 5280). Each is parsed, its signature
 * checked (OCSP: by the issuer or a responder it delegated to; CRL: by the issuer), then asked
 * about one certificate.
 */
import { createHash } from 'node:crypto';
import type { X509Certificate } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { decode, encoded, isContext, isUniversal, oid, sequenceItems } from '../cms/der.js';
import type { Block } from '../cms/der.js';
import { memoByContent } from '../cms/content-memo.js';
import { HASH_NAME_BY_OID } from '../cms/oids.js';
import type { ParsedSignedData } from '../cms/parse.js';
import { digestAlgorithm, signatureScheme, verifyWith } from './algorithms.js';
import type { DigestAlgorithm } from './algorithms.js';
import { issuedBy, oneLine } from '../certificate-links.js';
import { certificate, normalizeSerial } from './chain.js';
import type { RevocationResult, RevocationStore } from './types.js';

const OID_OCSP_BASIC = '1.3.6.1.5.5.7.48.1.1';
const OID_OCSP_NOCHECK = '1.3.6.1.5.5.7.48.1.5';
const OID_OCSP_SIGNING = '1.3.6.1.5.5.7.3.9';
const OID_RI_OCSP_RESPONSE = '1.3.6.1.5.5.7.16.2';
const OID_ADBE_REVOCATION_INFO_ARCHIVAL = '1.2.840.113583.1.1.8';

/** One OCSP response or CRL, DER, and where it was found. */
export interface RevocationItem {
  der: Uint8Array;
  store: RevocationStore;
  /** DSS items: the revision whose DSS first held it. */
  revision?: number;
  /** Fetched items: where from. */
  url?: string;
}

interface OcspEntry {
  serial: string;
  hashName: string;
  issuerNameHash: Uint8Array;
  issuerKeyHash: Uint8Array;
  status: 'good' | 'revoked' | 'unknown';
  revokedAt: Date | undefined;
}

export interface ParsedOcsp {
  item: RevocationItem;
  producedAt: Date;
  entries: OcspEntry[];
  tbs: Uint8Array;
  signatureAlgorithm: string;
  signatureParameters: Uint8Array | undefined;
  signature: Uint8Array;
  certs: Uint8Array[];
}

export interface ParsedCrl {
  item: RevocationItem;
  issuer: Uint8Array;
  thisUpdate: Date;
  revoked: Map<string, Date>;
  tbs: Uint8Array;
  signatureAlgorithm: string;
  signatureParameters: Uint8Array | undefined;
  signature: Uint8Array;
}

/**
 * What parsing gave for a DER's bytes (by identity): fetched answers are the same Uint8Array for
 * every file of a run (the run's RevocationSource hands out one per certificate), so each is parsed
 * once per run, not once per file.
 */
const parsedOcsps = new WeakMap<Uint8Array, Omit<ParsedOcsp, 'item'> | null>();
const parsedCrls = new WeakMap<Uint8Array, Omit<ParsedCrl, 'item'> | null>();

function memoParsed<T extends { item: RevocationItem }>(
  memo: WeakMap<Uint8Array, Omit<T, 'item'> | null>,
  item: RevocationItem,
  parse: (item: RevocationItem) => T | undefined,
): T | undefined {
  let parsed = memo.get(item.der);
  if (parsed === undefined) {
    const fresh = parse(item);
    if (fresh) {
      const { item: _item, ...rest } = fresh;
      parsed = rest;
    } else parsed = null;
    memo.set(item.der, parsed);
  }
  return parsed === null ? undefined : ({ ...parsed, item } as T);
}

/** Reads an OCSPResponse or a BasicOCSPResponse; undefined when it is neither. */
export function parseOcsp(item: RevocationItem): ParsedOcsp | undefined {
  return memoParsed(parsedOcsps, item, readOcsp);
}

function readOcsp(item: RevocationItem): ParsedOcsp | undefined {
  const { der } = item;
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
      item,
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
          hashName:
            HASH_NAME_BY_OID[single.certID.hashAlgorithm.algorithmId] ??
            (single.certID.hashAlgorithm.algorithmId === '1.3.14.3.2.26' ? 'sha1' : 'unknown'),
          issuerNameHash: new Uint8Array(single.certID.issuerNameHash.valueBlock.valueHexView),
          issuerKeyHash: new Uint8Array(single.certID.issuerKeyHash.valueBlock.valueHexView),
          status: tag === 0 ? 'good' : tag === 1 ? 'revoked' : 'unknown',
          revokedAt,
        };
      }),
      tbs: new Uint8Array(data.tbsView),
      signatureAlgorithm: basic.signatureAlgorithm.algorithmId,
      signatureParameters: parametersOf(basic.signatureAlgorithm),
      signature: new Uint8Array(basic.signature.valueBlock.valueHexView),
      certs: (basic.certs ?? []).map((cert) => new Uint8Array(cert.toSchema().toBER(false))),
    };
  } catch {
    return undefined;
  }
}

/** Reads a DER CRL; undefined when it is not one. */
export function parseCrl(item: RevocationItem): ParsedCrl | undefined {
  return memoParsed(parsedCrls, item, readCrl);
}

function readCrl(item: RevocationItem): ParsedCrl | undefined {
  try {
    const crl = pkijs.CertificateRevocationList.fromBER(item.der);
    const revoked = new Map<string, Date>();
    for (const entry of crl.revokedCertificates ?? []) {
      revoked.set(
        normalizeSerial(Buffer.from(entry.userCertificate.valueBlock.valueHexView).toString('hex')),
        entry.revocationDate.value,
      );
    }
    return {
      item,
      issuer: new Uint8Array(crl.issuer.toSchema().toBER(false)),
      thisUpdate: crl.thisUpdate.value,
      revoked,
      tbs: new Uint8Array(crl.tbsView),
      signatureAlgorithm: crl.signatureAlgorithm.algorithmId,
      signatureParameters: parametersOf(crl.signatureAlgorithm),
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

export function revocationMaterial(
  ocsps: readonly RevocationItem[],
  crls: readonly RevocationItem[],
): RevocationMaterial {
  return {
    ocsps: ocsps.map(parseOcsp).filter((item): item is ParsedOcsp => item !== undefined),
    crls: crls.map(parseCrl).filter((item): item is ParsedCrl => item !== undefined),
  };
}

/** Both, `first`'s answers taking precedence. */
export function combineMaterial(first: RevocationMaterial, then: RevocationMaterial): RevocationMaterial {
  return { ocsps: [...first.ocsps, ...then.ocsps], crls: [...first.crls, ...then.crls] };
}

/**
 * The revocation data a CMS SignedData carries: its `crls` field (CRLs, and OCSP responses as
 * id-ri-ocsp-response, RFC 5940) and the signer's adbe-revocationInfoArchival signed attribute
 * (`SEQUENCE { crl [0] EXPLICIT SEQUENCE OF CRL, ocsp [1] EXPLICIT SEQUENCE OF OCSPResponse, … }`).
 * What does not parse is left out.
 */
export function embeddedRevocation(parsed: ParsedSignedData): RevocationMaterial {
  const ocsps: RevocationItem[] = [];
  const crls: RevocationItem[] = [];
  const add = (into: RevocationItem[], block: Block | undefined, store: RevocationStore): void => {
    if (block) into.push({ der: Uint8Array.from(encoded(block)), store });
  };
  try {
    for (const choice of parsed.revocationChoices.map((der) => decode(der, 'RevocationInfoChoice'))) {
      if (isUniversal(choice, 16)) add(crls, choice, 'cms');
      else if (isContext(choice, 1) && oid(choice.items[0], 'otherRevInfoFormat') === OID_RI_OCSP_RESPONSE)
        add(ocsps, choice.items[1], 'cms');
    }
  } catch {
    // an unreadable crls field carries nothing usable
  }
  for (const attribute of parsed.signedAttributes?.attributes ?? []) {
    if (attribute.type !== OID_ADBE_REVOCATION_INFO_ARCHIVAL) continue;
    for (const value of attribute.values) {
      try {
        for (const part of sequenceItems(decode(value, 'RevocationInfoArchival'), 'RevocationInfoArchival')) {
          const into = isContext(part, 0) ? crls : isContext(part, 1) ? ocsps : undefined;
          if (into)
            for (const item of sequenceItems(part.items[0], 'RevocationInfoArchival item')) add(into, item, 'adbe');
        }
      } catch {
        // an unreadable attribute value carries nothing usable
      }
    }
  }
  return revocationMaterial(ocsps, crls);
}

/** What revocationStatus reads of a certificate beyond node's X509Certificate. */
interface CertificateFields {
  ocspNoCheck: boolean;
  ocspSigning: boolean;
  /** The DER subject and the subject public key's bits (an OCSP CertID's hashes are over them). */
  name: Uint8Array;
  key: Uint8Array;
}

/**
 * Parsed once per certificate, not once per file: the signer's CAs, the TSA and the OCSP responder
 * are the same in every file of a run (remembered by content, bounded).
 */
const fieldsByDer = memoByContent((der): CertificateFields | null => {
  try {
    const parsed = pkijs.Certificate.fromBER(der);
    const extensions = parsed.extensions ?? [];
    const usage = extensions.find((candidate) => candidate.extnID === '2.5.29.37')?.parsedValue as
      pkijs.ExtKeyUsage | undefined;
    return {
      ocspNoCheck: extensions.some((extension) => extension.extnID === OID_OCSP_NOCHECK),
      ocspSigning: usage?.keyPurposes.includes(OID_OCSP_SIGNING) ?? false,
      name: new Uint8Array(parsed.subject.toSchema().toBER(false)),
      key: new Uint8Array(parsed.subjectPublicKeyInfo.subjectPublicKey.valueBlock.valueHexView),
    };
  } catch {
    return null;
  }
}, 4096);

function fieldsOf(cert: X509Certificate): CertificateFields | undefined {
  return fieldsByDer(cert.raw) ?? undefined;
}

function allowsOcspSigning(cert: X509Certificate): boolean {
  return fieldsOf(cert)?.ocspSigning ?? false;
}

/** RSA (PKCS#1 v1.5 or PSS), ECDSA or EdDSA, as verification's algorithm table knows them. */
function signedBy(
  tbs: Uint8Array,
  algorithm: string,
  parameters: Uint8Array | undefined,
  signature: Uint8Array,
  signer: X509Certificate,
): boolean {
  const scheme = signatureScheme(algorithm, parameters, SHA256);
  return 'name' in scheme && verifyWith(scheme, tbs, signer.publicKey, signature);
}

/** Why the algorithm that signed an OCSP response or CRL is no longer acceptable (SHA-1, MD5), if it is not. */
function signatureWeakness(algorithm: string, parameters: Uint8Array | undefined): string | undefined {
  const scheme = signatureScheme(algorithm, parameters, SHA256);
  return 'name' in scheme && scheme.weakness ? `${scheme.name}: ${scheme.weakness}` : undefined;
}

const SHA256 = digestAlgorithm('2.16.840.1.101.3.4.2.1') as DigestAlgorithm;

function parametersOf(identifier: pkijs.AlgorithmIdentifier): Uint8Array | undefined {
  const parameters = identifier.algorithmParams as asn1js.BaseBlock | undefined;
  return parameters && !(parameters instanceof asn1js.Null) ? new Uint8Array(parameters.toBER(false)) : undefined;
}

/**
 * The revocation status of `cert` (issued by `issuer`) from the material: an OCSP answer signed by
 * the issuer or by a responder certificate the issuer delegated to wins over a CRL of the issuer.
 * `at` decides whether a revocation counts: a certificate revoked after `at` was good at `at`.
 */
export function revocationStatus(
  cert: X509Certificate,
  issuer: X509Certificate | undefined,
  material: RevocationMaterial,
  at: Date,
): RevocationResult {
  const subject = oneLine(cert.subject);
  if (fieldsOf(cert)?.ocspNoCheck) return { subject, status: 'good', source: 'ocsp-nocheck' };
  if (!issuer) return { subject, status: 'unknown', source: 'none' };
  const serial = normalizeSerial(cert.serialNumber);
  const issuerFields = fieldsOf(issuer);
  if (!issuerFields) return { subject, status: 'unknown', source: 'none' };
  const { name: issuerName, key: issuerKey } = issuerFields;
  const same = (a: Uint8Array, b: Uint8Array | Buffer): boolean => Buffer.from(a).equals(Buffer.from(b));
  const judge = (
    state: 'good' | 'revoked' | 'unknown',
    revokedAt: Date | undefined,
    item: RevocationItem,
    kind: 'ocsp' | 'crl',
    issuedAt: Date,
    weakness: string | undefined,
  ): RevocationResult => {
    const base = {
      subject,
      source: `${item.store}-${kind}` as const,
      ...(item.revision !== undefined ? { revision: item.revision } : {}),
      issuedAt: issuedAt.toISOString(),
      ...(revokedAt ? { revokedAt: revokedAt.toISOString() } : {}),
      ...(item.url ? { url: item.url } : {}),
      ...(weakness ? { weak: `the ${kind === 'ocsp' ? 'OCSP response' : 'CRL'} is signed with ${weakness}` } : {}),
    };
    if (state === 'revoked' && revokedAt && revokedAt.getTime() > at.getTime()) return { ...base, status: 'good' };
    return { ...base, status: state };
  };
  for (const ocsp of material.ocsps) {
    for (const entry of ocsp.entries) {
      if (entry.serial !== serial || entry.hashName === 'unknown') continue;
      const keyHash = createHash(entry.hashName).update(issuerKey).digest();
      const nameHash = createHash(entry.hashName).update(issuerName).digest();
      if (!same(entry.issuerKeyHash, keyHash) || !same(entry.issuerNameHash, nameHash)) continue;
      const responders = [
        issuer,
        ...ocsp.certs
          .map(certificate)
          .filter((c): c is X509Certificate => c !== undefined && issuedBy(c, issuer) && allowsOcspSigning(c)),
      ];
      if (
        !responders.some((responder) =>
          signedBy(ocsp.tbs, ocsp.signatureAlgorithm, ocsp.signatureParameters, ocsp.signature, responder),
        )
      )
        continue;
      const weakness = signatureWeakness(ocsp.signatureAlgorithm, ocsp.signatureParameters);
      return judge(entry.status, entry.revokedAt, ocsp.item, 'ocsp', ocsp.producedAt, weakness);
    }
  }
  for (const crl of material.crls) {
    if (
      !same(crl.issuer, issuerName) ||
      !signedBy(crl.tbs, crl.signatureAlgorithm, crl.signatureParameters, crl.signature, issuer)
    )
      continue;
    const revokedAt = crl.revoked.get(serial);
    const weakness = signatureWeakness(crl.signatureAlgorithm, crl.signatureParameters);
    return judge(revokedAt ? 'revoked' : 'good', revokedAt, crl.item, 'crl', crl.thisUpdate, weakness);
  }
  return { subject, status: 'unknown', source: 'none' };
}
