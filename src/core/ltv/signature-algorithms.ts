/** node:crypto hash names for the signature algorithms of certificates, CRLs and OCSP responses. */
const HASH_BY_SIGNATURE_OID: Readonly<Record<string, string>> = {
  '1.2.840.113549.1.1.5': 'sha1',
  '1.2.840.113549.1.1.11': 'sha256',
  '1.2.840.113549.1.1.12': 'sha384',
  '1.2.840.113549.1.1.13': 'sha512',
  '1.2.840.10045.4.1': 'sha1',
  '1.2.840.10045.4.3.2': 'sha256',
  '1.2.840.10045.4.3.3': 'sha384',
  '1.2.840.10045.4.3.4': 'sha512',
};

export function signatureHashName(oid: string): string | undefined {
  return HASH_BY_SIGNATURE_OID[oid];
}
