/** Object identifiers used by esign's CMS and TSP code, in the RFCs' names. */
export const OID = {
  // content types (RFC 5652, RFC 3161)
  data: '1.2.840.113549.1.7.1',
  signedData: '1.2.840.113549.1.7.2',
  tstInfo: '1.2.840.113549.1.9.16.1.4',
  // attributes
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingTime: '1.2.840.113549.1.9.5',
  signingCertificate: '1.2.840.113549.1.9.16.2.12',
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47',
  signatureTimeStampToken: '1.2.840.113549.1.9.16.2.14',
  // digests
  sha1: '1.3.14.3.2.26',
  sha256: '2.16.840.1.101.3.4.2.1',
  sha384: '2.16.840.1.101.3.4.2.2',
  sha512: '2.16.840.1.101.3.4.2.3',
  md5: '1.2.840.113549.2.5',
  // signatures
  rsaEncryption: '1.2.840.113549.1.1.1',
  sha256WithRSAEncryption: '1.2.840.113549.1.1.11',
  sha384WithRSAEncryption: '1.2.840.113549.1.1.12',
  sha512WithRSAEncryption: '1.2.840.113549.1.1.13',
  ecdsaWithSHA256: '1.2.840.10045.4.3.2',
  ecdsaWithSHA384: '1.2.840.10045.4.3.3',
  ecdsaWithSHA512: '1.2.840.10045.4.3.4',
  rsassaPss: '1.2.840.113549.1.1.10',
  mgf1: '1.2.840.113549.1.1.8',
  ecPublicKey: '1.2.840.10045.2.1',
  // certificates
  extKeyUsage: '2.5.29.37',
  subjectKeyIdentifier: '2.5.29.14',
  kpTimeStamping: '1.3.6.1.5.5.7.3.8',
  // policies
  etsiBaselineTsaPolicy: '0.4.0.2023.1.1',
} as const;

/** node:crypto hash names of the digest algorithms we accept in signatures and tokens. */
export const HASH_NAME_BY_OID: Readonly<Record<string, string>> = {
  [OID.sha256]: 'sha256',
  [OID.sha384]: 'sha384',
  [OID.sha512]: 'sha512',
};

/**
 * Those, and SHA-1 and MD5: what a timestamp's message imprint is recomputed with, so that an
 * intact token with a SHA-1 or MD5 imprint is reported weak, never as a changed document.
 */
export const IMPRINT_HASH_NAME_BY_OID: Readonly<Record<string, string>> = {
  ...HASH_NAME_BY_OID,
  [OID.sha1]: 'sha1',
  [OID.md5]: 'md5',
};
