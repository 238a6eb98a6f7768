/**
 * CRLs for long-term validation: a CRL goes into the DSS only when its issuer is the certificate's
 * issuer and its signature verifies with that issuer's key.
 */
import { verify } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { readCertificate } from '../cms/certificate.js';
import { EsignError } from '../errors.js';
import { bytesEqual } from '../cms/parse.js';
import { displayName, normalizeSerial } from './certificates.js';
import type { CertificateFacts } from './certificates.js';
import { signatureHashName } from './signature-algorithms.js';

export interface CheckedCrl {
  der: Uint8Array;
  thisUpdate: Date;
  nextUpdate: Date | undefined;
  /** Serial numbers (lower-case hex, no leading zeros) listed as revoked, with their dates. */
  revoked: Map<string, Date>;
}

function bad(url: string | undefined, reason: string): EsignError {
  return new EsignError('REVOCATION_BAD_RESPONSE', `The CRL${url ? ` from ${url}` : ''} cannot be used: ${reason}.`, {
    hint: 'The CRL distribution point served something esign cannot trust; try again later or ask the CA.',
    details: url ? { url } : undefined,
  });
}

/** Checks a DER CRL against the issuer that should have signed it. */
export function checkCrl(der: Uint8Array, issuer: CertificateFacts, url?: string): CheckedCrl {
  let crl: pkijs.CertificateRevocationList;
  let tbsBytes: Uint8Array;
  let issuerName: Uint8Array;
  try {
    crl = pkijs.CertificateRevocationList.fromBER(der);
    const decoded = asn1js.fromBER(der);
    const tbs = (decoded.result as asn1js.Sequence).valueBlock.value[0] as asn1js.Sequence | undefined;
    if (!tbs) throw new Error('no tbsCertList');
    tbsBytes = tbs.valueBeforeDecodeView;
    const fields = tbs.valueBlock.value;
    const offset = fields[0] instanceof asn1js.Integer ? 1 : 0;
    const name = fields[offset + 1];
    if (!name) throw new Error('no issuer');
    issuerName = name.valueBeforeDecodeView;
  } catch (error) {
    throw bad(url, `it is not a valid CRL (${(error as Error).message})`);
  }
  if (!bytesEqual(issuerName, readCertificate(issuer.der).subject))
    throw bad(url, `it is not issued by ${displayName(issuer)}`);
  const hashName = signatureHashName(crl.signatureAlgorithm.algorithmId);
  if (hashName === undefined)
    throw bad(url, `its signature algorithm ${crl.signatureAlgorithm.algorithmId} is not supported`);
  let valid: boolean;
  try {
    valid = verify(hashName, tbsBytes, issuer.x509.publicKey, crl.signatureValue.valueBlock.valueHexView);
  } catch {
    valid = false;
  }
  if (!valid) throw bad(url, `its signature does not verify with the key of ${displayName(issuer)}`);
  const revoked = new Map<string, Date>();
  for (const entry of crl.revokedCertificates ?? []) {
    revoked.set(
      normalizeSerial(Buffer.from(entry.userCertificate.valueBlock.valueHexView).toString('hex')),
      entry.revocationDate.value,
    );
  }
  return { der, thisUpdate: crl.thisUpdate.value, nextUpdate: crl.nextUpdate?.value, revoked };
}
