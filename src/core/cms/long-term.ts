/**
 * CAdES B-LT (ETSI EN 319 122-1): the validation data of a signature — the certificates of the
 * signer's and the TSA's chains, and their revocation data — inside the SignedData itself, where
 * the archive-time-stamp-v3's ats-hash-index-v3 (§5.5.2) looks for it: certificates in
 * `SignedData.certificates`, CRLs and OCSP responses in `SignedData.crls` (an OCSP response as the
 * RevocationInfoChoice `other` with id-ri-ocsp-response, RFC 5940 §3.2). OpenSSL and DSS read both.
 */
import {
  Asn1StructureError,
  decode,
  encoded,
  explicit,
  explicitInner,
  isContext,
  objectIdentifier,
  sequence,
  sequenceItems,
  smallInteger,
  tlv,
  type Block,
} from './der.js';
import { OID } from './oids.js';
import { EsignError } from '../errors.js';

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

/**
 * A ContentInfo(SignedData) — a timestamp token, whose eContent and SignerInfos are kept as they
 * are — with more certificates and revocation data: those it had first, then the new ones not there
 * yet (EN 319 162-1 A.7: an archive timestamp gets its validation data before it is archived again).
 */
export function withValidationData(cmsDer: Uint8Array, data: CmsValidationData): Uint8Array {
  try {
    const [, content] = sequenceItems(decode(cmsDer, 'ContentInfo'), 'ContentInfo');
    const [version, digestAlgorithms, encap, ...rest] = sequenceItems(
      explicitInner(content, 0, 'ContentInfo content'),
      'SignedData',
    );
    const itemsOf = (tag: number) => (rest.find((block) => isContext(block, tag))?.items ?? []).map(encoded);
    const certificates = uniqueDer([...itemsOf(0), ...data.certificates]);
    const revocations = uniqueDer([...itemsOf(1), ...revocationInfoChoices(data)]);
    const signerInfos = rest[rest.length - 1];
    if (!signerInfos || isContext(signerInfos, 0) || isContext(signerInfos, 1))
      throw new Asn1StructureError('SignedData: no signerInfos');
    const versionDer = revocations.some(isOtherRevocationInfo) ? smallInteger(5) : encoded(version as Block);
    return sequence(
      objectIdentifier(OID.signedData),
      explicit(
        0,
        sequence(
          versionDer,
          encoded(digestAlgorithms as Block),
          encoded(encap as Block),
          ...(certificates.length > 0 ? [tlv(0xa0, ...certificates)] : []),
          ...(revocations.length > 0 ? [tlv(0xa1, ...revocations)] : []),
          encoded(signerInfos),
        ),
      ),
    );
  } catch (error) {
    if (error instanceof Asn1StructureError)
      throw new EsignError('CMS_BAD_STRUCTURE', `Cannot add validation data to the token: ${error.message}.`, {
        cause: error,
      });
    throw error;
  }
}
