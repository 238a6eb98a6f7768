/**
 * CAdES B-LT (ETSI EN 319 122-1): the validation data of a signature — the certificates of the
 * signer's and the TSA's chains, and their revocation data — inside the SignedData itself, where
 * the archive-time-stamp-v3's ats-hash-index-v3 (§5.5.2) looks for it: certificates in
 * `SignedData.certificates`, CRLs and OCSP responses in `SignedData.crls` (an OCSP response as the
 * RevocationInfoChoice `other` with id-ri-ocsp-response, RFC 5940 §3.2). OpenSSL and DSS read both.
 */
import { objectIdentifier, tlv } from './der.js';

/** id-ri-ocsp-response (RFC 5940): OtherRevocationInfoFormat whose otherRevInfo is an OCSPResponse. */
export const OID_RI_OCSP_RESPONSE = '1.3.6.1.5.5.7.16.2';

/** What a B-LT signature carries beside its chain: DER certificates, OCSPResponses and CRLs. */
export interface CmsValidationData {
  certificates: Uint8Array[];
  ocsps: Uint8Array[];
  crls: Uint8Array[];
}

/** Tag of `[1] IMPLICIT OtherRevocationInfoFormat` among the RevocationInfoChoices. */
const OTHER_REVOCATION_INFO_TAG = 0xa1;

/**
 * The RevocationInfoChoices of the data, each DER: a CRL as a CertificateList, an OCSP response
 * as `other` (id-ri-ocsp-response, the OCSPResponse whole).
 */
export function revocationInfoChoices(data: Pick<CmsValidationData, 'ocsps' | 'crls'>): Uint8Array[] {
  return [
    ...data.crls,
    ...data.ocsps.map((ocsp) => tlv(OTHER_REVOCATION_INFO_TAG, objectIdentifier(OID_RI_OCSP_RESPONSE), ocsp)),
  ];
}

/** Whether a RevocationInfoChoice is `other` (a SignedData holding one is version 5, RFC 5652 §5.1). */
export function isOtherRevocationInfo(choice: Uint8Array): boolean {
  return choice[0] === OTHER_REVOCATION_INFO_TAG;
}

/** `items` without repeats (by their bytes), in their first order. */
export function uniqueDer(items: readonly Uint8Array[]): Uint8Array[] {
  return [...new Map(items.map((item) => [Buffer.from(item).toString('hex'), item])).values()];
}
